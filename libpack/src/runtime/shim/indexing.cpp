// aten::index.Tensor (a copy of the indexed elements), aten::index_put (functional: a copy of self with values put
// at the indexed elements) and aten::nonzero.
//
// index and index_put follow torch's advanced indexing: one index per leading dim of self, each None (a null pointer),
// an integer tensor (int64 or int32, negative counting from the end) or a bool/uint8 mask standing for the
// integer tensors of its nonzero positions. The integer indices broadcast together to a shape B; when they
// index adjacent dims, B replaces those dims in place, otherwise it goes first. values broadcast to that
// shape. Without accumulate a repeated index keeps the last value put (row-major order, as torch's CPU);
// with it, values are summed in that order in self's dtype.
#include "aoti_shim.h"
#include "element.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"
#include "view_helpers.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

// The nonzero elements of t: how many, and their positions in row-major order, t.dim() coordinates each.
struct Nonzero {
  int64_t count = 0;
  std::vector<int64_t> coords;
};

Nonzero nonzero_positions(const Tensor& t) {
  Nonzero nz;
  visit_dtype(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = reinterpret_cast<const T*>(t.data());
    for_each_index(t.sizes, [&](std::span<const int64_t> idx) {
      if (load(p + offset_of(idx, t.strides)) == 0) return;  // NaN counts as nonzero, -0.0 does not
      ++nz.count;
      nz.coords.insert(nz.coords.end(), idx.begin(), idx.end());
    });
  });
  return nz;
}

Tensor* nonzero(const Tensor& self) {
  require_cpu(self, "nonzero");
  const Nonzero nz = nonzero_positions(self);
  const int64_t sizes[2] = {nz.count, self.dim()};
  // torch's CPU kernel fills a [dim, count] tensor and hands out its transpose: strides (1, count).
  const int64_t strides[2] = {1, nz.count};
  TensorPtr out(new_tensor(sizes, strides, static_cast<int32_t>(DType::i64)));
  auto* dst = reinterpret_cast<int64_t*>(out->data());
  const int64_t dims = self.dim();
  for (int64_t i = 0; i < nz.count; ++i)
    for (int64_t d = 0; d < dims; ++d) dst[i + d * nz.count] = nz.coords[static_cast<std::size_t>(i * dims + d)];
  return out.release();
}

// One integer index of self's dim `dim`, as int64 values in row-major order of `sizes`.
struct DimIndex {
  int64_t dim;
  std::vector<int64_t> sizes;
  std::vector<int64_t> values;
};

std::vector<int64_t> integer_values(const Tensor& t) {
  std::vector<int64_t> v;
  v.reserve(static_cast<std::size_t>(t.numel()));
  visit_dtype(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>) {
      const T* p = reinterpret_cast<const T*>(t.data());
      for_each_index(t.sizes, [&](std::span<const int64_t> idx) { v.push_back(load(p + offset_of(idx, t.strides))); });
    }
  });
  return v;
}

// The indices as integer indices of the dims they address; a mask of k dims becomes k of them.
std::vector<DimIndex> dim_indices(const Tensor& self, const AtenTensorHandle** indices, int64_t count,
                                  const std::string& op) {
  if (count < 0 || (count > 0 && indices == nullptr)) fail(op + ": indices is null");
  std::vector<DimIndex> out;
  int64_t dim = 0;
  for (int64_t i = 0; i < count; ++i) {
    const AtenTensorHandle* slot = indices[i];
    if (slot == nullptr || *slot == nullptr) {  // None: the whole dim
      ++dim;
      continue;
    }
    const Tensor& t = **slot;
    require_cpu(t, op.c_str());
    const auto dt = static_cast<DType>(t.dtype);
    if (dt == DType::boolean || dt == DType::u8) {
      for (int64_t k = 0; k < t.dim(); ++k)
        if (dim + k >= self.dim() ||
            t.sizes[static_cast<std::size_t>(k)] != self.sizes[static_cast<std::size_t>(dim + k)])
          fail(op + ": the mask of index " + std::to_string(i) + " does not match self's shape");
      if (t.dim() == 0) fail(op + ": a 0-d mask index is not supported");
      const Nonzero nz = nonzero_positions(t);
      for (int64_t k = 0; k < t.dim(); ++k) {
        DimIndex di{dim + k, {nz.count}, {}};
        for (int64_t r = 0; r < nz.count; ++r)
          di.values.push_back(nz.coords[static_cast<std::size_t>(r * t.dim() + k)]);
        out.push_back(std::move(di));
      }
      dim += t.dim();
    } else if (dt == DType::i64 || dt == DType::i32) {
      out.push_back({dim, t.sizes, integer_values(t)});
      ++dim;
    } else {
      fail(op + ": index " + std::to_string(i) + " has dtype " + dtype_name(t.dtype) +
           "; indices must be int64, int32, bool or uint8");
    }
  }
  if (dim > self.dim())
    fail(op + ": " + std::to_string(dim) + " indices for a tensor of " + std::to_string(self.dim()) + " dims");
  return out;
}

