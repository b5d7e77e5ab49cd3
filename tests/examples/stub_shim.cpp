// A minimal stand-in for the aoti_torch_* C shim: just the functions the tiny MLP imports, over
// a plain strided float tensor. Used only while the real shim (target mpspack_shim) does not
// exist; the test executable exports these (ENABLE_EXPORTS) so the dlopen'ed model binds to them.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

struct Tensor {
  std::shared_ptr<void> storage;  // shared with views; owns malloc'ed memory only
  void* base = nullptr;           // storage start
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;  // elements
  int32_t dtype = 6;
  float* at(int64_t i, int64_t j) const {
    return static_cast<float*>(base) + offset + i * strides[0] + (sizes.size() > 1 ? j * strides[1] : 0);
  }
};

Tensor* T(void* h) { return static_cast<Tensor*>(h); }

}  // namespace

extern "C" {
struct AtenTensorOpaque;
using AtenTensorHandle = AtenTensorOpaque*;

int32_t aoti_torch_device_type_cpu() { return 0; }
int32_t aoti_torch_dtype_float32() { return 6; }

int32_t aoti_torch_delete_tensor_object(AtenTensorHandle t) {
  delete T(t);
  return 0;
}
int32_t aoti_torch_get_data_ptr(AtenTensorHandle t, void** ret) {
  *ret = static_cast<float*>(T(t)->base) + T(t)->offset;
  return 0;
}
int32_t aoti_torch_get_sizes(AtenTensorHandle t, int64_t** ret) {
  *ret = T(t)->sizes.data();
  return 0;
}
int32_t aoti_torch_get_strides(AtenTensorHandle t, int64_t** ret) {
  *ret = T(t)->strides.data();
  return 0;
}
int32_t aoti_torch_get_dtype(AtenTensorHandle t, int32_t* ret) {
  *ret = T(t)->dtype;
  return 0;
}
int32_t aoti_torch_get_device_type(AtenTensorHandle t, int32_t* ret) {
  *ret = 0;
  return 0;
}
int32_t aoti_torch_new_tensor_handle(AtenTensorHandle t, AtenTensorHandle* ret) {
  *ret = reinterpret_cast<AtenTensorHandle>(new Tensor(*T(t)));
  return 0;
}
int32_t aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim, const int64_t* sizes,
                                       const int64_t* strides, int64_t storage_offset, AtenTensorHandle* ret) {
  auto* t = new Tensor(*T(self));
  t->sizes.assign(sizes, sizes + ndim);
  t->strides.assign(strides, strides + ndim);
  t->offset = storage_offset;
  *ret = reinterpret_cast<AtenTensorHandle>(t);
  return 0;
}
int32_t aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                                 int32_t device_type, int32_t device_index, AtenTensorHandle* ret) {
  if (dtype != 6 || device_type != 0) return 1;
  int64_t extent = 1;
  for (int64_t d = 0; d < ndim; ++d) extent += (sizes[d] - 1) * strides[d];
  auto* t = new Tensor;
  t->storage = std::shared_ptr<void>(std::calloc(size_t(extent), 4), std::free);
  t->base = t->storage.get();
  t->sizes.assign(sizes, sizes + ndim);
  t->strides.assign(strides, strides + ndim);
  *ret = reinterpret_cast<AtenTensorHandle>(t);
  return 0;
}
int32_t aoti_torch_create_tensor_from_blob(void* data, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                                           int64_t storage_offset, int32_t dtype, int32_t device_type,
                                           int32_t device_index, AtenTensorHandle* ret) {
  if (dtype != 6 || device_type != 0) return 1;
  auto* t = new Tensor;
  t->base = data;
  t->sizes.assign(sizes, sizes + ndim);
  t->strides.assign(strides, strides + ndim);
  t->offset = storage_offset;
  *ret = reinterpret_cast<AtenTensorHandle>(t);
  return 0;
}
// out = beta * self (broadcast from [n] or [m, n]) + alpha * mat1 @ mat2, all 2-D strided.
int32_t aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                 AtenTensorHandle mat2, double beta, double alpha) {
  Tensor &o = *T(out), &s = *T(self), &a = *T(mat1), &b = *T(mat2);
  if (a.sizes.size() != 2 || b.sizes.size() != 2 || o.sizes.size() != 2) return 1;
  const int64_t m = a.sizes[0], k = a.sizes[1], n = b.sizes[1];
  if (b.sizes[0] != k || o.sizes[0] != m || o.sizes[1] != n) return 1;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t q = 0; q < k; ++q) acc += *a.at(i, q) * *b.at(q, j);
      float bias = s.sizes.size() == 1 ? static_cast<float*>(s.base)[s.offset + j * s.strides[0]] : *s.at(i, j);
      *o.at(i, j) = float(beta) * bias + float(alpha) * acc;
    }
  return 0;
}
}
