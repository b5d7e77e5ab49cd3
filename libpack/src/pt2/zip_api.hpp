// The libzip functions the .pt2 reader uses, from a libzip opened at the first .pt2 (dlopen) rather than linked:
// libzip brings the shared libcrypto, and loading the two added about 3 ms to the start of every mpspack command
// (bench/micro/run.sh), though only `build` of a .pt2 reads a zip.
#pragma once

#include "mpspack/result.hpp"

#include <zip.h>

namespace mpspack::pt2 {

// An X-macro list, one name a line, left as written: clang-format 14 does not lay such a list out stably.
// clang-format off
#define MPSPACK_ZIP_FUNCTIONS(X) \
  X(zip_fdopen)                  \
  X(zip_discard)                 \
  X(zip_get_num_entries)         \
  X(zip_stat_init)               \
  X(zip_stat_index)              \
  X(zip_fopen_index)             \
  X(zip_fread)                   \
  X(zip_fclose)                  \
  X(zip_strerror)                \
  X(zip_file_strerror)           \
  X(zip_error_init_with_code)    \
  X(zip_error_strerror)          \
  X(zip_error_fini)
// clang-format on

struct ZipApi {
#define MPSPACK_ZIP_MEMBER(name) decltype(&::name) name = nullptr;
  MPSPACK_ZIP_FUNCTIONS(MPSPACK_ZIP_MEMBER)
#undef MPSPACK_ZIP_MEMBER
};

// The table, filled on the first call from the libzip this mpspack was built against (MPSPACK_LIBZIP_SONAME);
// a Runtime error naming the library when it cannot be loaded. Thread-safe.
Result<const ZipApi*> zip_api();

}  // namespace mpspack::pt2
