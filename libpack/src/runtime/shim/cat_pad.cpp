// aten::cat and aten::pad. cat promotes the inputs' dtypes as torch does and skips legacy empty 1-d inputs (shape
// [0]) in the shape checks; its output is channels-last when every input suggests it. pad takes the modes of
// aten.pad: constant (negative pads crop; through views and the device's copy), reflect, replicate and circular
// (any dtype but bool for reflect and replicate, as in torch: elements are moved as bytes; a device tensor is
// padded on a host copy). Both work on tensors of any device with registered memory.
#include "aoti_shim.h"
#include "index_walk.hpp"
#include "tensor.hpp"
#include "view_helpers.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::viewops;

namespace {

bool legacy_empty(const Tensor& t) { return t.dim() == 1 && t.sizes[0] == 0; }

// The output shape, checking each input against the first one that is not a legacy empty tensor.
std::vector<int64_t> cat_shape(const std::vector<const Tensor*>& in, int64_t dim, int64_t* wrapped) {
  const Tensor* ref = nullptr;
  for (const Tensor* t : in)
    if (!legacy_empty(*t)) {
      ref = t;
      break;
    }
  if (ref == nullptr) return in[0]->sizes;  // only empty tensors: torch gives [0]
  const auto d = static_cast<std::size_t>(wrap_dim(dim, ref->dim(), "cat"));
  *wrapped = static_cast<int64_t>(d);
  std::vector<int64_t> shape(ref->sizes);
  shape[d] = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const Tensor& t = *in[i];
    if (legacy_empty(t)) continue;
    if (t.dim() != ref->dim())
      fail("cat: Tensors must have same number of dimensions: got " + std::to_string(ref->dim()) + " and " +
           std::to_string(t.dim()));
    for (std::size_t k = 0; k < shape.size(); ++k)
      if (k != d && t.sizes[k] != ref->sizes[k])
        fail("cat: Sizes of tensors must match except in dimension " + std::to_string(d) + ". Expected size " +
             std::to_string(ref->sizes[k]) + " but got size " + std::to_string(t.sizes[k]) + " for tensor number " +
             std::to_string(i) + " in the list.");
    shape[d] += t.sizes[d];
  }
  return shape;
}

// torch's cat_compute_output_memory_format: the inputs' common suggested format, else contiguous.
int32_t cat_format(const std::vector<const Tensor*>& in) {
  int32_t format = -1;
  for (const Tensor* t : in) {
    const int32_t f = suggest_memory_format(*t);
    if (f == 0 || (format >= 0 && format != f)) return 0;
    format = f;
  }
  return format;
}

TensorPtr cat(const AtenTensorHandle* tensors, int64_t n, int64_t dim) {
  if (n <= 0) fail("cat: torch.cat(): expected a non-empty list of Tensors");
  if (tensors == nullptr) fail("cat: tensors is null");
  std::vector<const Tensor*> in;
  int32_t dtype = -1;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& t = deref(tensors[i], ("tensors[" + std::to_string(i) + "]").c_str());
    if (t.dim() == 0)
      fail("cat: zero-dimensional tensor (at position " + std::to_string(i) + ") cannot be concatenated");
    if (!in.empty() && t.device_type() != in.front()->device_type())
      fail("cat: Expected all tensors to be on the same device");
    dtype = i == 0 ? t.dtype : promote_types(dtype, t.dtype, "cat");
    in.push_back(&t);
  }
  int64_t d = 0;
  const std::vector<int64_t> shape = cat_shape(in, dim, &d);
  TensorPtr out(new_tensor_on(in[0]->device_type(), in[0]->storage->device_index, shape,
                              strides_for_format(shape, cat_format(in), "cat"), dtype));
  int64_t at = 0;
  for (const Tensor* t : in) {
    if (legacy_empty(*t)) continue;
    const int64_t len = t->sizes[static_cast<std::size_t>(d)];
    TensorPtr part = narrow_view(*out, static_cast<std::size_t>(d), at, len, "cat");
    copy_values(*part, *t, "cat");
    at += len;
  }
  return out;
}

// ---- pad ------------------------------------------------------------------------------------------------

enum class PadMode { constant, reflect, replicate, circular };

PadMode pad_mode(const char* mode) {
  const std::string_view m = mode ? mode : "constant";
  if (m == "constant") return PadMode::constant;
  if (m == "reflect") return PadMode::reflect;
  if (m == "replicate") return PadMode::replicate;
  if (m == "circular") return PadMode::circular;
  fail("pad: Unrecognised padding mode " + std::string(m));
}