// The shape every index broadcasts to (trailing dims aligned, size 1 stretching).
std::vector<int64_t> broadcast_shape(const std::vector<DimIndex>& idx) {
  std::vector<int64_t> shape;
  for (const DimIndex& di : idx) {
    if (di.sizes.size() > shape.size()) shape.insert(shape.begin(), di.sizes.size() - shape.size(), 1);
    const std::size_t off = shape.size() - di.sizes.size();
    for (std::size_t k = 0; k < di.sizes.size(); ++k) {
      int64_t& s = shape[off + k];
      if (di.sizes[k] == s || di.sizes[k] == 1) continue;
      if (s != 1) fail("index: shape mismatch: indexing tensors could not be broadcast together");
      s = di.sizes[k];
    }
  }
  return shape;
}

// Strides that read an index's values (row-major over its own sizes) as the broadcast shape.
std::vector<int64_t> broadcast_read_strides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 0);
  const std::vector<int64_t> own = contiguous_strides(sizes);
  const std::size_t off = shape.size() - sizes.size();
  for (std::size_t k = 0; k < sizes.size(); ++k) st[off + k] = sizes[k] == 1 ? 0 : own[k];
  return st;
}

// How each coordinate of the indexed shape maps onto self: the broadcast index shape B sits at `b_at`; the
// other dims of self (those no index addresses) fill the remaining coordinates in order.
struct IndexedShape {
  std::vector<int64_t> sizes;
  std::size_t b_at = 0, b_len = 0;
  std::vector<int64_t> free_dims;  // self's dims in the order they appear outside B
};

IndexedShape indexed_shape(const Tensor& self, const std::vector<DimIndex>& idx, const std::vector<int64_t>& b) {
  std::vector<bool> indexed(static_cast<std::size_t>(self.dim()), false);
  for (const DimIndex& di : idx) indexed[static_cast<std::size_t>(di.dim)] = true;
  const int64_t first = idx.front().dim, last = idx.back().dim;
  bool adjacent = true;
  for (int64_t d = first; d <= last; ++d) adjacent = adjacent && indexed[static_cast<std::size_t>(d)];
  IndexedShape s;
  s.b_len = b.size();
  for (int64_t d = 0; d < self.dim(); ++d)
    if (!indexed[static_cast<std::size_t>(d)]) s.free_dims.push_back(d);
  std::size_t before = 0;  // free dims ahead of B
  if (adjacent)
    while (before < s.free_dims.size() && s.free_dims[before] < first) ++before;
  s.b_at = before;
  for (std::size_t k = 0; k < before; ++k) s.sizes.push_back(self.sizes[static_cast<std::size_t>(s.free_dims[k])]);
  s.sizes.insert(s.sizes.end(), b.begin(), b.end());
  for (std::size_t k = before; k < s.free_dims.size(); ++k)
    s.sizes.push_back(self.sizes[static_cast<std::size_t>(s.free_dims[k])]);
  return s;
}

