// The CPU shim's convolutions on oneDNN, the library under torch's own CPU convolutions: part of the plugin module
// lib/mpspack/onednn.so (onednn_api.hpp) that the shim opens at the first convolution or product big enough
// for it (onednn_plugin.cpp), so the 40 MB library costs nothing to commands that run neither.
//
// One convolution: the user's tensors are described as they are (their dtype and strides); the primitive picks
// its preferred layout for the weights, and for the input and output too unless layout_for says otherwise.
// Reorders bring the tensors in and out where the layouts differ; for bf16 and f16 the primitive runs in that
// type when this CPU has a kernel for it, else in float32 with the reorders converting (rounding once at the end,
// as the shim's other ops do).
//
// Primitives and reorders are made once per shape and kept for the process. The weights are reordered at every
// call, unless the shim says they lie in constant memory (a model's parameters, never a weight a run computes):
// then their packed copy is kept (onednn_packed.hpp).
//
// Threads: oneDNN runs its loops on OpenMP (libgomp), the same runtime and so the same thread team as the model
// library's own loops and the shim's products (parallel.hpp); one team, no second pool.
#include "onednn_api.hpp"
#include "onednn_module.hpp"
#include "onednn_packed.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace mpspack::shim {
namespace {

using dnnl::memory;
using Dt = memory::data_type;
using Tag = memory::format_tag;

Dt onednn_type(int32_t c10) {
  switch (static_cast<DType>(c10)) {
    case DType::f32: return Dt::f32;
    case DType::bf16: return Dt::bf16;
    case DType::f16: return Dt::f16;
    default: return Dt::undef;
  }
}

// The shape's per-dim parameters as oneDNN takes them.
struct Geometry {
  memory::dims strides, dilates, pad_l, pad_r;
};
Geometry geometry_of(const ConvShape& s) {
  Geometry g;
  for (int d = 0; d < s.spatial; ++d) {
    g.strides.push_back(s.stride[d]);
    g.dilates.push_back(s.dilation[d] - 1);  // oneDNN counts the gaps: 0 is a dense kernel
    g.pad_l.push_back(s.pad[d]);
    // A transposed convolution's output_padding adds rows at the end: oneDNN's right padding, less that many.
    g.pad_r.push_back(s.transposed ? s.pad[d] - s.out_pad[d] : s.pad[d]);
  }
  return g;
}

// oneDNN's logical weight dims and the user's strides for them. torch's weight is [O, C/g, k...] for a
// convolution and [C, O/g, k...] for a transposed one; oneDNN wants [O, C, k...] (or [g, O/g, C/g, k...] with
// groups) for both, so the transposed weight swaps its first two dims, and groups split the first torch dim.
memory::desc user_weights(const ConvShape& s, const ConvTensorView& w, Dt type) {
  const auto& ws = w.strides;
  const int64_t g = s.groups, Og = s.O / g, Cg = s.C / g;
  memory::dims dims, strides;
  if (g > 1) {
    dims = {g, Og, Cg};
    strides = s.transposed ? memory::dims{ws[0] * Cg, ws[1], ws[0]} : memory::dims{ws[0] * Og, ws[0], ws[1]};
  } else {
    dims = {s.O, s.C};
    strides = s.transposed ? memory::dims{ws[1], ws[0]} : memory::dims{ws[0], ws[1]};
  }
  for (int d = 0; d < s.spatial; ++d) {
    dims.push_back(s.kernel[d]);
    strides.push_back(ws[2 + d]);
  }
  return memory::desc(dims, type, strides);
}

// The weights with oneDNN's logical dims, in whatever layout the primitive prefers.
memory::desc any_weights(const ConvShape& s, Dt type) {
  memory::dims dims = s.groups > 1 ? memory::dims{s.groups, s.O / s.groups, s.C / s.groups} : memory::dims{s.O, s.C};
  for (int d = 0; d < s.spatial; ++d) dims.push_back(s.kernel[d]);
  return memory::desc(dims, type, Tag::any);
}

memory::desc user_desc(const ConvTensorView& t, Dt type) {
  return memory::desc(memory::dims(t.sizes.begin(), t.sizes.end()), type,
                      memory::dims(t.strides.begin(), t.strides.end()));
}

// The layout the primitive runs the input and output in.
enum class Layout { any, plain, channels_last };

// Channels-last when the output is (NHWC/NDHWC throughout, as torch's channels-last path). Plain (NCW/NCHW/NCDHW,
// the user's own, no reorders) for 1-D and pointwise (1x1, stride 1, no padding) convolutions: oneDNN's GEMM kernel
// there beat its blocked kernels plus the reorders around them (docs/PERFORMANCE.md, "CPU: convolutions on oneDNN").
// Otherwise whatever the primitive prefers (blocked).
Layout layout_for(const ConvShape& s) {
  if (s.channels_last) return Layout::channels_last;
  if (s.transposed) return Layout::any;
  bool pointwise = true;
  for (int d = 0; d < s.spatial; ++d) pointwise = pointwise && s.kernel[d] == 1 && s.stride[d] == 1 && s.pad[d] == 0;
  return s.spatial == 1 || pointwise ? Layout::plain : Layout::any;
}

memory::desc activation_desc(const std::vector<int64_t>& sizes, Dt type, Layout layout) {
  const memory::dims dims(sizes.begin(), sizes.end());
  const int spatial = int(sizes.size()) - 2;
  switch (layout) {
    case Layout::channels_last: return memory::desc(dims, type, spatial == 2 ? Tag::nhwc : Tag::ndhwc);
    case Layout::plain:
      return memory::desc(dims, type, spatial == 1 ? Tag::ncw : spatial == 2 ? Tag::nchw : Tag::ncdhw);
    case Layout::any: break;
  }
  return memory::desc(dims, type, Tag::any);
}

// One shape's primitive and the reorders around it (empty where the user's layout is the primitive's).
struct Plan {
  memory::desc user_src, user_weights, user_bias, user_dst;
  memory::desc src, weights, bias, dst, scratchpad;
  dnnl::primitive conv;
  dnnl::reorder src_in, weights_in, bias_in, dst_out;
  std::string implementation;
};

// The primitive descriptor for the shape with tensors of `type`, or an empty one when oneDNN has none.
dnnl::primitive_desc make_primitive_desc(const ConvShape& s, const std::vector<int64_t>& in_sizes, Dt type,
                                         bool has_bias) {
  const Geometry g = geometry_of(s);
  const Layout layout = layout_for(s);
  const memory::desc src = activation_desc(in_sizes, type, layout);
  const memory::desc dst = activation_desc(s.out_sizes, type, layout);
  const memory::desc weights = any_weights(s, type);
  const memory::desc bias = has_bias ? memory::desc({s.O}, type, Tag::a) : memory::desc();
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per call: concurrent calls share nothing
  const auto kind = dnnl::prop_kind::forward_inference;
  if (s.transposed) {
    dnnl::deconvolution_forward::desc d(kind, dnnl::algorithm::deconvolution_direct, src, weights, bias, dst, g.strides,
                                        g.dilates, g.pad_l, g.pad_r);
    return dnnl::deconvolution_forward::primitive_desc(d, attr, cpu_engine(), true);
  }
  dnnl::convolution_forward::desc d(kind, dnnl::algorithm::convolution_direct, src, weights, bias, dst, g.strides,
                                    g.dilates, g.pad_l, g.pad_r);
  return dnnl::convolution_forward::primitive_desc(d, attr, cpu_engine(), true);
}

// In the user's bf16/f16 when this CPU has a real kernel for it (not oneDNN's reference loops), else float32.
dnnl::primitive_desc choose_primitive_desc(const OnednnConvCall& c, Dt user_type) {
  const bool has_bias = c.bias.data != nullptr;
  if (user_type != Dt::f32) {
    auto pd = make_primitive_desc(*c.shape, c.input.sizes, user_type, has_bias);
    if (pd && std::string_view(pd.impl_info_str()).substr(0, 3) != "ref") return pd;
  }
  return make_primitive_desc(*c.shape, c.input.sizes, Dt::f32, has_bias);
}

// A reorder from `from` to `to`, or an empty one when they are the same.
dnnl::reorder reorder_between(const memory::desc& from, const memory::desc& to) {
  if (from == to) return {};
  return dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to));
}

