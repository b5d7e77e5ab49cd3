// The CPU block cache (shim/cpu_block_cache.hpp): a storage's block freed and asked for again in its size class comes
// back with its pages in place; small blocks, the off switch and release_all leave blocks to the C library.
#include "runtime/shim/cpu_block_cache.hpp"
#include "runtime/tuning/tuning.hpp"

#include "shim_test_util.hpp"

#include <cstring>

using namespace mpspack::test;
namespace blocks = mpspack::shim::cpu_blocks;

namespace {

struct Made {
  AtenTensorHandle handle = nullptr;
  float* data = nullptr;
};

// A float32 CPU tensor of `n` elements, through the shim's own factory, as a model makes its intermediates.
Made empty_floats(int64_t n) {
  Made m;
  const int64_t stride = 1;
  REQUIRE(aoti_torch_empty_strided(1, &n, &stride, aoti_torch_dtype_float32(), aoti_torch_device_type_cpu(), 0,
                                   &m.handle) == AOTI_TORCH_SUCCESS);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(m.handle, &p) == AOTI_TORCH_SUCCESS);
  m.data = static_cast<float*>(p);
  return m;
}

mpspack::Tuning with_cache(bool on) {
  mpspack::Tuning t = mpspack::tuning();
  t.cpu_block_cache = on;
  return t;
}

}  // namespace

TEST_CASE("cpu block cache: a size class spans at most an eighth more than asked, in 64-byte steps", "[shim]") {
  for (std::size_t n : {std::size_t(1), std::size_t(63), std::size_t(64), std::size_t(65), blocks::kMinCachedBytes - 1,
                        blocks::kMinCachedBytes, blocks::kMinCachedBytes + 1, std::size_t(1) << 20,
                        (std::size_t(1) << 20) + 1, std::size_t(77'799'424), (std::size_t(3) << 30) + 12345}) {
    INFO("nbytes " << n);
    const std::size_t b = blocks::block_bytes(n);
    CHECK(b >= n);
    CHECK(b % 64 == 0);
    CHECK(b - n <= std::max<std::size_t>(63, n / 8));
    CHECK(blocks::block_bytes(b) == b);  // a class's own size is its class
  }
  // Sizes of one class share its blocks; the next class up does not.
  const std::size_t n = (std::size_t(1) << 20) + 1;
  CHECK(blocks::block_bytes(n) == blocks::block_bytes(n + 1000));
  CHECK(blocks::block_bytes(blocks::block_bytes(n) + 1) > blocks::block_bytes(n));
}

TEST_CASE("cpu block cache: a freed intermediate's block comes back, faulted in, for the next of its class", "[shim]") {
  const mpspack::ScopedTuning on(with_cache(true));
  blocks::release_all();
  // Above glibc's largest mmap threshold (32 MiB), where the C library would unmap it at every free.
  const int64_t n = int64_t(40) << 18;  // 40 MiB of floats
  const std::size_t bytes = std::size_t(n) * sizeof(float);
  Made first = empty_floats(n);
  std::memset(first.data, 1, bytes);
  float* const address = first.data;
  REQUIRE(aoti_torch_delete_tensor_object(first.handle) == AOTI_TORCH_SUCCESS);
  CHECK(blocks::cached_bytes() == blocks::block_bytes(bytes));

  Made again = empty_floats(n - 100);  // another size of the same class
  CHECK(again.data == address);
  CHECK(present_pages(again.data, bytes - 400) == present_pages(address, bytes - 400));
  CHECK(present_pages(again.data, bytes - 400) >= (bytes - 400) / std::size_t(::sysconf(_SC_PAGESIZE)) - 1);
  CHECK(blocks::cached_bytes() == 0);
  REQUIRE(aoti_torch_delete_tensor_object(again.handle) == AOTI_TORCH_SUCCESS);

  blocks::release_all();
  CHECK(blocks::cached_bytes() == 0);
}

TEST_CASE("cpu block cache: small blocks and MPSPACK_CPU_BLOCK_CACHE=off go straight back to the C library", "[shim]") {
  blocks::release_all();
  {
    const mpspack::ScopedTuning on(with_cache(true));
    Made small = empty_floats(int64_t(blocks::kMinCachedBytes / sizeof(float)) - 1);
    REQUIRE(aoti_torch_delete_tensor_object(small.handle) == AOTI_TORCH_SUCCESS);
    CHECK(blocks::cached_bytes() == 0);
  }
  {
    const mpspack::ScopedTuning off(with_cache(false));
    Made large = empty_floats(int64_t(1) << 20);
    REQUIRE(aoti_torch_delete_tensor_object(large.handle) == AOTI_TORCH_SUCCESS);
    CHECK(blocks::cached_bytes() == 0);
  }
  // A block taken while the cache was off is still one of its class: kept when handed back with it on.
  Made large;
  {
    const mpspack::ScopedTuning off(with_cache(false));
    large = empty_floats(int64_t(1) << 20);
  }
  const mpspack::ScopedTuning on(with_cache(true));
  REQUIRE(aoti_torch_delete_tensor_object(large.handle) == AOTI_TORCH_SUCCESS);
  CHECK(blocks::cached_bytes() == blocks::block_bytes(std::size_t(4) << 20));
  blocks::release_all();
  CHECK(blocks::cached_bytes() == 0);
}
