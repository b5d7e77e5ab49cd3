// Selection by a mask: aten::masked_select (the elements where the mask holds, in row-major order of self and
// mask broadcast together), masked_scatter (a copy of self, broadcast with mask, whose masked elements take
// source's elements in row-major order) and nonzero_static (nonzero's positions in a fixed number of rows:
// cut to `size`, or padded with fill_value). Masks are bool: torch 2.x refuses the uint8 masks 1.x took.
#include "aoti_shim.h"
#include "element.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

// torch's broadcast of two shapes, with its error wording.
std::vector<int64_t> broadcast_shape(const Tensor& a, const Tensor& b) {
  const std::size_t n = std::max(a.sizes.size(), b.sizes.size());
  std::vector<int64_t> out(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t from_end = n - 1 - i;
    const int64_t sa = from_end < a.sizes.size() ? a.sizes[a.sizes.size() - 1 - from_end] : 1;
    const int64_t sb = from_end < b.sizes.size() ? b.sizes[b.sizes.size() - 1 - from_end] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail("The size of tensor a (" + std::to_string(sa) + ") must match the size of tensor b (" + std::to_string(sb) +
           ") at non-singleton dimension " + std::to_string(i));
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

// t broadcast to `shape` as a new contiguous tensor of its dtype.
TensorPtr expanded(const Tensor& t, const std::vector<int64_t>& shape) {
  TensorPtr out(new_contiguous(shape, t.dtype));
  if (out->numel() > 0) copy_into(*out, t);
  return out;
}

void require_mask(const Tensor& mask, const char* op) {
  require_cpu(mask, op);
  if (mask.dtype != static_cast<int32_t>(DType::boolean))
    fail(std::string(op) + ": expected BoolTensor for mask, got " + dtype_name(mask.dtype));
}

// The mask's elements (contiguous bool) as flags.
std::vector<char> mask_flags(const Tensor& mask) {
  const auto* p = reinterpret_cast<const uint8_t*>(mask.data());
  std::vector<char> f(static_cast<std::size_t>(mask.numel()));
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = p[i] != 0;
  return f;
}

Tensor* masked_select(const Tensor& self, const Tensor& mask) {
  require_cpu(self, "masked_select");
  require_mask(mask, "masked_select");
  const std::vector<int64_t> shape = broadcast_shape(self, mask);
  const TensorPtr values = expanded(self, shape), m = expanded(mask, shape);
  const std::vector<char> flags = mask_flags(*m);
  const int64_t count = std::count(flags.begin(), flags.end(), 1);
  const int64_t out_sizes[1] = {count};
  TensorPtr out(new_contiguous(out_sizes, self.dtype));
  const std::size_t item = self.itemsize();
  const char* src = values->data();
  char* dst = out->data();
  for (std::size_t i = 0; i < flags.size(); ++i)
    if (flags[i]) std::memcpy(dst, src + i * item, item), dst += item;
  return out.release();
}

Tensor* masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  require_cpu(self, "masked_scatter");
  require_cpu(source, "masked_scatter");
  require_mask(mask, "masked_scatter");
  if (source.dtype != self.dtype)
    fail(std::string("masked_scatter: expected self and source to have same dtypes but got ") + dtype_name(self.dtype) +
         " and " + dtype_name(source.dtype));
  const std::vector<int64_t> shape = broadcast_shape(self, mask);
  TensorPtr out = expanded(self, shape);
  const TensorPtr m = expanded(mask, shape);
  const TensorPtr src = contiguous_as(source, source.dtype);
  const std::vector<char> flags = mask_flags(*m);
  const int64_t count = std::count(flags.begin(), flags.end(), 1);
  if (count > src->numel())
    fail("masked_scatter: Number of elements of source (" + std::to_string(src->numel()) +
         ") < number of ones in mask (" + std::to_string(count) + ")");
  const std::size_t item = self.itemsize();
  const char* from = src->data();
  char* dst = out->data();
  for (std::size_t i = 0; i < flags.size(); ++i)
    if (flags[i]) std::memcpy(dst + i * item, from, item), from += item;
  return out.release();
}

Tensor* nonzero_static(const Tensor& self, int64_t size, int64_t fill_value) {
  require_cpu(self, "nonzero_static");
  if (size < 0) fail("nonzero_static: 'size' must be an non-negative integer, got " + std::to_string(size));
  const auto nd = static_cast<std::size_t>(self.dim());
  const int64_t out_sizes[2] = {size, self.dim()};
  TensorPtr out(new_contiguous(out_sizes, static_cast<int32_t>(DType::i64)));
  auto* o = reinterpret_cast<int64_t*>(out->data());
  std::fill(o, o + out->numel(), fill_value);
  int64_t row = 0;
  visit_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = reinterpret_cast<const T*>(self.data());
    for_each_index(self.sizes, [&](std::span<const int64_t> idx) {
      if (row >= size || load(p + offset_of(idx, self.strides)) == 0) return;  // NaN counts as nonzero
      std::copy(idx.begin(), idx.end(), o + row * static_cast<int64_t>(nd));
      ++row;
    });
  });
  return out.release();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_masked_select(AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("masked_select: ret0 is null");
    *ret0 = masked_select(deref(self, "self"), deref(mask, "mask"));
  });
}

AOTITorchError aoti_torch_cpu_masked_scatter(AtenTensorHandle self, AtenTensorHandle mask, AtenTensorHandle source,
                                             AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("masked_scatter: ret0 is null");
    *ret0 = masked_scatter(deref(self, "self"), deref(mask, "mask"), deref(source, "source"));
  });
}

AOTITorchError aoti_torch_cpu_nonzero_static(AtenTensorHandle self, int64_t size, int64_t fill_value,
                                             AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("nonzero_static: ret0 is null");
    *ret0 = nonzero_static(deref(self, "self"), size, fill_value);
  });
}

}  // extern "C"
