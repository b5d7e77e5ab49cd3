// Helpers for the shim tests: owning handles, random data, reading tensors back through the C ABI.
#pragma once

#include "runtime/shim/aoti_shim.h"

#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace mpspack::test {

// Owns one AtenTensorHandle.
struct Handle {
  AtenTensorHandle h = nullptr;
  Handle() = default;
  explicit Handle(AtenTensorHandle x) : h(x) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : h(o.h) { o.h = nullptr; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      if (h) aoti_torch_delete_tensor_object(h);
      h = o.h;
      o.h = nullptr;
    }
    return *this;
  }
  ~Handle() {
    if (h) aoti_torch_delete_tensor_object(h);
  }
  AtenTensorHandle get() const { return h; }
  AtenTensorHandle* out() { return &h; }
};

inline std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    acc *= sizes[i];
  }
  return st;
}

inline int64_t numel(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (auto s : sizes) n *= s;
  return n;
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// A borrowed view of `data` (which must outlive the handle).
inline Handle from_blob(void* data, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                        int32_t dtype, int64_t offset = 0) {
  Handle t;
  REQUIRE(aoti_torch_create_tensor_from_blob(data, static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(),
                                             offset, dtype, aoti_torch_device_type_cpu(), 0, t.out()) == 0);
  return t;
}

inline Handle empty(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int32_t dtype) {
  Handle t;
  REQUIRE(aoti_torch_empty_strided(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), dtype,
                                   aoti_torch_device_type_cpu(), 0, t.out()) == 0);
  return t;
}

inline std::vector<int64_t> sizes_of(AtenTensorHandle t) {
  int64_t nd = 0;
  int64_t* p = nullptr;
  REQUIRE(aoti_torch_get_dim(t, &nd) == 0);
  REQUIRE(aoti_torch_get_sizes(t, &p) == 0);
  return {p, p + nd};
}

inline std::vector<int64_t> strides_of(AtenTensorHandle t) {
  int64_t nd = 0;
  int64_t* p = nullptr;
  REQUIRE(aoti_torch_get_dim(t, &nd) == 0);
  REQUIRE(aoti_torch_get_strides(t, &p) == 0);
  return {p, p + nd};
}

// The float32 elements of t in logical (row-major) order, whatever its strides.
inline std::vector<float> read_f32(AtenTensorHandle t) {
  const auto sizes = sizes_of(t);
  const auto strides = strides_of(t);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(t, &p) == 0);
  const float* base = static_cast<const float*>(p);
  std::vector<float> out;
  out.reserve(static_cast<size_t>(numel(sizes)));
  std::vector<int64_t> idx(sizes.size(), 0);
  const int64_t n = numel(sizes);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    out.push_back(base[off]);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

inline void require_close(const std::vector<float>& got, const std::vector<double>& want, double rtol = 1e-4,
                          double atol = 1e-5) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::abs(static_cast<double>(got[i]) - want[i]);
    if (!(diff <= atol + rtol * std::abs(want[i]))) ++bad;
    worst = std::max(worst, diff);
  }
  INFO("elements out of tolerance: " << bad << " of " << got.size() << ", max abs diff " << worst);
  REQUIRE(bad == 0);
}

// How many whole pages of [p, p + bytes) this process has present (/proc/self/pagemap, bit 63).
inline std::size_t present_pages(const void* p, std::size_t bytes) {
  const auto page = std::size_t(::sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (lo + page - 1) / page, last = (lo + bytes) / page;
  if (last <= first) return 0;
  std::vector<uint64_t> entries(last - first);
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const auto want = ssize_t(entries.size() * sizeof(uint64_t));
  REQUIRE(::pread(fd, entries.data(), std::size_t(want), off_t(first * sizeof(uint64_t))) == want);
  ::close(fd);
  return std::size_t(std::count_if(entries.begin(), entries.end(), [](uint64_t e) { return (e >> 63) & 1; }));
}

}  // namespace mpspack::test
