// aten::_embedding_bag and _embedding_bag_forward_only (the one torch calls when no gradient is needed): each
// bag, the indices from offsets[b] up to the next offset (the last bag to the end of indices, or to the last
// offset with include_last_offset), is reduced over the weight rows it names: summed (times per_sample_weights
// when given), averaged or maxed per feature. Indices equal to padding_idx are left out (and out of the mean's
// count); an empty bag gives zeros. Sums run in float (double for float64 weights), in index order.
//
// ret0 is the result [bags, D]. ret1-ret3 (offset2bag, bag_size, max_indices) feed only the backward pass:
// they have the shapes torch's CPU kernel gives them without a gradient, and the values it defines: the bag of
// each index (none on the sum fast path), each bag's count for mean and max (mean mode gives it as max_indices
// too), the row each max came from (zeros where torch leaves them uninitialised).
#include "aoti_shim.h"
#include "tensor.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

using namespace mpspack::shim;

namespace {

enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

// A 1-d int64 or int32 tensor's values.
std::vector<int64_t> index_values(const Tensor& t, const char* what) {
  if (t.dim() != 1) fail(std::string("_embedding_bag: ") + what + " must be 1-d");
  if (t.dtype != static_cast<int32_t>(DType::i64) && t.dtype != static_cast<int32_t>(DType::i32))
    fail(std::string("_embedding_bag: ") + what + " must be int64 or int32, got " + dtype_name(t.dtype));
  std::vector<int64_t> v(static_cast<std::size_t>(t.sizes[0]));
  for (int64_t i = 0; i < t.sizes[0]; ++i)
    v[static_cast<std::size_t>(i)] =
        static_cast<int64_t>(load_as_double(t.data() + i * t.strides[0] * static_cast<int64_t>(t.itemsize()), t.dtype));
  return v;
}

struct Bags {
  std::vector<int64_t> indices, start, end;  // bag b covers indices[start[b] .. end[b])
};

Bags make_bags(const Tensor& indices, const Tensor& offsets, bool include_last_offset, int64_t rows) {
  if (indices.dtype != offsets.dtype) fail("_embedding_bag: indices and offsets dtypes differ");
  Bags b;
  b.indices = index_values(indices, "indices");
  const std::vector<int64_t> off = index_values(offsets, "offsets");
  const auto n = static_cast<int64_t>(b.indices.size());
  if (include_last_offset && off.empty()) fail("_embedding_bag: include_last_offset needs at least one offset");
  if (!off.empty() && (off.front() != 0 || off.back() > n))
    fail("_embedding_bag: offsets must start at 0 and end at most at the number of indices");
  const std::size_t bags = off.size() - (include_last_offset ? 1 : 0);
  for (std::size_t k = 0; k < bags; ++k) {
    const int64_t e = k + 1 < off.size() ? off[k + 1] : n;
    if (e < off[k]) fail("_embedding_bag: offsets must not decrease");
    b.start.push_back(off[k]);
    b.end.push_back(e);
  }
  for (int64_t idx : b.indices)
    if (idx < 0 || idx >= rows)
      fail("_embedding_bag: index " + std::to_string(idx) + " is out of range for " + std::to_string(rows) + " rows");
  return b;
}

struct Outputs {
  TensorPtr result, offset2bag, bag_size, max_indices;
};

void check_embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, int64_t mode,
                         const Tensor* per_sample_weights) {
  for (const Tensor* t : {&weight, &indices, &offsets}) require_cpu(*t, "_embedding_bag");
  const auto dt = static_cast<DType>(weight.dtype);
  if (dt != DType::f32 && dt != DType::f64 && dt != DType::f16 && dt != DType::bf16)
    fail(std::string("_embedding_bag: weight dtype ") + dtype_name(weight.dtype) + " is not supported");
  if (weight.dim() != 2) fail("_embedding_bag: weight must be 2-d");
  if (mode != kSum && mode != kMean && mode != kMax)
    fail("_embedding_bag: mode " + std::to_string(mode) + " is unknown");
  if (!per_sample_weights) return;
  require_cpu(*per_sample_weights, "_embedding_bag");
  if (mode != kSum) fail("_embedding_bag: per_sample_weights only go with mode sum");
  if (per_sample_weights->dtype != weight.dtype || per_sample_weights->dim() != 1 ||
      per_sample_weights->sizes[0] != indices.numel())
    fail("_embedding_bag: per_sample_weights must be 1-d, one per index, of weight's dtype");
}

