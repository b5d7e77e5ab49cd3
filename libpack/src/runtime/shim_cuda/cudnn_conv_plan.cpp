// The plan of one convolution shape on cuDNN, cached for the process (cudnn_conv_plan.hpp).
//
// First choice, as torch runs convolutions: a graph-API execution plan from cuDNN's heuristics
// (cudnn_conv_graph.hpp). The legacy API's choices are several times slower on real nets' shapes
// (bench/cuda_conv_host.cpp; docs/PERFORMANCE.md, "CUDA convolutions: cuDNN's graph API"), so it serves only
// shapes for which cuDNN builds no graph plan: there the algorithm is the fastest cuDNN measures
// (cudnnFind*Algorithm), or the legacy heuristics' first (cudnnGet*Algorithm_v7) while the stream is being captured
// into a CUDA graph or when Find fails. Either way it is one that is allowed and whose workspace can be allocated.
// Math types follow torch: tensor-op math for f16/bf16, cuDNN's default for f32 (which lets it use TF32) unless
// TF32 is turned off, then FMA math only.
#include "cudnn_conv_plan.hpp"

#include "cuda_common.hpp"
#include "cudnn_conv_graph.hpp"
#include "runtime/tuning/tuning.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mpspack::shim::cuda {

bool conv_tf32_allowed() { return tf32_convolutions(); }

std::vector<int64_t> layout_strides(std::span<const int64_t> sizes, bool channels_last) {
  const std::size_t n = sizes.size();
  // The dims from innermost to outermost: the last first, or C first, then the spatial dims from the last, N.
  std::vector<std::size_t> order;
  if (channels_last) order.push_back(1);
  for (std::size_t d = n; d-- > 0;)
    if (!(channels_last && d == 1)) order.push_back(d);
  std::vector<int64_t> strides(n);
  int64_t step = 1;
  for (std::size_t d : order) {
    strides[d] = step;
    step *= sizes[d];
  }
  return strides;
}

bool workspace_fits(std::size_t bytes, int device) {
  if (bytes == 0) return true;
  try {
    Storage::allocate_on(kCuda, device, bytes);  // freed again at once, back into the pool
    return true;
  } catch (const ShimError&) {
    cudaGetLastError();
    return false;
  }
}

