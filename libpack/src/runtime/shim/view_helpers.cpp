// Views, dim wrapping, dtype promotion, any-dtype copies and element-wise output strides (view_helpers.hpp).
#include "view_helpers.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace mpspack::shim::viewops {

TensorPtr view_of(const Tensor& base, int32_t dtype, std::span<const int64_t> sizes, std::span<const int64_t> strides,
                  int64_t storage_offset) {
  auto t = std::make_unique<Tensor>();
  t->storage = base.storage;
  t->dtype = dtype;
  t->storage_offset = storage_offset;
  t->sizes.assign(sizes.begin(), sizes.end());
  t->strides.assign(strides.begin(), strides.end());
  t->sizes.reserve(1);  // get_sizes/get_strides hand out data(): never null, even for a 0-d view
  t->strides.reserve(1);
  return t;
}

void require_ret(const AtenTensorHandle* ret0, const char* op) {
  if (ret0 == nullptr) fail(std::string(op) + ": ret0 is null");
}

void set_result(AtenTensorHandle* ret0, TensorPtr t, const char* op) {
  require_ret(ret0, op);
  *ret0 = t.release();
}

TensorPtr narrow_view(const Tensor& t, std::size_t d, int64_t start, int64_t length, const char* op) {
  const int64_t size = t.sizes[d];
  if (start < 0 || length < 0 || start > size - length)
    fail(std::string(op) + ": start (" + std::to_string(start) + ") + length (" + std::to_string(length) +
         ") exceeds dimension size (" + std::to_string(size) + ").");
  std::vector<int64_t> sizes(t.sizes);
  sizes[d] = length;
  return view_of(t, t.dtype, sizes, t.strides, t.storage_offset + start * t.strides[d]);
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n)
    fail(std::string(op) + ": Dimension out of range (expected to be in range of [" + std::to_string(-n) + ", " +
         std::to_string(n - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + n : dim;
}

bool is_complex(int32_t dtype) {
  return dtype == dtype::complex32 || dtype == dtype::complex64 || dtype == dtype::complex128;
}
bool is_floating(int32_t dtype) {
  return dtype == dtype::float16 || dtype == dtype::bfloat16 || dtype == dtype::float32 || dtype == dtype::float64;
}
bool is_integral(int32_t dtype) {
  return dtype == dtype::uint8 || dtype == dtype::int8 || dtype == dtype::int16 || dtype == dtype::int32 ||
         dtype == dtype::int64;
}

int32_t complex_part(int32_t complex_dtype) {
  switch (complex_dtype) {
    case dtype::complex32: return dtype::float16;
    case dtype::complex64: return dtype::float32;
    case dtype::complex128: return dtype::float64;
    default: fail(std::string(dtype_name(complex_dtype)) + " is not a complex dtype");
  }
}

int32_t complex_of(int32_t real_dtype) {
  switch (real_dtype) {
    case dtype::float16: return dtype::complex32;
    case dtype::float32: return dtype::complex64;
    case dtype::float64: return dtype::complex128;
    default: fail(std::string("no complex dtype has ") + dtype_name(real_dtype) + " parts");
  }
}

namespace {

bool is_classic(int32_t dtype) { return is_floating(dtype) || is_integral(dtype) || dtype == dtype::bool_; }

int32_t promote_integers(int32_t a, int32_t b) {
  if (a == dtype::uint8 || b == dtype::uint8) {
    const int32_t other = a == dtype::uint8 ? b : a;
    return other == dtype::int8 ? dtype::int16 : other;  // uint8 and int8: the smallest type holding both
  }
  return element_size(a) >= element_size(b) ? a : b;
}

int32_t promote_floats(int32_t a, int32_t b) {
  if ((a == dtype::float16 && b == dtype::bfloat16) || (a == dtype::bfloat16 && b == dtype::float16))
    return dtype::float32;
  return element_size(a) >= element_size(b) ? a : b;
}

}  // namespace

int32_t promote_types(int32_t a, int32_t b, const char* op) {
  if (a == b) return a;
  const bool known_a = is_classic(a) || is_complex(a), known_b = is_classic(b) || is_complex(b);
  if (!known_a || !known_b)
    fail(std::string(op) + ": promotion of " + dtype_name(a) + " with " + dtype_name(b) +
         " is not supported by the mpspack shim");
  if (a == dtype::bool_) return b;
  if (b == dtype::bool_) return a;
  if (is_complex(a) || is_complex(b)) {
    const int32_t pa = is_complex(a) ? complex_part(a) : a, pb = is_complex(b) ? complex_part(b) : b;
    if (is_integral(pa)) return is_complex(b) ? b : a;
    if (is_integral(pb)) return is_complex(a) ? a : b;
    return complex_of(promote_floats(pa, pb));
  }
  if (is_floating(a) && is_floating(b)) return promote_floats(a, b);
  if (is_floating(a)) return a;
  if (is_floating(b)) return b;
  return promote_integers(a, b);
}

namespace {

// t's elements as integers of the same size, for bitwise copies: 16-byte ones as two int64 along a new last dim.
TensorPtr plain_view(const Tensor& t) {
  const std::size_t n = t.itemsize();
  if (n == 16) {
    std::vector<int64_t> sizes(t.sizes), strides(t.strides);
    for (int64_t& s : strides) s *= 2;
    sizes.push_back(2);
    strides.push_back(1);
    return view_of(t, dtype::int64, sizes, strides, t.storage_offset * 2);
  }
  const int32_t as = n == 1 ? dtype::uint8 : n == 2 ? dtype::int16 : n == 4 ? dtype::int32 : dtype::int64;
  return view_of(t, as, t.sizes, t.strides, t.storage_offset);
}

// One part (0 real, 1 imaginary) of each element of a complex tensor, as its real dtype.
TensorPtr part_view(const Tensor& t, int which) {
  std::vector<int64_t> strides(t.strides);
  for (int64_t& s : strides) s *= 2;
  return view_of(t, complex_part(t.dtype), t.sizes, strides, t.storage_offset * 2 + which);
}

}  // namespace

void copy_values(Tensor& dst, const Tensor& src, const char* op) {
  if (dst.dtype == src.dtype) {
    const TensorPtr d = plain_view(dst), s = plain_view(src);
    return copy_any(*d, *s);
  }
  if (is_classic(dst.dtype) && is_classic(src.dtype)) return copy_any(dst, src);
  if (is_complex(dst.dtype) && is_complex(src.dtype)) {
    for (int part = 0; part < 2; ++part) {
      const TensorPtr d = part_view(dst, part), s = part_view(src, part);
      copy_any(*d, *s);
    }
    return;
  }
  if (is_complex(dst.dtype) && is_classic(src.dtype)) {
    const TensorPtr re = part_view(dst, 0), im = part_view(dst, 1);
    copy_any(*re, src);
    return fill(*im, 0.0, op);
  }
  fail(std::string(op) + ": copying " + dtype_name(src.dtype) + " into " + dtype_name(dst.dtype) +
       " is not supported by the mpspack shim");
}

void fill(Tensor& dst, double value, const char* op) {
  if (is_complex(dst.dtype)) {
    const TensorPtr re = part_view(dst, 0), im = part_view(dst, 1);
    fill(*re, value, op);
    return fill(*im, 0.0, op);
  }
  if (!is_classic(dst.dtype))
    fail(std::string(op) + ": filling a " + dtype_name(dst.dtype) + " tensor is not supported by the mpspack shim");
  TensorPtr scalar(new_tensor({}, {}, dst.dtype));
  store_from_double(scalar->data(), dst.dtype, value);
  copy_any(dst, *scalar);
}

TensorPtr via_host(const Tensor& t, const std::function<TensorPtr(const Tensor&)>& op, const char* name) {
  if (t.device_type() == kCpu) return op(t);
  TensorPtr host(new_tensor(t.sizes, empty_like_strides(t), t.dtype));
  copy_values(*host, t, name);
  const TensorPtr result = op(*host);
  TensorPtr back(
      new_tensor_on(t.device_type(), t.storage->device_index, result->sizes, result->strides, result->dtype));
  copy_values(*back, *result, name);
  return back;
}

std::vector<int64_t> broadcast_shape(const Tensor& a, const Tensor& b, const char* op) {
  const std::size_t nd = std::max(a.sizes.size(), b.sizes.size());
  std::vector<int64_t> out(nd, 1);
  for (std::size_t i = 0; i < nd; ++i) {
    const int64_t sa = i < a.sizes.size() ? a.sizes[a.sizes.size() - 1 - i] : 1;
    const int64_t sb = i < b.sizes.size() ? b.sizes[b.sizes.size() - 1 - i] : 1;
    if (sa != sb && sa != 1 && sb != 1)
      fail(std::string(op) + ": The size of tensor a (" + std::to_string(sa) + ") must match the size of tensor b (" +
           std::to_string(sb) + ") at non-singleton dimension " + std::to_string(nd - 1 - i));
    out[nd - 1 - i] = sa == 1 ? sb : sa;
  }
  return out;
}

namespace {

// Byte-free strides of `t` read as `shape` (trailing dims aligned): 0 along broadcast dims.
std::vector<int64_t> operand_strides(std::span<const int64_t> shape, const Tensor& t) {
  std::vector<int64_t> st(shape.size(), 0);
  const std::size_t off = shape.size() - t.sizes.size();
  for (std::size_t i = 0; i < t.sizes.size(); ++i)
    if (t.sizes[i] == shape[off + i]) st[off + i] = t.strides[i];
  return st;
}

// TensorIterator's fast path: every input of the output's shape, all contiguous or all dense with one layout.
bool same_dense_layout(std::span<const int64_t> shape, std::span<const Tensor* const> inputs) {
  for (const Tensor* t : inputs)
    if (!std::equal(t->sizes.begin(), t->sizes.end(), shape.begin(), shape.end())) return false;
  for (const Tensor* t : inputs)
    if (!t->is_non_overlapping_and_dense() || t->strides != inputs[0]->strides) return false;
  return true;
}

}  // namespace

std::vector<int64_t> elementwise_strides(std::span<const int64_t> shape, std::span<const Tensor* const> inputs) {
  const std::size_t nd = shape.size();
  const bool all_contiguous = std::all_of(inputs.begin(), inputs.end(), [&](const Tensor* t) {
    return t->is_contiguous() && std::equal(t->sizes.begin(), t->sizes.end(), shape.begin(), shape.end());
  });
  if (all_contiguous || nd == 0) return contiguous_strides(shape);
  if (same_dense_layout(shape, inputs)) return inputs[0]->strides;
  std::vector<std::vector<int64_t>> st;
  for (const Tensor* t : inputs) st.push_back(operand_strides(shape, *t));
  // 1: d0 goes outside d1; -1: inside; 0: undecided (TensorIterator's reorder_dimensions).
  const auto should_swap = [&](std::size_t d0, std::size_t d1) {
    for (const auto& s : st) {
      if (s[d0] == 0 || s[d1] == 0) continue;
      if (s[d0] < s[d1]) return -1;
      if (s[d0] > s[d1]) return 1;
      if (shape[d0] > shape[d1]) return 1;  // equal strides: the smaller size goes inside
    }
    return 0;
  };
  std::vector<std::size_t> perm(nd);  // innermost first
  for (std::size_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  for (std::size_t i = 1; i < nd; ++i) {
    std::size_t d1 = i;
    for (std::size_t d0 = i; d0-- > 0;) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  bool inverted = true;
  for (std::size_t i = 0; i < nd; ++i) inverted = inverted && perm[i] == nd - 1 - i;
  if (inverted) return contiguous_strides(shape);
  std::vector<int64_t> out(nd);
  int64_t next = 1;
  for (std::size_t i = 0; i < nd; ++i) {
    out[perm[i]] = next;
    next *= shape[perm[i]];
  }
  return out;
}

int32_t suggest_memory_format(const Tensor& t) {
  if (!strides_like_channels_last(t)) return 0;
  return t.dim() == 4 ? 2 : 3;
}

std::vector<int64_t> strides_for_format(std::span<const int64_t> sizes, int32_t format, const char* op) {
  if (format == 0) return contiguous_strides(sizes);
  const std::size_t rank = format == 2 ? 4 : format == 3 ? 5 : 0;
  if (rank == 0) fail(std::string(op) + ": Unsupported memory format " + std::to_string(format));
  if (sizes.size() != rank)
    fail(std::string(op) + ": required rank " + std::to_string(rank) + " tensor to use channels_last" +
         (rank == 5 ? "_3d" : "") + " format");
  return channels_last_strides(sizes);
}

std::string shape_text(std::span<const int64_t> sizes) {
  std::string s = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

}  // namespace mpspack::shim::viewops
