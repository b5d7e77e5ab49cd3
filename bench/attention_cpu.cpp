// The CPU shim's attention (aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu, shim/attention.cpp) on
// the shapes of the zoo's transformers: median of the timed calls, float32, no mask.
//
//   cmake -DMPSPACK_BUILD_BENCH=ON ... && ninja -C build attention_cpu && build/bin/attention_cpu [REPS=50]
// OMP_NUM_THREADS sets the shim's threads (default: every core this process may use).
#include "aoti_shim.h"
#include "parallel.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace mpspack::shim;

namespace {

struct Shape {
  const char* what;
  int64_t B, H, L, E;
  bool causal;
  bool from_rows;  // q, k, v as models hand them over: [B, L, H, E] memory viewed as [B, H, L, E]
};

TensorPtr random_tensor(const Shape& s, unsigned seed) {
  const std::vector<int64_t> sizes{s.B, s.H, s.L, s.E};
  const std::vector<int64_t> strides = s.from_rows ? std::vector<int64_t>{s.L * s.H * s.E, s.E, s.H * s.E, 1}
                                                   : std::vector<int64_t>{s.H * s.L * s.E, s.L * s.E, s.E, 1};
  TensorPtr t(new_tensor(sizes, strides, static_cast<int32_t>(DType::f32)));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  auto* p = reinterpret_cast<float*>(t->data());
  for (int64_t i = 0; i < t->numel(); ++i) p[i] = d(rng);
  return t;
}

double median_ms(const Shape& s, int reps) {
  TensorPtr q = random_tensor(s, 1), k = random_tensor(s, 2), v = random_tensor(s, 3);
  std::vector<double> ms;
  for (int r = 0; r < reps + 3; ++r) {
    AtenTensorHandle out = nullptr, lse = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    if (aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(q.get(), k.get(), v.get(), 0.0, s.causal, nullptr,
                                                                   nullptr, &out, &lse) != 0)
      std::exit(1);
    if (r >= 3) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    aoti_torch_delete_tensor_object(out);
    aoti_torch_delete_tensor_object(lse);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
  const char* omp = std::getenv("OMP_NUM_THREADS");
  std::printf("%u usable cores, shim threads: %s (%s); median of %d calls, ms\n\n", usable_cores(),
              omp ? omp : "all", threads_on_openmp() ? "libgomp" : "mpspack's pool", reps);
  std::printf("| attention, float32 | ms |\n|---|---|\n");
  const Shape shapes[] = {{"[1,6,1500,64] (audio_encoder: 1,500 frames, 6 heads)", 1, 6, 1500, 64, false, false},
                          {"[1,6,1500,64] from [1,1500,6,64] rows (as the audio encoder hands them)", 1, 6, 1500, 64,
                           false, true},
                          {"[1,4,128,64] (bert: 128 tokens, 4 heads)", 1, 4, 128, 64, false, false},
                          {"[1,4,128,64] from [1,128,4,64] rows (as bert hands them)", 1, 4, 128, 64, false, true},
                          {"[1,4,128,64] causal (gpt2)", 1, 4, 128, 64, true, false},
                          {"[1,3,197,64] from [1,197,3,64] rows (vit_tiny: 197 tokens, 3 heads)", 1, 3, 197, 64, false,
                           true}};
  for (const Shape& s : shapes) std::printf("| %s | %.3f |\n", s.what, median_ms(s, reps));
}
