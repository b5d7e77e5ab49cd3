// What the C API's handles hold (mpspack.h's opaque types): an open container with the C views of its manifest
// made once at open (so that describing it from several threads writes nothing), a loaded model, a run's outputs.
#pragma once

#include "mpspack/format/container.hpp"
#include "mpspack/mpspack.h"
#include "mpspack/runtime/model.hpp"
#include "mpspack/runtime/verify.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mpspack::capi {

struct ContainerState {
  format::Container container;
  std::string path;
  // Per library: its string lists as arrays of C strings into the manifest.
  struct CLists {
    std::vector<const char*> needed, dropped_needed, imports;
  };
  std::vector<CLists> libraries;
  std::map<int32_t, std::string> unnamed_dtypes;  // "dtype<N>" for codes mpspack does not name

  const char* dtype_name(int32_t code) const;
};

// Opens `path` (Container::open) and prepares its C views; the error is libpack's.
Result<std::shared_ptr<ContainerState>> open_state(const std::string& path);

// The OS error reading `path` gives now (ENOENT, EISDIR for a folder, EACCES, ...), 0 when it reads.
int os_error_of(const std::string& path);
// An error opening `path` that cannot be read: NOT_FOUND when it does not exist, else IO (a folder included), with
// that OS error (mpspack_last_errno()); for a file that reads, the error's own status.
mpspack_status fail_open(const Error& e, const std::string& path);

}  // namespace mpspack::capi

struct mpspack_container {
  std::shared_ptr<mpspack::capi::ContainerState> state;
};

struct mpspack_model {
  std::shared_ptr<mpspack::capi::ContainerState> container;  // the model uses its mapping: kept alive with it
  // Shared with the outputs left on its device (mpspack_model_run_device), which need it until they are freed.
  std::shared_ptr<mpspack::runtime::Model> model;
  mpspack::runtime::VerifyOptions options;  // what it was loaded with (for mpspack_model_bench)
  uint32_t threads = 0;
  std::string device, library, weights_mode;
  std::vector<std::string> input_names, output_names;
  std::vector<std::vector<int64_t>> last_shapes;  // the outputs' shapes of the last run_into
};

struct mpspack_outputs {
  std::vector<mpspack::HostTensor> tensors;  // mpspack_model_run's, in host memory
  std::vector<std::string> names;
  // mpspack_model_run_device's: on the model's device, which `keep` keeps until they are released.
  std::shared_ptr<mpspack::runtime::Model> keep;
  std::vector<mpspack::runtime::DeviceOutput> device;
  bool device_is_host = false;  // the model runs on the CPU: its "device" memory is host memory

  mpspack_outputs() = default;
  mpspack_outputs(const mpspack_outputs&) = delete;
  mpspack_outputs& operator=(const mpspack_outputs&) = delete;
  ~mpspack_outputs() {
    for (auto& o : device) mpspack::runtime::release_device_output(o);
  }
};
