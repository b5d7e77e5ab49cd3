// What the cumulative ops (aten::cumsum, aten::cumprod) share between the CPU shim and a device shim.
#pragma once

#include "tensor.hpp"

#include <cstdint>
#include <span>

namespace mpspack::shim {

// aten's result dtype for a cumulative op: `dtype` when given, else int64 for integer and bool inputs (so that
// a running sum of small integers does not overflow), else the input's.
int32_t cumulative_result_dtype(int32_t input_dtype, const int32_t* dtype);

// `dim` of `t` wrapped into [0, max(dim(), 1)) as aten wraps it (a 0-d tensor is one line of one element);
// fails naming `op` when it is out of range.
int64_t wrap_scan_dim(const Tensor& t, int64_t dim, const char* op);

// A contiguous tensor as lines along one dim: `outer` blocks of `length` rows of `inner` elements; line (o, j)
// holds the elements (o * length + k) * inner + j for k in [0, length).
struct ScanLines {
  int64_t outer = 1, length = 1, inner = 1;
};
ScanLines scan_lines(std::span<const int64_t> sizes, int64_t dim);

}  // namespace mpspack::shim
