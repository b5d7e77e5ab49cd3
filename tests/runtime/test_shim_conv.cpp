// aten::convolution on the CPU shim (oneDNN for float32/bfloat16/float16, the built-in path for float64) against a
// direct loop in double: 1-, 2- and 3-D, plain and transposed, groups up to depthwise, stride, padding, dilation,
// output_padding, bias or none, contiguous and channels-last tensors, odd sizes, random data.
#include "runtime/shim/constant_memory.hpp"
#include "runtime/shim/conv_cpu.hpp"
#include "runtime/shim/onednn_plugin.hpp"
#include "runtime/shim/provided.hpp"
#include "runtime/tuning/tuning.hpp"
#include "shim_test_util.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

using namespace mpspack::test;
namespace shim = mpspack::shim;

namespace {

constexpr int32_t kF16 = 5, kF32 = 6, kF64 = 7, kBf16 = 15;

struct Case {
  int spatial;
  int64_t N, C, O, groups;
  std::array<int64_t, 3> in, kernel, stride, pad, dilation, out_pad;
  bool transposed = false, bias = true;
  bool input_channels_last = false, weight_channels_last = false;
  int32_t dtype = kF32;

  std::string name() const {
    std::ostringstream s;
    s << (transposed ? "conv_transpose" : "conv") << spatial << "d N" << N << " C" << C << " O" << O << " g" << groups
      << " dtype" << dtype << (bias ? " bias" : "") << (input_channels_last ? " x:cl" : "")
      << (weight_channels_last ? " w:cl" : "");
    for (int d = 0; d < spatial; ++d)
      s << " [in" << in[d] << " k" << kernel[d] << " s" << stride[d] << " p" << pad[d] << " d" << dilation[d] << " op"
        << out_pad[d] << "]";
    return s.str();
  }
  int64_t out(int d) const {
    const int64_t reach = dilation[d] * (kernel[d] - 1) + 1;
    return transposed ? (in[d] - 1) * stride[d] - 2 * pad[d] + reach + out_pad[d]
                      : (in[d] + 2 * pad[d] - reach) / stride[d] + 1;
  }
  std::vector<int64_t> input_sizes() const { return with_spatial({N, C}, in); }
  std::vector<int64_t> weight_sizes() const {
    return with_spatial(transposed ? std::vector<int64_t>{C, O / groups} : std::vector<int64_t>{O, C / groups}, kernel);
  }
  std::vector<int64_t> output_sizes() const {
    std::array<int64_t, 3> o{};
    for (int d = 0; d < spatial; ++d) o[d] = out(d);
    return with_spatial({N, O}, o);
  }
  std::vector<int64_t> with_spatial(std::vector<int64_t> v, const std::array<int64_t, 3>& sp) const {
    for (int d = 0; d < spatial; ++d) v.push_back(sp[d]);
    return v;
  }
};

Case conv2d(int64_t N, int64_t C, int64_t O, int64_t g, int64_t H, int64_t W, int64_t k, int64_t s, int64_t p,
            int64_t d) {
  return Case{2, N, C, O, g, {H, W}, {k, k}, {s, s}, {p, p}, {d, d}, {0, 0}};
}

// Channels-last strides for [N, C, spatial...]: C innermost.
std::vector<int64_t> channels_last(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t step = sizes[1];
  st[1] = 1;
  for (size_t d = sizes.size() - 1; d >= 2; --d) {
    st[d] = step;
    step *= sizes[d];
  }
  st[0] = step;
  return st;
}

// Row-major index over up to three spatial dims, the absent ones of size 1.
struct Grid {
  int64_t a = 1, b = 1, c = 1;
  explicit Grid(const std::vector<int64_t>& spatial) {
    if (spatial.size() > 0) a = spatial[0];
    if (spatial.size() > 1) b = spatial[1];
    if (spatial.size() > 2) c = spatial[2];
  }
  int64_t size() const { return a * b * c; }
};

// The convolution in double over logical row-major arrays: x [N, C, in...], w as torch lays it out, y [N, O, out...].
std::vector<double> reference(const Case& k, const std::vector<double>& x, const std::vector<double>& w,
                              const std::vector<double>* bias) {
  const auto in_sizes = k.input_sizes(), out_sizes = k.output_sizes();
  const Grid in(std::vector<int64_t>(in_sizes.begin() + 2, in_sizes.end()));
  const Grid out(std::vector<int64_t>(out_sizes.begin() + 2, out_sizes.end()));
  const Grid ker(std::vector<int64_t>(k.kernel.begin(), k.kernel.begin() + k.spatial));
  const int64_t Cg = k.C / k.groups, Og = k.O / k.groups;
  auto dim = [&](int d, const std::array<int64_t, 3>& v, int64_t absent) { return d < k.spatial ? v[d] : absent; };
  std::vector<double> y(size_t(k.N * k.O * out.size()), 0.0);
  for (int64_t n = 0; n < k.N; ++n)
    for (int64_t g = 0; g < k.groups; ++g)
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t o = 0; o < Og; ++o) {
          const int64_t ci = g * Cg + c, oi = g * Og + o;
          // weight [O, C/g, k...] or, transposed, [C, O/g, k...]
          const double* wk = w.data() + (k.transposed ? (ci * Og + o) : (oi * Cg + c)) * ker.size();
          const double* xc = x.data() + (n * k.C + ci) * in.size();
          double* yo = y.data() + (n * k.O + oi) * out.size();
          for (int64_t ka = 0; ka < ker.a; ++ka)
            for (int64_t kb = 0; kb < ker.b; ++kb)
              for (int64_t kc = 0; kc < ker.c; ++kc) {
                const double wv = wk[(ka * ker.b + kb) * ker.c + kc];
                const int64_t kk[3] = {ka, kb, kc};
                // plain: y[p] += x[p*s - pad + k*d]; transposed: y[i*s - pad + k*d] += x[i]
                const Grid& outer = k.transposed ? in : out;
                for (int64_t pa = 0; pa < outer.a; ++pa)
                  for (int64_t pb = 0; pb < outer.b; ++pb)
                    for (int64_t pc = 0; pc < outer.c; ++pc) {
                      const int64_t p[3] = {pa, pb, pc};
                      int64_t q[3] = {0, 0, 0};
                      bool inside = true;
                      for (int d = 0; d < 3 && inside; ++d) {
                        q[d] = p[d] * dim(d, k.stride, 1) - dim(d, k.pad, 0) + kk[d] * dim(d, k.dilation, 1);
                        const int64_t limit = d == 0   ? (k.transposed ? out.a : in.a)
                                              : d == 1 ? (k.transposed ? out.b : in.b)
                                                       : (k.transposed ? out.c : in.c);
                        inside = q[d] >= 0 && q[d] < limit;
                      }
                      if (!inside) continue;
                      const Grid& qg = k.transposed ? out : in;
                      const int64_t pi = (pa * outer.b + pb) * outer.c + pc, qi = (q[0] * qg.b + q[1]) * qg.c + q[2];
                      if (k.transposed) yo[qi] += xc[pi] * wv;
                      else yo[pi] += xc[qi] * wv;
                    }
              }
        }
  if (bias)
    for (int64_t n = 0; n < k.N; ++n)
      for (int64_t o = 0; o < k.O; ++o)
        for (int64_t i = 0; i < out.size(); ++i) y[(n * k.O + o) * out.size() + i] += (*bias)[o];
  return y;
}