// The element offset, in `strides` (the indexed tensor's own or a same-shaped one's), that result position `pos`
// reads or writes: each indexed dim's index (read through its broadcast strides `read`, bounds-checked against
// `self`, wrapped when negative) and each free dim's position. `op`/`dim_word` give torch's wording for the op.
int64_t indexed_offset(std::span<const int64_t> pos, const IndexedShape& shape, const std::vector<DimIndex>& idx,
                       const std::vector<std::vector<int64_t>>& read, const Tensor& self,
                       std::span<const int64_t> strides, const char* op, const char* dim_word) {
  const std::span<const int64_t> bpos = pos.subspan(shape.b_at, shape.b_len);
  int64_t at = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const auto d = static_cast<std::size_t>(idx[i].dim);
    const int64_t size = self.sizes[d];
    const int64_t j = idx[i].values[static_cast<std::size_t>(offset_of(bpos, read[i]))];
    if (j < -size || j >= size)
      fail(std::string(op) + ": index " + std::to_string(j) + " is out of bounds for " + dim_word + " " +
           std::to_string(idx[i].dim) + " with size " + std::to_string(size));
    at += (j < 0 ? j + size : j) * strides[d];
  }
  for (std::size_t k = 0; k < shape.free_dims.size(); ++k)
    at += pos[k < shape.b_at ? k : k + shape.b_len] * strides[static_cast<std::size_t>(shape.free_dims[k])];
  return at;
}

Tensor* index_put(const Tensor& self, const AtenTensorHandle** indices, int64_t count, const Tensor& values,
                  bool accumulate) {
  require_cpu(self, "index_put");
  require_cpu(values, "index_put");
  if (values.dtype != self.dtype)
    fail(std::string("index_put: values dtype ") + dtype_name(values.dtype) + " differs from self dtype " +
         dtype_name(self.dtype));
  TensorPtr out(new_tensor(self.sizes, empty_like_strides(self), self.dtype));
  copy_into(*out, self);
  const std::vector<DimIndex> idx = dim_indices(self, indices, count, "index_put");
  if (idx.empty()) fail("index_put: every index is None (a plain copy_ is not an index_put)");
  const std::vector<int64_t> b = broadcast_shape(idx);
  const IndexedShape shape = indexed_shape(self, idx, b);
  Tensor shaped;  // only its sizes: the shape values must broadcast to
  shaped.sizes = shape.sizes;
  const std::vector<int64_t> value_strides = broadcast_strides(shaped, values);
  std::vector<std::vector<int64_t>> read(idx.size());
  for (std::size_t i = 0; i < idx.size(); ++i) read[i] = broadcast_read_strides(idx[i].sizes, b);

  visit_dtype(self.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using V = decltype(load(static_cast<const T*>(nullptr)));
    using C = std::conditional_t<std::is_integral_v<V>, int64_t, double>;
    T* o = reinterpret_cast<T*>(out->data());
    const T* v = reinterpret_cast<const T*>(values.data());
    for_each_index(shape.sizes, [&](std::span<const int64_t> pos) {
      const int64_t at = indexed_offset(pos, shape, idx, read, self, out->strides, "index_put", "dim");
      const C x = static_cast<C>(load(v + offset_of(pos, value_strides)));
      if (!accumulate) {
        store(o + at, x);
      } else if constexpr (std::is_integral_v<C>) {
        store(o + at, static_cast<C>(static_cast<uint64_t>(load(o + at)) + static_cast<uint64_t>(x)));
      } else {
        store(o + at, static_cast<C>(load(o + at)) + x);
      }
    });
  });
  return out.release();
}

// The strides torch's index gives its result: TensorIterator's over self restrided to the indexed shape (B dims
// stride 0) and the indices (read contiguously over B, stride 0 elsewhere).
std::vector<int64_t> gathered_strides(const Tensor& self, const std::vector<DimIndex>& idx, const IndexedShape& shape,
                                      const std::vector<int64_t>& b) {
  std::vector<Tensor> operands(1 + idx.size());
  for (Tensor& t : operands) {
    t.sizes = shape.sizes;
    t.strides.assign(shape.sizes.size(), 0);
  }
  for (std::size_t k = 0; k < shape.free_dims.size(); ++k)
    operands[0].strides[k < shape.b_at ? k : k + shape.b_len] =
        self.strides[static_cast<std::size_t>(shape.free_dims[k])];
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const std::vector<int64_t> read = broadcast_read_strides(idx[i].sizes, b);
    std::copy(read.begin(), read.end(), operands[1 + i].strides.begin() + static_cast<std::ptrdiff_t>(shape.b_at));
  }
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : operands) inputs.push_back(&t);
  return viewops::elementwise_strides(shape.sizes, inputs);
}

