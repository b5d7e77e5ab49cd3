// The CPU shim's products in float16 and bfloat16 (widened to float, one float product on OpenBLAS, rounded once)
// against the same products in float32 (no conversion), on the shapes of a batch-8 MLP (the zoo's mlp_bf16:
// Linear 512-2048-512) and a batch-1 transformer projection: median of the timed calls of
// aoti_torch_cpu_addmm_out(out, bias, x, weight^T), as AOTInductor's generated code calls it.
//
//   cmake -DMPSPACK_BUILD_BENCH=ON ... && ninja -C build matmul_cpu && build/bin/matmul_cpu [REPS=200]
//   [linears|decode|prompt|batched]
// OMP_NUM_THREADS sets the shim's threads (default: every core this process may use). "linears": the float32
// Linear layers' table only (bench/device/matmul_torch.py sets torch's times beside it). "batched": float32 bmm
// against one mm call a matrix, on attention-sized batches.
#include "runtime/shim/aoti_shim.h"
#include "runtime/shim/constant_memory.hpp"
#include "runtime/shim/parallel.hpp"
#include "runtime/shim/tensor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string_view>
#include <vector>

using namespace mpspack::shim;

namespace {

struct Shape {
  const char* what;
  int64_t m, k, n;
};

// A tensor of `sizes` (contiguous) in `dtype`, filled with values in [-1, 1) through a float32 copy.
TensorPtr random_tensor(std::vector<int64_t> sizes, int32_t dtype, unsigned seed) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size() - 1; i > 0; --i) strides[i - 1] = strides[i] * sizes[i];
  TensorPtr f(new_tensor(sizes, strides, static_cast<int32_t>(DType::f32)));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  auto* p = reinterpret_cast<float*>(f->data());
  for (int64_t i = 0; i < f->numel(); ++i) p[i] = d(rng);
  TensorPtr t(new_tensor(sizes, strides, dtype));
  if (aoti_torch_copy_(t.get(), f.get(), 0) != 0) std::exit(1);
  return t;
}

