// Helpers for testing the shim's ops on any dtype: tensors built from double values with chosen strides, and
// their values read back in logical order (the shim's for_each_index walks the shapes).
#pragma once

#include "shim_test_util.hpp"
#include "runtime/shim/index_walk.hpp"
#include "runtime/shim/tensor.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

namespace mpspack::test {

using mpspack::shim::for_each_index;
using mpspack::shim::offset_of;

// A CPU tensor of any dtype over its own buffer, with the given sizes and strides (unreached elements hold
// garbage), filled from `values` in logical order.
struct TypedTensor {
  std::vector<unsigned char> buf;
  Handle h;
  TypedTensor(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype,
              const std::vector<double>& values) {
    const size_t isz = mpspack::shim::element_size(dtype);
    int64_t extent = 1;
    for (size_t d = 0; d < sizes.size(); ++d) extent += (sizes[d] - 1) * strides[d];
    buf.assign(size_t(std::max<int64_t>(extent, 1)) * isz, 0xA5);
    size_t e = 0;
    for_each_index(sizes, [&](std::span<const int64_t> idx) {
      mpspack::shim::store_from_double(buf.data() + offset_of(idx, strides) * int64_t(isz), dtype, values.at(e++));
    });
    h = from_blob(buf.data(), sizes, strides, dtype);
  }
  TypedTensor(const std::vector<int64_t>& sizes, int32_t dtype, const std::vector<double>& values)
      : TypedTensor(sizes, contiguous(sizes), dtype, values) {}
};

inline int32_t dtype_of(AtenTensorHandle t) {
  int32_t dt = -1;
  REQUIRE(aoti_torch_get_dtype(t, &dt) == 0);
  return dt;
}

// The elements of a CPU tensor of any dtype, as doubles in logical order.
inline std::vector<double> read_values(AtenTensorHandle t) {
  const auto sizes = sizes_of(t), strides = strides_of(t);
  const int32_t dt = dtype_of(t);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(t, &p) == 0);
  const auto* base = static_cast<const unsigned char*>(p);
  const int64_t isz = int64_t(mpspack::shim::element_size(dt));
  std::vector<double> out;
  for_each_index(sizes, [&](std::span<const int64_t> idx) {
    out.push_back(mpspack::shim::load_as_double(base + offset_of(idx, strides) * isz, dt));
  });
  return out;
}

// Random integers in [lo, hi] (exact in every dtype for small ranges).
inline std::vector<double> small_integers(size_t n, uint32_t seed, int lo = -5, int hi = 5) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<double> v;
  std::generate_n(std::back_inserter(v), n, [&] { return double(d(rng)); });
  return v;
}

}  // namespace mpspack::test
