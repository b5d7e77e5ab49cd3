// `mpspack build`: model libraries (and .pt2 packages) in, one container out.
#pragma once

#include "mpspack/format/container.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/result.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace mpspack::pack {

struct BuildOptions {
  std::vector<std::filesystem::path> inputs;   // .so or .pt2, in order
  std::vector<std::filesystem::path> weights;  // external blobs, given to the external-blob libraries in order
  std::filesystem::path output;
  bool drop_libtorch = true;  // drop libtorch*.so from NEEDED when only the C shim is used
  // Reference tensors recorded as an example of the first library (`run` with no inputs checks
  // against them): FILE[:DTYPE:SHAPE] specs (tensor_io.hpp), inputs and outputs in model order.
  std::vector<std::string> example_inputs;
  std::vector<std::string> example_outputs;
  format::Progress progress;
  Durability durability = Durability::page_cache;  // Durability::disk: fsync before the rename
};

// Reads, analyses and splits every input, lays the container out and writes it atomically.
Result<Manifest> build(const BuildOptions& options);

}  // namespace mpspack::pack
