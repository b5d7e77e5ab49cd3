// GPU backends are plugins: lib/mpspack/backend_<device>.so beside the executable's bin/, opened by `run` when a
// library needs that device. Linking the CUDA runtime and the CUDA shim's fat binaries into mpspack would load
// and register them at every start of every command, ~1.7 ms of each command's start-up (e.g. `inspect`,
// docs/PERFORMANCE.md). A plugin is opened RTLD_GLOBAL: the model library dlopen'ed after it binds to the device
// functions it brings (the aoti_torch_<device>_* shim, the device runtime). It resolves the generic shim and the
// rest of mpspack against the executable, which exports them.
#include "plugin.hpp"

#include "runtime/shim/code_folder.hpp"

#include "mpspack/shared_library.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

namespace mpspack::runtime {
namespace {

// <folder of the binary holding this code (the executable, or the C API's library)>/../lib/mpspack
Result<std::filesystem::path> plugin_folder() {
  const std::string folder = shim::code_folder();
  if (folder.starts_with("(")) return make_error(Error::Kind::Runtime, "cannot find mpspack's own file: {}", folder);
  return std::filesystem::path(folder).parent_path().parent_path() / "lib" / "mpspack";
}

}  // namespace

// Defined where the CUDA backend is linked into the binary holding this code (the C API's library built with CUDA,
// libpack/src/capi); weak, so null in the executable, which opens the plugin file instead.
extern "C" __attribute__((weak)) void mpspack_make_backend_v1(int32_t index, Result<std::unique_ptr<Backend>>* out);

Result<std::unique_ptr<Backend>> make_plugin_backend(std::string_view device, int32_t index) {
  if (mpspack_make_backend_v1 && device == "cuda") {
    Result<std::unique_ptr<Backend>> made =
        make_error(Error::Kind::Runtime, "the built-in {} backend made none", device);
    mpspack_make_backend_v1(index, &made);
    return made;
  }
  MPK_TRY(auto folder, plugin_folder());
  const auto path = folder / fmt::format("backend_{}.so", device);
  // Only called for backends this build made, so a missing file is a broken install, not an unsupported device.
  if (!std::filesystem::exists(path))
    return make_error(Error::Kind::Runtime, "this mpspack's {} backend is missing: no {}", device, path.string());
  MPK_TRY(void* handle, open_shared_library(path.string(), RTLD_GLOBAL));
  BackendEntry entry = nullptr;
  MPK_CHECK(find_function(handle, path.c_str(), kBackendEntry, entry));
  Result<std::unique_ptr<Backend>> made = make_error(Error::Kind::Runtime, "{} made no backend", path.string());
  entry(index, &made);
  return made;
}

}  // namespace mpspack::runtime