std::shared_ptr<const Plan> make_plan(const OnednnConvCall& c) {
  const ConvShape& s = *c.shape;
  const Dt user_type = onednn_type(c.input.dtype);
  if (user_type == Dt::undef) throw std::invalid_argument("oneDNN has no kernels for this dtype");
  const dnnl::primitive_desc pd = choose_primitive_desc(c, user_type);
  if (!pd) throw std::invalid_argument("oneDNN has no kernel for this shape");
  auto p = std::make_shared<Plan>();
  p->src = pd.src_desc();
  p->weights = pd.weights_desc();
  p->dst = pd.dst_desc();
  p->scratchpad = pd.scratchpad_desc();
  p->user_src = user_desc(c.input, user_type);
  p->user_weights = user_weights(s, c.weight, user_type);
  p->user_dst = user_desc(c.output, user_type);
  p->src_in = reorder_between(p->user_src, p->src);
  p->weights_in = reorder_between(p->user_weights, p->weights);
  p->dst_out = reorder_between(p->dst, p->user_dst);
  if (c.bias.data != nullptr) {
    p->bias = pd.weights_desc(1);
    p->user_bias = user_desc(c.bias, user_type);
    p->bias_in = reorder_between(p->user_bias, p->bias);
  }
  if (s.transposed) p->conv = dnnl::deconvolution_forward(dnnl::deconvolution_forward::primitive_desc(pd.get()));
  else p->conv = dnnl::convolution_forward(dnnl::convolution_forward::primitive_desc(pd.get()));
  p->implementation = pd.impl_info_str();
  return p;
}

