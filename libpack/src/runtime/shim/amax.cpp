// aten::amax (c_shim_aten.h's device-generic aoti_torch_aten_amax): the largest value over the dims listed (all
// of them for an empty list), NaN winning as in torch, into a contiguous tensor (keepdim keeps the reduced dims as
// size 1). Values are compared in their own type (int64 exactly, half types as float). A device tensor is reduced
// on a host copy, through its registered memory.
#include "aoti_shim.h"
#include "element.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"
#include "view_helpers.hpp"

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;
using namespace mpspack::shim::viewops;

namespace {

// Which dims of `self` are reduced; fails with torch's texts for a repeated dim or an empty reduction.
std::vector<bool> reduced_dims(const Tensor& self, std::span<const int64_t> dims) {
  const std::size_t nd = static_cast<std::size_t>(self.dim());
  std::vector<bool> reduced(nd, dims.empty());
  for (int64_t dim : dims) {
    const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim(), "amax"));
    if (nd == 0) continue;
    if (reduced[d]) fail("amax: dim " + std::to_string(d) + " appears multiple times in the list of dims");
    reduced[d] = true;
  }
  if (self.numel() == 0) {
    if (dims.empty()) fail("amax: amax(): Expected reduction dim to be specified for input.numel() == 0.");
    for (std::size_t d = 0; d < nd; ++d)
      if (reduced[d] && self.sizes[d] == 0)
        fail("amax: amax(): Expected reduction dim " + std::to_string(d) + " to have non-zero size.");
  }
  return reduced;
}

// out (self's shape with reduced dims of size 1, contiguous) <- the maximum of each group.
void reduce_max(const Tensor& self, const std::vector<bool>& reduced, Tensor& out) {
  std::vector<int64_t> out_strides(out.strides);
  for (std::size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d]) out_strides[d] = 0;
  std::vector<bool> seen(static_cast<std::size_t>(out.numel()), false);
  visit_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = reinterpret_cast<const T*>(self.data());
    T* o = reinterpret_cast<T*>(out.data());
    for_each_index(self.sizes, [&](std::span<const int64_t> idx) {
      const int64_t at = offset_of(idx, out_strides);
      const auto v = load(in + offset_of(idx, self.strides));
      if (!seen[static_cast<std::size_t>(at)]) {  // the first of its group: out holds nothing yet
        store(o + at, v);
        seen[static_cast<std::size_t>(at)] = true;
        return;
      }
      const auto best = load(o + at);
      if (!is_nan(best) && (is_nan(v) || v > best)) store(o + at, v);
    });
  });
}

TensorPtr amax(const Tensor& self, std::span<const int64_t> dims, bool keepdim) {
  if (is_complex(self.dtype))
    fail(std::string("amax: \"max_values_cpu\" not implemented for '") + dtype_name(self.dtype) + "'");
  const std::vector<bool> reduced = reduced_dims(self, dims);
  std::vector<int64_t> kept(self.sizes), result;
  for (std::size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) kept[d] = 1;
    if (!reduced[d] || keepdim) result.push_back(kept[d]);
  }
  TensorPtr out(new_contiguous(kept, self.dtype));
  if (out->numel() > 0) reduce_max(self, reduced, *out);
  out->sizes = result;  // the same elements in the same order: dropping size-1 dims keeps it contiguous
  out->strides = contiguous_strides(result);
  return out;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_aten_amax(AtenTensorHandle self, const int64_t* dim, int64_t dim_len_, int32_t keepdim,
                                    AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (dim_len_ < 0 || (dim_len_ > 0 && dim == nullptr)) fail("amax: dim is null or of negative length");
    require_ret(ret0, "amax");
    const std::span<const int64_t> dims(dim, static_cast<std::size_t>(dim_len_));
    const auto on = [&](const Tensor& t) { return amax(t, dims, keepdim != 0); };
    set_result(ret0, via_host(deref(self, "self"), on, "amax"), "amax");
  });
}

}  // extern "C"
