// What the CPU pooling ops (pooling.cpp, pooling_fractional.cpp) share, defined in pooling.cpp: the input's planes and
// spatial sizes, the per-dim windows each output position reads, output layouts as torch chooses them, and the loop
// over planes. A 2-d pool is run as a 3-d one whose first spatial dim has size 1, so one kernel serves both.
#pragma once

#include "element.hpp"
#include "tensor.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace mpspack::shim::pool {

using Dims = std::array<int64_t, 3>;

// The input of a pool: [N, C, spatial...] (batched) or [C, spatial...], spatial dims padded in front to three.
struct Geometry {
  int nd = 2;  // 2 or 3 spatial dims as the op sees them
  bool batched = false;
  int64_t N = 1, C = 1;
  Dims in{1, 1, 1};
  bool channels_last = false;  // a batched input torch's suggest_memory_format calls channels-last
  int64_t planes() const { return N * C; }
};

// Which of the input's dims torch requires to be non-empty; it differs between the ops.
enum class NonEmpty {
  non_batch,    // every dim but a batched input's first (max_pool, avg_pool)
  after_first,  // every dim but the first, batched or not (adaptive_max_pool, adaptive_avg_pool3d, fractional, unpool)
  spatial,      // the spatial dims only (adaptive_avg_pool2d)
};
// Checks x's rank (nd+1 or nd+2) and which dims are non-empty, naming `op`; throws ShimError.
Geometry input_geometry(const Tensor& x, int nd, const char* op, NonEmpty rule);

// Sizes [N?, C, out...] of a result of `g`'s input with spatial sizes `out` (the last g.nd entries used).
std::vector<int64_t> out_sizes(const Geometry& g, const Dims& out);
// Channels-last strides when `channels_last` and the sizes are 4-d or 5-d, else contiguous.
std::vector<int64_t> out_strides(const std::vector<int64_t>& sizes, bool channels_last);

// Where plane p (= n * C + c) and each spatial dim lie in a tensor of g's layout, in elements.
struct PlaneView {
  int64_t C = 1, sN = 0, sC = 0;
  Dims s{0, 0, 0};
  int64_t base(int64_t p) const { return (p / C) * sN + (p % C) * sC; }
};
PlaneView plane_view(const Tensor& t, const Geometry& g);

// The input positions one output position reads along one dim: start, start+step, ... below end. `padded` is
// the window's extent with padding counted (avg_pool's count_include_pad divisor).
struct Window {
  int64_t start = 0, end = 1, step = 1, padded = 1;
  int64_t count() const { return end > start ? (end - start + step - 1) / step : 0; }
};
using Windows = std::array<std::vector<Window>, 3>;  // per spatial dim, one per output position
// The single window of a padding spatial dim (2-d pools).
inline std::vector<Window> unit_windows() { return {Window{}}; }

// A per-spatial-dim list argument of `op`: one value for every dim or nd values; an empty list gives `fallback`
// when `fallback` is given. Throws ShimError with torch's wording ("op: stride must either be ...").
Dims expand_list(const char* op, const char* what, const int64_t* v, int64_t len, int nd, const Dims* fallback);

// torch's pooling_output_shape: floor (or ceil) division, and in ceil mode the last window starts inside the
// input or its left padding. Checks pad <= half the effective kernel.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode);

// "2x3x4" of the last nd entries.
std::string joined(const Dims& v, int nd);

// Fails naming `op` unless t's dtype is one of `allowed` (torch's CPU kernels each take their own set).
void require_dtype(const Tensor& t, const char* op, std::initializer_list<DType> allowed);

// Runs f(first_plane, end_plane) over [0, planes), split over the shim's threads when the work is large.
void for_planes(int64_t planes, int64_t work_per_plane, const std::function<void(int64_t, int64_t)>& f);

// Max over each window of `w` (NaN wins, the last one) into out (x's dtype) and idx (int64 flat offsets within
// each plane), both laid out as results of g (pooling.cpp).
void max_over_windows(const Tensor& x, const Geometry& g, const Windows& w, Tensor& out, Tensor& idx);

// torch's CPU accumulator for pools: float for the half types, the type itself otherwise.
template <class T>
struct Acc {
  using type = T;
};
template <>
struct Acc<typed::Half> {
  using type = float;
};
template <>
struct Acc<typed::BF16> {
  using type = float;
};

}  // namespace mpspack::shim::pool