// aten::constant_pad_nd: negative pads narrow the input first; with no positive pad the result is a copy of that
// view (clone: dense strides in its order), else a tensor in the input's suggested layout filled with `value`.
TensorPtr constant_pad(const Tensor& self, std::span<const int64_t> pad, double value) {
  const auto nd = static_cast<std::size_t>(self.dim()), first = nd - pad.size() / 2;
  TensorPtr in = view_of(self, self.dtype, self.sizes, self.strides, self.storage_offset);
  std::vector<int64_t> shape(self.sizes);
  bool grows = false;
  for (std::size_t i = first; i < nd; ++i) {
    const int64_t before = pad[2 * (nd - i - 1)], after = pad[2 * (nd - i - 1) + 1];
    shape[i] = self.sizes[i] + before + after;
    if (shape[i] < 0)
      fail("pad: The input size " + std::to_string(self.sizes[i]) + ", plus negative padding " +
           std::to_string(before) + " and " + std::to_string(after) +
           " resulted in a negative output size, which is invalid. Check dimension " + std::to_string(i) +
           " of your input.");
    if (before < 0) in = narrow_view(*in, i, -before, in->sizes[i] + before, "pad");
    if (after < 0) in = narrow_view(*in, i, 0, in->sizes[i] + after, "pad");
    grows = grows || before > 0 || after > 0;
  }
  const std::vector<int64_t> strides =
      grows ? strides_for_format(shape, suggest_memory_format(self), "pad") : empty_like_strides(*in);
  TensorPtr out(new_tensor_on(self.device_type(), self.storage->device_index, shape, strides, self.dtype));
  if (grows) fill(*out, value, "pad");
  TensorPtr inner = view_of(*out, out->dtype, out->sizes, out->strides, out->storage_offset);
  for (std::size_t i = first; i < nd; ++i) {
    const int64_t before = std::max<int64_t>(pad[2 * (nd - i - 1)], 0);
    const int64_t after = std::max<int64_t>(pad[2 * (nd - i - 1) + 1], 0);
    inner = narrow_view(*inner, i, before, inner->sizes[i] - before - after, "pad");
  }
  copy_values(*inner, *in, "pad");
  return out;
}

// The input position each output position along one padded dim reads.
std::vector<int64_t> source_positions(PadMode mode, int64_t size, int64_t before, int64_t out_size) {
  std::vector<int64_t> src(static_cast<std::size_t>(out_size));
  for (int64_t o = 0; o < out_size; ++o) {
    int64_t i = o - before;
    if (mode == PadMode::reflect) {
      if (i < 0) i = -i;
      if (i >= size) i = 2 * (size - 1) - i;
    } else if (mode == PadMode::replicate) {
      i = std::clamp<int64_t>(i, 0, size - 1);
    } else {
      i = ((i % size) + size) % size;
    }
    src[static_cast<std::size_t>(o)] = i;
  }
  return src;
}

// The checks of reflection_pad*d, replication_pad*d and _pad_circular for one padded dim `d` of `self`.
void check_pad_dim(PadMode mode, const Tensor& self, std::size_t d, int64_t before, int64_t after) {
  const int64_t size = self.sizes[d], out = size + before + after;
  if (mode == PadMode::circular) {
    if (before > size || after > size) fail("pad: Padding value causes wrapping around more than once.");
    if (out < 0) fail("pad: Negative padding value is resulting in an empty dimension");
    return;
  }
  if (mode == PadMode::reflect && (before >= size || after >= size))
    fail("pad: Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (" +
         std::to_string(before) + ", " + std::to_string(after) + ") at dimension " + std::to_string(d) + " of input " +
         shape_text(self.sizes));
  if (out < 1)
    fail("pad: input (W: " + std::to_string(size) + ") is too small. Calculated output W: " + std::to_string(out));
}

// out[idx] = self[src(idx)], where src maps each padded dim's position (dims from `first`) and leaves the others.
// Row by row along the last dim, elements moved as `N`-byte blocks (any dtype of that size).
template <std::size_t N>
void gather_rows_of(const Tensor& self, const std::vector<std::vector<int64_t>>& src, std::size_t first, Tensor& out) {
  const std::size_t nd = out.sizes.size(), last = nd - 1;
  const std::vector<int64_t> outer(out.sizes.begin(), out.sizes.end() - 1);
  const int64_t width = out.sizes[last], in_step = self.strides[last], out_step = out.strides[last];
  const std::vector<int64_t>& cols = src[last];
  const char* from = self.data();
  char* to = out.data();
  for_each_index(outer, [&](std::span<const int64_t> idx) {
    int64_t in_off = 0, out_off = 0;
    for (std::size_t d = 0; d < last; ++d) {
      in_off += (d < first ? idx[d] : src[d][static_cast<std::size_t>(idx[d])]) * self.strides[d];
      out_off += idx[d] * out.strides[d];
    }
    for (int64_t w = 0; w < width; ++w)
      std::memcpy(to + (out_off + w * out_step) * int64_t(N),
                  from + (in_off + cols[static_cast<std::size_t>(w)] * in_step) * int64_t(N), N);
  });
}

