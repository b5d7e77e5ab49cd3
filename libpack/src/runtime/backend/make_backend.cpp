// The backend for a library's device: the CPU one built in, a GPU one from its plugin (plugin.hpp).
#include "backend.hpp"
#include "plugin.hpp"

#if MPSPACK_HAVE_CUDA
namespace mpspack::shim::cuda {
bool shim_registered();  // cuda_provided.cpp
}
#endif

namespace mpspack::runtime {

Result<std::unique_ptr<Backend>> make_backend(std::string_view device, int32_t index) {
  if (device == "cpu") return make_cpu_backend();
  // Only names of this build's plugins reach a file name: `device` comes from the container.
  if (MPSPACK_HAVE_CUDA && device == "cuda") return make_plugin_backend(device, index);
  return make_error(Error::Kind::Unsupported, "no {} backend is built into this mpspack (it has: {})", device,
                    built_backends());
}

std::string_view built_backends() {
#if MPSPACK_HAVE_CUDA
  (void)shim::cuda::shim_registered();  // links in the names the CUDA plugin provides, for inspect
  return "cpu, cuda";
#else
  return "cpu";
#endif
}

}  // namespace mpspack::runtime
