// aten::searchsorted (Tensor and Scalar values) and aten::bucketize on the CPU. Each value's position in its
// line of the sorted sequence (the sequence's last dim; a 1-d sequence serves every value): the first index
// whose element is >= the value (left) or > it (right), found by binary search with torch's comparisons, so a
// NaN value lands past every number. sorter: the indices that sort an unsorted sequence. Results are int64, or
// int32 with out_int32, contiguous in the values' shape. Values and sequence compare as doubles (exact for
// every dtype but int64 beyond 2^53).
#include "aoti_shim.h"
#include "index_walk.hpp"
#include "tensor.hpp"
#include "view_helpers.hpp"

#include <cstring>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::viewops;

namespace {

int64_t load_int64(const Tensor& t, int64_t offset) {
  int64_t v = 0;
  std::memcpy(&v, t.data() + offset * 8, sizeof v);
  return v;
}

// What one search needs: the sequence, its optional sorter, the side.
struct Search {
  const Tensor* seq = nullptr;
  const Tensor* sorter = nullptr;
  bool right = false;
};

// Binary search of v in the line of the sequence at element offset seq_off (its sorter's line at sorter_off), with
// torch's comparisons: left stops at the first element that is >= v, right at the first one > v.
int64_t position(const Search& s, double v, int64_t seq_off, int64_t sorter_off) {
  const Tensor& seq = *s.seq;
  const int64_t n = seq.sizes.back(), step = seq.strides.back();
  const auto item = static_cast<int64_t>(seq.itemsize());
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + ((hi - lo) >> 1);
    int64_t at = mid;
    if (s.sorter != nullptr) {
      at = load_int64(*s.sorter, sorter_off + mid * s.sorter->strides.back());
      if (at < 0 || at >= n) fail("searchsorted: sorter index " + std::to_string(at) + " is out of range");
    }
    const double m = load_as_double(seq.data() + (seq_off + at * step) * item, seq.dtype);
    if (s.right ? !(m > v) : !(m >= v)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

void check_shapes(const Tensor& seq, const Tensor& values, const Tensor* sorter, const char* op) {
  require_cpu(seq, op);
  require_cpu(values, op);
  bool fits = seq.dim() >= 1;
  if (fits && seq.dim() > 1) {
    fits = values.dim() == seq.dim();
    for (int64_t d = 0; fits && d + 1 < seq.dim(); ++d) fits = values.sizes[d] == seq.sizes[d];
  }
  if (!fits)
    fail(std::string(op) +
         ": boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor "
         "and input value tensor must match, but we got boundaries tensor " +
         shape_text(seq.sizes) + " and input value tensor " + shape_text(values.sizes));
  for (const Tensor* t : {&seq, &values})
    if (is_complex(t->dtype) || t->dtype == mpspack::dtype::bool_)
      fail(std::string(op) + ": \"searchsorted_out_cpu\" not implemented for '" + dtype_name(t->dtype) + "'");
  if (sorter == nullptr) return;
  require_cpu(*sorter, op);
  if (sorter->dtype != mpspack::dtype::int64)
    fail(std::string(op) + ": sorter must be a tensor of long dtype but got dtype " + dtype_name(sorter->dtype));
  if (sorter->sizes != seq.sizes)
    fail(std::string(op) + ": boundary and sorter must have the same size, but got boundary tensor " +
         shape_text(seq.sizes) + "and got sorter tensor " + shape_text(sorter->sizes));
}

TensorPtr search(const Tensor& seq, const Tensor& values, bool out_int32, const Search& s, const char* op) {
  check_shapes(seq, values, s.sorter, op);
  const int32_t dtype = out_int32 ? mpspack::dtype::int32 : mpspack::dtype::int64;
  TensorPtr out(new_contiguous(values.sizes, dtype));
  const auto vitem = static_cast<int64_t>(values.itemsize());
  const std::size_t lead = seq.sizes.size() - 1;  // dims that pick the line
  for_each_index(values.sizes, [&](std::span<const int64_t> idx) {
    int64_t seq_off = 0, sorter_off = 0;
    for (std::size_t d = 0; d < lead; ++d) {
      seq_off += idx[d] * seq.strides[d];
      if (s.sorter != nullptr) sorter_off += idx[d] * s.sorter->strides[d];
    }
    const double v = load_as_double(values.data() + offset_of(idx, values.strides) * vitem, values.dtype);
    const int64_t p = position(s, v, seq_off, sorter_off);
    store_from_double(out->data() + offset_of(idx, out->strides) * static_cast<int64_t>(out->itemsize()), dtype,
                      static_cast<double>(p));
  });
  return out;
}

// side ("left", "right" or null) and right together, as torch reads them.
bool right_side(int32_t right, const char** side, const char* op) {
  if (side == nullptr || *side == nullptr) return right != 0;
  const std::string s(*side);
  if (s != "left" && s != "right") fail(std::string(op) + ": side can only be 'left' or 'right' but got " + s);
  if (s == "left" && right != 0)
    fail(std::string(op) + ": side and right can't be set to opposites, got side of left while right was True");
  return s == "right";
}

const Tensor* optional(AtenTensorHandle* h, const char* what) {
  return h == nullptr || *h == nullptr ? nullptr : &deref(*h, what);
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_searchsorted_Tensor(AtenTensorHandle sorted_sequence, AtenTensorHandle self,
                                                  int32_t out_int32, int32_t right, const char** side,
                                                  AtenTensorHandle* sorter, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "searchsorted");
    const Tensor& seq = deref(sorted_sequence, "sorted_sequence");
    const Search s{&seq, optional(sorter, "sorter"), right_side(right, side, "searchsorted")};
    set_result(ret0, search(seq, deref(self, "self"), out_int32 != 0, s, "searchsorted"), "searchsorted");
  });
}

AOTITorchError aoti_torch_cpu_searchsorted_Scalar(AtenTensorHandle sorted_sequence, double self, int32_t out_int32,
                                                  int32_t right, const char** side, AtenTensorHandle* sorter,
                                                  AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "searchsorted");
    const Tensor& seq = deref(sorted_sequence, "sorted_sequence");
    if (seq.dim() != 1)
      fail("searchsorted: input value can be a scalar only when boundaries tensor dimension is 1, but we got "
           "boundaries tensor dim(" +
           std::to_string(seq.dim()) + ") and input value's dim(0) numel(1)");
    TensorPtr value(new_tensor({}, {}, mpspack::dtype::float64));
    store_from_double(value->data(), mpspack::dtype::float64, self);
    const Search s{&seq, optional(sorter, "sorter"), right_side(right, side, "searchsorted")};
    set_result(ret0, search(seq, *value, out_int32 != 0, s, "searchsorted"), "searchsorted");
  });
}

AOTITorchError aoti_torch_cpu_bucketize_Tensor(AtenTensorHandle self, AtenTensorHandle boundaries, int32_t out_int32,
                                               int32_t right, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "bucketize");
    const Tensor& b = deref(boundaries, "boundaries");
    if (b.dim() != 1)
      fail("bucketize: boundaries tensor must be 1 dimension, but got dim(" + std::to_string(b.dim()) + ")");
    const Search s{&b, nullptr, right != 0};
    set_result(ret0, search(b, deref(self, "self"), out_int32 != 0, s, "bucketize"), "bucketize");
  });
}

}  // extern "C"
