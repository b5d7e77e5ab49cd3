// `mpspack diff`: do two containers hold the same model? Compares what a model *is* (libraries,
// weights, metadata), never where it lies in the file: offsets, padding, alignment, segment order
// and the producer version are ignored.
#pragma once

#include "mpspack/format/container.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mpspack::pack {

// One difference: `path` names the object and field ("libraries[model].device",
// "weights[model].constants[l_weight].shape"); `a`/`b` are the values as text, or nullopt when
// the object exists on one side only.
struct Difference {
  std::string path;
  std::optional<std::string> a;
  std::optional<std::string> b;
};

// Libraries are paired by stored name. For each pair: name, device, machine, abi, flavour, NEEDED,
// dropped NEEDED, imports, original_sha256, the stored library segment's XXH3-64 and the cubins
// (name and XXH3-64). Weights are those of each paired library: with a constants table on both
// sides, constants are paired by name and compared by dtype, shape and the XXH3-64 of the
// constant's bytes inside the weights segment (folded constants have no bytes); otherwise the whole
// weights segments are compared by XXH3-64. Metadata: producer name, sources (file name without
// its directory, kind, size, SHA-256, flavour) and examples (dtypes, shapes, data hashes).
// Every XXH3-64 is of the bytes in the file, so a damaged container differs from an intact one; with
// metadata_only, the hashes the metadata records are compared instead and no segment byte is read (constants
// then by dtype and shape, the weights segment by its recorded hash).
// Reads each byte range once, however many constants name it: its work is bounded by the two
// files' sizes. `work`, when given, says how many bytes it hashed.
struct DiffOptions {
  bool metadata_only = false;
};
struct DiffWork {
  uint64_t bytes_hashed = 0;
};
std::vector<Difference> diff(const format::Container& a, const format::Container& b, const DiffOptions& options = {},
                             DiffWork* work = nullptr);

}  // namespace mpspack::pack
