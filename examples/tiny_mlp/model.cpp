// A hand-written model library with AOTInductor's shape: the C API of
// aoti_runtime/interface.h (extern "C", same signatures), weights embedded between
// _binary_constants_bin_start and _end (constants.S), copied out at Create like AOTInductor's CPU
// path does, and every tensor operation done through the aoti_torch_* C shim, which this library
// imports and a host (mpspack's runtime, or libtorch) provides. No libtorch at build time.
//
// Model: input [4,16] f32 -> Linear(16,32) -> ReLU -> Linear(32,8) -> output [4,8] f32. The
// linears are aoti_torch_cpu_addmm_out(out, bias, x, weight^T) as generated code calls them
// (the weight transposed by _reinterpret_tensor, the bias broadcast); ReLU is a plain loop.
#include "spec.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#define TINY_MLP_API extern "C" __attribute__((visibility("default")))

// --- The C shim, declared as torch/csrc/inductor/aoti_torch/c/shim.h declares it.
extern "C" {
struct AtenTensorOpaque;
using AtenTensorHandle = AtenTensorOpaque*;
using AOTITorchError = int32_t;

int32_t aoti_torch_device_type_cpu();
int32_t aoti_torch_dtype_float32();
AOTITorchError aoti_torch_delete_tensor_object(AtenTensorHandle tensor);
AOTITorchError aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr);
AOTITorchError aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret_sizes);
AOTITorchError aoti_torch_get_strides(AtenTensorHandle tensor, int64_t** ret_strides);
AOTITorchError aoti_torch_get_dtype(AtenTensorHandle tensor, int32_t* ret_dtype);
AOTITorchError aoti_torch_get_device_type(AtenTensorHandle tensor, int32_t* ret_device_type);
AOTITorchError aoti_torch_new_tensor_handle(AtenTensorHandle orig_handle, AtenTensorHandle* new_handle);
AOTITorchError aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim, const int64_t* sizes_ptr,
                                              const int64_t* strides_ptr, int64_t storage_offset,
                                              AtenTensorHandle* ret_new_tensor);
AOTITorchError aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,
                                        int32_t dtype, int32_t device_type, int32_t device_index,
                                        AtenTensorHandle* ret_new_tensor);
AOTITorchError aoti_torch_create_tensor_from_blob(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                                  const int64_t* strides_ptr, int64_t storage_offset, int32_t dtype,
                                                  int32_t device_type, int32_t device_index, AtenTensorHandle* ret);
AOTITorchError aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                        AtenTensorHandle mat2, double beta, double alpha);

// The embedded weights (constants.S).
extern uint8_t _binary_constants_bin_start[];
extern uint8_t _binary_constants_bin_end[];
}

// --- The model API's own types, as aoti_runtime/interface.h defines them.
struct AOTInductorModelContainerOpaque;
using AOTInductorModelContainerHandle = AOTInductorModelContainerOpaque*;
using AOTInductorStreamHandle = void*;
struct AOTIProxyExecutorOpaque;
using AOTIProxyExecutorHandle = AOTIProxyExecutorOpaque*;
using AOTIRuntimeError = int32_t;
struct AOTInductorConstantMap;
using AOTInductorConstantMapHandle = AOTInductorConstantMap*;
struct AOTInductorConstantMapEntry {
  const char* name;
  AtenTensorHandle handle;
};
using ConstantMap = std::unordered_map<std::string, AtenTensorHandle>;

