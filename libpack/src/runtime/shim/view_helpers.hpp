// What the view, concatenation, padding and complex ops share: views over a handle's Storage, aten's dim
// wrapping, dtype promotion, copies between any dtypes the shim stores (complex included) and the output strides
// aten's element-wise kernels (TensorIterator) give.
#pragma once

#include "tensor.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace mpspack::shim::viewops {

// A new handle over `base`'s Storage (as aoti_torch__reinterpret_tensor makes): writes through one show in the other.
TensorPtr view_of(const Tensor& base, int32_t dtype, std::span<const int64_t> sizes, std::span<const int64_t> strides,
                  int64_t storage_offset);

// t narrowed to [start, start + length) along dim d (already wrapped): a view. Fails naming `op` with torch's
// narrow text when the range does not fit.
TensorPtr narrow_view(const Tensor& t, std::size_t d, int64_t start, int64_t length, const char* op);

// aten's maybe_wrap_dim: `dim` of a tensor of `ndim` dims (a 0-d tensor counts as 1-d) into [0, max(ndim, 1)).
// Fails with torch's "Dimension out of range" text, prefixed by `op`.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

bool is_complex(int32_t dtype);
bool is_floating(int32_t dtype);  // float16, bfloat16, float32, float64
bool is_integral(int32_t dtype);  // the integer types, bool excluded
// The real dtype of a complex one's parts (complex64 -> float32), and back.
int32_t complex_part(int32_t complex_dtype);
int32_t complex_of(int32_t real_dtype);
// torch.promote_types over the classic dtypes and complex32/64/128; fails naming `op` for any other pair.
int32_t promote_types(int32_t a, int32_t b, const char* op);

// dst <- src (broadcast to dst's shape) for tensors on any devices with any stored dtypes: a bitwise copy when
// the dtypes match (complex and float8 too), converted between classic dtypes, and from classic or complex into
// complex. Fails naming `op` for a conversion it cannot make.
void copy_values(Tensor& dst, const Tensor& src, const char* op);
// Every element of dst (CPU or registered device) set to `value`, converted to dst's dtype (a complex dtype
// gets value + 0i).
void fill(Tensor& dst, double value, const char* op);

// op(t) for a CPU tensor; for a tensor on a device with registered memory, op on a CPU copy of it, its result
// copied back to that device with the same sizes and strides (for the device-generic aten functions that have
// no device kernel here: the device's copies only, no GPU API).
TensorPtr via_host(const Tensor& t, const std::function<TensorPtr(const Tensor&)>& op, const char* name);

// The strides TensorIterator gives the output of an element-wise op over `inputs` broadcast to `shape`: the
// inputs' strides when all agree and are dense, else dense strides in the order of the inputs' strides (the
// first input whose strides differ decides; broadcast dims do not count).
std::vector<int64_t> elementwise_strides(std::span<const int64_t> shape, std::span<const Tensor* const> inputs);
// The shape two tensors broadcast to; fails naming `op` when they do not.
std::vector<int64_t> broadcast_shape(const Tensor& a, const Tensor& b, const char* op);

// c10's suggest_memory_format: 2 (channels_last) for a 4-d tensor whose strides are like channels-last, 3 for a 5-d
// one like channels_last_3d, else 0 (contiguous).
int32_t suggest_memory_format(const Tensor& t);
// Dense strides of `sizes` in memory format `format` (0 contiguous, 2 channels_last, 3 channels_last_3d); fails
// naming `op` when the rank does not fit the format.
std::vector<int64_t> strides_for_format(std::span<const int64_t> sizes, int32_t format, const char* op);

// *ret0 <- t, released to the caller; fails naming `op` when ret0 is null (before anything is handed out).
void set_result(AtenTensorHandle* ret0, TensorPtr t, const char* op);
// Fails naming `op` when ret0 is null: checked before the work, so a bad call costs nothing.
void require_ret(const AtenTensorHandle* ret0, const char* op);

// "[2, 3]"
std::string shape_text(std::span<const int64_t> sizes);

}  // namespace mpspack::shim::viewops
