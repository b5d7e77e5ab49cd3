// What every backend shares: tensors made through the shim for its device type, and dense host copies of
// strided ones.
#include "backend.hpp"

#include "runtime/shim/provided.hpp"

#include <algorithm>
#include <cstring>

namespace mpspack::runtime {

Error shim_error(std::string_view call) {
  std::string_view why = shim::last_error();
  return make_error(Error::Kind::Runtime, "{} failed{}{}", call, why.empty() ? "" : ": ", why);
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(shape[i], 1);
  }
  return st;
}

void gather_dense(const uint8_t* src, const int64_t* sizes, const int64_t* strides, int64_t ndim, uint32_t es,
                  std::vector<uint8_t>& out) {
  uint64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= uint64_t(sizes[d]);
  out.resize(n * es);
  if (n == 0) return;
  const std::vector<int64_t> shape(sizes, sizes + ndim);
  if (dense_strides(shape) == std::vector<int64_t>(strides, strides + ndim)) {
    std::memcpy(out.data(), src, out.size());
    return;
  }
  // Strided: walk the logical indices in row-major order.
  std::vector<int64_t> idx(size_t(ndim), 0);
  for (uint64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (int64_t d = 0; d < ndim; ++d) off += idx[size_t(d)] * strides[d];
    std::memcpy(out.data() + e * es, src + off * int64_t(es), es);
    for (int64_t d = ndim; d-- > 0;) {
      if (++idx[size_t(d)] < sizes[d]) break;
      idx[size_t(d)] = 0;
    }
  }
}

Result<AtenTensorHandle> Backend::allocate(int32_t dtype, const std::vector<int64_t>& shape) {
  const auto strides = dense_strides(shape);
  AtenTensorHandle t = nullptr;
  if (aoti_torch_empty_strided(int64_t(shape.size()), shape.data(), strides.data(), dtype, shim_device_type(),
                               device_index(), &t) != AOTI_TORCH_SUCCESS)
    return shim_error("aoti_torch_empty_strided");
  return t;
}

Result<AtenTensorHandle> Backend::wrap(void* data, int32_t dtype, const std::vector<int64_t>& shape,
                                       const std::vector<int64_t>& stride, int64_t storage_offset) {
  AtenTensorHandle t = nullptr;
  if (aoti_torch_create_tensor_from_blob(data, int64_t(shape.size()), shape.data(), stride.data(), storage_offset,
                                         dtype, shim_device_type(), device_index(), &t) != AOTI_TORCH_SUCCESS)
    return shim_error("aoti_torch_create_tensor_from_blob");
  return t;
}

Result<AtenTensorHandle> Backend::to_device(const HostTensor& t) {
  MPK_TRY(AtenTensorHandle h, allocate(t.dtype, t.shape));
  if (auto s = copy_from_host(h, t); !s.ok()) {
    aoti_torch_delete_tensor_object(h);
    return s.error();
  }
  return h;
}

}  // namespace mpspack::runtime
