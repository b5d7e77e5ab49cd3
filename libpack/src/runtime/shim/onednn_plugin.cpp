// The oneDNN plugin (onednn_plugin.hpp): lib/mpspack/onednn.so beside the executable's bin/, opened at the first
// convolution or float32 GEMM, or earlier on a thread of its own while a model that will need it loads. Linked
// in, oneDNN (40 MB, with libgomp and libOpenCL) would load at every start of every command; `inspect` must start
// in a few milliseconds (docs/PERFORMANCE.md), and most commands run no model.
#include "onednn_plugin.hpp"

#include "constant_memory.hpp"
#include "conv_cpu.hpp"
#include "file_pages.hpp"
#include "onednn_api.hpp"
#include "code_folder.hpp"
#include "runtime/tuning/tuning.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <span>

namespace mpspack::shim {
namespace {

// <folder of the binary holding this code>/../lib/mpspack/onednn.so, where the build and the install put it.
std::string plugin_path() {
  const std::string folder = code_folder();
  if (folder.starts_with("(")) return folder;
  return folder + "../lib/mpspack/onednn.so";
}

std::atomic<bool> g_plugin_tried{false};  // plugin() has run: what it made can be read without opening it

struct Plugin {
  OnednnConvolution convolution = nullptr;
  OnednnDescribe describe = nullptr;
  OnednnSgemm sgemm = nullptr;
  OnednnMatmul16 matmul16 = nullptr;
  OnednnPacked packed = nullptr;
  std::string problem;  // why it is not open: one line naming where mpspack looked
};

const Plugin& plugin() {
  static const Plugin p = [] {
    Plugin made;
    const std::string path = plugin_path();
    // Never closed: oneDNN's OpenMP threads run its code until the process ends.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = ::dlerror();
      std::string why = error ? error : "unknown reason";
      if (why.starts_with(path + ": ")) why.erase(0, path.size() + 2);  // named once, not twice
      made.problem = "cannot open mpspack's oneDNN plugin " + path + ": " + why;
      return made;
    }
    made.convolution = reinterpret_cast<OnednnConvolution>(::dlsym(handle, kOnednnConvolutionEntry));
    made.describe = reinterpret_cast<OnednnDescribe>(::dlsym(handle, kOnednnDescribeEntry));
    made.sgemm = reinterpret_cast<OnednnSgemm>(::dlsym(handle, kOnednnSgemmEntry));
    made.matmul16 = reinterpret_cast<OnednnMatmul16>(::dlsym(handle, kOnednnMatmul16Entry));
    made.packed = reinterpret_cast<OnednnPacked>(::dlsym(handle, kOnednnPackedEntry));
    const auto tune = reinterpret_cast<OnednnTune>(::dlsym(handle, kOnednnTuneEntry));
    if (made.convolution == nullptr || made.describe == nullptr || made.sgemm == nullptr || made.matmul16 == nullptr ||
        made.packed == nullptr || tune == nullptr)
      made.problem = path + " is not this mpspack's oneDNN plugin (no " + kOnednnSgemmEntry + ")";
    else tune(OnednnTuning{.f32_on_sgemm = tuning().cpu_gemm == "sgemm"});
    g_plugin_tried.store(true, std::memory_order_release);
    return made;
  }();
  return p;
}

std::atomic<uint64_t> g_gemm_calls{0};

// The bytes of weights oneDNN may keep packed (MPSPACK_CPU_PACK_WEIGHTS=on, every byte in constant memory), else 0.
// Once they are packed, their own pages are read again only by another plan's first call: those of the container's
// mapped file go back to it (release_file_pages), so the weights are not resident twice.
std::size_t packable_bytes(const void* data, std::span<const int64_t> sizes, std::span<const int64_t> strides,
                           std::size_t itemsize) {
  if (!tuning().cpu_pack_weights || std::ranges::any_of(strides, [](int64_t s) { return s < 0; })) return 0;
  const std::size_t bytes = storage_nbytes(sizes, strides, itemsize);
  return bytes > 0 && is_constant_memory(data, bytes) ? bytes : 0;
}

ConvTensorView view_of(const Tensor& t) { return {t.data(), t.dtype, t.sizes, t.strides}; }

}  // namespace

