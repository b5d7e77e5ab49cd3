// cuda_conv_host: where the host time of one CUDA convolution goes, on real nets' shapes (device machine).
//
// An uncaptured AOTInductor run is bound by host time on small models: each operation's host cost adds up while
// the GPU waits. For each shape this times, back to back without a sync (host microseconds per call, median of
// `rounds` rounds of `calls` calls):
//   shim     aoti_torch_cuda_convolution + aoti_torch_delete_tensor_object, what the model calls;
//   cudnn    cudnnConvolutionForward alone with the legacy heuristics' first algorithm (cudnnGet*Algorithm_v7),
//            descriptors and workspace made beforehand;
//   memset   cudaMemsetAsync of the output, the floor of one stream-ordered CUDA call;
// and the GPU's time per call (events around `calls` shim calls), contiguous and channels-last (AOTInductor's
// layout optimisation makes a conv net's activations channels-last on CUDA). bench/device/torch_conv_host.py times
// torch's conv2d on the same shapes, for the side-by-side.
//
//   cuda_conv_host [calls] [rounds]      (defaults 200, 7)
#include "runtime/shim/aoti_shim.h"
#include "runtime/shim_cuda/aoti_shim_cuda.h"
#include "runtime/shim_cuda/cudnn_library.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
namespace cu = mpspack::shim::cuda;

struct Shape {
  const char* name;
  int64_t N, C, O, groups;
  std::vector<int64_t> in, k, stride, pad, dilation;  // one entry per spatial dim

  std::vector<int64_t> out() const {
    std::vector<int64_t> o;
    for (size_t d = 0; d < in.size(); ++d)
      o.push_back((in[d] + 2 * pad[d] - dilation[d] * (k[d] - 1) - 1) / stride[d] + 1);
    return o;
  }
};

std::vector<int64_t> cat(std::vector<int64_t> head, const std::vector<int64_t>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// Shapes from resnet18, efficientnet_b0, convnext_tiny and the zoo's conv3d_net (bench/zoo/own_models.py).
const std::vector<Shape> kShapes = {
    {"resnet18 3x3 64->64 56x56", 1, 64, 64, 1, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
    {"resnet18 1x1 64->128 s2", 1, 64, 128, 1, {56, 56}, {1, 1}, {2, 2}, {0, 0}, {1, 1}},
    {"resnet18 7x7 3->64 s2 224x224", 1, 3, 64, 1, {224, 224}, {7, 7}, {2, 2}, {3, 3}, {1, 1}},
    {"effnet dw 3x3 96 s2 112x112", 1, 96, 96, 96, {112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}},
    {"effnet 1x1 96->24 56x56", 1, 96, 24, 1, {56, 56}, {1, 1}, {1, 1}, {0, 0}, {1, 1}},
    {"convnext dw 7x7 96 56x56", 1, 96, 96, 96, {56, 56}, {7, 7}, {1, 1}, {3, 3}, {1, 1}},
    {"3-D 3x3x3 3->16 8x56x56", 1, 3, 16, 1, {8, 56, 56}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
    {"3-D 3x3x3 16->32 s2", 1, 16, 32, 1, {8, 56, 56}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}},
    {"3-D dw 3x3x3 32 4x28x28", 1, 32, 32, 32, {4, 28, 28}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
    {"3-D 1x1x1 32->64", 1, 32, 64, 1, {4, 28, 28}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}},
    {"3-D 1x3x3 s(1,2,2) dil 2", 1, 64, 64, 1, {4, 28, 28}, {1, 3, 3}, {1, 2, 2}, {0, 2, 2}, {1, 2, 2}},
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "cuda_conv_host: %s\n", what.c_str());
  std::exit(1);
}

void ok(AOTITorchError rc, const char* what) {
  if (rc != 0) die(std::string(what) + " failed");
}

void ok(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(rc));
}

// Dense strides of an [N, C, spatial...] tensor: contiguous, or channels-last (C innermost).
std::vector<int64_t> strides_of(const std::vector<int64_t>& sizes, bool channels_last) {
  std::vector<size_t> order;  // innermost first
  if (channels_last) order.push_back(1);
  for (size_t d = sizes.size(); d-- > 0;)
    if (!(channels_last && d == 1)) order.push_back(d);
  std::vector<int64_t> strides(sizes.size());
  int64_t step = 1;
  for (size_t d : order) strides[d] = step, step *= sizes[d];
  return strides;
}

int64_t numel(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t v : sizes) n *= v;
  return n;
}

std::vector<int> ints(const std::vector<int64_t>& v) { return std::vector<int>(v.begin(), v.end()); }

AtenTensorHandle empty(const std::vector<int64_t>& sizes, bool channels_last) {
  const std::vector<int64_t> strides = strides_of(sizes, channels_last);
  AtenTensorHandle t = nullptr;
  ok(aoti_torch_empty_strided(int64_t(sizes.size()), sizes.data(), strides.data(), aoti_torch_dtype_float32(),
                              aoti_torch_device_type_cuda(), 0, &t),
     "aoti_torch_empty_strided");
  return t;
}

void* data(AtenTensorHandle t) {
  void* p = nullptr;
  ok(aoti_torch_get_data_ptr(t, &p), "aoti_torch_get_data_ptr");
  return p;
}

// Median over rounds of the host microseconds per call of `calls` calls of f, then a sync.
template <class F>
double host_us(int calls, int rounds, F f) {
  std::vector<double> per_call;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) f();
    const auto t1 = Clock::now();
    ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  std::nth_element(per_call.begin(), per_call.begin() + rounds / 2, per_call.end());
  return per_call[size_t(rounds / 2)];
}

