// Splitting a model library into "the library to store" and "its weights", and putting the original
// back together byte for byte.
//
// Embedded: the constants bytes are cut out of the file. The PT_LOAD that holds them keeps its
// p_memsz but its p_filesz ends where the constants start, so ld.so zero-fills their address range
// (a host writes the weights there, or hands them to the model another way). Every file offset past
// the cut moves up by its size. mmap-self: the appended weights (between the 16 KiB padding and the
// trailing magic) are cut. External blob: nothing is cut.
//
// drop_libtorch removes libtorch*.so DT_NEEDED entries when the library imports nothing from torch's
// C++ namespaces (the rule: no undefined symbol mangled in torch::, c10:: or at::); a default build
// lists libtorch but only calls the C shim, which the host provides.
//
// `restore` holds the original bytes, at original offsets, of every byte the edits changed, so
// restore_library() reproduces the input exactly.
#pragma once

#include "mpspack/aoti/library.hpp"
#include "mpspack/bytes.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/result.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace mpspack::aoti {

struct SplitLibrary {
  std::vector<uint8_t> stored;  // the library to store
  uint64_t removed_offset = 0;  // the cut, in ORIGINAL file coordinates
  uint64_t removed_size = 0;
  std::vector<Patch> restore;               // original bytes of every byte that differs, sorted
  std::vector<std::string> dropped_needed;  // e.g. libtorch.so, libtorch_cpu.so
};

// `analysis` must be analyze_library(original).
Result<SplitLibrary> split_library(ByteView original, const LibraryAnalysis& analysis, bool drop_libtorch);

using ByteSink = std::function<Status(const uint8_t*, uint64_t)>;

// Writes the original library through `sink`, in order: stored[0, removed_offset), removed,
// stored[removed_offset, end), with `restore` patches applied. Streams: `removed` (possibly GBs,
// mapped from a container) is passed to the sink in chunks, never copied whole. Patches must be
// sorted, non-overlapping and inside the restored size.
Status restore_library(ByteView stored, ByteView removed, uint64_t removed_offset, const std::vector<Patch>& restore,
                       const ByteSink& sink);

}  // namespace mpspack::aoti