// torch's CPU fast path for sums (index_select_add): float, half or bfloat16 weights with unit feature stride,
// per-sample weights (if any) likewise, no padding_idx. It never computes offset2bag, which it then gives empty.
bool sum_fast_path(const Tensor& weight, const Tensor* per_sample_weights, int64_t padding_idx) {
  const auto dt = static_cast<DType>(weight.dtype);
  const bool float_type = dt == DType::f32 || dt == DType::f16 || dt == DType::bf16;
  return float_type && weight.strides[1] == 1 && padding_idx < 0 &&
         (per_sample_weights == nullptr || per_sample_weights->strides[0] == 1);
}

// The four outputs, with the shapes torch gives them; the index ones zeroed.
// A sum's bag_size and max_indices have one element per offset in _embedding_bag_forward_only, one per bag in
// _embedding_bag (they differ with include_last_offset).
Outputs allocate_outputs(const Tensor& weight, const Tensor& offsets, int64_t mode, int64_t bags, int64_t n_indices,
                         int32_t index_dtype, bool offset2bag_empty, bool forward_only) {
  const int64_t D = weight.sizes[1];
  const int64_t result_sizes[2] = {bags, D}, max_sizes[2] = {bags, D};
  const int64_t bag_size_len = mode == kSum && forward_only ? offsets.sizes[0] : bags;
  const std::span<const int64_t> bag_size_shape(&bag_size_len, 1);
  Outputs o;
  o.result.reset(new_contiguous(result_sizes, weight.dtype));
  const int64_t offset2bag_len = offset2bag_empty ? 0 : n_indices;
  o.offset2bag.reset(new_contiguous(std::span<const int64_t>(&offset2bag_len, 1), index_dtype));
  o.bag_size.reset(new_contiguous(bag_size_shape, index_dtype));
  o.max_indices.reset(mode == kMax ? new_contiguous(max_sizes, index_dtype)
                                   : new_contiguous(bag_size_shape, index_dtype));
  for (Tensor* t : {o.offset2bag.get(), o.bag_size.get(), o.max_indices.get()})
    std::fill_n(t->data(), static_cast<std::size_t>(t->numel()) * t->itemsize(), char(0));
  return o;
}

// Bag b's row of the result from its accumulated values (sums, or maxima and their rows) and its count; its
// bag size (mean and max), and torch's max_indices (the rows of the maxima; the count again in mean mode).
void store_bag(Outputs& o, int64_t b, int64_t count, const std::vector<double>& acc, const std::vector<int64_t>& arg,
               int64_t mode) {
  const int32_t wdt = o.result->dtype, idt = o.bag_size->dtype;
  const bool f64 = wdt == static_cast<int32_t>(DType::f64);
  const auto D = static_cast<int64_t>(acc.size());
  const auto osz = static_cast<int64_t>(o.result->itemsize()), isz = static_cast<int64_t>(element_size(idt));
  if (mode != kSum) store_from_double(o.bag_size->data() + b * isz, idt, double(count));
  if (mode == kMean) store_from_double(o.max_indices->data() + b * isz, idt, double(count));
  for (int64_t d = 0; d < D; ++d) {
    char* out = o.result->data() + (b * D + d) * osz;
    store_from_double(out, wdt, acc[static_cast<std::size_t>(d)]);
    if (mode == kMean && count > 0) {  // torch divides the stored sum, in the weight's dtype
      const double sum = load_as_double(out, wdt);
      store_from_double(out, wdt, f64 ? sum / double(count) : double(float(sum) / float(count)));
    }
    if (mode == kMax && count > 0)
      store_from_double(o.max_indices->data() + (b * D + d) * isz, idt, double(arg[static_cast<std::size_t>(d)]));
  }
}

