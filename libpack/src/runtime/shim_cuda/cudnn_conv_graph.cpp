// A convolution's execution plan on cuDNN's graph API (cudnn_conv_graph.hpp). The steps follow cuDNN's backend
// documentation: tensors, a convolution descriptor and one operation make an operation graph; the heuristics
// rank engine configurations for it; a configuration finalized on the handle is an execution plan; each run
// binds the buffers to the plan's tensor ids in a variant pack. Any step cuDNN refuses while building makes no
// plan (the caller falls back to the legacy API); a refusal while running is an error.
#include "cudnn_conv_graph.hpp"

#include "cuda_common.hpp"
#include "cudnn_conv_plan.hpp"

#include <string>
#include <utility>
#include <vector>

namespace mpspack::shim::cuda {
namespace {

// The ids of the three tensors in the graph and in each run's variant pack.
constexpr int64_t kX = 1, kW = 2, kY = 3;

// One backend descriptor, destroyed with its owner. set() and finalize() say whether cuDNN accepted.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    if (cudnn().backend_create(type, &d_) != CUDNN_STATUS_SUCCESS) d_ = nullptr;
  }
  ~Desc() {
    if (d_) cudnn().backend_destroy(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  Desc(Desc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}

  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t release() { return std::exchange(d_, nullptr); }
  bool set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values) {
    return d_ && cudnn().backend_set(d_, name, type, count, values) == CUDNN_STATUS_SUCCESS;
  }
  bool set(cudnnBackendAttributeName_t name, const Desc& other) {
    cudnnBackendDescriptor_t o = other.get();
    return o && set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o);
  }
  bool finalize() { return d_ && cudnn().backend_finalize(d_) == CUDNN_STATUS_SUCCESS; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

bool is_f64(int32_t dtype) { return dtype == static_cast<int32_t>(DType::f64); }

// The spatial values of one parameter; a 1-D convolution as a 2-D one of height 1 (`filler` for the height).
std::vector<int64_t> spatial(const std::array<int64_t, 3>& v, int dims, int64_t filler) {
  std::vector<int64_t> out;
  if (dims == 1) out.push_back(filler);
  for (int d = 0; d < dims; ++d) out.push_back(v[std::size_t(d)]);
  return out;
}

std::vector<int64_t> dims_of(int64_t outer, int64_t channels, const std::array<int64_t, 3>& sizes, int dims) {
  std::vector<int64_t> d{outer, channels};
  for (int64_t v : spatial(sizes, dims, 1)) d.push_back(v);
  return d;
}

Desc tensor(int64_t uid, cudnnDataType_t dt, const std::vector<int64_t>& dims, bool channels_last, int64_t align) {
  const std::vector<int64_t> strides = layout_strides(dims, channels_last);
  Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const bool ok = t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt) &&
                  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, int64_t(dims.size()), dims.data()) &&
                  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, int64_t(strides.size()), strides.data()) &&
                  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid) &&
                  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align) && t.finalize();
  return ok ? std::move(t) : Desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
}

Desc convolution(const ConvShape& s, int32_t dtype) {
  const cudnnDataType_t compute = is_f64(dtype) ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::vector<int64_t> pad = spatial(s.pad, s.spatial, 0), stride = spatial(s.stride, s.spatial, 1),
                             dilation = spatial(s.dilation, s.spatial, 1);
  const int64_t n = int64_t(pad.size());
  Desc c(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const bool ok = c.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute) &&
                  c.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode) &&
                  c.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &n) &&
                  c.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, n, dilation.data()) &&
                  c.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, n, stride.data()) &&
                  c.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, n, pad.data()) &&
                  c.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, n, pad.data()) && c.finalize();
  return ok ? std::move(c) : Desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
}

