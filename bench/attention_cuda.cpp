// attention_cuda: the CUDA shim's attention (aoti_torch_cuda__scaled_dot_product_efficient_attention,
// shim_cuda/cuda_attention.cu) each way on the zoo's shapes and on a sweep of sequence lengths (device machine).
//
// For each shape and way (fused: one kernel; blocked: scores by cuBLAS, a softmax kernel, a second product; auto:
// the shim's own choice), back to back without a sync: the host's microseconds per call and the GPU's (events
// around `calls` calls), medians of `rounds` rounds. An uncaptured run of a small model is bound by the host's time,
// a long sequence by the GPU's, so the way to take is the one whose larger figure is smaller.
// bench/device/attention_cuda_torch.py times torch's kernel for the same op on the same shapes beside these.
//
//   attention_cuda [calls] [rounds]      (defaults 50, 5)
#include "runtime/shim/aoti_shim.h"
#include "runtime/shim_cuda/aoti_shim_cuda.h"
#include "runtime/tuning/tuning.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  const char* what;
  int64_t B, H, L, S, E;
  bool causal;
};

// The zoo's shapes (bench/zoo/models.py, own_models.py), then the audio encoder's heads over a sweep of lengths,
// then BERT-base's at batch 8 (past the fused kernel's work: blocked, several images a step).
// q, k and v come as models hand them over: [B, L, H, E] memory viewed as [B, H, L, E].
const std::vector<Shape> kShapes = {
    {"audio_encoder [1,6,1500,64]", 1, 6, 1500, 1500, 64, false},
    {"vit_tiny [1,3,197,64]", 1, 3, 197, 197, 64, false},
    {"bert [1,4,64,64]", 1, 4, 64, 64, 64, false},
    {"gpt2 causal [1,4,32,64]", 1, 4, 32, 32, 64, true},
    {"llama causal [1,8,32,32]", 1, 8, 32, 32, 32, true},
    {"sweep [1,6,256,64]", 1, 6, 256, 256, 64, false},
    {"sweep [1,6,384,64]", 1, 6, 384, 384, 64, false},
    {"sweep [1,6,512,64]", 1, 6, 512, 512, 64, false},
    {"sweep [1,6,768,64]", 1, 6, 768, 768, 64, false},
    {"sweep [1,6,1024,64]", 1, 6, 1024, 1024, 64, false},
    {"sweep [1,12,1024,64]", 1, 12, 1024, 1024, 64, false},
    {"sweep [8,6,512,64]", 8, 6, 512, 512, 64, false},
    {"bert batch 8 [8,12,128,64]", 8, 12, 128, 128, 64, false},
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "attention_cuda: %s\n", what.c_str());
  std::exit(1);
}
void ok(AOTITorchError rc, const char* what) {
  if (rc != 0) die(std::string(what) + " failed");
}
void ok(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(rc));
}

// A [B, H, T, E] view of random [B, T, H, E] float32 memory on the GPU.
AtenTensorHandle operand(int64_t B, int64_t H, int64_t T, int64_t E, unsigned seed) {
  const int64_t n = B * H * T * E;
  std::vector<float> host(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (float& x : host) x = d(rng);
  const int64_t sizes[4] = {B, H, T, E}, strides[4] = {T * H * E, E, H * E, 1};
  AtenTensorHandle t = nullptr;
  ok(aoti_torch_empty_strided(4, sizes, strides, aoti_torch_dtype_float32(), aoti_torch_device_type_cuda(), 0, &t),
     "aoti_torch_empty_strided");
  void* p = nullptr;
  ok(aoti_torch_get_data_ptr(t, &p), "aoti_torch_get_data_ptr");
  ok(cudaMemcpy(p, host.data(), size_t(n) * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy");
  return t;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

struct Times {
  double host_us, gpu_us;
};

template <class F>
Times measure(int calls, int rounds, F f) {
  std::vector<double> host, gpu;
  cudaEvent_t a, b;
  ok(cudaEventCreate(&a), "cudaEventCreate");
  ok(cudaEventCreate(&b), "cudaEventCreate");
  for (int r = 0; r < rounds; ++r) {
    ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    ok(cudaEventRecord(a, nullptr), "cudaEventRecord");
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) f();
    const auto t1 = Clock::now();
    ok(cudaEventRecord(b, nullptr), "cudaEventRecord");
    ok(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    ok(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    gpu.push_back(double(ms) * 1000 / calls);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return {median(host), median(gpu)};
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 50, rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  if (calls <= 0 || rounds <= 0) die("usage: attention_cuda [calls > 0] [rounds > 0]");
  std::printf("float32, q/k/v from [B, L, H, E] rows; us per call, median of %d rounds of %d calls\n\n", rounds, calls);
  std::printf("| shape | way | host us | gpu us |\n|---|---|---|---|\n");
  for (const Shape& s : kShapes) {
    AtenTensorHandle q = operand(s.B, s.H, s.L, s.E, 1), k = operand(s.B, s.H, s.S, s.E, 2),
                     v = operand(s.B, s.H, s.S, s.E, 3);
    auto call = [&] {
      AtenTensorHandle o[4] = {};
      ok(aoti_torch_cuda__scaled_dot_product_efficient_attention(q, k, v, nullptr, 0, 0.0, s.causal, nullptr, &o[0],
                                                                 &o[1], &o[2], &o[3]),
         "aoti_torch_cuda__scaled_dot_product_efficient_attention");
      for (AtenTensorHandle t : o) aoti_torch_delete_tensor_object(t);
    };
    for (const char* way : {"fused", "blocked", "auto"}) {
      mpspack::Tuning tuned = mpspack::tuning();  // MPSPACK_CUDA_ATTENTION's ways
      tuned.cuda_attention = std::string(way) == "auto" ? "" : way;
      const mpspack::ScopedTuning scoped(tuned);
      call();  // cuBLAS's handle and workspace, the allocator's blocks
      const Times t = measure(calls, rounds, call);
      std::printf("| %s | %s | %.1f | %.1f |\n", s.what, way, t.host_us, t.gpu_us);
    }
    for (AtenTensorHandle t : {q, k, v}) aoti_torch_delete_tensor_object(t);
  }
  return 0;
}
