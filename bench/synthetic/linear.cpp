// SYNTHETIC benchmark model: one Linear layer, y = x W^T + b, x [1, IN] f32, W [OUT, IN] f32, of any size, that
// loads its weights exactly as AOTInductor's generated CPU code does (aoti_runtime/model.h, load_constants): one
// malloc for every constant (each padded to 64 bytes), each constant memcpy'd in at its offset, tensors made over
// that block. Embedded (default): the weights lie between _binary_constants_bin_start and _end and Create loads
// them. LINEAR_EXTERNAL: the region holds only the blob's size (a u64), Create loads nothing, and
// AOTInductorModelUpdateConstantsFromBlob(blob) loads them from the blob the host maps. LINEAR_MMAP_SELF: the
// region holds {weights size + 8, magic} and the weights follow the ELF file (make_linear.sh appends them), as
// AOTInductor's force_mmap_weights lays them out; Create maps its own file there and copies every constant out of
// that mapping into its one block, as AOTInductor's CPU load_constants does (aoti_runtime/model_base.h: the
// mapping is what _get_constants_start returns; the block is malloc'd and filled as for embedded weights). Run
// reads every weight (aoti_torch_cpu_addmm_out, as generated code calls it), so a first run pays for whatever
// loading left undone.
// Built by bench/synthetic/make_linear.sh; results from it are labelled "synthetic".
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>

#ifndef LINEAR_IN
#define LINEAR_IN 1024
#endif
#ifndef LINEAR_OUT
#error "LINEAR_OUT: rows of W"
#endif

#define API extern "C" __attribute__((visibility("default")))

extern "C" {
struct AtenTensorOpaque;
using AtenTensorHandle = AtenTensorOpaque*;
int32_t aoti_torch_device_type_cpu();
int32_t aoti_torch_dtype_float32();
int32_t aoti_torch_delete_tensor_object(AtenTensorHandle);
int32_t aoti_torch_create_tensor_from_blob(void* data, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                                           int64_t storage_offset, int32_t dtype, int32_t device_type,
                                           int32_t device_index, AtenTensorHandle* ret);
int32_t aoti_torch__reinterpret_tensor(AtenTensorHandle self, int64_t ndim, const int64_t* sizes,
                                       const int64_t* strides, int64_t storage_offset, AtenTensorHandle* ret);
int32_t aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                                 int32_t device_type, int32_t device_index, AtenTensorHandle* ret);
int32_t aoti_torch_cpu_addmm_out(AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle mat1,
                                 AtenTensorHandle mat2, double beta, double alpha);
extern uint8_t _binary_constants_bin_start[];
extern uint8_t _binary_constants_bin_end[];
}

namespace {

constexpr int64_t kIn = LINEAR_IN, kOut = LINEAR_OUT;
struct Constant {
  const char* name;
  int64_t ndim;
  int64_t sizes[2], strides[2];
  uint64_t bytes;
};
const Constant kConstants[2] = {{"weight", 2, {kOut, kIn}, {kIn, 1}, uint64_t(kOut) * kIn * 4},
                                {"bias", 1, {kOut, 0}, {1, 0}, uint64_t(kOut) * 4}};
uint64_t padded(uint64_t n) { return (n + 63) / 64 * 64; }  // AOTInductor's data_size on the CPU

struct Container {
  void* block = nullptr;             // AOTInductor's constant_blob_ (RAII_cpuMalloc)
  AtenTensorHandle tensors[2] = {};  // what load() made
  AtenTensorHandle active[2] = {};   // what Run uses (user-managed ones after UpdateUserManaged...)
  ~Container() {
    for (AtenTensorHandle t : tensors)
      if (t) aoti_torch_delete_tensor_object(t);
    std::free(block);
  }
  // Tensors over the block load() filled.
  int make_tensors(const uint8_t* src) {
    uint64_t at = 0;
    for (int i = 0; i < 2; ++i) {
      const Constant& c = kConstants[i];
      if (aoti_torch_create_tensor_from_blob(const_cast<uint8_t*>(src) + at, c.ndim, c.sizes, c.strides, 0,
                                             aoti_torch_dtype_float32(), aoti_torch_device_type_cpu(), 0,
                                             &tensors[i]) != 0)
        return 1;
      active[i] = tensors[i];
      at += padded(c.bytes);
    }
    return 0;
  }
  // One block for every constant, each copied in at its offset, as AOTInductor's load_constants does.
  int load(const uint8_t* src) {
    uint64_t total = 0;
    for (const Constant& c : kConstants) total += padded(c.bytes);
    block = std::malloc(total);
    if (!block) return 1;
    uint64_t at = 0;
    for (const Constant& c : kConstants) {
      std::memcpy(static_cast<uint8_t*>(block) + at, src + at, padded(c.bytes));
      at += padded(c.bytes);
    }
    return make_tensors(static_cast<const uint8_t*>(block));
  }
};

Container* as(void* h) { return static_cast<Container*>(h); }

// AOTInductor's _get_constants_start with USE_MMAP_SELF: its own file (dladdr), the last weights size + 8 bytes
// mapped privately on a 16 KiB boundary, the magic checked. The mapping is kept, as AOTInductor keeps it.
const uint8_t* map_self() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&map_self), &info) == 0) return nullptr;
  const int fd = open(info.dli_fname, O_RDONLY);
  if (fd < 0) return nullptr;
  uint64_t header[2];
  std::memcpy(header, _binary_constants_bin_start, sizeof header);
  const off_t at = lseek(fd, 0, SEEK_END) - off_t(header[0]);
  void* p =
      at >= 0 && at % 16384 == 0 ? mmap(nullptr, header[0], PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, at) : MAP_FAILED;
  close(fd);
  if (p == MAP_FAILED) return nullptr;
  uint64_t magic;
  std::memcpy(&magic, static_cast<const uint8_t*>(p) + header[0] - 8, 8);
  return magic == header[1] ? static_cast<const uint8_t*>(p) : nullptr;
}

}  // namespace

