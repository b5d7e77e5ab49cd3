// aten's allocating ops (full, new_empty, new_zeros, _efficientzerotensor) and the in-place resizes (resize_,
// resize_as_). The allocations work on any device whose memory is registered: they are filled from a CPU scalar
// through the device's copy. A resize that must grow the storage does it in place, as torch does, so every
// handle over that Storage sees the new memory; it works on storages the shim owns, on any device (not on
// borrowed memory).
#include "aoti_shim.h"
#include "tensor.hpp"
#include "view_helpers.hpp"

#include <memory>
#include <string>
#include <utility>

using namespace mpspack::shim;
using namespace mpspack::shim::viewops;

namespace {

// The TensorOptions arguments of a factory function, as the generated C signatures pass them.
struct Options {
  const int32_t* dtype;
  const int32_t* layout;
  const int32_t* device;
  int32_t device_index;
};

std::span<const int64_t> size_list(const int64_t* size, int64_t n, const char* op) {
  if (n < 0) fail(std::string(op) + ": negative length of size");
  if (n > 0 && size == nullptr) fail(std::string(op) + ": size is null");
  const std::span<const int64_t> s(size, static_cast<std::size_t>(n));
  for (int64_t v : s)
    if (v < 0)
      fail(std::string(op) + ": Trying to create tensor with negative dimension " + std::to_string(v) + ": " +
           shape_text(s));
  return s;
}

// A new contiguous tensor of `size` with the options given, or else self's dtype and device (CPU float32 for
// a factory without self).
TensorPtr allocate(std::span<const int64_t> size, const Options& o, const Tensor* self, const char* op) {
  if (o.layout != nullptr && *o.layout != kLayoutStrided)
    fail(std::string(op) + ": layout " + std::to_string(*o.layout) + " is not supported (only strided)");
  const int32_t dtype = o.dtype ? *o.dtype : self ? self->dtype : static_cast<int32_t>(DType::f32);
  int32_t device = kCpu, index = 0;
  if (o.device != nullptr) {
    device = *o.device;
    index = o.device_index < 0 ? 0 : o.device_index;  // -1: the current device, the first one here
  } else if (self != nullptr) {
    device = self->device_type();
    index = self->storage->device_index;
  }
  return TensorPtr(new_tensor_on(device, index, size, contiguous_strides(size), dtype));
}

// Moves an owned storage (CPU, or a device with registered memory) to a larger block holding the old bytes
// first; every handle over it sees the new block. The old one is freed as the storage would free it.
void grow_storage(const std::shared_ptr<Storage>& s, std::size_t nbytes, const char* op) {
  if (!s->owned) fail(std::string(op) + ": Trying to resize storage that is not resizable");
  const std::shared_ptr<Storage> fresh = Storage::allocate_on(s->device_type, s->device_index, nbytes);
  if (s->nbytes > 0) {
    Tensor from, to;  // the old bytes, and where they go
    from.storage = s;
    to.storage = fresh;
    from.dtype = to.dtype = static_cast<int32_t>(DType::u8);
    from.sizes = to.sizes = {static_cast<int64_t>(s->nbytes)};
    from.strides = to.strides = {1};
    copy_any(to, from);
  }
  std::swap(s->data, fresh->data);
  std::swap(s->nbytes, fresh->nbytes);
  std::swap(s->device_context, fresh->device_context);
}

// torch's resize_: the new sizes, dense strides in `format` (0 contiguous, 2/3 channels-last), the offset kept,
// the storage grown when the new extent does not fit. Same sizes and no format: nothing changes.
void resize(Tensor& self, std::span<const int64_t> new_size, const int32_t* format, const char* op) {
  const std::vector<int64_t> size(new_size.begin(), new_size.end());  // new_size may be self's own sizes
  if (format != nullptr && *format == 1) fail(std::string(op) + ": Unsupported memory format Preserve");
  const bool same = std::equal(size.begin(), size.end(), self.sizes.begin(), self.sizes.end());
  if (same && format == nullptr) return;
  std::vector<int64_t> strides = strides_for_format(size, format ? *format : 0, op);
  const std::size_t extent = storage_nbytes(size, strides, self.itemsize());
  const std::size_t needed = extent == 0 ? 0 : extent + static_cast<std::size_t>(self.storage_offset) * self.itemsize();
  if (needed > self.storage->nbytes) grow_storage(self.storage, needed, op);
  self.sizes.assign(size.begin(), size.end());
  self.strides = std::move(strides);
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_aten_full(const int64_t* size, int64_t size_len_, double fill_value, int32_t* dtype,
                                    int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                    AtenTensorHandle* ret0) {
  (void)pin_memory;  // pinning is a CUDA host-memory property; the shim's CPU memory is plain
  return guarded(__func__, [&] {
    require_ret(ret0, "full");
    TensorPtr t = allocate(size_list(size, size_len_, "full"), {dtype, layout, device, device_index_}, nullptr, "full");
    fill(*t, fill_value, "full");
    set_result(ret0, std::move(t), "full");
  });
}

AOTITorchError aoti_torch_aten_new_empty(AtenTensorHandle self, const int64_t* size, int64_t size_len_, int32_t* dtype,
                                         int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                         AtenTensorHandle* ret0) {
  (void)pin_memory;
  return guarded(__func__, [&] {
    const Tensor& t = deref(self, "self");
    require_ret(ret0, "new_empty");
    set_result(
        ret0,
        allocate(size_list(size, size_len_, "new_empty"), {dtype, layout, device, device_index_}, &t, "new_empty"),
        "new_empty");
  });
}

AOTITorchError aoti_torch_aten_new_zeros(AtenTensorHandle self, const int64_t* size, int64_t size_len_, int32_t* dtype,
                                         int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                         AtenTensorHandle* ret0) {
  (void)pin_memory;
  return guarded(__func__, [&] {
    const Tensor& t = deref(self, "self");
    require_ret(ret0, "new_zeros");
    TensorPtr out =
        allocate(size_list(size, size_len_, "new_zeros"), {dtype, layout, device, device_index_}, &t, "new_zeros");
    fill(*out, 0.0, "new_zeros");
    set_result(ret0, std::move(out), "new_zeros");
  });
}

// torch's zero tensor has no memory and reads as zeros; here it is a real tensor of zeros, which generated code
// may read as it reads any other.
AOTITorchError aoti_torch_cpu__efficientzerotensor(const int64_t* size, int64_t size_len_, int32_t* dtype,
                                                   int32_t* layout, int32_t* device, int32_t device_index_,
                                                   int32_t* pin_memory, AtenTensorHandle* ret0) {
  (void)pin_memory;
  return guarded(__func__, [&] {
    const char* op = "_efficientzerotensor";
    require_ret(ret0, op);
    TensorPtr t = allocate(size_list(size, size_len_, op), {dtype, layout, device, device_index_}, nullptr, op);
    fill(*t, 0.0, op);
    set_result(ret0, std::move(t), op);
  });
}

AOTITorchError aoti_torch_cpu_resize_(AtenTensorHandle self, const int64_t* size, int64_t size_len_,
                                      int32_t* memory_format) {
  return guarded(__func__,
                 [&] { resize(deref(self, "self"), size_list(size, size_len_, "resize_"), memory_format, "resize_"); });
}

AOTITorchError aoti_torch_cpu_resize_as_(AtenTensorHandle self, AtenTensorHandle the_template, int32_t* memory_format) {
  return guarded(__func__, [&] {
    Tensor& t = deref(self, "self");
    const Tensor& like = deref(the_template, "the_template");
    // Preserve: the template's own layout. Given a format, resize_ restrides (and grows the storage if needed).
    int32_t format = 0;
    if (memory_format != nullptr) format = *memory_format == 1 ? suggest_memory_format(like) : *memory_format;
    resize(t, like.sizes, memory_format != nullptr ? &format : nullptr, "resize_as_");
  });
}

}  // extern "C"
