// A test-only model library with AOTInductor's C API, for the loader's failure paths:
//   FAKE_MODEL_FAIL_RUN: Run prints its reason on stderr and returns 1, as AOTInductor does when the
//                        generated code throws.
//   FAKE_MODEL_MISSING_IMPORT: also imports aoti_torch_does_not_exist, which no shim provides (the
//                        loader must refuse it before dlopen).
//   FAKE_MODEL_SLEEF:    fails like FAIL_RUN, printing exp(1) from Sleef_expf_u10: torch's
//                        vectorized CPU kernels import SLEEF (the loader must provide libsleef).
// One input, one output; Create accepts "cpu" only.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#define FAKE_API extern "C" __attribute__((visibility("default")))

extern "C" {
struct AtenTensorOpaque;
using AtenTensorHandle = AtenTensorOpaque*;
int32_t aoti_torch_delete_tensor_object(AtenTensorHandle);
#ifdef FAKE_MODEL_MISSING_IMPORT
int32_t aoti_torch_does_not_exist(void);
#endif
#ifdef FAKE_MODEL_SLEEF
float Sleef_expf_u10(float);
#endif
extern uint8_t _binary_constants_bin_start[];
}

namespace {
int g_container = 0;  // the handle points here; no state
}

FAKE_API int32_t AOTInductorModelContainerCreateWithDevice(void** h, size_t, const char* device, const char*) {
  if (!h || !device || std::strcmp(device, "cpu") != 0) return 1;
  *h = &g_container;
  return 0;
}
FAKE_API int32_t AOTInductorModelContainerDelete(void*) { return 0; }
FAKE_API int32_t AOTInductorModelContainerGetNumInputs(void*, size_t* n) { return *n = 1, 0; }
FAKE_API int32_t AOTInductorModelContainerGetNumOutputs(void*, size_t* n) { return *n = 1, 0; }
FAKE_API int32_t AOTInductorModelContainerRun(void*, AtenTensorHandle* in, size_t n_in, AtenTensorHandle*, size_t,
                                              void*, void*) {
  for (size_t i = 0; i < n_in; ++i) aoti_torch_delete_tensor_object(in[i]);  // the model owns its inputs
#ifdef FAKE_MODEL_MISSING_IMPORT
  return aoti_torch_does_not_exist();
#elif defined(FAKE_MODEL_SLEEF)
  std::fprintf(stderr, "Error: fake_model: deliberate failure in Run (exp(1) = %.5f)\n", double(Sleef_expf_u10(1.0f)));
  return 1;
#else
  std::fprintf(stderr, "Error: fake_model: deliberate failure in Run (constants start with %d)\n",
               int(_binary_constants_bin_start[0]));
  return 1;
#endif
}