// Random values exactly representable in `dtype`, as doubles.
std::vector<double> random_values(size_t n, uint32_t seed, int32_t dtype) {
  const auto f = random_floats(n, seed);
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    double x = f[i];
    if (dtype == kBf16) x = shim::bf16_to_float(shim::float_to_bf16(f[i]));
    if (dtype == kF16) x = shim::half_to_float(shim::float_to_half(f[i]));
    v[i] = x;
  }
  return v;
}

// A tensor of `dtype` with the given strides holding logical row-major `values`, in memory it owns.
struct Owned {
  std::vector<unsigned char> bytes;
  Handle h;
  Owned(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype,
        const std::vector<double>& values) {
    const size_t item = shim::element_size(dtype);
    bytes.assign(std::max<size_t>(shim::storage_nbytes(sizes, strides, item), item), 0);
    std::vector<int64_t> idx(sizes.size(), 0);
    for (size_t e = 0; e < values.size(); ++e) {
      int64_t off = 0;
      for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
      shim::store_from_double(bytes.data() + off * item, dtype, values[e]);
      for (size_t d = sizes.size(); d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
    h = from_blob(bytes.data(), sizes, strides, dtype);
  }
};

// Logical row-major elements of t as doubles.
std::vector<double> read_values(const shim::Tensor& t) {
  std::vector<double> out;
  std::vector<int64_t> idx(t.sizes.size(), 0);
  for (int64_t e = 0; e < t.numel(); ++e) {
    int64_t off = 0;
    for (size_t d = 0; d < t.sizes.size(); ++d) off += idx[d] * t.strides[d];
    out.push_back(shim::load_as_double(t.data() + off * int64_t(t.itemsize()), t.dtype));
    for (size_t d = t.sizes.size(); d-- > 0;) {
      if (++idx[d] < t.sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Tolerances: float32 accumulates in float; bfloat16 and float16 outputs are rounded once to 8 or 11 bits.
void require_matches(const std::vector<double>& got, const std::vector<double>& want, int32_t dtype, int64_t terms) {
  const double eps = dtype == kBf16 ? 1.0 / 128 : dtype == kF16 ? 1.0 / 1024 : 1e-6 * std::sqrt(double(terms));
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::abs(got[i] - want[i]);
    if (!(diff <= eps * (1 + std::abs(want[i])))) ++bad;  // NaN (the poison) is never within
    if (!(diff <= worst)) worst = diff;
  }
  INFO("elements out of tolerance: " << bad << " of " << got.size() << ", max abs diff " << worst);
  REQUIRE(bad == 0);
}

struct Inputs {
  std::vector<double> x, w, b;
  Owned X, W, B;
  explicit Inputs(const Case& k, uint32_t seed)
      : x(random_values(size_t(numel(k.input_sizes())), seed, k.dtype)),
        w(random_values(size_t(numel(k.weight_sizes())), seed + 1, k.dtype)),
        b(random_values(size_t(k.O), seed + 2, k.dtype)),
        X(k.input_sizes(), k.input_channels_last ? channels_last(k.input_sizes()) : contiguous(k.input_sizes()),
          k.dtype, x),
        W(k.weight_sizes(), k.weight_channels_last ? channels_last(k.weight_sizes()) : contiguous(k.weight_sizes()),
          k.dtype, w),
        B({k.O}, {1}, k.dtype, b) {}
};

// One convolution of `in` through the C ABI, checked.
void check_call(const Case& k, const Inputs& in) {
  std::array<int64_t, 3> op = k.out_pad;
  AtenTensorHandle bh = in.B.h.get();
  Handle Y;
  REQUIRE(aoti_torch_cpu_convolution(in.X.h.get(), in.W.h.get(), k.bias ? &bh : nullptr, k.stride.data(), k.spatial,
                                     k.pad.data(), k.spatial, k.dilation.data(), k.spatial, k.transposed, op.data(),
                                     k.spatial, k.groups, Y.out()) == 0);
  const auto out_sizes = k.output_sizes();
  CHECK(sizes_of(Y.get()) == out_sizes);
  // torch's rule: channels-last when the input or the weight is (a weight with C/g = 1 is also contiguous, and
  // does not count).
  const bool cl = shim::strides_like_channels_last(*in.X.h.get()) || shim::strides_like_channels_last(*in.W.h.get());
  if (k.input_channels_last) CHECK(cl);
  CHECK(strides_of(Y.get()) == (cl ? channels_last(out_sizes) : contiguous(out_sizes)));
  const int64_t terms = (k.C / k.groups) * numel(std::vector<int64_t>(k.kernel.begin(), k.kernel.begin() + k.spatial));
  require_matches(read_values(*Y.get()), reference(k, in.x, in.w, k.bias ? &in.b : nullptr), k.dtype, terms);
}

// Through the C ABI: the output's sizes and strides as torch gives them, its values against the reference. With
// `constant_weights`, the weights are registered as constant memory (as a model's parameters are) for the call and
// a second one, which MPSPACK_CPU_PACK_WEIGHTS=on answers from their packed copy; the bytes oneDNN keeps packed
// before they are withdrawn.
std::size_t check_through_abi(const Case& k, bool constant_weights = false) {
  INFO(k.name());
  Inputs in(k, uint32_t(k.N * 131 + k.C * 17 + k.O));
  if (constant_weights) shim::add_constant_ranges(&in, {{in.W.bytes.data(), in.W.bytes.size()}});
  for (int call = 0; call < (constant_weights ? 2 : 1); ++call) check_call(k, in);
  const std::size_t packed = shim::onednn_packed_bytes();
  if (constant_weights) shim::remove_constant_ranges(&in);
  return packed;
}

std::vector<Case> cases_of_every_kind() {
  std::vector<Case> v = {
      conv2d(2, 8, 8, 8, 9, 11, 3, 1, 1, 1),    // depthwise
      conv2d(2, 4, 8, 4, 10, 7, 5, 2, 2, 1),    // depthwise, channel multiplier 2
      conv2d(1, 6, 9, 3, 8, 8, 3, 1, 1, 1),     // groups of 2 channels in, 3 out
      conv2d(2, 3, 5, 1, 13, 10, 3, 1, 2, 2),   // dilation 2
      conv2d(1, 2, 4, 1, 11, 11, 2, 3, 0, 1),   // stride larger than the kernel
      conv2d(3, 16, 24, 1, 7, 5, 1, 1, 0, 1),   // 1x1
      conv2d(1, 3, 16, 1, 23, 19, 7, 2, 3, 1),  // 7x7 stride 2 (a stem)
      conv2d(2, 1, 1, 1, 6, 9, 3, 1, 1, 1),     // one channel
      conv2d(32, 4, 6, 1, 6, 6, 3, 1, 1, 1),    // batch 32
      conv2d(1, 5, 3, 1, 4, 4, 4, 1, 0, 1),     // kernel as large as the input
  };
  v.push_back(Case{1, 3, 5, 7, 1, {29}, {3}, {1}, {1}, {1}, {0}});  // 1-D
  v.push_back(Case{1, 2, 6, 6, 6, {31}, {5}, {2}, {4}, {3}, {0}});  // 1-D depthwise, stride 2, dilation 3
  v.push_back(Case{3, 2, 3, 4, 1, {5, 6, 7}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}});  // 3-D
  v.push_back(Case{3, 1, 4, 4, 4, {4, 5, 6}, {1, 3, 3}, {1, 1, 2}, {0, 1, 1}, {1, 2, 1}, {0, 0, 0}});  // 3-D depthwise
  // transposed: output_padding, groups, dilation, 1-D and 3-D
  v.push_back(Case{2, 2, 6, 4, 2, {5, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true});
  v.push_back(Case{2, 1, 3, 5, 1, {6, 4}, {3, 2}, {1, 3}, {0, 1}, {2, 1}, {0, 2}, true});
  v.push_back(Case{2, 1, 4, 4, 4, {5, 5}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {0, 0}, true});  // depthwise
  v.push_back(Case{1, 2, 4, 3, 1, {17}, {4}, {2}, {1}, {1}, {1}, true});
  v.push_back(Case{3, 1, 3, 2, 1, {3, 4, 3}, {3, 2, 3}, {2, 1, 2}, {1, 0, 1}, {1, 1, 1}, {1, 0, 0}, true});
  return v;
}

}  // namespace

TEST_CASE("CPU convolutions run on oneDNN", "[shim][conv]") {
  std::string why;
  const bool open = shim::onednn_plugin_open(&why);
  INFO(why);
  REQUIRE(open);
  CHECK(shim::onednn_description().starts_with("oneDNN "));
}

TEST_CASE("convolution float32: every kind of shape against a direct loop in double", "[shim][conv]") {
  for (const Case& k : cases_of_every_kind()) {
    check_through_abi(k);
    Case nb = k;
    nb.bias = false;
    check_through_abi(nb);
  }
}

TEST_CASE(
    "convolution with MPSPACK_CPU_PACK_WEIGHTS=on: weights in constant memory packed once, dropped when withdrawn",
    "[shim][conv][packed]") {
  mpspack::Tuning t;
  t.cpu_pack_weights = true;
  const mpspack::ScopedTuning tuned(t);
  const std::size_t kept = shim::onednn_packed_bytes();
  std::size_t packed_cases = 0;
  for (int32_t dtype : {kF32, kBf16}) {
    for (Case k : cases_of_every_kind()) {
      k.dtype = dtype;
      // Both calls right, the second from the packed copy where the primitive's layout is not the user's.
      packed_cases += check_through_abi(k, true) > kept;
      CHECK(shim::onednn_packed_bytes() == kept);  // withdrawn with the weights: nothing kept for that memory
    }
  }
  CHECK(packed_cases > 0);
}

TEST_CASE("convolution bfloat16 and float16 at their tolerances", "[shim][conv]") {
  for (int32_t dtype : {kBf16, kF16})
    for (Case k : cases_of_every_kind()) {
      k.dtype = dtype;
      check_through_abi(k);
    }
}

TEST_CASE("convolution: channels-last inputs and weights give channels-last outputs", "[shim][conv]") {
  std::vector<Case> v = {conv2d(2, 8, 8, 8, 9, 11, 3, 1, 1, 1), conv2d(1, 6, 10, 1, 7, 9, 3, 2, 1, 1),
                         conv2d(3, 16, 24, 1, 7, 5, 1, 1, 0, 1)};
  v.push_back(Case{3, 2, 3, 4, 1, {5, 6, 7}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}});
  v.push_back(Case{2, 2, 6, 4, 2, {5, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true});
  for (int32_t dtype : {kF32, kBf16})
    for (Case k : v) {
      k.dtype = dtype;
      for (auto [x_cl, w_cl] : {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
        k.input_channels_last = x_cl;
        k.weight_channels_last = w_cl;
        check_through_abi(k);
      }
    }
}

TEST_CASE("convolution on oneDNN writes every element of the output", "[shim][conv]") {
  // The output is poisoned with NaN first: an element left unwritten fails the comparison.
  for (const Case& k : cases_of_every_kind()) {
    INFO(k.name());
    Inputs in(k, 77);
    const auto out_sizes = k.output_sizes();
    Owned Y(out_sizes, contiguous(out_sizes), kF32,
            std::vector<double>(size_t(numel(out_sizes)), std::numeric_limits<double>::quiet_NaN()));
    std::array<int64_t, 3> op = k.out_pad;
    const shim::ConvShape s =
        shim::convolution_shape(*in.X.h.get(), *in.W.h.get(), in.B.h.get(), k.stride.data(), k.spatial, k.pad.data(),
                                k.spatial, k.dilation.data(), k.spatial, k.transposed, op.data(), k.spatial, k.groups);
    std::string implementation;
    shim::convolution_onednn(s, *in.X.h.get(), *in.W.h.get(), in.B.h.get(), *Y.h.get(), &implementation);
    INFO("oneDNN kernel: " << implementation);
    CHECK(!implementation.empty());
    require_matches(read_values(*Y.h.get()), reference(k, in.x, in.w, &in.b), kF32, 64);
  }
}

TEST_CASE("convolution float64 on the built-in path, what it cannot do is one line", "[shim][conv]") {
  Case k = conv2d(2, 4, 6, 2, 9, 8, 3, 2, 1, 2);
  k.dtype = kF64;
  check_through_abi(k);
  Case one_d{1, 3, 5, 7, 1, {29}, {3}, {1}, {1}, {1}, {0}};
  one_d.dtype = kF64;
  check_through_abi(one_d);

  Case three_d{3, 2, 3, 4, 1, {5, 6, 7}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}};
  three_d.dtype = kF64;
  Inputs in(three_d, 5);
  Handle Y;
  std::array<int64_t, 3> op{};
  CHECK(aoti_torch_cpu_convolution(in.X.h.get(), in.W.h.get(), nullptr, three_d.stride.data(), 3, three_d.pad.data(), 3,
                                   three_d.dilation.data(), 3, 0, op.data(), 3, 1, Y.out()) == 1);
  CHECK(Y.h == nullptr);
  CHECK(std::string(shim::last_error()) ==
        "aoti_torch_cpu_convolution: convolution: the built-in path has no kernel for float64 conv3d N=2 C=3 O=4 "
        "in=5x6x7 kernel=3x3x3 stride=1x2x1 padding=1x1x1 dilation=1x1x1 groups=1");
}
