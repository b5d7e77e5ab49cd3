// The CPU shim's two convolution paths side by side on the shapes of real nets: the built-in im2col + OpenBLAS GEMM
// and oneDNN (libpack/src/runtime/shim/conv_cpu.hpp), both on the same OpenMP team, median of the timed calls.
// Beside each oneDNN figure: the largest difference of its result from the im2col one.
//
//   cmake -DMPSPACK_BUILD_BENCH=ON ... && ninja -C build conv_cpu && build/bin/conv_cpu [REPS=30]
//   (bench/conv_cpu.sh runs it on one thread and on every core; MPSPACK_CPU_PACK_WEIGHTS=on keeps weights packed)
//
// OMP_NUM_THREADS sets the team's size (default: every core this process may use).
#include "runtime/shim/constant_memory.hpp"
#include "runtime/shim/conv_cpu.hpp"
#include "runtime/shim/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace mpspack::shim;

namespace {

constexpr int32_t kF32 = static_cast<int32_t>(DType::f32);

struct Shape {
  const char* what;
  std::vector<int64_t> input, weight;
  int64_t stride, pad, groups;
};

TensorPtr random_tensor(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, unsigned seed) {
  TensorPtr t(new_tensor(sizes, strides, kF32));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  float* p = reinterpret_cast<float*>(t->data());
  for (int64_t i = 0; i < t->numel(); ++i) p[i] = d(rng);  // dense: every element once, whatever the order
  return t;
}

// Channels-last strides for [N, C, H, W]: dense, in the stride order N, H, W, C.
std::vector<int64_t> channels_last(const std::vector<int64_t>& sizes) {
  return infer_dense_strides(sizes, std::vector<int64_t>{4, 1, 3, 2});
}

double median_ms(int reps, const std::function<void()>& f) {
  f();  // warm-up: plans made, pages touched
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  TensorPtr ac = contiguous_as(a, kF32), bc = contiguous_as(b, kF32);
  const float* p = reinterpret_cast<const float*>(ac->data());
  const float* q = reinterpret_cast<const float*>(bc->data());
  double worst = 0;
  for (int64_t i = 0; i < ac->numel(); ++i) worst = std::max(worst, double(std::abs(p[i] - q[i])));
  return worst;
}

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

void measure(const Shape& sh, bool channels_last_input, int reps) {
  const int spatial = int(sh.input.size()) - 2;
  const std::vector<int64_t> x_strides = channels_last_input ? channels_last(sh.input) : contiguous_strides(sh.input);
  TensorPtr x = random_tensor(sh.input, x_strides, 1), w = random_tensor(sh.weight, contiguous_strides(sh.weight), 2);
  TensorPtr b = random_tensor({sh.weight[0]}, {1}, 3);
  // The weights as a loaded model's parameters are: constant memory (MPSPACK_CPU_PACK_WEIGHTS=on packs them once).
  add_constant_ranges(w.get(), {{w->data(), std::size_t(w->numel()) * w->itemsize()}});
  const std::vector<int64_t> stride(spatial, sh.stride), pad(spatial, sh.pad), one(spatial, 1), zero(spatial, 0);
  const ConvShape s = convolution_shape(*x, *w, b.get(), stride.data(), spatial, pad.data(), spatial, one.data(),
                                        spatial, 0, zero.data(), spatial, sh.groups);
  TensorPtr y_old(new_tensor(s.out_sizes, s.out_strides, kF32)), y_new(new_tensor(s.out_sizes, s.out_strides, kF32));
  std::string implementation;
  const double old_ms = median_ms(reps, [&] { convolution_im2col(s, *x, *w, b.get(), *y_old); });
  const double new_ms = median_ms(reps, [&] { convolution_onednn(s, *x, *w, b.get(), *y_new, &implementation); });
  // Multiply-adds: every output element takes C/groups x kernel volume of them.
  double macs = double(y_new->numel()) * double(s.C / s.groups);
  for (int d = 0; d < spatial; ++d) macs *= double(s.kernel[d]);
  std::printf("| %s%s | %.3f | %.3f | %.2fx | %.1f | %s | %.1e |\n", sh.what, channels_last_input ? ", NHWC" : "",
              old_ms, new_ms, old_ms / new_ms, 2 * macs / new_ms * 1e-6, implementation.c_str(),
              max_abs_diff(*y_old, *y_new));
  remove_constant_ranges(w.get());
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
  std::string why;
  if (!onednn_plugin_open(&why)) {
    std::fprintf(stderr, "conv_cpu: %s\n", why.c_str());
    return 2;
  }
  // The plugin brought libgomp: from here on both paths run on its team (parallel.hpp).
  const char* omp = std::getenv("OMP_NUM_THREADS");
  std::printf("machine: %s, %u usable cores; %s; OpenMP team: %s threads (%s); median of %d calls, ms\n\n",
              cpu_name().c_str(), usable_cores(), onednn_description().c_str(), omp ? omp : "all",
              threads_on_openmp() ? "libgomp" : "mpspack's pool", reps);
  std::printf("| shape (batch 1, float32, bias) | im2col + OpenBLAS | oneDNN | speed-up | oneDNN GFLOP/s | oneDNN "
              "kernel | max abs diff |\n|---|---|---|---|---|---|---|\n");
  const Shape shapes[] = {
      {"3x3 conv 64->64 at 56x56", {1, 64, 56, 56}, {64, 64, 3, 3}, 1, 1, 1},
      {"depthwise 3x3, 32 channels at 112x112", {1, 32, 112, 112}, {32, 1, 3, 3}, 1, 1, 32},
      {"7x7 stride 2 stem 3->64 at 224x224", {1, 3, 224, 224}, {64, 3, 7, 7}, 2, 3, 1},
      {"1x1 conv 256->64 at 56x56", {1, 256, 56, 56}, {64, 256, 1, 1}, 1, 0, 1},
      {"Conv1d 80->384 k3 over 3000 frames", {1, 80, 3000}, {384, 80, 3}, 1, 1, 1},
      {"3x3 conv 512->512 at 7x7 (ResNet-50 stage 4)", {1, 512, 7, 7}, {512, 512, 3, 3}, 1, 1, 1},
      {"1x1 conv 2048->512 at 7x7 (ResNet-50 stage 4)", {1, 2048, 7, 7}, {512, 2048, 1, 1}, 1, 0, 1},
  };
  for (const Shape& sh : shapes) measure(sh, false, reps);
  for (const Shape& sh : shapes)
    if (sh.input.size() == 4) measure(sh, true, reps);
}