Outputs embedding_bag(const Tensor& weight, const Tensor& indices, const Tensor& offsets, int64_t mode,
                      const Tensor* per_sample_weights, bool include_last_offset, int64_t padding_idx,
                      bool forward_only) {
  check_embedding_bag(weight, indices, offsets, mode, per_sample_weights);
  const int64_t rows = weight.sizes[0], D = weight.sizes[1];
  const Bags bags = make_bags(indices, offsets, include_last_offset, rows);
  const auto B = static_cast<int64_t>(bags.start.size());
  const int32_t idt = indices.dtype;
  const std::size_t wsz = weight.itemsize();
  const auto w = [&](int64_t row, int64_t d) {
    return load_as_double(weight.data() + (row * weight.strides[0] + d * weight.strides[1]) * static_cast<int64_t>(wsz),
                          weight.dtype);
  };
  const bool f64 = weight.dtype == static_cast<int32_t>(DType::f64);
  Outputs o = allocate_outputs(weight, offsets, mode, B, static_cast<int64_t>(bags.indices.size()), idt,
                               mode == kSum && sum_fast_path(weight, per_sample_weights, padding_idx), forward_only);

  const std::size_t isz = element_size(idt);
  std::vector<double> acc(static_cast<std::size_t>(D));
  std::vector<int64_t> arg(static_cast<std::size_t>(D));
  for (int64_t b = 0; b < B; ++b) {
    std::fill(acc.begin(), acc.end(), 0.0);
    int64_t count = 0;
    for (int64_t i = bags.start[static_cast<std::size_t>(b)]; i < bags.end[static_cast<std::size_t>(b)]; ++i) {
      if (o.offset2bag->numel() > 0)
        store_from_double(o.offset2bag->data() + i * static_cast<int64_t>(isz), idt, static_cast<double>(b));
      const int64_t row = bags.indices[static_cast<std::size_t>(i)];
      if (row == padding_idx) continue;
      const double scale = per_sample_weights
                               ? load_as_double(per_sample_weights->data() +
                                                    i * per_sample_weights->strides[0] * static_cast<int64_t>(wsz),
                                                weight.dtype)
                               : 1.0;
      for (int64_t d = 0; d < D; ++d) {
        double& a = acc[static_cast<std::size_t>(d)];
        const double v = w(row, d);
        if (mode == kMax) {
          if (count == 0 || v > a) {
            a = v;
            arg[static_cast<std::size_t>(d)] = row;
          }
        } else {
          a = f64 ? a + v * scale : double(float(a) + float(v) * float(scale));  // torch sums in float
        }
      }
      ++count;
    }
    store_bag(o, b, count, acc, arg, mode);
  }
  return o;
}

AOTITorchError embedding_bag_op(const char* func, AtenTensorHandle weight, AtenTensorHandle indices,
                                AtenTensorHandle offsets, int64_t mode, AtenTensorHandle* per_sample_weights,
                                int32_t include_last_offset, int64_t padding_idx, AtenTensorHandle* ret0,
                                AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  return guarded(func, [&] {
    if (!ret0 || !ret1 || !ret2 || !ret3) fail("ret0..ret3 is null");
    const Tensor* psw = (per_sample_weights && *per_sample_weights) ? *per_sample_weights : nullptr;
    Outputs o = embedding_bag(deref(weight, "weight"), deref(indices, "indices"), deref(offsets, "offsets"), mode, psw,
                              include_last_offset != 0, padding_idx, std::string_view(func).ends_with("_forward_only"));
    *ret0 = o.result.release();
    *ret1 = o.offset2bag.release();
    *ret2 = o.bag_size.release();
    *ret3 = o.max_indices.release();
  });
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
                                             AtenTensorHandle offsets, int32_t scale_grad_by_freq, int64_t mode,
                                             int32_t sparse, AtenTensorHandle* per_sample_weights,
                                             int32_t include_last_offset, int64_t padding_idx, AtenTensorHandle* ret0,
                                             AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  (void)scale_grad_by_freq;  // gradient options: nothing to do in a forward pass
  (void)sparse;
  return embedding_bag_op(__func__, weight, indices, offsets, mode, per_sample_weights, include_last_offset,
                          padding_idx, ret0, ret1, ret2, ret3);
}

AOTITorchError aoti_torch_cpu__embedding_bag_forward_only(AtenTensorHandle weight, AtenTensorHandle indices,
                                                          AtenTensorHandle offsets, int32_t scale_grad_by_freq,
                                                          int64_t mode, int32_t sparse,
                                                          AtenTensorHandle* per_sample_weights,
                                                          int32_t include_last_offset, int64_t padding_idx,
                                                          AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                          AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  (void)scale_grad_by_freq;
  (void)sparse;
  return embedding_bag_op(__func__, weight, indices, offsets, mode, per_sample_weights, include_last_offset,
                          padding_idx, ret0, ret1, ret2, ret3);
}

}  // extern "C"