API int32_t AOTInductorModelContainerCreateWithDevice(void** h, size_t, const char* device, const char*) {
  if (!h || !device || std::strncmp(device, "cpu", 3) != 0) return 1;
  auto* c = new Container;
#if defined(LINEAR_MMAP_SELF)
  const uint8_t* weights = map_self();
  if (!weights || c->load(weights) != 0) return delete c, 1;
#elif !defined(LINEAR_EXTERNAL)
  if (c->load(_binary_constants_bin_start) != 0) return delete c, 1;
#endif
  *h = c;
  return 0;
}
API int32_t AOTInductorModelContainerDelete(void* h) { return delete as(h), 0; }
API int32_t AOTInductorModelUpdateConstantsFromBlob(void* h, const uint8_t* blob) {
#ifdef LINEAR_EXTERNAL
  return as(h)->load(blob);
#else
  (void)h, (void)blob;
  return 0;  // a no-op unless built for an external blob, as AOTInductor's
#endif
}
API int32_t AOTInductorModelContainerGetNumInputs(void*, size_t* n) { return *n = 1, 0; }
API int32_t AOTInductorModelContainerGetNumOutputs(void*, size_t* n) { return *n = 1, 0; }
API int32_t AOTInductorModelContainerGetNumConstants(void*, size_t* n) { return *n = 2, 0; }
API int32_t AOTInductorModelContainerGetConstantName(void*, size_t i, const char** r) {
  return i < 2 ? (*r = kConstants[i].name, 0) : 1;
}
API int32_t AOTInductorModelContainerGetConstantOriginalFQN(void*, size_t i, const char** r) {
  return i < 2 ? (*r = kConstants[i].name, 0) : 1;
}
API int32_t AOTInductorModelContainerGetConstantDtype(void*, size_t i, int32_t* r) {
  return i < 2 ? (*r = aoti_torch_dtype_float32(), 0) : 1;
}
API int32_t AOTInductorModelContainerGetConstantDataSize(void*, size_t i, size_t* r) {
  return i < 2 ? (*r = padded(kConstants[i].bytes), 0) : 1;
}
API int32_t AOTInductorModelContainerGetConstantFromFolded(void*, size_t i, bool* r) {
  return i < 2 ? (*r = false, 0) : 1;
}
API int32_t AOTInductorModelContainerExtractConstantsMap(void* h, void* map, bool) {
  auto* m = static_cast<std::unordered_map<std::string, AtenTensorHandle>*>(map);
  for (int i = 0; i < 2; ++i)
    if (as(h)->active[i]) (*m)[kConstants[i].name] = as(h)->active[i];
  return 0;
}
struct Pair {
  const char* name;
  AtenTensorHandle handle;
};
API int32_t AOTInductorModelContainerUpdateUserManagedConstantBufferPairs(void* h, const Pair* pairs, size_t n, bool,
                                                                          bool) {
  for (size_t k = 0; k < n; ++k)
    for (int i = 0; i < 2; ++i)
      if (std::strcmp(pairs[k].name, kConstants[i].name) == 0) as(h)->active[i] = pairs[k].handle;
  return 0;
}

API int32_t AOTInductorModelContainerRun(void* h, AtenTensorHandle* in, size_t n_in, AtenTensorHandle* out,
                                         size_t n_out, void*, void*) {
  if (n_in != 1 || n_out != 1 || !as(h)->active[0] || !as(h)->active[1]) return 1;
  const int64_t wt_sizes[2] = {kIn, kOut}, wt_strides[2] = {1, kIn}, y_sizes[2] = {1, kOut}, y_strides[2] = {kOut, 1};
  AtenTensorHandle wt = nullptr, y = nullptr;
  int rc = aoti_torch__reinterpret_tensor(as(h)->active[0], 2, wt_sizes, wt_strides, 0, &wt);
  if (rc == 0)
    rc = aoti_torch_empty_strided(2, y_sizes, y_strides, aoti_torch_dtype_float32(), aoti_torch_device_type_cpu(), 0,
                                  &y);
  if (rc == 0) rc = aoti_torch_cpu_addmm_out(y, as(h)->active[1], in[0], wt, 1.0, 1.0);
  if (wt) aoti_torch_delete_tensor_object(wt);
  aoti_torch_delete_tensor_object(in[0]);  // the model owns its inputs
  if (rc != 0) {
    if (y) aoti_torch_delete_tensor_object(y);
    return 1;
  }
  out[0] = y;
  return 0;
}