// The GPU's microseconds per call of `calls` calls of f, between two events.
template <class F>
double gpu_us(int calls, F f) {
  cudaEvent_t a, b;
  ok(cudaEventCreate(&a), "cudaEventCreate");
  ok(cudaEventCreate(&b), "cudaEventCreate");
  ok(cudaEventRecord(a, nullptr), "cudaEventRecord");
  for (int i = 0; i < calls; ++i) f();
  ok(cudaEventRecord(b, nullptr), "cudaEventRecord");
  ok(cudaEventSynchronize(b), "cudaEventSynchronize");
  float ms = 0;
  ok(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return double(ms) * 1000 / calls;
}

// cudnnConvolutionForward on its own: descriptors, the heuristics' first algorithm and its workspace made here.
struct LegacyConv {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  void* ws = nullptr;
  size_t ws_bytes = 0;

  LegacyConv(const Shape& s, bool cl) {
    const cu::Cudnn& c = cu::cudnn();
    cu::check_cudnn(c.create(&h), "cudnnCreate");
    c.create_tensor(&x);
    c.create_tensor(&y);
    c.create_filter(&w);
    c.create_conv(&conv);
    const std::vector<int64_t> xd = cat({s.N, s.C}, s.in), yd = cat({s.N, s.O}, s.out()),
                               wd = cat({s.O, s.C / s.groups}, s.k);
    const int dims = int(xd.size()), sp = dims - 2;
    cu::check_cudnn(c.set_tensor(x, CUDNN_DATA_FLOAT, dims, ints(xd).data(), ints(strides_of(xd, cl)).data()), "x");
    cu::check_cudnn(c.set_tensor(y, CUDNN_DATA_FLOAT, dims, ints(yd).data(), ints(strides_of(yd, cl)).data()), "y");
    cu::check_cudnn(
        c.set_filter(w, CUDNN_DATA_FLOAT, cl ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, dims, ints(wd).data()), "w");
    cu::check_cudnn(c.set_conv(conv, sp, ints(s.pad).data(), ints(s.stride).data(), ints(s.dilation).data(),
                               CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                    "conv");
    cu::check_cudnn(c.set_conv_groups(conv, int(s.groups)), "groups");
    cudnnConvolutionFwdAlgoPerf_t perf[16];
    int n = 0;
    cu::check_cudnn(c.forward_algos(h, x, w, conv, y, 16, &n, perf), "cudnnGetConvolutionForwardAlgorithm_v7");
    for (int i = 0; i < n; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS) {
        algo = perf[i].algo;
        ws_bytes = perf[i].memory;
        cu::check_cudnn(c.set_conv_math(conv, perf[i].mathType), "math");
        break;
      }
    if (ws_bytes) ok(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  }

  void run(const void* xp, const void* wp, void* yp) const {
    const float one = 1, zero = 0;
    cu::check_cudnn(cu::cudnn().forward(h, &one, x, xp, w, wp, conv, algo, ws, ws_bytes, &zero, y, yp),
                    "cudnnConvolutionForward");
  }
};

void measure(const Shape& s, bool cl, int calls, int rounds) {
  const std::vector<int64_t> xs = cat({s.N, s.C}, s.in), ws = cat({s.O, s.C / s.groups}, s.k),
                             ys = cat({s.N, s.O}, s.out());
  AtenTensorHandle x = empty(xs, cl), w = empty(ws, cl), y0 = empty(ys, cl);
  ok(cudaMemset(data(x), 0, size_t(numel(xs)) * 4), "cudaMemset");
  ok(cudaMemset(data(w), 0, size_t(numel(ws)) * 4), "cudaMemset");
  const int64_t sp = int64_t(s.in.size());
  const std::vector<int64_t> opad(s.in.size(), 0);
  auto shim_call = [&] {
    AtenTensorHandle y = nullptr;
    ok(aoti_torch_cuda_convolution(x, w, nullptr, s.stride.data(), sp, s.pad.data(), sp, s.dilation.data(), sp, 0,
                                   opad.data(), sp, s.groups, &y),
       "aoti_torch_cuda_convolution");
    ok(aoti_torch_delete_tensor_object(y), "aoti_torch_delete_tensor_object");
  };
  shim_call();  // the plan
  const LegacyConv legacy(s, cl);
  auto cudnn_call = [&] { legacy.run(data(x), data(w), data(y0)); };
  cudnn_call();
  const size_t ybytes = size_t(numel(ys)) * 4;
  auto memset_call = [&] { ok(cudaMemsetAsync(data(y0), 0, ybytes, nullptr), "cudaMemsetAsync"); };
  const double shim = host_us(calls, rounds, shim_call), direct = host_us(calls, rounds, cudnn_call),
               floor = host_us(calls, rounds, memset_call), gpu = gpu_us(calls, shim_call);
  std::printf("| %s | %s | %.1f | %.1f | %.1f | %.1f |\n", s.name, cl ? "channels-last" : "contiguous", shim, direct,
              floor, gpu);
  aoti_torch_delete_tensor_object(x);
  aoti_torch_delete_tensor_object(w);
  aoti_torch_delete_tensor_object(y0);
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 200, rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  if (calls <= 0 || rounds <= 0) die("usage: cuda_conv_host [calls > 0] [rounds > 0]");
  std::printf("host us per call, median of %d rounds of %d calls; gpu us per shim call\n\n", rounds, calls);
  std::printf("| shape (f32, batch 1) | layout | shim | cudnnConvolutionForward | cudaMemsetAsync | gpu |\n"
              "|---|---|---|---|---|---|\n");
  for (bool cl : {false, true})
    for (const Shape& s : kShapes) measure(s, cl, calls, rounds);
  return 0;
}
