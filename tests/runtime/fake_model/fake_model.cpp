// A test-only model library with AOTInductor's C API, for the loader's failure paths:
//   FAKE_MODEL_FAIL_RUN: Run prints its reason on stderr and returns 1, as AOTInductor does when the
//                        generated code throws.
//   FAKE_MODEL_MISSING_IMPORT: also imports aoti_torch_does_not_exist, which no shim provides (the
//                        loader must refuse it before dlopen).
//   FAKE_MODEL_SLEEF:    fails like FAIL_RUN, printing exp(1) from Sleef_expf_u10: torch's
//                        vectorized CPU kernels import SLEEF (the loader must provide libsleef).
//   FAKE_MODEL_LARGE_BLOCK: 33 MiB of constants (CMakeLists.txt), more than the loader routes Create's block for.
//                        Create mallocs a block of their size (as AOTInductor's Create mallocs one block for all
//                        its constants), copies them in, grows it by 8 MiB with realloc and checks the bytes
//                        came along, copies them in once more with __memcpy_chk; Delete frees it. Run fails like
//                        FAIL_RUN.
// One input, one output; Create accepts "cpu" only.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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
extern uint8_t _binary_constants_bin_end[];
void* __memcpy_chk(void* dst, const void* src, size_t n, size_t dst_size);  // glibc's fortified memcpy
}

namespace {
int g_container = 0;  // the handle points here; no state
}

#ifdef FAKE_MODEL_LARGE_BLOCK
void* g_block = nullptr;

int32_t make_block() {
  const size_t n = size_t(_binary_constants_bin_end - _binary_constants_bin_start);
  auto* p = static_cast<uint8_t*>(std::malloc(n));
  if (!p) return 1;
  std::memcpy(p, _binary_constants_bin_start, n);
  auto* q = static_cast<uint8_t*>(std::realloc(p, n + (size_t(8) << 20)));
  if (!q) return std::free(p), 1;
  g_block = q;
  if (std::memcmp(q, _binary_constants_bin_start, n) != 0) return 1;
  // Copied again the way a build with _FORTIFY_SOURCE copies when it knows the destination's size.
  std::memset(q, 0, n);
  __memcpy_chk(q, _binary_constants_bin_start, n, n + (size_t(8) << 20));
  return std::memcmp(q, _binary_constants_bin_start, n) == 0 ? 0 : 1;
}
#endif

FAKE_API int32_t AOTInductorModelContainerCreateWithDevice(void** h, size_t, const char* device, const char*) {
  if (!h || !device || std::strcmp(device, "cpu") != 0) return 1;
#ifdef FAKE_MODEL_LARGE_BLOCK
  if (make_block() != 0) return 1;
#endif
  *h = &g_container;
  return 0;
}
FAKE_API int32_t AOTInductorModelContainerDelete(void*) {
#ifdef FAKE_MODEL_LARGE_BLOCK
  std::free(g_block);
  g_block = nullptr;
#endif
  return 0;
}
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
