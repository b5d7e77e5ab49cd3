#include "zip_api.hpp"

#include "mpspack/shared_library.hpp"

namespace mpspack::pt2 {
namespace {

Result<ZipApi> load() {
  MPK_TRY(void* handle, open_shared_library(MPSPACK_LIBZIP_SONAME));
  ZipApi api;
#define MPSPACK_ZIP_LOAD(name) MPK_CHECK(find_function(handle, MPSPACK_LIBZIP_SONAME, #name, api.name));
  MPSPACK_ZIP_FUNCTIONS(MPSPACK_ZIP_LOAD)
#undef MPSPACK_ZIP_LOAD
  return api;
}

}  // namespace

Result<const ZipApi*> zip_api() {
  static const Result<ZipApi> loaded = load();  // once; the library stays loaded
  if (!loaded.ok()) return loaded.error();
  return &loaded.value();
}

}  // namespace mpspack::pt2
