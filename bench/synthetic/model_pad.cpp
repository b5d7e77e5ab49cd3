// SYNTHETIC benchmark model: examples/tiny_mlp with a large extra constant. The constants region
// (constants.S, TINY_MLP_CONSTANTS) holds tiny_mlp's blob followed by PAD bytes; Create copies
// the whole region out like AOTInductor's CPU Create copies every constant (one std::malloc, as
// its RAII_cpuMalloc, then memcpy), Run ignores the extra bytes. Built by bench/synthetic/make.sh into a folder under
// /tmp, never into the committed examples. Results from it are labelled "synthetic".
#define AOTInductorModelContainerCreateWithDevice tiny_mlp_create_inner
#define AOTInductorModelContainerDelete tiny_mlp_delete_inner
#include "../../examples/tiny_mlp/model.cpp"
#undef AOTInductorModelContainerCreateWithDevice
#undef AOTInductorModelContainerDelete

#include <map>

namespace {
std::map<void*, void*> g_pad;  // container -> its copy of the extra constant
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerCreateWithDevice(AOTInductorModelContainerHandle* h,
                                                                        size_t num_models, const char* device,
                                                                        const char* cubin_dir) {
  AOTIRuntimeError rc = tiny_mlp_create_inner(h, num_models, device, cubin_dir);
  if (rc != kSuccess) return rc;
  const uint64_t region = uint64_t(_binary_constants_bin_end - _binary_constants_bin_start);
  const uint64_t extra = (region - kBlobSize + kAlign - 1) / kAlign * kAlign;
  if (extra == 0) return kSuccess;
  void* copy = std::malloc(extra);
  if (!copy) return fail("Create: out of memory for the extra constant");
  std::memcpy(copy, _binary_constants_bin_start + kBlobSize, region - kBlobSize);
  g_pad[*h] = copy;
  return kSuccess;
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerDelete(AOTInductorModelContainerHandle h) {
  if (auto it = g_pad.find(h); it != g_pad.end()) {
    std::free(it->second);
    g_pad.erase(it);
  }
  return tiny_mlp_delete_inner(h);
}