std::string_view cpu_conv_mode() { return tuning().cpu_conv; }

bool onednn_plugin_open(std::string* why) {
  const Plugin& p = plugin();
  if (why) *why = p.problem;
  return p.problem.empty();
}

std::string onednn_description() { return onednn_plugin_open() ? plugin().describe() : std::string(); }

void convolution_onednn(const ConvShape& s, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& out,
                        std::string* implementation) {
  const Plugin& p = plugin();
  if (!p.problem.empty()) fail("convolution: " + p.problem);
  OnednnConvCall call{&s, view_of(x), view_of(w), b ? view_of(*b) : ConvTensorView{}, view_of(out), implementation};
  bool packed_now = false;
  const std::size_t packable = packable_bytes(w.data(), w.sizes, w.strides, w.itemsize());
  call.pack_weights = packable > 0;
  call.packed_now = &packed_now;
  const std::string problem = p.convolution(call);
  if (packed_now) release_file_pages(w.data(), packable);
  if (!problem.empty()) fail("convolution: " + problem + ": " + dtype_name(x.dtype) + " " + s.describe());
}

bool sgemm_onednn(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                  const float* B, int64_t ldb, float beta, float* C, int64_t ldc, const float* bias) {
  const Plugin& p = plugin();
  if (!p.problem.empty()) return false;
  const int64_t b_sizes[] = {K, N}, b_strides[] = {tb ? 1 : ldb, tb ? ldb : 1};
  const std::size_t packable = packable_bytes(B, b_sizes, b_strides, sizeof(float));
  bool packed_now = false;
  const std::string problem = p.sgemm({.ta = ta,
                                       .tb = tb,
                                       .M = M,
                                       .N = N,
                                       .K = K,
                                       .alpha = alpha,
                                       .A = A,
                                       .lda = lda,
                                       .B = B,
                                       .ldb = ldb,
                                       .pack_b = packable > 0,
                                       .packed_now = &packed_now,
                                       .beta = beta,
                                       .C = C,
                                       .ldc = ldc,
                                       .bias = bias});
  if (packed_now) release_file_pages(B, packable);
  if (problem == kOnednnBiasNotFused) return false;
  if (!problem.empty())
    fail("float32 product [" + std::to_string(M) + ", " + std::to_string(K) + "] @ [" + std::to_string(K) + ", " +
         std::to_string(N) + "]: " + problem);
  g_gemm_calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool matmul16_onednn(const OnednnMatmul16Call& call) {
  const Plugin& p = plugin();
  if (!p.problem.empty()) return false;
  OnednnMatmul16Call packing = call;
  bool packed_now = false;
  const int64_t b_sizes[] = {call.K, call.N}, b_strides[] = {call.b_s0, call.b_s1};
  const std::size_t packable = packable_bytes(call.b, b_sizes, b_strides, 2);
  packing.pack_b = packable > 0;
  packing.packed_now = &packed_now;
  const bool ran = p.matmul16(packing).empty();
  if (packed_now) release_file_pages(call.b, packable);
  if (!ran) return false;
  g_gemm_calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void onednn_forget_packed(const void* data, std::size_t bytes) {
  if (!g_plugin_tried.load(std::memory_order_acquire)) return;  // never opened: nothing packed
  if (const Plugin& p = plugin(); p.problem.empty()) p.packed(data, bytes);
}

std::size_t onednn_packed_bytes() {
  if (!g_plugin_tried.load(std::memory_order_acquire)) return 0;
  const Plugin& p = plugin();
  return p.problem.empty() ? p.packed(nullptr, 0) : 0;
}

uint64_t onednn_gemm_calls() { return g_gemm_calls.load(std::memory_order_relaxed); }

bool product_for_onednn(int64_t M, int64_t N, int64_t K) {
  return cpu_gemm_mode() != "openblas" && double(M) * double(N) * double(K) >= kOnednnGemmMinMacs;
}

bool needs_onednn(std::string_view import) { return import == "aoti_torch_cpu_convolution"; }

std::string_view cpu_gemm_mode() { return tuning().cpu_gemm; }

}  // namespace mpspack::shim