namespace {

using namespace tiny_mlp;

constexpr int32_t kSuccess = 0, kFailure = 1;
constexpr int32_t kConstantTypeParameter = 1;

int fail(const char* what) {
  std::fprintf(stderr, "tiny_mlp: %s\n", what);
  return kFailure;
}

#define TRY_SHIM(call)                                        \
  do {                                                        \
    if ((call) != 0) return fail("shim call failed: " #call); \
  } while (0)

struct Container {
  // Our copies of the constants (64-aligned, like RAII_cpuMalloc), and the tensors over them.
  void* storage[kNumConstants] = {};
  AtenTensorHandle owned[kNumConstants] = {};
  // What Run uses: our own tensors, or user-managed ones after UpdateUserManagedConstantBuffer*.
  AtenTensorHandle active[kNumConstants] = {};
  // Handles made by UpdateConstantBuffer (the container owns them).
  AtenTensorHandle adopted[kNumConstants] = {};

  ~Container() {
    for (size_t i = 0; i < kNumConstants; ++i) {
      if (adopted[i]) aoti_torch_delete_tensor_object(adopted[i]);
      if (owned[i]) aoti_torch_delete_tensor_object(owned[i]);
      std::free(storage[i]);
    }
  }

  // Copies the constants out of `blob` (the embedded region or an external blob).
  int load(const uint8_t* blob) {
    for (size_t i = 0; i < kNumConstants; ++i) {
      const Constant& c = kConstants[i];
      if (!storage[i]) {
        storage[i] = std::aligned_alloc(kAlign, padded_bytes(c));
        if (!storage[i]) return fail("out of memory for the constants");
        TRY_SHIM(aoti_torch_create_tensor_from_blob(storage[i], c.ndim, c.sizes, c.strides, 0,
                                                    aoti_torch_dtype_float32(), aoti_torch_device_type_cpu(), 0,
                                                    &owned[i]));
      }
      std::memcpy(storage[i], blob + blob_offset(i), padded_bytes(c));
      set_active(i, owned[i]);
    }
    return kSuccess;
  }

  void set_active(size_t i, AtenTensorHandle h) {
    if (adopted[i] && adopted[i] != h) {
      aoti_torch_delete_tensor_object(adopted[i]);
      adopted[i] = nullptr;
    }
    active[i] = h;
  }

  int run(AtenTensorHandle* inputs, size_t n_in, AtenTensorHandle* outputs, size_t n_out);
};

Container* as_container(AOTInductorModelContainerHandle h) { return reinterpret_cast<Container*>(h); }

// Deletes the handles it holds when it goes out of scope (RAIIAtenTensorHandle).
struct Owned {
  AtenTensorHandle h = nullptr;
  ~Owned() {
    if (h) aoti_torch_delete_tensor_object(h);
  }
  AtenTensorHandle release() {
    AtenTensorHandle r = h;
    h = nullptr;
    return r;
  }
};

int check_input(AtenTensorHandle x) {
  int32_t dtype = -1, device = -1;
  int64_t *sizes = nullptr, *strides = nullptr;
  TRY_SHIM(aoti_torch_get_dtype(x, &dtype));
  TRY_SHIM(aoti_torch_get_device_type(x, &device));
  TRY_SHIM(aoti_torch_get_sizes(x, &sizes));
  TRY_SHIM(aoti_torch_get_strides(x, &strides));
  if (dtype != aoti_torch_dtype_float32()) return fail("input 0: expected dtype float32");
  if (device != aoti_torch_device_type_cpu()) return fail("input 0: expected a CPU tensor");
  if (sizes[0] != kBatch || sizes[1] != kIn) return fail("input 0: expected sizes [4, 16]");
  if (strides[0] != kIn || strides[1] != 1) return fail("input 0: expected strides [16, 1]");
  return kSuccess;
}

int Container::run(AtenTensorHandle* inputs, size_t n_in, AtenTensorHandle* outputs, size_t n_out) {
  // The model owns its inputs from here on, as AOTInductor's steal_from_raw_handles does.
  Owned x;
  if (n_in >= 1 && inputs) x.h = inputs[0];
  for (size_t i = 1; inputs && i < n_in; ++i) aoti_torch_delete_tensor_object(inputs[i]);
  if (n_in != 1 || !inputs || !x.h) return fail("expected 1 input");
  if (n_out != 1 || !outputs) return fail("expected 1 output");
  if (check_input(x.h) != kSuccess) return kFailure;
  const int32_t f32 = aoti_torch_dtype_float32(), cpu = aoti_torch_device_type_cpu();

  // buf0 = addmm(fc1.bias, x, fc1.weight^T); relu in place.
  const int64_t h_sizes[2] = {kBatch, kHidden}, h_strides[2] = {kHidden, 1};
  Owned buf0, w1t;
  TRY_SHIM(aoti_torch_empty_strided(2, h_sizes, h_strides, f32, cpu, 0, &buf0.h));
  const int64_t w1t_sizes[2] = {kIn, kHidden}, w1t_strides[2] = {1, kIn};
  TRY_SHIM(aoti_torch__reinterpret_tensor(active[0], 2, w1t_sizes, w1t_strides, 0, &w1t.h));
  TRY_SHIM(aoti_torch_cpu_addmm_out(buf0.h, active[1], x.h, w1t.h, 1L, 1L));
  void* p = nullptr;
  TRY_SHIM(aoti_torch_get_data_ptr(buf0.h, &p));
  float* h = static_cast<float*>(p);
  for (int64_t i = 0; i < kBatch * kHidden; ++i) h[i] = h[i] > 0.0f ? h[i] : 0.0f;

  // buf1 = addmm(fc2.bias, buf0, fc2.weight^T): the output.
  const int64_t y_sizes[2] = {kBatch, kOut}, y_strides[2] = {kOut, 1};
  Owned buf1, w2t;
  TRY_SHIM(aoti_torch_empty_strided(2, y_sizes, y_strides, f32, cpu, 0, &buf1.h));
  const int64_t w2t_sizes[2] = {kHidden, kOut}, w2t_strides[2] = {1, kHidden};
  TRY_SHIM(aoti_torch__reinterpret_tensor(active[2], 2, w2t_sizes, w2t_strides, 0, &w2t.h));
  TRY_SHIM(aoti_torch_cpu_addmm_out(buf1.h, active[3], buf0.h, w2t.h, 1L, 1L));
  outputs[0] = buf1.release();
  return kSuccess;
}

int find_constant(const char* name, size_t* index) {
  if (!name) return kFailure;
  for (size_t i = 0; i < kNumConstants; ++i)
    if (std::strcmp(name, kConstants[i].name) == 0) {
      *index = i;
      return kSuccess;
    }
  return kFailure;
}

// Checks that every constant is given when `validate_full_update` asks for it.
template <class Lookup>
int update_from(Container* c, Lookup&& lookup, bool validate_full_update, bool user_managed) {
  AtenTensorHandle given[kNumConstants] = {};
  for (size_t i = 0; i < kNumConstants; ++i) {
    given[i] = lookup(kConstants[i].name);
    if (!given[i] && validate_full_update) {
      std::fprintf(stderr, "tiny_mlp: constant %s is missing from the update\n", kConstants[i].name);
      return kFailure;
    }
  }
  for (size_t i = 0; i < kNumConstants; ++i) {
    if (!given[i]) continue;
    if (user_managed) {
      c->set_active(i, given[i]);
    } else {
      AtenTensorHandle mine = nullptr;
      TRY_SHIM(aoti_torch_new_tensor_handle(given[i], &mine));
      c->set_active(i, mine);
      c->adopted[i] = mine;
    }
  }
  return kSuccess;
}

const char* const kInSpec =
    R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}]}, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])";
