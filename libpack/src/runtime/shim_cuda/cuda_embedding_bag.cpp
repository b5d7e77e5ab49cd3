// aten::_embedding_bag and _embedding_bag_forward_only on cuda: the CPU shim's bags on host copies (the result is
// the same), with the three outputs that feed only the backward pass as torch's CUDA kernel gives them, which
// differ from its CPU kernel's: offset2bag always holds each index's bag, bag_size counts each bag's indices in
// every mode (one entry per offset), sum and mean modes give no max_indices, and max mode marks an empty bag's
// max_indices -1.
#include "aoti_shim_cuda.h"
#include "cuda_common.hpp"
#include "host_bridge.hpp"

#include <algorithm>
#include <vector>

namespace mpspack::shim::cuda {
namespace {

constexpr int64_t kMean = 1, kMax = 2;

double at(const Tensor& t, int64_t i) {
  return load_as_double(t.data() + i * t.strides[0] * int64_t(t.itemsize()), t.dtype);
}

// Bag of each of `n` indices: the last bag whose offset is at most its position.
TensorPtr offset2bag_of(const Tensor& offsets, int64_t n, int64_t bags, int32_t dtype) {
  const int64_t one = n;
  TensorPtr out(new_contiguous(std::span<const int64_t>(&one, 1), dtype));
  std::vector<double> starts(static_cast<std::size_t>(offsets.sizes[0]));
  for (int64_t b = 0; b < offsets.sizes[0]; ++b) starts[static_cast<std::size_t>(b)] = at(offsets, b);
  for (int64_t i = 0; i < n; ++i) {
    const auto bag = std::upper_bound(starts.begin(), starts.end(), double(i)) - starts.begin() - 1;
    store_from_double(out->data() + i * int64_t(out->itemsize()), dtype, double(std::clamp<int64_t>(bag, 0, bags - 1)));
  }
  return out;
}

// Each bag's count of indices other than padding_idx, for every offset: torch's CUDA kernel sizes bag_size by the
// offsets, so with include_last_offset it has one entry more than there are bags (torch leaves it unwritten; 0).
TensorPtr bag_sizes_of(const Tensor& indices, const Tensor& offsets, int64_t bags, int64_t padding_idx, int32_t dtype) {
  const int64_t entries = offsets.sizes[0], n = indices.numel();
  TensorPtr out(new_contiguous(std::span<const int64_t>(&entries, 1), dtype));
  for (int64_t b = 0; b < entries; ++b) {
    int64_t count = 0;
    if (b < bags) {
      const int64_t begin = int64_t(at(offsets, b));
      const int64_t end = b + 1 < entries ? std::min(n, int64_t(at(offsets, b + 1))) : n;
      for (int64_t i = begin; i < end; ++i) count += int64_t(at(indices, i)) != padding_idx;
    }
    store_from_double(out->data() + b * int64_t(out->itemsize()), dtype, double(count));
  }
  return out;
}

// The CPU shim's outputs (host tensors) made torch's CUDA ones.
void to_cuda_semantics(Tensor* outs[4], const Tensor& indices, const Tensor& offsets, int64_t mode, int64_t padding_idx,
                       TensorPtr (&fixed)[4]) {
  const int64_t bags = outs[0]->sizes[0];
  if (outs[1]->numel() == 0 && indices.numel() > 0)
    fixed[1] = offset2bag_of(offsets, indices.numel(), bags, outs[1]->dtype);
  fixed[2] = bag_sizes_of(indices, offsets, bags, padding_idx, outs[2]->dtype);
  if (mode != kMax) {
    const int64_t none = 0;
    fixed[3].reset(new_contiguous(std::span<const int64_t>(&none, 1), outs[3]->dtype));
    return;
  }
  Tensor& mi = *outs[3];
  const int64_t width = mi.sizes[1];
  for (int64_t b = 0; b < bags; ++b)
    if (at(*fixed[2], b) == 0)
      for (int64_t d = 0; d < width; ++d)
        store_from_double(mi.data() + (b * width + d) * int64_t(mi.itemsize()), mi.dtype, -1.0);
}

using BagFn = AOTITorchError (*)(AtenTensorHandle, AtenTensorHandle, AtenTensorHandle, int32_t, int64_t, int32_t,
                                 AtenTensorHandle*, int32_t, int64_t, AtenTensorHandle*, AtenTensorHandle*,
                                 AtenTensorHandle*, AtenTensorHandle*);

AOTITorchError bag_on_host(const char* func, BagFn cpu, AtenTensorHandle weight, AtenTensorHandle indices,
                           AtenTensorHandle offsets, int32_t scale_grad_by_freq, int64_t mode, int32_t sparse,
                           AtenTensorHandle* per_sample_weights, int32_t include_last_offset, int64_t padding_idx,
                           AtenTensorHandle* rets[4]) {
  return guarded(func, [&] {
    HostBridge b;
    const AtenTensorHandle host_indices = b.in(indices), host_offsets = b.in(offsets);
    AtenTensorHandle host[4] = {};
    if (cpu(b.in(weight), host_indices, host_offsets, scale_grad_by_freq, mode, sparse,
            b.optional_in(per_sample_weights), include_last_offset, padding_idx, &host[0], &host[1], &host[2],
            &host[3]) != AOTI_TORCH_SUCCESS)
      fail(std::string(last_error()));
    TensorPtr owned[4] = {TensorPtr(host[0]), TensorPtr(host[1]), TensorPtr(host[2]), TensorPtr(host[3])};
    Tensor* outs[4] = {host[0], host[1], host[2], host[3]};
    TensorPtr fixed[4];
    to_cuda_semantics(outs, deref(host_indices), deref(host_offsets), mode, padding_idx, fixed);
    const int32_t device = deref(weight).storage->device_index;
    for (int k = 0; k < 4; ++k) {
      const Tensor& h = fixed[k] ? *fixed[k] : *outs[k];
      TensorPtr dev(new_tensor_on(kCuda, device, h.sizes, h.strides, h.dtype));
      copy_any(*dev, h);
      hand_out(rets[k], std::move(dev));
    }
  });
}

}  // namespace
}  // namespace mpspack::shim::cuda

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" {