// aten::index.Tensor: the elements of self at the indices (advanced indexing), copied element by element.
Tensor* index_gather(const Tensor& self, const AtenTensorHandle** indices, int64_t count) {
  require_cpu(self, "index");
  const std::vector<DimIndex> idx = dim_indices(self, indices, count, "index");
  if (idx.empty()) {
    TensorPtr copy(new_tensor(self.sizes, empty_like_strides(self), self.dtype));
    viewops::copy_values(*copy, self, "index");
    return copy.release();
  }
  const std::vector<int64_t> b = broadcast_shape(idx);
  const IndexedShape shape = indexed_shape(self, idx, b);
  TensorPtr out(new_tensor(shape.sizes, gathered_strides(self, idx, shape, b), self.dtype));
  std::vector<std::vector<int64_t>> read(idx.size());
  for (std::size_t i = 0; i < idx.size(); ++i) read[i] = broadcast_read_strides(idx[i].sizes, b);
  const std::size_t item = self.itemsize();
  const char* src = self.data();
  char* dst = out->data();
  for_each_index(shape.sizes, [&](std::span<const int64_t> pos) {
    const int64_t at = indexed_offset(pos, shape, idx, read, self, self.strides, "index", "dimension");
    std::memcpy(dst + offset_of(pos, out->strides) * static_cast<int64_t>(item), src + at * static_cast<int64_t>(item),
                item);
  });
  return out.release();
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_index_put(AtenTensorHandle self, const AtenTensorHandle** indices, int64_t indices_len_,
                                        AtenTensorHandle values, int32_t accumulate, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("ret0 is null");
    *ret0 = index_put(deref(self, "self"), indices, indices_len_, deref(values, "values"), accumulate != 0);
  });
}

// index_put into out (c/shim.h): the indices are an array of handles, null for a None, rather than the array of
// handle pointers aoti_torch_cpu_index_put takes. out must have self's sizes and dtype; it may be self.
AOTITorchError aoti_torch_index_put_out(AtenTensorHandle out, AtenTensorHandle self, const AtenTensorHandle* indices,
                                        const uint32_t num_indices, const AtenTensorHandle values, bool accumulate) {
  return guarded(__func__, [&] {
    Tensor& o = deref(out, "out");
    const Tensor& s = deref(self, "self");
    if (num_indices > 0 && indices == nullptr) fail("index_put: indices is null");
    if (o.sizes != s.sizes || o.dtype != s.dtype)
      fail(std::string("index_put: out (") + dtype_name(o.dtype) + " of " + std::to_string(o.dim()) +
           " dims) must have self's sizes and dtype (" + dtype_name(s.dtype) + ")");
    std::vector<const AtenTensorHandle*> slots(num_indices, nullptr);
    for (uint32_t i = 0; i < num_indices; ++i)
      if (indices[i] != nullptr) slots[i] = &indices[i];
    TensorPtr result(index_put(s, slots.data(), int64_t(num_indices), deref(values, "values"), accumulate));
    copy_into(o, *result);
  });
}

AOTITorchError aoti_torch_cpu_index_Tensor(AtenTensorHandle self, const AtenTensorHandle** indices,
                                           int64_t indices_len_, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    viewops::require_ret(ret0, "index");
    *ret0 = index_gather(deref(self, "self"), indices, indices_len_);
  });
}

AOTITorchError aoti_torch_cpu_nonzero(AtenTensorHandle self, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("ret0 is null");
    *ret0 = nonzero(deref(self, "self"));
  });
}

}  // extern "C"