// The attribute names of one operation, x/w/y as the shim's op sees them.
struct OpAttributes {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};
constexpr OpAttributes kForward{CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
// A transposed convolution's input is the gradient dy of a convolution's output, its output the input's dx.
constexpr OpAttributes kBackwardData{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                                     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};

// y <- conv(x, w), or for a transposed shape the backward-data operation with x as the gradient dy of a
// convolution's output and y as the input's gradient dx. Groups follow from the channel counts.
Desc operation(const ConvShape& s, int32_t dtype, Alignments a) {
  const cudnnDataType_t dt = cudnn_data_type(dtype);
  const Desc x = tensor(kX, dt, dims_of(s.N, s.C, s.in, s.spatial), s.channels_last, a.x);
  const Desc y = tensor(kY, dt, dims_of(s.N, s.O, s.out, s.spatial), s.channels_last, a.y);
  const Desc w = tensor(kW, dt,
                        s.transposed ? dims_of(s.C, s.O / s.groups, s.kernel, s.spatial)
                                     : dims_of(s.O, s.C / s.groups, s.kernel, s.spatial),
                        s.channels_last, a.w);
  const Desc conv = convolution(s, dtype);
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const cudnnBackendAttributeType_t scalar = is_f64(dtype) ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  const void* one = is_f64(dtype) ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = is_f64(dtype) ? static_cast<const void*>(&zero_d) : &zero_f;
  const OpAttributes& n = s.transposed ? kBackwardData : kForward;
  Desc op(n.type);
  const bool ok = op.set(n.x, x) && op.set(n.w, w) && op.set(n.y, y) && op.set(n.conv, conv) &&
                  op.set(n.alpha, scalar, 1, one) && op.set(n.beta, scalar, 1, zero) && op.finalize();
  return ok ? std::move(op) : Desc(n.type);
}

// The heuristics' engine configurations for the one-operation graph, best first (empty when none).
std::vector<Desc> ranked_configs(const Desc& graph) {
  Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_INSTANT;  // torch's default mode
  if (!(heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph) &&
        heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode) && heur.finalize()))
    return {};
  int64_t count = 0;
  const Cudnn& c = cudnn();
  if (c.backend_get(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr) !=
          CUDNN_STATUS_SUCCESS ||
      count <= 0)
    return {};
  std::vector<Desc> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  int64_t returned = 0;
  if (c.backend_get(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned,
                    raw.data()) != CUDNN_STATUS_SUCCESS)
    return {};
  while (int64_t(configs.size()) > returned) configs.pop_back();
  return configs;
}

// torch's filter: no configuration that down-converts its inputs, and for float32 with TF32 off none that
// uses tensor cores (which would compute in TF32).
bool allowed(const Desc& config, int32_t dtype) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0;
  const Cudnn& c = cudnn();
  if (!e || c.backend_get(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e) !=
                CUDNN_STATUS_SUCCESS)
    return false;
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  if (c.backend_get(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n,
                    notes) != CUDNN_STATUS_SUCCESS)
    return false;
  const bool f32_without_tf32 = dtype == static_cast<int32_t>(DType::f32) && !conv_tf32_allowed();
  for (int64_t i = 0; i < n; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return false;
    if (notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && f32_without_tf32) return false;
  }
  return true;
}

}  // namespace

int64_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  int64_t a = 32;
  while (a > 1 && address % uintptr_t(a) != 0) a /= 2;
  return a;
}

GraphPlan::~GraphPlan() {
  if (plan_) cudnn().backend_destroy(plan_);
}

std::unique_ptr<GraphPlan> make_graph_plan(const ConvShape& s, int32_t dtype, int device, cudnnHandle_t h,
                                           Alignments a) {
  const Desc op = operation(s, dtype, a);
  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  if (!(graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, op) &&
        graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h) && graph.finalize()))
    return nullptr;
  for (const Desc& config : ranked_configs(graph)) {
    if (!allowed(config, dtype)) continue;
    Desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (!(plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h) &&
          plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config) && plan.finalize()))
      continue;
    int64_t workspace = 0, n = 0;
    if (cudnn().backend_get(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                            &workspace) != CUDNN_STATUS_SUCCESS ||
        workspace < 0 || !workspace_fits(std::size_t(workspace), device))
      continue;
    std::unique_ptr<GraphPlan> p(new GraphPlan());
    p->plan_ = plan.release();
    p->workspace_ = std::size_t(workspace);
    return p;
  }
  return nullptr;
}

void GraphPlan::run(cudnnHandle_t h, const void* x, const void* w, void* y, void* workspace, const ConvShape& s) const {
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  const int64_t ids[3] = {kX, kW, kY};
  void* pointers[3] = {const_cast<void*>(x), const_cast<void*>(w), y};
  if (!(pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, ids) &&
        pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers) &&
        pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace) && pack.finalize()))
    fail("convolution: cuDNN refused the buffers of " + s.describe());
  // The message is made only on failure: describe() is not free, and this runs for every convolution.
  if (const cudnnStatus_t st = cudnn().backend_execute(h, plan_, pack.get()); st != CUDNN_STATUS_SUCCESS)
    check_cudnn(st, "convolution: cuDNN's cudnnBackendExecute failed for " + s.describe());
}

}  // namespace mpspack::shim::cuda
