// What mpspack needs to know about an AOTInductor model library (model.so): its machine, the
// device it was compiled for, how its weights travel (aoti-abi.md section 1), what it imports from
// the host, and where the constants are in the file.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/elf/elf_file.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mpspack::aoti {

// The two symbols objcopy gives the constants blob; every AOTInductor library defines both.
inline constexpr std::string_view kConstantsStart = "_binary_constants_bin_start";
inline constexpr std::string_view kConstantsEnd = "_binary_constants_bin_end";
// mmap-self builds pad the ELF image to this boundary before appending the weights; the library
// checks (file_size - weights_size) % 16384 == 0 when it maps itself.
inline constexpr uint64_t kMmapSelfAlignment = 16384;

struct LibraryAnalysis {
  std::string machine;  // "x86_64" | "aarch64"
  std::string device;   // "cuda", "mps" or "cpu", from the imports
  Flavour flavour = Flavour::Embedded;
  std::vector<std::string> needed;              // DT_NEEDED, in order
  std::vector<std::string> imports;             // undefined dynamic symbols a host must provide (sorted, unique)
  std::vector<elf::VersionNeed> version_needs;  // DT_VERNEED: the symbol versions needed of each library
  ConstantsRegion region;                       // where _binary_constants_bin_start/_end are
  uint64_t weights_offset = 0;                  // file offset of the weights bytes inside this file
  uint64_t weights_size = 0;                    // Embedded: end - start; MmapSelf: appended weights; ExternalBlob: 0
  uint64_t recorded_blob_size = 0;              // ExternalBlob: the blob size the library records
  uint64_t mmap_magic = 0;                      // MmapSelf: the build's magic (second u64 at start, last 8 bytes)
};

// Reads `so` (a mapped model.so) and classifies it. Errors: not ELF (NotThisFormat), not ELF64 LE or
// a machine other than x86_64/aarch64 (Unsupported), no constants symbols (NotThisFormat), damaged
// tables or a constants region outside the file (Corrupt).
Result<LibraryAnalysis> analyze_library(ByteView so);

// True for undefined symbols a host (or libtorch) must provide: aoti_torch_*, Sleef_*, cuda*, cu<Upper>*.
bool is_host_import(std::string_view symbol);
// True for C++ symbols in torch's own namespaces (torch::, c10::, at::), which only libtorch provides.
bool is_torch_cxx_symbol(std::string_view symbol);
// True for the NEEDED names mpspack may drop: libtorch*.so* (libtorch.so, libtorch_cpu.so, ...).
bool is_libtorch_needed(std::string_view soname);

}  // namespace mpspack::aoti
