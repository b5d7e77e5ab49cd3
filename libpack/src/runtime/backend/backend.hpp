// What the loader needs from a device: its name, tensors made, filled and read back, the weights put where
// the device reads them, and the stream a run goes to. The CPU backend is built in; the CUDA one is a plugin
// (plugin.hpp) built when the toolkit is found (MPSPACK_HAVE_CUDA). A Metal backend is one more
// plugin: an implementation of this interface plus its part of the shim (aoti_torch_mps_*), chosen by the
// library's `device`.
#pragma once

#include "runtime/shim/aoti_shim.h"
#include "import_route.hpp"
#include "mpspack/bytes.hpp"
#include "mpspack/result.hpp"
#include "mpspack/runtime/model.hpp"
#include "mpspack/tensor_io.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mpspack::runtime {

// Weights where the device reads them: the container's own mapping (CPU), or one device allocation (GPU).
struct StagedWeights {
  uint8_t* base = nullptr;
  std::shared_ptr<void> owner;  // keeps the device allocation alive; empty when `base` is the mapping
  uint64_t bytes = 0;
  double ms = 0;  // time to stage (0 when nothing moved)
};

class Backend {
 public:
  virtual ~Backend() = default;
  // The device kind the container writes (LibraryInfo::device): "cpu", "cuda".
  virtual std::string_view device() const = 0;
  // What CreateWithDevice takes: "cpu", "cuda:0".
  virtual std::string create_device() const = 0;
  // The stream Run is given (nullptr on the CPU).
  virtual void* stream() const { return nullptr; }
  // The shim's device type code (aoti_torch_device_type_*) and index of this device.
  virtual int32_t shim_device_type() const = 0;
  virtual int32_t device_index() const { return 0; }
  // A new, uninitialised dense tensor on the device (the caller owns the handle).
  Result<AtenTensorHandle> allocate(int32_t dtype, const std::vector<int64_t>& shape);
  // Copies host bytes (t.data, dense) into a tensor from allocate().
  virtual Status copy_from_host(AtenTensorHandle dst, const HostTensor& t) = 0;
  // Reads any tensor of this device back as a dense host tensor.
  virtual Result<HostTensor> to_host(AtenTensorHandle t) = 0;
  // The external-blob weights, `blob` (a view of the container's mapping of file `fd` at `file_offset`), put
  // where the device reads them.
  virtual Result<StagedWeights> stage_weights(ByteView blob, int fd, uint64_t file_offset) = 0;
  // The weights a library copies to the device itself while it loads them (Create for embedded weights,
  // UpdateConstantsFromBlob for a blob), one synchronous copy per constant from pageable memory: the imports
  // through which the backend takes those copies over (routed by the loader, loader/import_slots.hpp), none where the
  // library's copies are not the slow part (the CPU).
  virtual std::vector<ImportRoute> weight_copy_routes() const { return {}; }
  // The library will import these functions (LibraryInfo::imports): the backend may prepare what they need on
  // other threads while the library loads (the CPU opens its oneDNN plugin). Nothing to wait for.
  virtual void expect_imports(const std::vector<std::string>& imports) {}
  // The weights segment, `bytes` of file `fd` at `file_offset`, will be uploaded by this load (stage_weights or
  // deferred copies): the backend may prepare for it on other threads while the library loads (the GPU pins its
  // staging buffers and reads the segment's first chunks into them). Nothing to wait for.
  virtual void expect_upload(uint64_t bytes, int fd, uint64_t file_offset) {}
  // From here to finish_weight_copies(), the routed library's copies from [mirror, mirror + size) (which holds the
  // bytes of file `fd` at `file_offset`) into device memory it allocates meanwhile are gathered, not made.
  virtual void defer_weight_copies(const void* mirror, uint64_t size, int fd, uint64_t file_offset) {}
  // Makes the gathered copies (on the GPU: the pinned upload pipeline, from the file) and ends the window.
  // Returns what moved (`base` unused, `bytes` 0 when the library copied nothing from the mirror).
  virtual Result<StagedWeights> finish_weight_copies() { return StagedWeights{}; }
  // A tensor of this device over memory the caller keeps alive (from stage_weights).
  Result<AtenTensorHandle> wrap(void* data, int32_t dtype, const std::vector<int64_t>& shape,
                                const std::vector<int64_t>& stride, int64_t storage_offset);
  // Device name, memory and (copy_bytes > 0) host-to-device bandwidth of plain copies.
  virtual Result<DeviceFigures> figures(uint64_t copy_bytes) { return DeviceFigures{}; }
  // Records the device work `body` queues on stream() into a graph replay() runs again (CUDA graphs);
  // Unsupported where the device has no such thing (the CPU).
  virtual Status capture(const std::function<Status()>& body) {
    return make_error(Error::Kind::Unsupported, "{} has no graph capture", create_device());
  }
  virtual Status replay() { return make_error(Error::Kind::Unsupported, "nothing captured"); }
  // Waits until the device has finished the work given to stream() (no-op on the CPU).
  virtual Status synchronize() { return {}; }

  // allocate + copy_from_host; the handle is freed on failure.
  Result<AtenTensorHandle> to_device(const HostTensor& t);
};

// The backend for a library's device kind ("cpu", "cuda") and device index; Unsupported when this build has
// none for it, Runtime when the device is not usable here (no GPU, driver missing).
Result<std::unique_ptr<Backend>> make_backend(std::string_view device, int32_t index);
// The devices this build has backends for, for messages ("cpu", "cpu, cuda").
std::string_view built_backends();
// The built-in CPU backend (cpu/cpu_backend.cpp).
std::unique_ptr<Backend> make_cpu_backend();

// Shared by the backends built in: "CALL failed: <the shim's last error>", a Runtime error.
Error shim_error(std::string_view call);

// Shared by the backends: dense row-major strides of `shape`.
std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape);
// Shared by the backends: any strided tensor of `t`'s geometry at host address `src` read into `out` (dense).
void gather_dense(const uint8_t* src, const int64_t* sizes, const int64_t* strides, int64_t ndim, uint32_t itemsize,
                  std::vector<uint8_t>& out);

}  // namespace mpspack::runtime
