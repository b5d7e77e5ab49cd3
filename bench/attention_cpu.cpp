// The CPU shim's attention (aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu, shim/attention.cpp) on
// the shapes of the zoo's transformers and of the full-size models: median and fastest of the timed calls.
//
//   cmake -DMPSPACK_BUILD_BENCH=ON ... && ninja -C build attention_cpu && build/bin/attention_cpu [REPS=50] [TEAM]
// TEAM: openmp (default) runs the kernel on libgomp's team, as in a model, whose library brings libgomp;
// OMP_NUM_THREADS then sets the threads (default: every core this process may use). pool: on mpspack's own pool, as
// where no libgomp is loaded (every usable core; taskset narrows it). The header says which ran and on how many
// threads. The shapes, layouts and masks are those of bench/device/attention_torch.py, in the same order: that script
// times torch on them.
#include "runtime/shim/aoti_shim.h"
#include "runtime/shim/parallel.hpp"
#include "runtime/shim/tensor.hpp"

#include <mpspack/half.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace mpspack::shim;

namespace {

enum class Mask {
  none,
  // HF's padding mask [B,1,1,S] broadcast over the query rows by AOTInductor: a [B,1,L,S] view, stride 0 on L.
  expanded,
  // The same mask materialized as a dense [B,1,L,S] tensor (transformers' 4-D SDPA mask).
  dense,
};

struct Shape {
  const char* what;
  int64_t B, H, L, S, E;
  bool causal;
  bool from_rows;  // q, k, v as models hand them over: [B, L, H, E] memory viewed as [B, H, L, E]
  Mask mask;
  bool bf16;
};

int32_t dtype_of(const Shape& s) { return static_cast<int32_t>(s.bf16 ? DType::bf16 : DType::f32); }

TensorPtr random_tensor(const Shape& s, int64_t rows, unsigned seed) {
  const std::vector<int64_t> sizes{s.B, s.H, rows, s.E};
  const std::vector<int64_t> strides = s.from_rows ? std::vector<int64_t>{rows * s.H * s.E, s.E, s.H * s.E, 1}
                                                   : std::vector<int64_t>{s.H * rows * s.E, rows * s.E, s.E, 1};
  TensorPtr t(new_tensor(sizes, strides, dtype_of(s)));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  const std::size_t isz = t->itemsize();
  for (int64_t i = 0; i < t->numel(); ++i) store_from_double(t->data() + i * int64_t(isz), t->dtype, d(rng));
  return t;
}

// A padding mask: 0 for the first S - S/8 keys of each image, -inf-like for the rest (as HF's, finfo.min).
std::vector<float> padding_values(const Shape& s) {
  std::vector<float> m(std::size_t(s.B * s.S), 0.0f);
  for (int64_t b = 0; b < s.B; ++b)
    for (int64_t j = s.S - s.S / 8; j < s.S; ++j) m[std::size_t(b * s.S + j)] = -3.4028235e38f;
  return m;
}

// The median and the fastest of the timed calls, ms (the fastest: a loaded machine's preemptions left out).
std::pair<double, double> call_ms(const Shape& s, int reps) {
  TensorPtr q = random_tensor(s, s.L, 1), k = random_tensor(s, s.S, 2), v = random_tensor(s, s.S, 3);
  TensorPtr mask_storage;
  AtenTensorHandle mask = nullptr;
  if (s.mask != Mask::none) {
    const std::vector<float> pad = padding_values(s);
    const int64_t rows = s.mask == Mask::dense ? s.L : 1;
    mask_storage.reset(new_contiguous(std::vector<int64_t>{s.B, 1, rows, s.S}, dtype_of(s)));
    const std::size_t isz = mask_storage->itemsize();
    for (int64_t b = 0; b < s.B; ++b)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < s.S; ++j)
          store_from_double(mask_storage->data() + ((b * rows + i) * s.S + j) * int64_t(isz), mask_storage->dtype,
                            pad[std::size_t(b * s.S + j)]);
    const int64_t sizes[4] = {s.B, 1, s.L, s.S};
    const int64_t strides[4] = {rows * s.S, rows * s.S, s.mask == Mask::dense ? s.S : 0, 1};
    if (aoti_torch_create_tensor_from_blob(mask_storage->data(), 4, sizes, strides, 0, mask_storage->dtype, 0, 0,
                                           &mask) != 0)
      std::exit(1);
  }
  std::vector<double> ms;
  for (int r = 0; r < reps + 3; ++r) {
    AtenTensorHandle out = nullptr, lse = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    if (aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(q.get(), k.get(), v.get(), 0.0, s.causal,
                                                                   mask ? &mask : nullptr, nullptr, &out, &lse) != 0)
      std::exit(1);
    if (r >= 3) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    aoti_torch_delete_tensor_object(out);
    aoti_torch_delete_tensor_object(lse);
  }
  if (mask) aoti_torch_delete_tensor_object(mask);
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
  const std::string team = argc > 2 ? argv[2] : "openmp";
  if (team != "openmp" && team != "pool") {
    std::fprintf(stderr, "attention_cpu: TEAM is openmp or pool, not %s\n", team.c_str());
    return 2;
  }
  // Loaded for good, as a model library's dependency is: the shim finds it (parallel.cpp, openmp()).
  if (team == "openmp" && dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::fprintf(stderr, "attention_cpu: libgomp.so.1 cannot be loaded (%s); run with TEAM pool\n", dlerror());
    return 1;
  }
  std::printf("%u usable cores, shim threads: %u (%s); median of %d calls, ms\n\n", usable_cores(), thread_count(),
              threads_on_openmp() ? "libgomp" : "mpspack's pool", reps);
  std::printf("| attention | ms | fastest ms |\n|---|---|---|\n");
  constexpr Mask no = Mask::none;
  // Keep in step with SHAPES in bench/device/attention_torch.py.
  const Shape shapes[] = {
      {"[1,6,1500,64] (audio_encoder: 1,500 frames, 6 heads)", 1, 6, 1500, 1500, 64, false, false, no, false},
      {"[1,6,1500,64] from [1,1500,6,64] rows (as the audio encoder hands them)", 1, 6, 1500, 1500, 64, false, true, no,
       false},
      {"[1,4,128,64] (bert: 128 tokens, 4 heads)", 1, 4, 128, 128, 64, false, false, no, false},
      {"[1,4,128,64] from [1,128,4,64] rows (as bert hands them)", 1, 4, 128, 128, 64, false, true, no, false},
      {"[1,4,128,64] causal (gpt2)", 1, 4, 128, 128, 64, true, false, no, false},
      {"[1,3,197,64] from [1,197,3,64] rows (vit_tiny: 197 tokens, 3 heads)", 1, 3, 197, 197, 64, false, true, no,
       false},
      {"[1,12,128,64] rows (BERT-base, no mask)", 1, 12, 128, 128, 64, false, true, no, false},
      {"[1,12,128,64] rows, mask [1,1,1,128] expanded to [1,1,128,128] (BERT-base)", 1, 12, 128, 128, 64, false, true,
       Mask::expanded, false},
      {"[8,12,128,64] rows (BERT-base batch 8, no mask)", 8, 12, 128, 128, 64, false, true, no, false},
      {"[8,12,128,64] rows, dense mask [8,1,128,128] (BERT-base batch 8)", 8, 12, 128, 128, 64, false, true,
       Mask::dense, false},
      {"[1,12,128,64] rows causal (GPT-2 124M prompt)", 1, 12, 128, 128, 64, true, true, no, false},
      {"[1,12,1,64] over a [1,12,512,64] cache, mask [1,1,1,512] (GPT-2 decode step)", 1, 12, 1, 512, 64, false, false,
       Mask::expanded, false},
      {"[1,12,197,64] rows (ViT-B/16)", 1, 12, 197, 197, 64, false, true, no, false},
      {"[1,14,128,64] rows causal (Llama 0.5B prompt; GQA's 2 k/v heads repeated to 14)", 1, 14, 128, 128, 64, true,
       true, no, false},
      {"[1,14,128,64] rows causal, bf16 (Llama 0.5B prompt in bf16)", 1, 14, 128, 128, 64, true, true, no, true},
      {"[1,8,1500,64] rows (Whisper-base encoder)", 1, 8, 1500, 1500, 64, false, true, no, false},
  };
  for (const Shape& s : shapes) {
    const auto [median, fastest] = call_ms(s, reps);
    std::printf("| %s | %.3f | %.3f |\n", s.what, median, fastest);
  }
}
