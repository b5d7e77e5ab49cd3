// The shim's tensor: what an AtenTensorHandle points at, and the helpers the ops share.
#pragma once

#include "aoti_shim.h"
#include "call_profile.hpp"
#include "mpspack/dtype.hpp"
#include "mpspack/half.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace mpspack::shim {

// c10 codes, the ones the shim handles: those of mpspack/dtype.hpp's table.
enum class DType : int32_t {
  u8 = dtype::uint8,
  i8 = dtype::int8,
  i16 = dtype::int16,
  i32 = dtype::int32,
  i64 = dtype::int64,
  f16 = dtype::float16,
  f32 = dtype::float32,
  f64 = dtype::float64,
  boolean = dtype::bool_,
  bf16 = dtype::bfloat16,
};
inline constexpr int32_t kCpu = 0, kCuda = 1, kMps = 13;
inline constexpr int32_t kLayoutStrided = 0, kLayoutMkldnn = 3;  // c10::Layout

// Bytes of one element; throws for a dtype the shim does not handle.
std::size_t element_size(int32_t dtype);
// torch's name ("float32", "bfloat16"); "unknown" for a dtype the shim does not handle.
const char* dtype_name(int32_t dtype);

struct DeviceMemory;

// A reference-counted block of bytes: owned (freed with the last handle: CPU memory 64-byte aligned, device
// memory through its DeviceMemory) or borrowed.
struct Storage {
  void* data = nullptr;
  std::size_t nbytes = 0;
  bool owned = false;
  int32_t device_type = kCpu;
  int32_t device_index = 0;
  void* device_context = nullptr;  // what DeviceMemory::release needs back (the CUDA stream it was made on)
  Storage() = default;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();
  static std::shared_ptr<Storage> allocate(std::size_t nbytes);  // CPU, owned
  // Owned memory on any device: the CPU, or one whose DeviceMemory is registered (fails otherwise).
  static std::shared_ptr<Storage> allocate_on(int32_t device_type, int32_t device_index, std::size_t nbytes);
  static std::shared_ptr<Storage> borrow(void* data, std::size_t nbytes, int32_t device_type, int32_t device_index);
};

}  // namespace mpspack::shim

// One handle. Handles made by new_tensor_handle/_reinterpret_tensor share the Storage.
struct AtenTensorOpaque {
  std::shared_ptr<mpspack::shim::Storage> storage;
  int32_t dtype = 6;
  int64_t storage_offset = 0;  // elements
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // elements

  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const;
  std::size_t itemsize() const { return mpspack::shim::element_size(dtype); }
  // Address of element 0 (storage base + offset).
  char* data() const;
  bool is_contiguous() const;
  bool is_non_overlapping_and_dense() const;
  int32_t device_type() const { return storage->device_type; }
};

namespace mpspack::shim {

using Tensor = AtenTensorOpaque;

// A device other than the CPU, as the generic shim functions (empty_strided, clone, copy_, delete) need it.
// The CPU shim calls no GPU API: a GPU shim (CUDA today, Metal later) registers one of these for its device
// type when it is linked in, and its own aoti_torch_<device>_* ops work on the memory it hands out.
struct DeviceMemory {
  virtual ~DeviceMemory() = default;
  // `nbytes` > 0; returns the memory and sets `context` to what release() gets back. Throws ShimError.
  virtual void* allocate(std::size_t nbytes, int32_t device_index, void** context) = 0;
  virtual void release(void* data, int32_t device_index, void* context) noexcept = 0;
  // dst <- src (broadcast to dst's shape), where one of them or both are on this device. Throws ShimError.
  virtual void copy(Tensor& dst, const Tensor& src) = 0;
};
// Registers `memory` (static lifetime) for `device_type`; returns true so it can initialise a static.
bool register_device_memory(int32_t device_type, DeviceMemory* memory);
// The registered DeviceMemory, or nullptr.
DeviceMemory* device_memory(int32_t device_type);
// dst <- src for tensors on any devices: copy_into on the CPU, else the device's copy.
void copy_any(Tensor& dst, const Tensor& src);

// A failure that becomes AOTI error code 1 with this message.
struct ShimError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string& msg);

