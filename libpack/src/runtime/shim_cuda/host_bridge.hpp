// The CUDA shim's fallbacks without a kernel of their own: the CPU shim's function run on host copies.
// host_bridge_gen.py writes one aoti_torch_cuda_X per such op; each wraps its arguments in a HostBridge:
//
//   return run_on_host("aoti_torch_cuda_topk", [&](HostBridge& b) {
//     return aoti_torch_cpu_topk(b.in(self), k, dim, largest, sorted, b.result(ret0), b.result(ret1));
//   });
//
// Inputs on the GPU are copied to the host once the current stream's work is done (the copy synchronises it);
// results go back to new device tensors with the sizes and strides the CPU function gave them, and arguments the
// op writes (out variants, in-place ops) are copied back into the caller's device tensors. The results are
// torch's, as the CPU function's are; the time is the copies' and the CPU's (docs/SHIM.md lists these functions).
#pragma once

#include "runtime/shim/aoti_shim.h"
#include "runtime/shim/provided.hpp"
#include "runtime/shim/tensor.hpp"

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace mpspack::shim::cuda {

class HostBridge {
 public:
  HostBridge() = default;
  HostBridge(const HostBridge&) = delete;
  HostBridge& operator=(const HostBridge&) = delete;
  ~HostBridge();

  AtenTensorHandle in(AtenTensorHandle t);
  AtenTensorHandle in_out(AtenTensorHandle t);
  AtenTensorHandle* optional_in(AtenTensorHandle* t);
  const AtenTensorHandle* in_list(const AtenTensorHandle* ts, int64_t n);
  const AtenTensorHandle** optional_in_list(const AtenTensorHandle** ts, int64_t n);
  AtenTensorHandle* result(AtenTensorHandle* ret);
  // A factory op's device: the CPU function makes its result on the host, and the bridge moves it there.
  int32_t* host_device(int32_t* device);
  int32_t host_device_index(int32_t device_index);

  // How the results go onto the device: as the CPU function made them, or as torch's CUDA kernel makes them
  // where that differs (contiguous; column-major, a 2-d [n, d] result with strides [1, n]).
  enum class Layout { as_computed, contiguous, column_major };
  void lay_results_out(Layout layout) { layout_ = layout; }

  // After the CPU function succeeded: writes back the in_out arguments, hands out the results on the device.
  void finish();

 private:
  AtenTensorHandle host_copy(AtenTensorHandle t);
  void note_device(const Tensor& t);

  int32_t device_index_ = -1;  // of the first GPU argument, or the factory op's
  bool saw_device_ = false;
  std::vector<Tensor*> owned_;                                          // host copies
  std::vector<std::pair<Tensor*, Tensor*>> written_;                    // (caller's device tensor, its host copy)
  std::deque<std::pair<AtenTensorHandle*, AtenTensorHandle>> results_;  // (caller's slot, the host result)
  std::deque<AtenTensorHandle> singles_;
  std::deque<std::vector<AtenTensorHandle>> lists_;
  std::deque<std::vector<const AtenTensorHandle*>> optional_lists_;
  int32_t host_device_code_ = kCpu;
  Layout layout_ = Layout::as_computed;
};

// Runs `call` (which calls the CPU function through a HostBridge) as the CUDA function `func`: a failure of the
// CPU function becomes this function's, with its message.
template <class F>
AOTITorchError run_on_host(const char* func, F&& call) noexcept {
  return guarded(func, [&] {
    HostBridge bridge;
    if (call(bridge) != AOTI_TORCH_SUCCESS) fail(std::string(last_error()));
    bridge.finish();
  });
}

}  // namespace mpspack::shim::cuda