// Median ms of `reps` timed calls of call(), after `warmup` untimed ones.
template <class Call>
double median_call_ms(int reps, int warmup, const Call& call) {
  std::vector<double> ms;
  for (int r = 0; r < reps + warmup; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    if (r >= warmup)
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// with_bias: addmm(out, bias broadcast over rows, x, weight^T); else mm(out, x, weight^T). The weight is
// registered as constant memory, as a loaded model's parameters are (MPSPACK_CPU_PACK_WEIGHTS=on packs it).
double median_ms(int32_t dtype, const Shape& s, int reps, bool with_bias = true) {
  TensorPtr x = random_tensor({s.m, s.k}, dtype, 1), w = random_tensor({s.n, s.k}, dtype, 2),
            b = random_tensor({s.n}, dtype, 3), out = random_tensor({s.m, s.n}, dtype, 4);
  add_constant_ranges(w.get(), {{w->data(), std::size_t(w->numel()) * w->itemsize()}});
  AtenTensorHandle wt = nullptr, bias = nullptr;
  const int64_t wt_sizes[] = {s.k, s.n}, wt_strides[] = {1, s.k}, b_sizes[] = {s.m, s.n}, b_strides[] = {0, 1};
  if (aoti_torch__reinterpret_tensor(w.get(), 2, wt_sizes, wt_strides, 0, &wt) != 0 ||
      aoti_torch__reinterpret_tensor(b.get(), 2, b_sizes, b_strides, 0, &bias) != 0)
    std::exit(1);
  const double ms = median_call_ms(reps, 5, [&] {
    if ((with_bias ? aoti_torch_cpu_addmm_out(out.get(), bias, x.get(), wt, 1.0, 1.0)
                   : aoti_torch_cpu_mm_out(out.get(), x.get(), wt)) != 0)
      std::exit(1);
  });
  aoti_torch_delete_tensor_object(wt);
  aoti_torch_delete_tensor_object(bias);
  remove_constant_ranges(w.get());
  return ms;
}

// Milliseconds a pass through `layers` layers of `layer`'s float32 products (mm, x @ weight^T), each layer's weights
// its own so that a pass streams them from memory as a model's run does, median of REPS passes. `as_parameters`: the
// weights registered as constant memory, as a loaded model's are (MPSPACK_CPU_PACK_WEIGHTS=on packs them).
double cold_products_ms(std::span<const Shape> layer, int layers, bool as_parameters, int reps) {
  struct Linear {
    TensorPtr x, w, out;
    AtenTensorHandle wt = nullptr;
  };
  std::vector<Linear> linears;
  for (int l = 0; l < layers; ++l)
    for (const Shape& s : layer) {
      Linear lin{random_tensor({s.m, s.k}, static_cast<int32_t>(DType::f32), 1),
                 random_tensor({s.n, s.k}, static_cast<int32_t>(DType::f32), unsigned(2 + l)),
                 random_tensor({s.m, s.n}, static_cast<int32_t>(DType::f32), 4)};
      if (as_parameters)
        add_constant_ranges(lin.w.get(), {{lin.w->data(), std::size_t(lin.w->numel()) * lin.w->itemsize()}});
      const int64_t wt_sizes[] = {s.k, s.n}, wt_strides[] = {1, s.k};
      if (aoti_torch__reinterpret_tensor(lin.w.get(), 2, wt_sizes, wt_strides, 0, &lin.wt) != 0) std::exit(1);
      linears.push_back(std::move(lin));
    }
  const double ms = median_call_ms(reps, 2, [&] {
    for (Linear& lin : linears)
      if (aoti_torch_cpu_mm_out(lin.out.get(), lin.x.get(), lin.wt) != 0) std::exit(1);
  });
  for (Linear& lin : linears) {
    aoti_torch_delete_tensor_object(lin.wt);
    if (as_parameters) remove_constant_ranges(lin.w.get());
  }
  return ms;
}

// A GPT-2 124M decode step's products: the 12 layers' q, k, v, output, MLP-in and MLP-out Linears at batch 1 (340 MB
// of weights, past any cache).
double decode_step_ms(int reps) {
  const int64_t d = 768, ff = 3072;
  const Shape layer[] = {{"q", 1, d, d}, {"k", 1, d, d},   {"v", 1, d, d},
                         {"o", 1, d, d}, {"up", 1, d, ff}, {"down", 1, ff, d}};
  return cold_products_ms(layer, 12, false, reps);
}

// A 128-token prompt's products through llama_500m's 24 layers (q, k, v, o, MLP gate, up, down; no LM head), weights
// as parameters (1.4 GB: cold at every call, as in the model, where the Linear table's repeated calls find them in
// cache).
double prompt_ms(int reps) {
  const int64_t m = 128, d = 896, kv = 128, ff = 4864;
  const Shape layer[] = {{"q", m, d, d},     {"k", m, d, kv},  {"v", m, d, kv},   {"o", m, d, d},
                         {"gate", m, d, ff}, {"up", m, d, ff}, {"down", m, ff, d}};
  return cold_products_ms(layer, 24, true, reps);
}

// A batch of float32 products [batch, m, k] @ [batch, k, n], the right operand read transposed as a key is: median ms
// of one bmm call, and of one mm call a matrix (how bmm runs a batch it does not spread over the threads).
struct BatchTimes {
  double bmm, one_at_a_time;
};
BatchTimes batched_ms(int64_t batch, const Shape& s, int reps) {
  const auto f32 = static_cast<int32_t>(DType::f32);
  TensorPtr a = random_tensor({batch, s.m, s.k}, f32, 1), bt = random_tensor({batch, s.n, s.k}, f32, 2),
            out = random_tensor({batch, s.m, s.n}, f32, 3);
  AtenTensorHandle b = nullptr;
  const int64_t b_sizes[] = {batch, s.k, s.n}, b_strides[] = {s.n * s.k, 1, s.k};
  if (aoti_torch__reinterpret_tensor(bt.get(), 3, b_sizes, b_strides, 0, &b) != 0) std::exit(1);
  std::vector<AtenTensorHandle> mats;  // matrix z of a, b and out, for the one-at-a-time calls
  for (int64_t z = 0; z < batch; ++z) {
    const int64_t a_sizes[] = {s.m, s.k}, a_strides[] = {s.k, 1}, m_sizes[] = {s.k, s.n}, m_strides[] = {1, s.k},
                  o_sizes[] = {s.m, s.n}, o_strides[] = {s.n, 1};
    AtenTensorHandle h[3] = {};
    if (aoti_torch__reinterpret_tensor(a.get(), 2, a_sizes, a_strides, z * s.m * s.k, &h[0]) != 0 ||
        aoti_torch__reinterpret_tensor(bt.get(), 2, m_sizes, m_strides, z * s.n * s.k, &h[1]) != 0 ||
        aoti_torch__reinterpret_tensor(out.get(), 2, o_sizes, o_strides, z * s.m * s.n, &h[2]) != 0)
      std::exit(1);
    mats.insert(mats.end(), h, h + 3);
  }
  const double whole = median_call_ms(reps, 5, [&] {
    if (aoti_torch_cpu_bmm_out(out.get(), a.get(), b) != 0) std::exit(1);
  });
  const double each = median_call_ms(reps, 5, [&] {
    for (size_t z = 0; z < mats.size(); z += 3)
      if (aoti_torch_cpu_mm_out(mats[z + 2], mats[z], mats[z + 1]) != 0) std::exit(1);
  });
  for (AtenTensorHandle h : mats) aoti_torch_delete_tensor_object(h);
  aoti_torch_delete_tensor_object(b);
  return {whole, each};
}

void batched_table(int reps) {
  std::printf(
      "%u usable cores, shim threads: %u (%s); median of %d calls, ms\n\n| float32 bmm | bmm | one mm a matrix | "
      "bmm / one at a time |\n|---|---|---|---|\n",
      usable_cores(), thread_count(), threads_on_openmp() ? "libgomp" : "mpspack's pool", reps);
  const struct {
    int64_t batch;
    Shape s;
  } rows[] = {{4, {"4 x [64,64] @ [64,128] (deberta_v2: query by relative keys)", 64, 64, 128}},
              {4, {"4 x [64,64] @ [64,64] (deberta_v2: query by keys)", 64, 64, 64}},
              {12, {"12 x [128,64] @ [64,128] (BERT-base's scores, as a bmm)", 128, 64, 128}},
              {8, {"8 x [64,32] @ [32,32] (small heads)", 64, 32, 32}},
              {8, {"8 x [16,32] @ [32,16] (below the threads' threshold)", 16, 32, 16}}};
  for (const auto& r : rows) {
    const BatchTimes t = batched_ms(r.batch, r.s, reps);
    std::printf("| %s | %.4f | %.4f | %.2fx |\n", r.s.what, t.bmm, t.one_at_a_time, t.bmm / t.one_at_a_time);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 200;
  const bool linears_only = argc > 2 && std::string_view(argv[2]) == "linears";
  if (argc > 2 && std::string_view(argv[2]) == "decode") {
    std::printf("GPT-2 124M decode step, 72 batch-1 float32 products, weights cold (340 MB): %.3f ms, median of %d\n",
                decode_step_ms(reps), reps);
    return 0;
  }
  if (argc > 2 && std::string_view(argv[2]) == "batched") {
    batched_table(reps);
    return 0;
  }
  if (argc > 2 && std::string_view(argv[2]) == "prompt") {
    std::printf("llama_500m 128-token prompt, 168 float32 products, weights cold (1.4 GB): %.3f ms, median of %d\n",
                prompt_ms(reps), reps);
    return 0;
  }
  const char* omp = std::getenv("OMP_NUM_THREADS");
  std::printf("%u usable cores, shim threads: %s (%s); median of %d calls, ms\n\n", usable_cores(), omp ? omp : "all",
              threads_on_openmp() ? "libgomp" : "mpspack's pool", reps);
  if (!linears_only)
    std::printf("| addmm (out = bias + x @ weight^T) | float32 | bfloat16 | float16 | bf16 / f32 | f16 / f32 |\n"
                "|---|---|---|---|---|---|\n");
  const Shape shapes[] = {{"[8,512] @ [512,2048] (mlp_bf16, first Linear)", 8, 512, 2048},
                          {"[8,2048] @ [2048,512] (mlp_bf16, second Linear)", 8, 2048, 512},
                          {"[1,4096] @ [4096,4096] (batch-1 projection)", 1, 4096, 4096},
                          {"[1,768] @ [768,768] (GPT-2 decode step, projection)", 1, 768, 768},
                          {"[1,768] @ [768,3072] (GPT-2 decode step, MLP in)", 1, 768, 3072},
                          {"[1,3072] @ [3072,768] (GPT-2 decode step, MLP out)", 1, 3072, 768},
                          {"[128,1024] @ [1024,1024] (a 128-token prompt)", 128, 1024, 1024}};
  for (const Shape& s : shapes) {
    if (linears_only) break;
    const double f32 = median_ms(static_cast<int32_t>(DType::f32), s, reps);
    const double bf16 = median_ms(static_cast<int32_t>(DType::bf16), s, reps);
    const double f16 = median_ms(static_cast<int32_t>(DType::f16), s, reps);
    std::printf("| %s | %.3f | %.3f | %.3f | %.2fx | %.2fx |\n", s.what, f32, bf16, f16, bf16 / f32, f16 / f32);
  }
  // What the bias costs on top of the product, on the Linear layers of convnext_tiny (tokens x channels of each
  // stage, 4x expansion), bert (128 tokens, 256 wide, 1024 in its MLP), vit_tiny (197 tokens, 192 wide) and
  // ViT-B/16 (768 wide).
  std::printf("\n| float32 | mm | addmm (bias) | addmm / mm |\n|---|---|---|---|\n");
  const Shape linears[] = {{"[3136,96] @ [96,384] (convnext stage 1)", 3136, 96, 384},
                           {"[3136,384] @ [384,96] (convnext stage 1)", 3136, 384, 96},
                           {"[784,192] @ [192,768] (convnext stage 2)", 784, 192, 768},
                           {"[196,384] @ [384,1536] (convnext stage 3)", 196, 384, 1536},
                           {"[196,1536] @ [1536,384] (convnext stage 3)", 196, 1536, 384},
                           {"[128,256] @ [256,256] (bert projection)", 128, 256, 256},
                           {"[128,256] @ [256,1024] (bert MLP)", 128, 256, 1024},
                           {"[197,192] @ [192,576] (vit_tiny q, k, v)", 197, 192, 576},
                           {"[197,192] @ [192,192] (vit_tiny projection)", 197, 192, 192},
                           {"[197,192] @ [192,768] (vit_tiny MLP in)", 197, 192, 768},
                           {"[197,768] @ [768,192] (vit_tiny MLP out)", 197, 768, 192},
                           {"[197,768] @ [768,2304] (ViT-B/16 q, k, v)", 197, 768, 2304},
                           {"[197,768] @ [768,768] (ViT-B/16 projection)", 197, 768, 768},
                           {"[197,768] @ [768,3072] (ViT-B/16 MLP in)", 197, 768, 3072},
                           {"[197,3072] @ [3072,768] (ViT-B/16 MLP out)", 197, 3072, 768},
                           {"[128,896] @ [896,896] (llama_500m q, o)", 128, 896, 896},
                           {"[128,896] @ [896,4864] (llama_500m MLP gate, up)", 128, 896, 4864},
                           {"[128,4864] @ [4864,896] (llama_500m MLP down)", 128, 4864, 896},
                           {"[128,896] @ [896,151936] (llama_500m LM head)", 128, 896, 151936}};
  for (const Shape& s : linears) {
    const double mm = median_ms(static_cast<int32_t>(DType::f32), s, reps, false);
    const double addmm = median_ms(static_cast<int32_t>(DType::f32), s, reps, true);
    std::printf("| %s | %.3f | %.3f | %.2fx |\n", s.what, mm, addmm, addmm / mm);
  }
}
