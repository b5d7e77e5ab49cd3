// The views group beyond what the op conformance suite compares: the views share the input's storage (a write
// through one is seen through the other), reshape copies only where torch does, resize_ grows the storage in
// place for every handle over it and refuses a borrowed one, and null arguments fail instead of crashing.
#include "runtime/shim/provided.hpp"
#include "runtime/shim/tensor.hpp"
#include "shim_test_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

using namespace mpspack::test;

namespace {

const int32_t kF32 = aoti_torch_dtype_float32(), kF64 = aoti_torch_dtype_float64(), kC64 = aoti_torch_dtype_complex64();

// A contiguous float32 tensor holding 0, 1, 2, ...
Handle iota(const std::vector<int64_t>& sizes) {
  Handle t = empty(sizes, contiguous(sizes), kF32);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(t.get(), &p) == 0);
  std::iota(static_cast<float*>(p), static_cast<float*>(p) + numel(sizes), 0.f);
  return t;
}

void* data_of(AtenTensorHandle t) {
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(t, &p) == 0);
  return p;
}

int64_t offset_of_handle(AtenTensorHandle t) {
  int64_t o = -1;
  REQUIRE(aoti_torch_get_storage_offset(t, &o) == 0);
  return o;
}

}  // namespace

TEST_CASE("views share the input's storage: writes through one show in the other", "[shim][views]") {
  Handle x = iota({4, 6});
  const int64_t dims[] = {1, 0};
  Handle p, n, s, r;
  REQUIRE(aoti_torch_cpu_permute(x.get(), dims, 2, p.out()) == 0);
  REQUIRE(aoti_torch_cpu_narrow(x.get(), 1, 2, 3, n.out()) == 0);
  REQUIRE(aoti_torch_cpu_squeeze_dim(x.get(), 0, s.out()) == 0);
  const int64_t shape[] = {2, 12};
  REQUIRE(aoti_torch_cpu_reshape(x.get(), shape, 2, r.out()) == 0);
  CHECK(strides_of(p.get()) == std::vector<int64_t>{1, 6});
  CHECK(offset_of_handle(n.get()) == 2);
  // Element [1, 2] of x is element 0 of row 1 of the narrowed view and element 8 of reshaped row 0.
  static_cast<float*>(data_of(x.get()))[1 * 6 + 2] = -7.f;
  CHECK(read_f32(n.get())[3] == -7.f);
  CHECK(read_f32(r.get())[8] == -7.f);
  CHECK(read_f32(p.get())[2 * 4 + 1] == -7.f);
  // Dropping the input keeps the storage alive for the views.
  x = Handle();
  CHECK(read_f32(n.get())[3] == -7.f);
}

TEST_CASE("reshape is a view where strides can express it and a copy where they cannot", "[shim][views]") {
  Handle x = iota({4, 6});
  const int64_t dims[] = {1, 0};
  Handle t;
  REQUIRE(aoti_torch_cpu_permute(x.get(), dims, 2, t.out()) == 0);  // [6, 4] strides [1, 6]
  const int64_t as_view[] = {3, 2, 4}, flat[] = {24};
  Handle v, c;
  REQUIRE(aoti_torch_cpu_reshape(t.get(), as_view, 3, v.out()) == 0);
  REQUIRE(aoti_torch_cpu_reshape(t.get(), flat, 1, c.out()) == 0);
  CHECK(data_of(v.get()) == data_of(x.get()));
  CHECK(strides_of(v.get()) == std::vector<int64_t>{2, 1, 6});
  CHECK(data_of(c.get()) != data_of(x.get()));
  CHECK(strides_of(c.get()) == std::vector<int64_t>{1});
  const auto values = read_f32(c.get());
  CHECK(values[1] == 6.f);  // transposed order: x[1][0]
}

TEST_CASE("view_dtype and view_as_real/complex scale the storage offset and share the bytes", "[shim][views]") {
  Handle base = iota({8});
  const int64_t sizes[] = {3, 2}, strides[] = {2, 1};
  Handle x;  // elements 2..7 as [3, 2], storage offset 2
  REQUIRE(aoti_torch__reinterpret_tensor(base.get(), 2, sizes, strides, 2, x.out()) == 0);
  Handle c, d, back;
  REQUIRE(aoti_torch_cpu_view_as_complex(x.get(), c.out()) == 0);
  CHECK(offset_of_handle(c.get()) == 1);
  CHECK(sizes_of(c.get()) == std::vector<int64_t>{3});
  REQUIRE(aoti_torch_cpu_view_dtype(x.get(), kF64, d.out()) == 0);
  CHECK(offset_of_handle(d.get()) == 1);
  CHECK(data_of(d.get()) == data_of(x.get()));
  REQUIRE(aoti_torch_cpu_view_as_real(c.get(), back.out()) == 0);
  CHECK(offset_of_handle(back.get()) == 2);
  CHECK(read_f32(back.get()) == std::vector<float>{2, 3, 4, 5, 6, 7});
  int32_t dtype = -1;
  REQUIRE(aoti_torch_get_dtype(c.get(), &dtype) == 0);
  CHECK(dtype == kC64);
  // An odd offset cannot hold complex elements.
  Handle odd, refused;
  REQUIRE(aoti_torch__reinterpret_tensor(base.get(), 2, sizes, strides, 1, odd.out()) == 0);
  CHECK(aoti_torch_cpu_view_as_complex(odd.get(), refused.out()) != 0);
}

