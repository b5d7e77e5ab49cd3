#include "host_bridge.hpp"

#include <algorithm>

namespace mpspack::shim::cuda {

HostBridge::~HostBridge() {
  for (Tensor* t : owned_) delete t;
  for (auto& [slot, host] : results_) delete host;  // results not handed out (a failure before finish)
}

void HostBridge::note_device(const Tensor& t) {
  if (t.device_type() == kCpu || saw_device_) return;
  saw_device_ = true;
  device_index_ = t.storage->device_index;
}

// A host tensor with t's values: torch's empty_like strides (t's own when dense), so that ops whose results
// follow their input's layout (sort, channels-last pooling) see the same layout on the host.
AtenTensorHandle HostBridge::host_copy(AtenTensorHandle h) {
  if (h == nullptr) return nullptr;
  Tensor& t = deref(h);
  if (t.device_type() == kCpu) return h;  // torch lets CPU scalars (0-d tensors) into GPU ops
  note_device(t);
  Tensor* host = new_tensor(t.sizes, empty_like_strides(t), t.dtype);
  owned_.push_back(host);
  copy_any(*host, t);
  return host;
}

AtenTensorHandle HostBridge::in(AtenTensorHandle t) { return host_copy(t); }

AtenTensorHandle HostBridge::in_out(AtenTensorHandle t) {
  AtenTensorHandle host = host_copy(t);
  if (host != t) written_.emplace_back(&deref(t), host);
  return host;
}

AtenTensorHandle* HostBridge::optional_in(AtenTensorHandle* t) {
  if (t == nullptr || *t == nullptr) return t;
  singles_.push_back(host_copy(*t));
  return &singles_.back();
}

const AtenTensorHandle* HostBridge::in_list(const AtenTensorHandle* ts, int64_t n) {
  auto& list = lists_.emplace_back();
  for (int64_t i = 0; i < n; ++i) list.push_back(host_copy(ts[i]));
  return list.data();
}

const AtenTensorHandle** HostBridge::optional_in_list(const AtenTensorHandle** ts, int64_t n) {
  auto& list = optional_lists_.emplace_back();
  for (int64_t i = 0; i < n; ++i) {
    if (ts[i] == nullptr || *ts[i] == nullptr) {
      list.push_back(ts[i]);
    } else {
      singles_.push_back(host_copy(*ts[i]));
      list.push_back(&singles_.back());
    }
  }
  return list.data();
}

AtenTensorHandle* HostBridge::result(AtenTensorHandle* ret) {
  if (ret == nullptr) return nullptr;  // a result the caller does not want
  auto& r = results_.emplace_back(ret, nullptr);
  return &r.second;
}

int32_t* HostBridge::host_device(int32_t* device) {
  if (device != nullptr && *device != kCpu) saw_device_ = true;
  return device == nullptr ? nullptr : &host_device_code_;
}

int32_t HostBridge::host_device_index(int32_t device_index) {
  if (device_index_ < 0) device_index_ = device_index < 0 ? 0 : device_index;
  return 0;
}

namespace {

std::vector<int64_t> strides_in(HostBridge::Layout layout, const Tensor& host) {
  if (layout == HostBridge::Layout::contiguous) return contiguous_strides(host.sizes);
  if (layout == HostBridge::Layout::column_major && host.dim() == 2) return {1, std::max<int64_t>(host.sizes[0], 1)};
  return host.strides;
}

}  // namespace

void HostBridge::finish() {
  const int32_t index = device_index_ < 0 ? 0 : device_index_;
  for (auto& [device, host] : written_) {
    if (device->sizes != host->sizes || device->strides != host->strides) {
      // The op resized its output (resize_, an out= of another size): the device tensor follows, as torch's does.
      TensorPtr fresh(
          new_tensor_on(device->device_type(), device->storage->device_index, host->sizes, host->strides, host->dtype));
      device->storage = fresh->storage;
      device->sizes = host->sizes;
      device->strides = host->strides;
      device->storage_offset = 0;
    }
    copy_any(*device, *host);
  }
  for (auto& [slot, host] : results_) {
    if (host == nullptr) continue;
    TensorPtr owned_host(host);
    host = nullptr;
    TensorPtr dev(new_tensor_on(kCuda, index, owned_host->sizes, strides_in(layout_, *owned_host), owned_host->dtype));
    copy_any(*dev, *owned_host);
    *slot = dev.release();
  }
}

}  // namespace mpspack::shim::cuda