void gather_rows(const Tensor& self, const std::vector<std::vector<int64_t>>& src, std::size_t first, Tensor& out) {
  switch (self.itemsize()) {
    case 1: return gather_rows_of<1>(self, src, first, out);
    case 2: return gather_rows_of<2>(self, src, first, out);
    case 4: return gather_rows_of<4>(self, src, first, out);
    case 8: return gather_rows_of<8>(self, src, first, out);
    case 16: return gather_rows_of<16>(self, src, first, out);
    default: fail("pad: elements of " + std::to_string(self.itemsize()) + " bytes are not supported");
  }
}

// reflect, replicate, circular over the last pad.size() / 2 dims: each output element copied from its source.
// The result keeps a channels-last layout where torch's CPU kernels do (`cpu_layout`); torch's CUDA kernels give
// contiguous results.
TensorPtr index_pad(const Tensor& self, std::span<const int64_t> pad, PadMode mode, bool cpu_layout) {
  require_cpu(self, "pad");
  if (mode != PadMode::circular && self.dtype == mpspack::dtype::bool_)
    fail(std::string("pad: \"") + (mode == PadMode::reflect ? "reflection" : "replication") +
         "_pad\" not implemented for 'Bool'");
  const auto nd = static_cast<std::size_t>(self.dim()), k = pad.size() / 2, first = nd - k;
  if (mode != PadMode::circular)
    for (std::size_t d = (nd == k + 2 ? 1 : 0); d < nd; ++d)  // every dim but the batch dim must be non-empty
      if (self.sizes[d] == 0)
        fail("pad: Expected " + std::to_string(k + 1) + "D or " + std::to_string(k + 2) +
             "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: " +
             shape_text(self.sizes));
  std::vector<int64_t> shape(self.sizes);
  std::vector<std::vector<int64_t>> src(nd);
  for (std::size_t d = first; d < nd; ++d) {
    const int64_t before = pad[2 * (nd - d - 1)], after = pad[2 * (nd - d - 1) + 1];
    check_pad_dim(mode, self, d, before, after);
    shape[d] = self.sizes[d] + before + after;
    src[d] = source_positions(mode, self.sizes[d], before, shape[d]);
  }
  const int32_t format = mode == PadMode::circular || !cpu_layout ? 0 : suggest_memory_format(self);
  TensorPtr out(new_tensor(shape, strides_for_format(shape, format, "pad"), self.dtype));
  if (out->numel() > 0) gather_rows(self, src, first, *out);
  return out;
}

TensorPtr pad(const Tensor& self, std::span<const int64_t> pad, const char* mode_text, const double* value) {
  if (pad.size() % 2 != 0) fail("pad: Padding length must be divisible by 2");
  if (static_cast<int64_t>(pad.size()) > self.dim() * 2)
    fail("pad: Padding length should be less than or equal to two times the input dimension but got padding length " +
         std::to_string(pad.size()) + " and input of dimension " + std::to_string(self.dim()));
  const PadMode mode = pad_mode(mode_text);
  if (mode == PadMode::constant) return constant_pad(self, pad, value ? *value : 0.0);
  if (value != nullptr && *value != 0.0)
    fail("pad: Padding mode \"" + std::string(mode_text) + "\" doesn't take in value argument");
  const int64_t k = static_cast<int64_t>(pad.size()) / 2, nd = self.dim();
  if (k < 1 || k > 3 || (nd != k + 1 && nd != k + 2))
    fail("pad: Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  const bool cpu_layout = self.device_type() == kCpu;
  return via_host(
      self, [&](const Tensor& t) { return index_pad(t, pad, mode, cpu_layout); }, "pad");
}

AOTITorchError pad_entry(const char* func, AtenTensorHandle self, const int64_t* pad_list, int64_t pad_len,
                         const char* mode, double* value, AtenTensorHandle* ret0) {
  return guarded(func, [&] {
    if (pad_len < 0 || (pad_len > 0 && pad_list == nullptr)) fail("pad: pad is null or of negative length");
    require_ret(ret0, "pad");
    const std::span<const int64_t> p(pad_list, static_cast<std::size_t>(pad_len));
    set_result(ret0, pad(deref(self, "self"), p, mode, value), "pad");
  });
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_cat(const AtenTensorHandle* tensors, int64_t tensors_len_, int64_t dim,
                                  AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "cat");
    set_result(ret0, cat(tensors, tensors_len_, dim), "cat");
  });
}

AOTITorchError aoti_torch_cpu_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_, const char* mode,
                                  double* value, AtenTensorHandle* ret0) {
  return pad_entry(__func__, self, pad, pad_len_, mode, value, ret0);
}

AOTITorchError aoti_torch_aten_pad(AtenTensorHandle self, const int64_t* pad, int64_t pad_len_, const char* mode,
                                   double* value, AtenTensorHandle* ret0) {
  return pad_entry(__func__, self, pad, pad_len_, mode, value, ret0);
}

}  // extern "C"