TEST_CASE("resize_ grows the storage in place, keeping the values, for every handle over it", "[shim][views]") {
  Handle x = iota({2, 3});
  Handle alias;
  REQUIRE(aoti_torch_new_tensor_handle(x.get(), alias.out()) == 0);
  const int64_t larger[] = {4, 5};
  REQUIRE(aoti_torch_cpu_resize_(x.get(), larger, 2, nullptr) == 0);
  CHECK(sizes_of(x.get()) == std::vector<int64_t>{4, 5});
  CHECK(strides_of(x.get()) == std::vector<int64_t>{5, 1});
  int64_t bytes = 0;
  REQUIRE(aoti_torch_get_storage_size(alias.get(), &bytes) == 0);
  CHECK(bytes == 20 * 4);
  CHECK(data_of(alias.get()) == data_of(x.get()));
  const auto values = read_f32(x.get());
  CHECK(std::vector<float>(values.begin(), values.begin() + 6) == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(sizes_of(alias.get()) == std::vector<int64_t>{2, 3});  // its own sizes are its own
}

TEST_CASE("resize_ refuses to grow borrowed memory and channels-last on the wrong rank", "[shim][views]") {
  float buf[6] = {};
  Handle b = from_blob(buf, {2, 3}, {3, 1}, kF32);
  const int64_t larger[] = {3, 3}, smaller[] = {5}, three[] = {2, 3, 1};
  CHECK(aoti_torch_cpu_resize_(b.get(), larger, 2, nullptr) != 0);
  CHECK(aoti_torch_cpu_resize_(b.get(), smaller, 1, nullptr) == 0);  // fits: nothing to allocate
  CHECK(data_of(b.get()) == buf);
  int32_t channels_last = aoti_torch_memory_format_channels_last();
  CHECK(aoti_torch_cpu_resize_(b.get(), three, 3, &channels_last) != 0);
}

TEST_CASE("the views group fails on null arguments instead of crashing", "[shim][views]") {
  Handle x = iota({2, 3});
  Handle out;
  const int64_t shape[] = {6};
  CHECK(aoti_torch_cpu_reshape(nullptr, shape, 1, out.out()) != 0);
  CHECK(aoti_torch_cpu_reshape(x.get(), shape, 1, nullptr) != 0);
  CHECK(aoti_torch_cpu_reshape(x.get(), nullptr, 1, out.out()) != 0);
  CHECK(aoti_torch_cpu_cat(nullptr, 2, 0, out.out()) != 0);
  const AtenTensorHandle with_null[] = {x.get(), nullptr};
  CHECK(aoti_torch_cpu_cat(with_null, 2, 0, out.out()) != 0);
  CHECK(aoti_torch_cpu_pad(x.get(), shape, 1, "constant", nullptr, out.out()) != 0);  // odd length
  CHECK(aoti_torch_aten_amax(x.get(), nullptr, 1, 0, out.out()) != 0);
  CHECK(aoti_torch_aten_full(nullptr, 1, 0.0, nullptr, nullptr, nullptr, 0, nullptr, out.out()) != 0);
  CHECK(aoti_torch_cpu_resize_as_(x.get(), nullptr, nullptr) != 0);
  CHECK(out.get() == nullptr);
}

TEST_CASE("new_zeros and full on a device type with no registered memory fail naming the op", "[shim][views]") {
  Handle x = iota({2});
  const int64_t size[] = {2};
  int32_t mps = aoti_torch_device_type_mps();
  Handle out;
  CHECK(aoti_torch_aten_new_zeros(x.get(), size, 1, nullptr, nullptr, &mps, 0, nullptr, out.out()) != 0);
  CHECK(std::string(mpspack::shim::last_error()).find("new_zeros") != std::string::npos);
  CHECK(aoti_torch_aten_full(size, 1, 1.0, nullptr, nullptr, &mps, 0, nullptr, out.out()) != 0);
  CHECK(std::string(mpspack::shim::last_error()).find("full") != std::string::npos);
  CHECK(out.get() == nullptr);
  // On the CPU, new_zeros takes self's dtype and gives zeros.
  REQUIRE(aoti_torch_aten_new_zeros(x.get(), size, 1, nullptr, nullptr, nullptr, 0, nullptr, out.out()) == 0);
  CHECK(read_f32(out.get()) == std::vector<float>{0, 0});
}

// Kept out of the conformance cases: they also run on CUDA, whose copy back to the CPU converts through the
// classic dtypes only.
TEST_CASE("new_zeros and _efficientzerotensor of complex64 are zeros", "[shim][views]") {
  Handle x = iota({2});
  const int64_t size[] = {3};
  Handle z, e;
  REQUIRE(aoti_torch_aten_new_zeros(x.get(), size, 1, const_cast<int32_t*>(&kC64), nullptr, nullptr, 0, nullptr,
                                    z.out()) == 0);
  REQUIRE(aoti_torch_cpu__efficientzerotensor(size, 1, const_cast<int32_t*>(&kC64), nullptr, nullptr, 0, nullptr,
                                              e.out()) == 0);
  for (AtenTensorHandle h : {z.get(), e.get()}) {
    const auto* bytes = static_cast<const unsigned char*>(data_of(h));
    CHECK(std::all_of(bytes, bytes + 3 * 8, [](unsigned char b) { return b == 0; }));
  }
}

namespace {

// A device whose memory is host memory, so the device-generic paths (host copies, in-place growth, views) run
// without a GPU: registered for a device type code no backend uses.
constexpr int32_t kFakeDevice = 30;

struct HostBackedDevice : mpspack::shim::DeviceMemory {
  void* allocate(std::size_t nbytes, int32_t, void** context) override {
    *context = nullptr;
    return std::malloc(nbytes);
  }
  void release(void* data, int32_t, void*) noexcept override { std::free(data); }
  // The same copy as the CPU's, over CPU-tagged handles on the same bytes.
  void copy(mpspack::shim::Tensor& dst, const mpspack::shim::Tensor& src) override {
    mpspack::shim::Tensor d = on_cpu(dst), s = on_cpu(src);
    mpspack::shim::copy_into(d, s);
  }
  static mpspack::shim::Tensor on_cpu(const mpspack::shim::Tensor& t) {
    mpspack::shim::Tensor c = t;
    c.storage = mpspack::shim::Storage::borrow(t.storage->data, t.storage->nbytes, mpspack::shim::kCpu, 0);
    return c;
  }
};

HostBackedDevice g_fake_device;
const bool g_fake_registered = mpspack::shim::register_device_memory(kFakeDevice, &g_fake_device);

Handle on_fake_device(AtenTensorHandle cpu) {
  Handle t;
  const auto sizes = sizes_of(cpu), strides = strides_of(cpu);
  int32_t dtype = 0;
  REQUIRE(aoti_torch_get_dtype(cpu, &dtype) == 0);
  REQUIRE(aoti_torch_empty_strided(int64_t(sizes.size()), sizes.data(), strides.data(), dtype, kFakeDevice, 0,
                                   t.out()) == 0);
  REQUIRE(aoti_torch_copy_(t.get(), cpu, 0) == 0);
  return t;
}

int32_t device_of(AtenTensorHandle t) {
  int32_t d = -1;
  REQUIRE(aoti_torch_get_device_type(t, &d) == 0);
  return d;
}

}  // namespace

TEST_CASE("the c_shim_aten functions and resize_ work on a device through its registered memory", "[shim][views]") {
  REQUIRE(g_fake_registered);
  Handle cpu = iota({2, 3});
  Handle x = on_fake_device(cpu.get());
  const int64_t pads[] = {1, 1}, dims[] = {1}, size[] = {2};
  Handle padded, reflected, maxed, zeros, narrowed;
  REQUIRE(aoti_torch_aten_pad(x.get(), pads, 2, "constant", nullptr, padded.out()) == 0);
  REQUIRE(aoti_torch_aten_pad(x.get(), pads, 2, "reflect", nullptr, reflected.out()) == 0);
  REQUIRE(aoti_torch_aten_amax(x.get(), dims, 1, 0, maxed.out()) == 0);
  REQUIRE(aoti_torch_aten_new_zeros(x.get(), size, 1, nullptr, nullptr, nullptr, 0, nullptr, zeros.out()) == 0);
  REQUIRE(aoti_torch_aten_narrow(x.get(), 1, 1, 2, narrowed.out()) == 0);
  for (AtenTensorHandle h : {padded.get(), reflected.get(), maxed.get(), zeros.get(), narrowed.get()})
    CHECK(device_of(h) == kFakeDevice);
  // The fake device's memory is host memory: its values can be read in place.
  CHECK(read_f32(padded.get()) == std::vector<float>{0, 0, 1, 2, 0, 0, 3, 4, 5, 0});
  CHECK(read_f32(reflected.get()) == std::vector<float>{1, 0, 1, 2, 1, 4, 3, 4, 5, 4});
  CHECK(read_f32(maxed.get()) == std::vector<float>{2, 5});
  CHECK(read_f32(zeros.get()) == std::vector<float>{0, 0});
  CHECK(read_f32(narrowed.get()) == std::vector<float>{1, 2, 4, 5});
  const int64_t larger[] = {3, 4};
  REQUIRE(aoti_torch_cpu_resize_(x.get(), larger, 2, nullptr) == 0);
  CHECK(device_of(x.get()) == kFakeDevice);
  const auto grown = read_f32(x.get());
  CHECK(std::vector<float>(grown.begin(), grown.begin() + 6) == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(read_f32(narrowed.get()) == std::vector<float>{1, 2, 4, 5});  // the view follows the storage
}