// Runs `body`; an exception becomes error code 1, its message printed and kept for last_error().
template <class F>
AOTITorchError guarded(const char* func, F&& body) noexcept;
AOTITorchError report_failure(const char* func, const char* what) noexcept;

template <class F>
AOTITorchError guarded(const char* func, F&& body) noexcept {
  try {
    if (call_profile::enabled()) {
      call_profile::Scope timed(func);
      body();
    } else {
      body();
    }
    return AOTI_TORCH_SUCCESS;
  } catch (const std::exception& e) { return report_failure(func, e.what()); } catch (...) {
    return report_failure(func, "unknown exception");
  }
}

// The tensor of a handle; throws for a null handle and for an undefined tensor (no storage: made by
// aoti_torch_new_uninitialized_tensor), which only the handle functions accept.
Tensor& deref(AtenTensorHandle h, const char* what = "tensor");
void require_cpu(const Tensor& t, const char* op);

// torch's computeStorageNbytes for (sizes, strides) of itemsize bytes; 0 when any size is 0.
std::size_t storage_nbytes(std::span<const int64_t> sizes, std::span<const int64_t> strides, std::size_t itemsize);
std::vector<int64_t> contiguous_strides(std::span<const int64_t> sizes);
// torch's infer_dense_strides: dense strides that keep the stride order of `strides`.
std::vector<int64_t> infer_dense_strides(std::span<const int64_t> sizes, std::span<const int64_t> strides);
// Strides torch.empty_like(t) gives (preserve_format).
std::vector<int64_t> empty_like_strides(const Tensor& t);
// c10's is_channels_last_strides_2d/3d, what suggest_memory_format reads: a 4-d (5-d) tensor's strides grow from
// C through the spatial dims (from the last) to N. Ambiguous cases read as contiguous: a zero C stride, and a
// size-1 N whose stride is not beyond the others' (AOTInductor passes such views with N's stride 0).
bool strides_like_channels_last(const Tensor& t);
// torch's get_channels_last_strides for 4-d or 5-d sizes [N, C, spatial...]: C innermost, then the spatial dims
// from the last, N outermost (plain products, size-0 dims included).
std::vector<int64_t> channels_last_strides(std::span<const int64_t> sizes);

// New owned CPU tensor handle (caller owns it; delete with aoti_torch_delete_tensor_object).
Tensor* new_tensor(std::span<const int64_t> sizes, std::span<const int64_t> strides, int32_t dtype);
// The same on any device with registered memory.
Tensor* new_tensor_on(int32_t device_type, int32_t device_index, std::span<const int64_t> sizes,
                      std::span<const int64_t> strides, int32_t dtype);
Tensor* new_contiguous(std::span<const int64_t> sizes, int32_t dtype);
// Owning pointer for temporaries.
using TensorPtr = std::unique_ptr<Tensor>;

// A result handed to the caller through `ret`, or dropped when `ret` is null: callers of the attention ops pass
// null for the results they do not use (torch's generated shims check each of those ops' result pointers).
inline void hand_out(AtenTensorHandle* ret, TensorPtr t) {
  if (ret != nullptr) *ret = t.release();
}

// src's strides for reading it as dst's shape: trailing dims aligned, size-1 dims stride 0. Throws when the
// shapes do not broadcast.
std::vector<int64_t> broadcast_strides(const Tensor& dst, const Tensor& src);
// dst <- src (src broadcast to dst's shape), converting dtypes.
void copy_into(Tensor& dst, const Tensor& src);
// A contiguous tensor of dtype `dtype` holding src's values (a copy, or a new handle on src when it already is).
TensorPtr contiguous_as(const Tensor& src, int32_t dtype);

// Element access as double / from double (for the loops on non-BLAS dtypes and reference checks).
double load_as_double(const void* p, int32_t dtype);
void store_from_double(void* p, int32_t dtype, double v);

// IEEE half and bfloat16, round to nearest even (as c10 does): mpspack/half.hpp.
using mpspack::bf16_to_float;
using mpspack::float_to_bf16;
using mpspack::float_to_half;
using mpspack::half_to_float;

}  // namespace mpspack::shim