const char* const kOutSpec = R"([1, {"type": null, "context": null, "children_spec": []}])";

}  // namespace

// --- The exported C API (aoti-abi.md section 2).

TINY_MLP_API AOTIRuntimeError
AOTInductorModelContainerCreateWithDevice(AOTInductorModelContainerHandle* container_handle, size_t num_models,
                                          const char* device_str, const char* cubin_dir) {
  if (!container_handle) return fail("Create: null handle pointer");
  if (num_models == 0) return fail("Create: num_models must be at least 1");
  if (!device_str || (std::strcmp(device_str, "cpu") != 0 && std::strcmp(device_str, "cpu:0") != 0))
    return fail("Create: this model was compiled for device 'cpu'");
  const uint64_t region = uint64_t(_binary_constants_bin_end - _binary_constants_bin_start);
  if (region < kBlobSize) return fail("Create: the embedded constants region is too small");
  auto* c = new (std::nothrow) Container;
  if (!c) return fail("Create: out of memory");
  if (c->load(_binary_constants_bin_start) != kSuccess) {
    delete c;
    return kFailure;
  }
  *container_handle = reinterpret_cast<AOTInductorModelContainerHandle>(c);
  return kSuccess;
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerCreate(AOTInductorModelContainerHandle* container_handle,
                                                              size_t num_models, bool is_cpu, const char* cubin_dir) {
  return AOTInductorModelContainerCreateWithDevice(container_handle, num_models, is_cpu ? "cpu" : "cuda", cubin_dir);
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerDelete(AOTInductorModelContainerHandle h) {
  delete as_container(h);
  return kSuccess;
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerRun(AOTInductorModelContainerHandle h,
                                                           AtenTensorHandle* input_handles, size_t num_inputs,
                                                           AtenTensorHandle* output_handles, size_t num_outputs,
                                                           AOTInductorStreamHandle stream_handle,
                                                           AOTIProxyExecutorHandle proxy_executor_handle) {
  if (!h) return fail("Run: null container");
  return as_container(h)->run(input_handles, num_inputs, output_handles, num_outputs);
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerRunSingleThreaded(
    AOTInductorModelContainerHandle h, AtenTensorHandle* input_handles, size_t num_inputs,
    AtenTensorHandle* output_handles, size_t num_outputs, AOTInductorStreamHandle stream_handle,
    AOTIProxyExecutorHandle proxy_executor_handle) {
  return AOTInductorModelContainerRun(h, input_handles, num_inputs, output_handles, num_outputs, stream_handle,
                                      proxy_executor_handle);
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerGetNumInputs(AOTInductorModelContainerHandle h,
                                                                    size_t* ret_num_inputs) {
  if (!ret_num_inputs) return kFailure;
  *ret_num_inputs = 1;
  return kSuccess;
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerGetNumOutputs(AOTInductorModelContainerHandle h,
                                                                     size_t* ret_num_outputs) {
  if (!ret_num_outputs) return kFailure;
  *ret_num_outputs = 1;
  return kSuccess;
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerGetInputName(AOTInductorModelContainerHandle h, size_t input_idx,
                                                                    const char** ret_input_names) {
  if (input_idx != 0 || !ret_input_names) return fail("GetInputName: index out of range");
  *ret_input_names = "x";
  return kSuccess;
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerGetOutputName(AOTInductorModelContainerHandle h,
                                                                     size_t output_idx, const char** ret_output_names) {
  if (output_idx != 0 || !ret_output_names) return fail("GetOutputName: index out of range");
  *ret_output_names = "output0";
  return kSuccess;
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerGetCallSpec(AOTInductorModelContainerHandle h,
                                                                   const char** in_spec, const char** out_spec) {
  if (!in_spec || !out_spec) return kFailure;
  *in_spec = kInSpec;
  *out_spec = kOutSpec;
  return kSuccess;
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerGetNumConstants(AOTInductorModelContainerHandle h,
                                                                       size_t* num_constants) {
  if (!num_constants) return kFailure;
  *num_constants = kNumConstants;
  return kSuccess;
}

#define CONSTANT_GETTER(Name, Type, expr)                                                                     \
  TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerGetConstant##Name(AOTInductorModelContainerHandle h, \
                                                                           size_t idx, Type ret) {            \
    if (idx >= kNumConstants || !ret) return fail("GetConstant" #Name ": index out of range");                \
    *ret = (expr);                                                                                            \
    return kSuccess;                                                                                          \
  }
CONSTANT_GETTER(Name, const char**, kConstants[idx].name)
CONSTANT_GETTER(OriginalFQN, const char**, kConstants[idx].fqn)
CONSTANT_GETTER(Dtype, int32_t*, aoti_torch_dtype_float32())
CONSTANT_GETTER(Type, int32_t*, kConstantTypeParameter)
CONSTANT_GETTER(DataSize, size_t*, padded_bytes(kConstants[idx]))
CONSTANT_GETTER(FromFolded, bool*, false)
#undef CONSTANT_GETTER

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerGetConstantsBlobSize(AOTInductorModelContainerHandle h,
                                                                            uint64_t* ret_size) {
  if (!ret_size) return kFailure;
  *ret_size = kBlobSize;
  return kSuccess;
}

// Makes Run use the given tensors as they are (no copy, not owned). `use_inactive` is accepted
// and ignored: this model keeps one constant buffer.
TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerUpdateUserManagedConstantBufferPairs(
    AOTInductorModelContainerHandle h, const AOTInductorConstantMapEntry* pairs, size_t num_pairs, bool use_inactive,
    bool validate_full_update) {
  if (!h || (num_pairs && !pairs)) return kFailure;
  for (size_t k = 0; k < num_pairs; ++k) {
    size_t i;
    if (find_constant(pairs[k].name, &i) != kSuccess || !pairs[k].handle)
      return fail("UpdateUserManagedConstantBufferPairs: unknown constant or null tensor");
  }
  auto lookup = [&](const char* name) -> AtenTensorHandle {
    for (size_t k = 0; k < num_pairs; ++k)
      if (std::strcmp(pairs[k].name, name) == 0) return pairs[k].handle;
    return nullptr;
  };
  return update_from(as_container(h), lookup, validate_full_update, /*user_managed=*/true);
}

TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerUpdateUserManagedConstantBuffer(
    AOTInductorModelContainerHandle h, AOTInductorConstantMapHandle constant_map_handle, bool use_inactive,
    bool validate_full_update) {
  if (!h || !constant_map_handle) return kFailure;
  auto* map = reinterpret_cast<ConstantMap*>(constant_map_handle);
  auto lookup = [&](const char* name) -> AtenTensorHandle {
    auto it = map->find(name);
    return it == map->end() ? nullptr : it->second;
  };
  return update_from(as_container(h), lookup, validate_full_update, /*user_managed=*/true);
}

// Like the user-managed form, but the container keeps its own handle to each tensor.
TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerUpdateConstantBuffer(
    AOTInductorModelContainerHandle h, AOTInductorConstantMapHandle constant_map_handle, bool use_inactive,
    bool validate_full_update) {
  if (!h || !constant_map_handle) return kFailure;
  auto* map = reinterpret_cast<ConstantMap*>(constant_map_handle);
  auto lookup = [&](const char* name) -> AtenTensorHandle {
    auto it = map->find(name);
    return it == map->end() ? nullptr : it->second;
  };
  return update_from(as_container(h), lookup, validate_full_update, /*user_managed=*/false);
}

// Fills the map with the tensors Run uses, keyed by constant name; the container keeps them.
TINY_MLP_API AOTIRuntimeError AOTInductorModelContainerExtractConstantsMap(
    AOTInductorModelContainerHandle h, AOTInductorConstantMapHandle constant_map_handle, bool use_inactive) {
  if (!h || !constant_map_handle) return kFailure;
  auto* map = reinterpret_cast<ConstantMap*>(constant_map_handle);
  for (size_t i = 0; i < kNumConstants; ++i) (*map)[kConstants[i].name] = as_container(h)->active[i];
  return kSuccess;
}

// Copies the constants from a blob laid out like the embedded region (each constant padded to
// 64 bytes, in order): the external-blob path, which this embedded model also accepts.
TINY_MLP_API AOTIRuntimeError AOTInductorModelUpdateConstantsFromBlob(AOTInductorModelContainerHandle h,
                                                                      const uint8_t* weight_blob_ptr) {
  if (!h || !weight_blob_ptr) return fail("UpdateConstantsFromBlob: null argument");
  return as_container(h)->load(weight_blob_ptr);
}
