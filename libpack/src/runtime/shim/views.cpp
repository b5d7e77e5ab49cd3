// aten's view ops: reshape, permute, narrow, squeeze.dim, view.dtype, view_as_real and view_as_complex. Each
// result is a new handle over the input's Storage, as torch's views are (writes through one show in the other);
// reshape copies only where torch does, when no strides can express the new shape over the old layout. Views
// need no computing, so they work on tensors of any device; reshape's copy goes through the device's memory.
#include "aoti_shim.h"
#include "tensor.hpp"
#include "view_helpers.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::viewops;

namespace {

// aten's infer_size: `shape` with its one -1 replaced so that it holds `numel` elements.
std::vector<int64_t> infer_shape(std::span<const int64_t> shape, int64_t numel) {
  std::vector<int64_t> out(shape.begin(), shape.end());
  std::optional<std::size_t> infer;
  int64_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer) fail("reshape: only one dimension can be inferred");
      infer = i;
    } else if (shape[i] < 0) {
      fail("reshape: invalid shape dimension " + std::to_string(shape[i]));
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      fail("reshape: shape '" + shape_text(shape) + "' overflows");
    }
  }
  if (numel == known || (infer && known > 0 && numel % known == 0)) {
    if (infer) {
      if (known == 0)
        fail("reshape: cannot reshape tensor of 0 elements into shape " + shape_text(shape) +
             " because the unspecified dimension size -1 can be any value and is ambiguous");
      out[*infer] = numel / known;
    }
    return out;
  }
  fail("reshape: shape '" + shape_text(shape) + "' is invalid for input of size " + std::to_string(numel));
}

// aten's computeStride: strides that lay `shape` over the elements of (old_sizes, old_strides) in row-major
// order, or nothing when no strides can (then reshape copies).
std::optional<std::vector<int64_t>> view_strides(std::span<const int64_t> old_sizes,
                                                 std::span<const int64_t> old_strides, std::span<const int64_t> shape) {
  if (old_sizes.empty()) return std::vector<int64_t>(shape.size(), 1);
  int64_t numel = 1;
  for (int64_t s : old_sizes) numel *= s;
  if (numel == 0) {
    // Any strides do; torch keeps the old ones for the same shape, else takes those of a resize.
    if (std::equal(old_sizes.begin(), old_sizes.end(), shape.begin(), shape.end()))
      return std::vector<int64_t>(old_strides.begin(), old_strides.end());
    return contiguous_strides(shape);
  }
  std::vector<int64_t> out(shape.size());
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back(), tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    // The end of a chunk of dims that are contiguous with each other: the view's dims must fill it exactly.
    if (d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

TensorPtr reshape(const Tensor& self, std::span<const int64_t> shape) {
  const std::vector<int64_t> sizes = infer_shape(shape, self.numel());
  if (auto strides = view_strides(self.sizes, self.strides, sizes))
    return view_of(self, self.dtype, sizes, *strides, self.storage_offset);
  // torch: _unsafe_view(self.clone(contiguous_format), shape).
  TensorPtr out(
      new_tensor_on(self.device_type(), self.storage->device_index, sizes, contiguous_strides(sizes), self.dtype));
  TensorPtr as_self = view_of(*out, self.dtype, self.sizes, contiguous_strides(self.sizes), 0);
  copy_values(*as_self, self, "reshape");
  return out;
}

TensorPtr permute(const Tensor& self, std::span<const int64_t> dims) {
  if (static_cast<int64_t>(dims.size()) != self.dim())
    fail("permute: number of dimensions in the tensor input does not match the length of the desired ordering of "
         "dimensions i.e. input.dim() = " +
         std::to_string(self.dim()) + " is not equal to len(dims) = " + std::to_string(dims.size()));
  std::vector<int64_t> sizes(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<std::size_t>(wrap_dim(dims[i], self.dim(), "permute"));
    if (seen[d]) fail("permute: duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self.sizes[d];
    strides[i] = self.strides[d];
  }
  return view_of(self, self.dtype, sizes, strides, self.storage_offset);
}

TensorPtr narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  if (self.dim() == 0) fail("narrow: narrow() cannot be applied to a 0-dim tensor.");
  if (length < 0) fail("narrow: narrow(): length must be non-negative.");
  const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim(), "narrow"));
  const int64_t size = self.sizes[d];
  if (start < -size || start > size)
    fail("narrow: start out of range (expected to be in range of [" + std::to_string(-size) + ", " +
         std::to_string(size) + "], but got " + std::to_string(start) + ")");
  if (start < 0) start += size;
  return narrow_view(self, d, start, length, "narrow");
}

TensorPtr squeeze_dim(const Tensor& self, int64_t dim) {
  const auto d = static_cast<std::size_t>(wrap_dim(dim, self.dim(), "squeeze"));
  std::vector<int64_t> sizes(self.sizes), strides(self.strides);
  if (self.dim() > 0 && sizes[d] == 1) {
    sizes.erase(sizes.begin() + static_cast<std::ptrdiff_t>(d));
    strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(d));
  }
  return view_of(self, self.dtype, sizes, strides, self.storage_offset);
}

std::string dtype_view_text(const Tensor& self, int32_t dtype) {
  return std::string(" to view ") + dtype_name(self.dtype) + " as " + dtype_name(dtype) + " (different element sizes)";
}