namespace {

// ---- what cuDNN is given ---------------------------------------------------------------------------------

// The spatial values of one parameter as ints; a 1-D convolution as a 2-D one of height 1 (`filler` for height).
std::vector<int> spatial_ints(const std::array<int64_t, 3>& v, int spatial, int filler) {
  std::vector<int> out;
  if (spatial == 1) out.push_back(filler);
  for (int d = 0; d < spatial; ++d) out.push_back(int(v[std::size_t(d)]));
  return out;
}

std::vector<int> tensor_dims(int64_t outer, int64_t channels, const std::array<int64_t, 3>& spatial_sizes,
                             int spatial) {
  std::vector<int> dims{int(outer), int(channels)};
  for (int v : spatial_ints(spatial_sizes, spatial, 1)) dims.push_back(v);
  return dims;
}

std::vector<int> int_strides(const std::vector<int>& dims, bool channels_last) {
  const std::vector<int64_t> sizes(dims.begin(), dims.end());
  const std::vector<int64_t> st = layout_strides(sizes, channels_last);
  return std::vector<int>(st.begin(), st.end());
}

bool is_f32(int32_t dtype) { return dtype == static_cast<int32_t>(DType::f32); }
bool is_f64(int32_t dtype) { return dtype == static_cast<int32_t>(DType::f64); }

cudnnMathType_t requested_math(int32_t dtype) {
  if (is_f32(dtype)) return conv_tf32_allowed() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  if (is_f64(dtype)) return CUDNN_DEFAULT_MATH;
  return CUDNN_TENSOR_OP_MATH;
}

// An algorithm cuDNN proposes with tensor-op math would use TF32 on f32 data.
bool math_allowed(cudnnMathType_t m, int32_t dtype) {
  const bool tensor_ops = m == CUDNN_TENSOR_OP_MATH || m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  return !(tensor_ops && is_f32(dtype) && !conv_tf32_allowed());
}

// ---- one shape's plan --------------------------------------------------------------------------------------

struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;  // transposed: x is the gradient dy, y is dx
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  Descriptors() {
    const Cudnn& c = cudnn();
    check_cudnn(c.create_tensor(&x), "cudnnCreateTensorDescriptor");
    check_cudnn(c.create_tensor(&y), "cudnnCreateTensorDescriptor");
    check_cudnn(c.create_filter(&w), "cudnnCreateFilterDescriptor");
    check_cudnn(c.create_conv(&conv), "cudnnCreateConvolutionDescriptor");
  }
  ~Descriptors() {
    const Cudnn& c = cudnn();
    if (x) c.destroy_tensor(x);
    if (y) c.destroy_tensor(y);
    if (w) c.destroy_filter(w);
    if (conv) c.destroy_conv(conv);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

struct Plan {
  std::unique_ptr<GraphPlan> graph;  // when null, the legacy API's:
  Descriptors d;
  int algo = 0;  // a cudnnConvolutionFwdAlgo_t, or a cudnnConvolutionBwdDataAlgo_t for a transposed shape
  std::size_t workspace = 0;
};

std::string failed(const char* step, const ConvShape& s) {
  return std::string("convolution: cuDNN's ") + step + " failed for " + s.describe();
}

void describe(Descriptors& d, const ConvShape& s, int32_t dtype) {
  const Cudnn& c = cudnn();
  const cudnnDataType_t dt = cudnn_data_type(dtype);
  // weight: [O, C/groups, k...], or [C, O/groups, k...] for a transposed convolution
  const std::vector<int> xd = tensor_dims(s.N, s.C, s.in, s.spatial), yd = tensor_dims(s.N, s.O, s.out, s.spatial);
  const std::vector<int> wd = s.transposed ? tensor_dims(s.C, s.O / s.groups, s.kernel, s.spatial)
                                           : tensor_dims(s.O, s.C / s.groups, s.kernel, s.spatial);
  check_cudnn(c.set_tensor(d.x, dt, int(xd.size()), xd.data(), int_strides(xd, s.channels_last).data()),
              failed("cudnnSetTensorNdDescriptor (input)", s));
  check_cudnn(c.set_tensor(d.y, dt, int(yd.size()), yd.data(), int_strides(yd, s.channels_last).data()),
              failed("cudnnSetTensorNdDescriptor (output)", s));
  check_cudnn(c.set_filter(d.w, dt, s.channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, int(wd.size()), wd.data()),
              failed("cudnnSetFilterNdDescriptor", s));
  const std::vector<int> pad = spatial_ints(s.pad, s.spatial, 0), stride = spatial_ints(s.stride, s.spatial, 1),
                         dilation = spatial_ints(s.dilation, s.spatial, 1);
  check_cudnn(c.set_conv(d.conv, int(pad.size()), pad.data(), stride.data(), dilation.data(), CUDNN_CROSS_CORRELATION,
                         is_f64(dtype) ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT),
              failed("cudnnSetConvolutionNdDescriptor", s));
  check_cudnn(c.set_conv_groups(d.conv, int(s.groups)), failed("cudnnSetConvolutionGroupCount", s));
  check_cudnn(c.set_conv_math(d.conv, requested_math(dtype)), failed("cudnnSetConvolutionMathType", s));
}

// The first of cuDNN's proposals (best first) that is supported, allowed and whose workspace fits.
template <class Perf>
void choose(Plan& p, const std::vector<Perf>& proposals, const ConvShape& s, int32_t dtype, int device) {
  for (const Perf& r : proposals) {
    if (r.status != CUDNN_STATUS_SUCCESS || !math_allowed(r.mathType, dtype) || !workspace_fits(r.memory, device))
      continue;
    p.algo = int(r.algo);
    p.workspace = r.memory;
    check_cudnn(cudnn().set_conv_math(p.d.conv, r.mathType), failed("cudnnSetConvolutionMathType", s));
    return;
  }
  fail("convolution: cuDNN has no algorithm for " + s.describe() + " in " + dtype_name(dtype) + " (of " +
       std::to_string(proposals.size()) + " proposed, none is supported with a workspace that fits)");
}

// cuDNN's proposals for the shape, best first: `get(capacity, &count, results)` is one of the *Algorithm_v7 calls.
template <class Perf, class Get>
std::vector<Perf> proposals(int max, Get get, const char* step, const ConvShape& s) {
  std::vector<Perf> r(std::size_t(std::max(max, 1)));
  int n = 0;
  check_cudnn(get(int(r.size()), &n, r.data()), failed(step, s));
  r.resize(std::size_t(n));
  return r;
}

// Whether the current stream is being captured into a CUDA graph: Find runs and times convolutions, which a
// capture would record instead of running.
bool capturing() {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(current_stream(), &status) == cudaSuccess && status != cudaStreamCaptureStatusNone;
}

// cuDNN's proposals, fastest first: measured by `find`, or from `heuristics` while capturing or when Find fails
// (its failure leaves no CUDA error behind).
template <class Perf, class Find, class Heuristics>
std::vector<Perf> measured_or_proposed(int max, Find find, Heuristics heuristics, const char* heuristics_step,
                                       const ConvShape& s) {
  if (!capturing()) {
    std::vector<Perf> r(std::size_t(std::max(max, 1)));
    int n = 0;
    if (find(int(r.size()), &n, r.data()) == CUDNN_STATUS_SUCCESS && n > 0) {
      r.resize(std::size_t(n));
      return r;
    }
    cudaGetLastError();
  }
  return proposals<Perf>(max, heuristics, heuristics_step, s);
}

std::unique_ptr<Plan> make_plan(const ConvShape& s, int32_t dtype, int device, cudnnHandle_t h, Alignments a) {
  const Cudnn& c = cudnn();
  auto p = std::make_unique<Plan>();
  if ((p->graph = make_graph_plan(s, dtype, device, h, a))) {
    p->workspace = p->graph->workspace();
    return p;
  }
  const Descriptors& d = p->d;
  describe(p->d, s, dtype);
  int max = 0;
  if (!s.transposed) {
    check_cudnn(c.forward_algo_count(h, &max), failed("cudnnGetConvolutionForwardAlgorithmMaxCount", s));
    auto find = [&](int m, int* n, cudnnConvolutionFwdAlgoPerf_t* r) {
      return c.find_forward_algos(h, d.x, d.w, d.conv, d.y, m, n, r);
    };
    auto get = [&](int m, int* n, cudnnConvolutionFwdAlgoPerf_t* r) {
      return c.forward_algos(h, d.x, d.w, d.conv, d.y, m, n, r);
    };
    choose(*p,
           measured_or_proposed<cudnnConvolutionFwdAlgoPerf_t>(max, find, get, "cudnnGetConvolutionForwardAlgorithm_v7",
                                                               s),
           s, dtype, device);
  } else {  // x is the gradient of a convolution's output, y the input's
    check_cudnn(c.backward_data_algo_count(h, &max), failed("cudnnGetConvolutionBackwardDataAlgorithmMaxCount", s));
    auto find = [&](int m, int* n, cudnnConvolutionBwdDataAlgoPerf_t* r) {
      return c.find_backward_data_algos(h, d.w, d.x, d.conv, d.y, m, n, r);
    };
    auto get = [&](int m, int* n, cudnnConvolutionBwdDataAlgoPerf_t* r) {
      return c.backward_data_algos(h, d.w, d.x, d.conv, d.y, m, n, r);
    };
    choose(*p,
           measured_or_proposed<cudnnConvolutionBwdDataAlgoPerf_t>(max, find, get,
                                                                   "cudnnGetConvolutionBackwardDataAlgorithm_v7", s),
           s, dtype, device);
  }
  return p;
}

// Everything the descriptors and the choice depend on.
std::vector<int64_t> plan_key(const ConvShape& s, int32_t dtype, int device, Alignments a) {
  std::vector<int64_t> k{device, dtype, s.transposed, s.channels_last, s.spatial, s.groups, s.N, s.C, s.O,
                         a.x,    a.w,   a.y};
  for (const auto* v : {&s.in, &s.kernel, &s.out, &s.stride, &s.pad, &s.dilation})
    k.insert(k.end(), v->begin(), v->end());
  return k;
}

const Plan& plan_for(const ConvShape& s, int32_t dtype, int device, cudnnHandle_t h, Alignments a) {
  static std::mutex mutex;
  // Never destroyed: the plans live as long as the process, and destroying descriptors during static
  // destruction could run after cuDNN's own teardown.
  static auto* plans = new std::map<std::vector<int64_t>, std::unique_ptr<Plan>>();
  std::lock_guard lock(mutex);
  std::unique_ptr<Plan>& slot = (*plans)[plan_key(s, dtype, device, a)];
  if (!slot) slot = make_plan(s, dtype, device, h, a);
  return *slot;
}

}  // namespace

void run_cudnn_convolution(const ConvShape& s, int32_t dtype, int device, const void* x, const void* w, void* y) {
  const Cudnn& c = cudnn();
  CudnnLease lease(device, current_stream());
  const Plan& p = plan_for(s, dtype, device, lease.handle(), {alignment_of(x), alignment_of(w), alignment_of(y)});
  // Stream-ordered: freed back to the pool after the convolution on the same stream.
  const std::shared_ptr<Storage> ws = p.workspace ? Storage::allocate_on(kCuda, device, p.workspace) : nullptr;
  void* ws_data = ws ? ws->data : nullptr;
  if (p.graph) return p.graph->run(lease.handle(), x, w, y, ws_data, s);
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const void* one = is_f64(dtype) ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = is_f64(dtype) ? static_cast<const void*>(&zero_d) : &zero_f;
  // The message is made only on failure: describe() is not free, and this runs for every convolution.
  const cudnnStatus_t st =
      !s.transposed ? c.forward(lease.handle(), one, p.d.x, x, p.d.w, w, p.d.conv, cudnnConvolutionFwdAlgo_t(p.algo),
                                ws_data, p.workspace, zero, p.d.y, y)
                    : c.backward_data(lease.handle(), one, p.d.w, w, p.d.x, x, p.d.conv,
                                      cudnnConvolutionBwdDataAlgo_t(p.algo), ws_data, p.workspace, zero, p.d.y, y);
  if (st != CUDNN_STATUS_SUCCESS)
    check_cudnn(st, failed(s.transposed ? "cudnnConvolutionBackwardData" : "cudnnConvolutionForward", s));
}

}  // namespace mpspack::shim::cuda