AOTITorchError aoti_torch_cuda__embedding_bag(AtenTensorHandle weight, AtenTensorHandle indices,
                                              AtenTensorHandle offsets, int32_t scale_grad_by_freq, int64_t mode,
                                              int32_t sparse, AtenTensorHandle* per_sample_weights,
                                              int32_t include_last_offset, int64_t padding_idx, AtenTensorHandle* ret0,
                                              AtenTensorHandle* ret1, AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  AtenTensorHandle* rets[4] = {ret0, ret1, ret2, ret3};
  return bag_on_host(__func__, &aoti_torch_cpu__embedding_bag, weight, indices, offsets, scale_grad_by_freq, mode,
                     sparse, per_sample_weights, include_last_offset, padding_idx, rets);
}

AOTITorchError aoti_torch_cuda__embedding_bag_forward_only(AtenTensorHandle weight, AtenTensorHandle indices,
                                                           AtenTensorHandle offsets, int32_t scale_grad_by_freq,
                                                           int64_t mode, int32_t sparse,
                                                           AtenTensorHandle* per_sample_weights,
                                                           int32_t include_last_offset, int64_t padding_idx,
                                                           AtenTensorHandle* ret0, AtenTensorHandle* ret1,
                                                           AtenTensorHandle* ret2, AtenTensorHandle* ret3) {
  AtenTensorHandle* rets[4] = {ret0, ret1, ret2, ret3};
  return bag_on_host(__func__, &aoti_torch_cpu__embedding_bag_forward_only, weight, indices, offsets,
                     scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset, padding_idx, rets);
}

}  // extern "C"