// The last dim's elements split into (or joined from) elements of the new size; the other strides scale.
TensorPtr view_dtype(const Tensor& self, int32_t dtype) {
  const auto old_size = static_cast<int64_t>(self.itemsize()), new_size = static_cast<int64_t>(element_size(dtype));
  if (old_size == new_size) return view_of(self, dtype, self.sizes, self.strides, self.storage_offset);
  if (self.dim() == 0) fail("view: self.dim() cannot be 0" + dtype_view_text(self, dtype));
  if (self.strides.back() != 1)
    fail("view: self.stride(-1) must be 1" + dtype_view_text(self, dtype) + ", but got " +
         std::to_string(self.strides.back()));
  std::vector<int64_t> sizes(self.sizes), strides(self.strides);
  if (old_size > new_size) {
    const int64_t ratio = old_size / new_size;
    for (int64_t& s : strides) s *= ratio;
    strides.back() = 1;
    sizes.back() *= ratio;
    return view_of(self, dtype, sizes, strides, self.storage_offset * ratio);
  }
  const int64_t ratio = new_size / old_size;
  const auto check = [&](int64_t value, const std::string& what) {
    if (value % ratio != 0)
      fail("view: " + what + " must be divisible by " + std::to_string(ratio) + dtype_view_text(self, dtype) +
           ", but got " + std::to_string(value));
  };
  check(sizes.back(), "self.size(-1)");
  check(self.storage_offset, "self.storage_offset()");
  for (std::size_t d = 0; d + 1 < strides.size(); ++d) {
    check(strides[d], "self.stride(" + std::to_string(d) + ")");
    strides[d] /= ratio;
  }
  sizes.back() /= ratio;
  return view_of(self, dtype, sizes, strides, self.storage_offset / ratio);
}

TensorPtr view_as_real(const Tensor& self) {
  if (!is_complex(self.dtype)) fail("view_as_real: view_as_real is only supported for complex tensors");
  std::vector<int64_t> sizes(self.sizes), strides(self.strides);
  for (int64_t& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return view_of(self, complex_part(self.dtype), sizes, strides, self.storage_offset * 2);
}

TensorPtr view_as_complex(const Tensor& self) {
  if (self.dtype != mpspack::dtype::float16 && self.dtype != mpspack::dtype::float32 &&
      self.dtype != mpspack::dtype::float64)
    fail(std::string("view_as_complex: view_as_complex is only supported for half, float and double tensors, but "
                     "got a tensor of scalar type: ") +
         dtype_name(self.dtype));
  if (self.dim() == 0) fail("view_as_complex: Input tensor must have one or more dimensions");
  if (self.sizes.back() != 2) fail("view_as_complex: Tensor must have a last dimension of size 2");
  if (self.strides.back() != 1) fail("view_as_complex: Tensor must have a last dimension with stride 1");
  std::vector<int64_t> sizes(self.sizes.begin(), self.sizes.end() - 1);
  std::vector<int64_t> strides(self.strides.begin(), self.strides.end() - 1);
  for (int64_t& s : strides) {
    if (s % 2 != 0) fail("view_as_complex: Tensor must have a stride divisible by 2 for all but last dimension");
    s /= 2;
  }
  if (self.storage_offset % 2 != 0) fail("view_as_complex: Tensor must have a storage_offset divisible by 2");
  return view_of(self, complex_of(self.dtype), sizes, strides, self.storage_offset / 2);
}

std::span<const int64_t> list(const int64_t* p, int64_t n, const char* op, const char* what) {
  if (n < 0) fail(std::string(op) + ": negative length of " + what);
  if (n > 0 && p == nullptr) fail(std::string(op) + ": " + what + " is null");
  return {p, static_cast<std::size_t>(n)};
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_reshape(AtenTensorHandle self, const int64_t* shape, int64_t shape_len_,
                                      AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "reshape");
    set_result(ret0, reshape(deref(self, "self"), list(shape, shape_len_, "reshape", "shape")), "reshape");
  });
}

AOTITorchError aoti_torch_cpu_permute(AtenTensorHandle self, const int64_t* dims, int64_t dims_len_,
                                      AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    set_result(ret0, permute(deref(self, "self"), list(dims, dims_len_, "permute", "dims")), "permute");
  });
}

AOTITorchError aoti_torch_cpu_narrow(AtenTensorHandle self, int64_t dim, int64_t start, int64_t length,
                                     AtenTensorHandle* ret0) {
  return guarded(__func__, [&] { set_result(ret0, narrow(deref(self, "self"), dim, start, length), "narrow"); });
}

AOTITorchError aoti_torch_aten_narrow(AtenTensorHandle self, int64_t dim, int64_t start, int64_t length,
                                      AtenTensorHandle* ret0) {
  return guarded(__func__, [&] { set_result(ret0, narrow(deref(self, "self"), dim, start, length), "narrow"); });
}

AOTITorchError aoti_torch_cpu_squeeze_dim(AtenTensorHandle self, int64_t dim, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] { set_result(ret0, squeeze_dim(deref(self, "self"), dim), "squeeze"); });
}

AOTITorchError aoti_torch_cpu_view_dtype(AtenTensorHandle self, int32_t dtype, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] { set_result(ret0, view_dtype(deref(self, "self"), dtype), "view"); });
}

AOTITorchError aoti_torch_cpu_view_as_real(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] { set_result(ret0, view_as_real(deref(self, "self")), "view_as_real"); });
}

AOTITorchError aoti_torch_cpu_view_as_complex(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] { set_result(ret0, view_as_complex(deref(self, "self")), "view_as_complex"); });
}

}  // extern "C"