void append(std::vector<int64_t>& key, const std::vector<int64_t>& v) {
  key.push_back(int64_t(v.size()));
  key.insert(key.end(), v.begin(), v.end());
}

// Everything a plan depends on: the shape, the dtype, the bias, every tensor's strides, the team it runs on.
std::vector<int64_t> plan_key(const OnednnConvCall& c) {
  const ConvShape& s = *c.shape;
  std::vector<int64_t> key = {s.spatial,     s.transposed,           s.N,        s.C, s.O, s.groups,
                              c.input.dtype, c.bias.data != nullptr, team_size()};
  for (const auto* a : {&s.in, &s.kernel, &s.stride, &s.pad, &s.dilation, &s.out_pad})
    key.insert(key.end(), a->begin(), a->end());
  for (const auto* t : {&c.input, &c.weight, &c.bias, &c.output}) append(key, t->strides);
  return key;
}

// Made once per key, kept for the process.
std::shared_ptr<const Plan> plan_for(const OnednnConvCall& c) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, std::shared_ptr<const Plan>> plans;
  auto key = plan_key(c);
  std::lock_guard lock(mutex);
  auto& plan = plans[std::move(key)];
  if (!plan) plan = make_plan(c);
  return plan;
}

// `user` as the primitive's `md`: the user's memory itself, or a reordered copy held in `buffers`.
memory bring_in(const dnnl::reorder& r, const memory::desc& md, memory user, dnnl::stream& stream,
                std::vector<Buffer>& buffers) {
  if (!r) return user;
  buffers.emplace_back(md.get_size());
  memory m(md, cpu_engine(), buffers.back().get());
  r.execute(stream, user, m);
  return m;
}

void run(const Plan& p, const OnednnConvCall& c) {
  dnnl::engine& e = cpu_engine();
  dnnl::stream stream(e);
  std::vector<Buffer> buffers;
  buffers.reserve(6);
  memory user_dst(p.user_dst, e, c.output.data);
  std::unordered_map<int, memory> args;
  args[DNNL_ARG_SRC] = bring_in(p.src_in, p.src, memory(p.user_src, e, c.input.data), stream, buffers);
  std::shared_ptr<Buffer> packed;
  args[DNNL_ARG_WEIGHTS] =
      c.pack_weights && p.weights_in
          ? weights_memory(&p, p.user_weights, p.weights, c.weight.data, true, c.packed_now, packed)
          : bring_in(p.weights_in, p.weights, memory(p.user_weights, e, c.weight.data), stream, buffers);
  if (c.bias.data != nullptr)
    args[DNNL_ARG_BIAS] = bring_in(p.bias_in, p.bias, memory(p.user_bias, e, c.bias.data), stream, buffers);
  if (p.dst_out) buffers.emplace_back(p.dst.get_size());
  memory dst = p.dst_out ? memory(p.dst, e, buffers.back().get()) : user_dst;
  args[DNNL_ARG_DST] = dst;
  buffers.emplace_back(p.scratchpad.get_size());
  args[DNNL_ARG_SCRATCHPAD] = memory(p.scratchpad, e, buffers.back().get());
  p.conv.execute(stream, args);
  if (p.dst_out) p.dst_out.execute(stream, dst, user_dst);
  stream.wait();
}

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

}  // namespace
}  // namespace mpspack::shim

using namespace mpspack::shim;

extern "C" __attribute__((visibility("default"))) std::string mpspack_onednn_convolution_v1(
    const OnednnConvCall& call) {
  return reporting_errors([&] {
    const auto plan = plan_for(call);
    run(*plan, call);
    if (call.implementation) *call.implementation = plan->implementation;
    return std::string();
  });
}

extern "C" __attribute__((visibility("default"))) std::string mpspack_onednn_describe_v1() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) + ", " +
         isa_name(dnnl::get_effective_cpu_isa());
}
