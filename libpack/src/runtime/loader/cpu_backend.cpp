// The CPU backend: tensors are mpspack_shim tensors in host memory.
#include "backend.hpp"

#include "provided.hpp"

#include <cstring>

namespace mpspack::runtime {
namespace {

using Kind = Error::Kind;

Error shim_error(std::string_view call) {
  std::string_view why = shim::last_error();
  return make_error(Kind::Runtime, "{} failed{}{}", call, why.empty() ? "" : ": ", why);
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return st;
}

class CpuBackend final : public Backend {
 public:
  std::string_view device() const override { return "cpu"; }

  Result<AtenTensorHandle> allocate(int32_t dtype, const std::vector<int64_t>& shape) override {
    const auto strides = contiguous_strides(shape);
    AtenTensorHandle t = nullptr;
    if (aoti_torch_empty_strided(int64_t(shape.size()), shape.data(), strides.data(), dtype,
                                 aoti_torch_device_type_cpu(), 0, &t) != AOTI_TORCH_SUCCESS)
      return shim_error("aoti_torch_empty_strided");
    return t;
  }

  Status copy_from_host(AtenTensorHandle dst, const HostTensor& t) override {
    if (t.data.empty()) return {};
    void* p = nullptr;
    if (aoti_torch_get_data_ptr(dst, &p) != AOTI_TORCH_SUCCESS) return shim_error("aoti_torch_get_data_ptr");
    std::memcpy(p, t.data.data(), t.data.size());
    return {};
  }

  Result<HostTensor> to_host(AtenTensorHandle t) override {
    int32_t device = -1;
    int64_t ndim = 0;
    int64_t *sizes = nullptr, *strides = nullptr;
    void* data = nullptr;
    HostTensor out;
    if (aoti_torch_get_device_type(t, &device) != 0 || aoti_torch_get_dtype(t, &out.dtype) != 0 ||
        aoti_torch_get_dim(t, &ndim) != 0 || aoti_torch_get_sizes(t, &sizes) != 0 ||
        aoti_torch_get_strides(t, &strides) != 0 || aoti_torch_get_data_ptr(t, &data) != 0)
      return shim_error("reading an output tensor");
    if (device != aoti_torch_device_type_cpu())
      return make_error(Kind::Runtime, "output tensor is on device type {}, not the CPU", device);
    const uint32_t es = dtype_size(out.dtype);
    if (es == 0) return make_error(Kind::Unsupported, "output tensor has dtype code {}, unknown to mpspack", out.dtype);
    out.shape.assign(sizes, sizes + ndim);
    const uint64_t n = out.numel();
    out.data.resize(n * es);
    if (n == 0) return out;
    const auto* src = static_cast<const uint8_t*>(data);
    if (contiguous_strides(out.shape) == std::vector<int64_t>(strides, strides + ndim)) {
      std::memcpy(out.data.data(), src, out.data.size());
      return out;
    }
    // Strided: walk the logical indices in row-major order.
    std::vector<int64_t> idx(size_t(ndim), 0);
    for (uint64_t e = 0; e < n; ++e) {
      int64_t off = 0;
      for (int64_t d = 0; d < ndim; ++d) off += idx[size_t(d)] * strides[d];
      std::memcpy(out.data.data() + e * es, src + off * int64_t(es), es);
      for (int64_t d = ndim; d-- > 0;) {
        if (++idx[size_t(d)] < sizes[d]) break;
        idx[size_t(d)] = 0;
      }
    }
    return out;
  }

  Result<AtenTensorHandle> wrap_host(void* data, int32_t dtype, const std::vector<int64_t>& shape,
                                     const std::vector<int64_t>& stride, int64_t storage_offset) override {
    AtenTensorHandle t = nullptr;
    if (aoti_torch_create_tensor_from_blob(data, int64_t(shape.size()), shape.data(), stride.data(), storage_offset,
                                           dtype, aoti_torch_device_type_cpu(), 0, &t) != AOTI_TORCH_SUCCESS)
      return shim_error("aoti_torch_create_tensor_from_blob");
    return t;
  }
};

}  // namespace

Result<AtenTensorHandle> Backend::to_device(const HostTensor& t) {
  MPK_TRY(AtenTensorHandle h, allocate(t.dtype, t.shape));
  if (auto s = copy_from_host(h, t); !s.ok()) {
    aoti_torch_delete_tensor_object(h);
    return s.error();
  }
  return h;
}

std::unique_ptr<Backend> make_backend(std::string_view device) {
  if (device == "cpu") return std::make_unique<CpuBackend>();
  return nullptr;
}

std::string_view built_backends() { return "cpu"; }

}  // namespace mpspack::runtime
