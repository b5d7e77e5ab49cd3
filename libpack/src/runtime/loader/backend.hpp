// What the loader needs from a device: its name, and tensors made, filled and read back. The CPU
// backend is the only one built today; a GPU backend is one more implementation of this interface
// (plus its shim), chosen by the library's `device`.
#pragma once

#include "aoti_shim.h"
#include "mpspack/result.hpp"
#include "mpspack/tensor_io.hpp"

#include <memory>
#include <string_view>
#include <vector>

namespace mpspack::runtime {

class Backend {
 public:
  virtual ~Backend() = default;
  // The device name the container writes (LibraryInfo::device) and Create takes: "cpu".
  virtual std::string_view device() const = 0;
  // A new, uninitialised dense tensor on the device (the caller owns the handle).
  virtual Result<AtenTensorHandle> allocate(int32_t dtype, const std::vector<int64_t>& shape) = 0;
  // Copies host bytes (t.data, dense) into a tensor from allocate().
  virtual Status copy_from_host(AtenTensorHandle dst, const HostTensor& t) = 0;
  // Reads any tensor of this device back as a dense host tensor.
  virtual Result<HostTensor> to_host(AtenTensorHandle t) = 0;
  // A tensor over host memory the caller keeps alive (weights used in place), or Unsupported when
  // the device cannot read host memory directly.
  virtual Result<AtenTensorHandle> wrap_host(void* data, int32_t dtype, const std::vector<int64_t>& shape,
                                             const std::vector<int64_t>& stride, int64_t storage_offset) = 0;

  // allocate + copy_from_host; the handle is freed on failure.
  Result<AtenTensorHandle> to_device(const HostTensor& t);
};

// The backend for a library's device, or nullptr when this build has none for it.
std::unique_ptr<Backend> make_backend(std::string_view device);
// The devices make_backend() knows, for messages ("cpu").
std::string_view built_backends();

}  // namespace mpspack::runtime
