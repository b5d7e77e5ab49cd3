// Tensor handles, storages, dtype conversion and strided copies.
#include "tensor.hpp"

#include "cpu_block_cache.hpp"
#include "element.hpp"
#include "parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

namespace mpspack::shim {

namespace {
thread_local std::string t_last_error;
}

const std::string& last_error_ref() { return t_last_error; }

AOTITorchError report_failure(const char* func, const char* what) noexcept {
  try {
    t_last_error = std::string(func) + ": " + what;
  } catch (...) {}
  std::fprintf(stderr, "Error: mpspack shim %s: %s\n", func, what);
  return AOTI_TORCH_FAILURE;
}

void fail(const std::string& msg) { throw ShimError(msg); }

std::size_t element_size(int32_t dtype) {
  if (const DtypeInfo* d = find_dtype(dtype)) return d->size;
  fail("dtype code " + std::to_string(dtype) + " is not supported by the mpspack shim");
}

const char* dtype_name(int32_t dtype) {
  if (const DtypeInfo* d = find_dtype(dtype)) return d->torch_name;
  return "unknown";
}

// ---- storage ------------------------------------------------------------------------------------------

namespace {
DeviceMemory* g_device_memory[32] = {};  // by device type code (cuda 1, mps 13)
}

bool register_device_memory(int32_t device_type, DeviceMemory* memory) {
  if (device_type <= kCpu || device_type >= int32_t(std::size(g_device_memory))) return false;
  g_device_memory[device_type] = memory;
  return true;
}

DeviceMemory* device_memory(int32_t device_type) {
  if (device_type <= kCpu || device_type >= int32_t(std::size(g_device_memory))) return nullptr;
  return g_device_memory[device_type];
}

static DeviceMemory& require_device_memory(int32_t device_type, const char* what) {
  DeviceMemory* d = device_memory(device_type);
  if (d == nullptr)
    fail(std::string(what) + " on device type " + std::to_string(device_type) +
         ": this mpspack has no backend for that device built in");
  return *d;
}

void copy_any(Tensor& dst, const Tensor& src) {
  if (dst.device_type() == kCpu && src.device_type() == kCpu) return copy_into(dst, src);
  const int32_t dev = dst.device_type() != kCpu ? dst.device_type() : src.device_type();
  if (dst.device_type() != kCpu && src.device_type() != kCpu && dst.device_type() != src.device_type())
    fail("copy_ between two different non-CPU device types");
  require_device_memory(dev, "copy_").copy(dst, src);
}

Storage::~Storage() {
  if (!owned || data == nullptr) return;
  if (device_type == kCpu) {
    cpu_blocks::give_back(data, nbytes);
  } else if (DeviceMemory* d = device_memory(device_type)) {
    d->release(data, device_index, device_context);
  }
}

std::shared_ptr<Storage> Storage::allocate_on(int32_t device_type, int32_t device_index, std::size_t nbytes) {
  if (device_type == kCpu) return allocate(nbytes);
  DeviceMemory& d = require_device_memory(device_type, "allocation");
  auto s = std::make_shared<Storage>();
  s->device_type = device_type;
  s->device_index = device_index;
  if (nbytes > 0) s->data = d.allocate(nbytes, device_index, &s->device_context);
  s->nbytes = nbytes;
  s->owned = true;
  return s;
}

std::shared_ptr<Storage> Storage::allocate(std::size_t nbytes) {
  auto s = std::make_shared<Storage>();
  if (nbytes > 0) {
    if (cpu_blocks::block_bytes(nbytes) < nbytes) fail("allocation size overflows");
    s->data = cpu_blocks::take(nbytes);
    if (s->data == nullptr) fail("out of memory allocating " + std::to_string(nbytes) + " bytes");
  }
  s->nbytes = nbytes;
  s->owned = true;
  return s;
}

std::shared_ptr<Storage> Storage::borrow(void* data, std::size_t nbytes, int32_t device_type, int32_t device_index) {
  auto s = std::make_shared<Storage>();
  s->data = data;
  s->nbytes = nbytes;
  s->owned = false;
  s->device_type = device_type;
  s->device_index = device_index;
  return s;
}

// ---- layout helpers -----------------------------------------------------------------------------------

std::size_t storage_nbytes(std::span<const int64_t> sizes, std::span<const int64_t> strides, std::size_t itemsize) {
  // torch: itemsize * (1 + sum((size - 1) * stride)), 0 if any size is 0.
  uint64_t span = 1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    if (sizes[i] < 0) fail("negative size " + std::to_string(sizes[i]));
    if (strides[i] < 0) fail("negative stride " + std::to_string(strides[i]));
    uint64_t term;
    if (__builtin_mul_overflow(static_cast<uint64_t>(sizes[i] - 1), static_cast<uint64_t>(strides[i]), &term) ||
        __builtin_add_overflow(span, term, &span))
      fail("tensor extent overflows");
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(span, static_cast<uint64_t>(itemsize), &bytes)) fail("tensor extent overflows");
  return static_cast<std::size_t>(bytes);
}

std::vector<int64_t> contiguous_strides(std::span<const int64_t> sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(sizes[i], 1);
  }
  return st;
}

std::vector<int64_t> infer_dense_strides(std::span<const int64_t> sizes, std::span<const int64_t> strides) {
  const std::size_t nd = sizes.size();
  std::vector<std::size_t> perm(nd);
  // perm lists dims from innermost to outermost; start from the contiguous order.
  for (std::size_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  auto should_swap = [&](std::size_t d0, std::size_t d1) -> int {
    const int64_t s0 = strides[d0], s1 = strides[d1];
    if (s0 == 0 || s1 == 0) return 0;  // ambiguous: keep the order
    if (s0 < s1) return -1;
    if (s0 > s1) return 1;
    if (sizes[d0] > sizes[d1]) return 1;  // equal strides: the smaller size goes inside
    return 0;
  };
  for (std::size_t i = 1; i < nd; ++i) {
    std::size_t d1 = i;
    for (std::size_t d0 = i; d0-- > 0;) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  std::vector<int64_t> out(nd);
  int64_t cur = 1;
  for (std::size_t i = 0; i < nd; ++i) {
    out[perm[i]] = cur;
    if (sizes[perm[i]] > 1) cur *= sizes[perm[i]];
  }
  return out;
}

bool strides_like_channels_last(const Tensor& t) {
  static constexpr std::size_t k4[] = {1, 3, 2, 0};
  static constexpr std::size_t k5[] = {1, 4, 3, 2, 0};
  if ((t.dim() != 4 && t.dim() != 5) || t.strides[1] == 0) return false;
  const std::span<const std::size_t> order =
      t.dim() == 4 ? std::span<const std::size_t>(k4) : std::span<const std::size_t>(k5);
  int64_t min = 0;
  for (std::size_t d : order) {
    if (t.sizes[d] == 0 || t.strides[d] < min) return false;
    if (d == 0 && min == t.strides[1]) return false;  // N111 tensors: ambiguous, contiguous wins
    min = t.strides[d];
    if (t.sizes[d] > 1) min *= t.sizes[d];
  }
  return true;
}

std::vector<int64_t> channels_last_strides(std::span<const int64_t> sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t step = 1;
  st[1] = step;
  step *= sizes[1];
  for (std::size_t d = sizes.size() - 1; d >= 2; --d) {
    st[d] = step;
    step *= sizes[d];
  }
  st[0] = step;
  return st;
}

std::vector<int64_t> empty_like_strides(const Tensor& t) {
  if (t.is_non_overlapping_and_dense()) return t.strides;
  return infer_dense_strides(t.sizes, t.strides);
}

Tensor& deref(AtenTensorHandle h, const char* what) {
  if (h == nullptr) fail(std::string(what) + " handle is null");
  if (h->storage == nullptr) fail(std::string(what) + " is an undefined tensor");
  return *h;
}

void require_cpu(const Tensor& t, const char* op) {
  if (t.device_type() != kCpu)
    fail(std::string(op) + ": the mpspack CPU shim computes on CPU tensors only (got device type " +
         std::to_string(t.device_type()) + ")");
}

Tensor* new_tensor_on(int32_t device_type, int32_t device_index, std::span<const int64_t> sizes,
                      std::span<const int64_t> strides, int32_t dtype) {
  if (sizes.size() != strides.size()) fail("sizes and strides differ in length");
  auto t = std::make_unique<Tensor>();
  t->dtype = dtype;
  t->sizes.assign(sizes.begin(), sizes.end());
  t->strides.assign(strides.begin(), strides.end());
  t->sizes.reserve(1);  // data() never null, even for 0-dim
  t->strides.reserve(1);
  t->storage = Storage::allocate_on(device_type, device_index, storage_nbytes(sizes, strides, element_size(dtype)));
  return t.release();
}

Tensor* new_tensor(std::span<const int64_t> sizes, std::span<const int64_t> strides, int32_t dtype) {
  return new_tensor_on(kCpu, 0, sizes, strides, dtype);
}

Tensor* new_contiguous(std::span<const int64_t> sizes, int32_t dtype) {
  const auto st = contiguous_strides(sizes);
  return new_tensor(sizes, st, dtype);
}

// ---- typed element access ------------------------------------------------------------------------------

namespace {
using namespace typed;

// dst[i] = src[i] over an n-d index space, strides in elements.
template <class D, class S>
void copy_loop(D* dst, const int64_t* dst_st, const S* src, const int64_t* src_st, const int64_t* sizes, int nd) {
  if (nd == 0) {
    store(dst, load(src));
    return;
  }
  for (int i = 0; i < nd; ++i)
    if (sizes[i] == 0) return;
  const int64_t inner = sizes[nd - 1], dsi = dst_st[nd - 1], ssi = src_st[nd - 1];
  std::vector<int64_t> idx(static_cast<std::size_t>(nd), 0);
  int64_t doff = 0, soff = 0;
  while (true) {
    D* d = dst + doff;
    const S* s = src + soff;
    if (dsi == 1 && ssi == 1) {
      for (int64_t j = 0; j < inner; ++j) store(d + j, load(s + j));
    } else {
      for (int64_t j = 0; j < inner; ++j) store(d + j * dsi, load(s + j * ssi));
    }
    int k = nd - 2;
    for (; k >= 0; --k) {
      if (++idx[k] < sizes[k]) {
        doff += dst_st[k];
        soff += src_st[k];
        break;
      }
      doff -= dst_st[k] * (sizes[k] - 1);
      soff -= src_st[k] * (sizes[k] - 1);
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

bool ranges_overlap(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0) return false;
  const char* a0 = a.data();
  const char* a1 = a0 + storage_nbytes(a.sizes, a.strides, a.itemsize());
  const char* b0 = b.data();
  const char* b1 = b0 + storage_nbytes(b.sizes, b.strides, b.itemsize());
  return a0 < b1 && b0 < a1;
}

// Copies of at least this many bytes are split over the shim's threads: one thread writes at a fraction of the
// memory bandwidth, and the broadcast bias an addmm copies into its output ([3136, 384] floats in convnext_tiny's
// first stage) took longer than the product itself on 16 cores (docs/PERFORMANCE.md, "CPU: products on
// oneDNN"). Not for copies made inside a run_parts part: its pool takes one job at a time.
constexpr std::size_t kParallelCopyBytes = std::size_t(1) << 19;

// copy_loop over the outermost dimension larger than 1, cut into one slab per thread.
template <class D, class S>
void copy_split(D* dst, const int64_t* dst_st, const S* src, const int64_t* src_st, const int64_t* sizes, int nd) {
  int d = 0;
  while (d < nd - 1 && sizes[d] == 1) ++d;
  const int64_t n = sizes[d];
  run_parts([&](unsigned t, unsigned parts) {
    const int64_t first = n * t / parts, last = n * (t + 1) / parts;
    if (first == last) return;
    std::vector<int64_t> slab(sizes, sizes + nd);
    slab[std::size_t(d)] = last - first;
    copy_loop(dst + first * dst_st[d], dst_st, src + first * src_st[d], src_st, slab.data(), nd);
  });
}

// memmove of non-overlapping bytes, cut into one piece per thread when large.
void copy_bytes(char* dst, const char* src, std::size_t bytes) {
  if (bytes < kParallelCopyBytes) {
    std::memmove(dst, src, bytes);
    return;
  }
  run_parts([&](unsigned t, unsigned parts) {
    const std::size_t first = bytes * t / parts, last = bytes * (t + 1) / parts;
    std::memcpy(dst + first, src + first, last - first);
  });
}

}  // namespace

double load_as_double(const void* p, int32_t dtype) {
  return visit_dtype(dtype, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    return static_cast<double>(load(static_cast<const T*>(p)));
  });
}

void store_from_double(void* p, int32_t dtype, double v) {
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    store(static_cast<T*>(p), v);
  });
}

std::vector<int64_t> broadcast_strides(const Tensor& dst, const Tensor& src) {
  const int nd = static_cast<int>(dst.dim());
  const int snd = static_cast<int>(src.dim());
  std::vector<int64_t> sst(static_cast<std::size_t>(nd), 0);
  for (int i = 0; i < snd; ++i) {
    const int d = i - snd + nd;
    if (d < 0) {
      if (src.sizes[i] != 1) fail("copy_: source shape does not broadcast to the destination shape");
      continue;
    }
    if (src.sizes[i] == dst.sizes[d]) {
      sst[d] = src.strides[i];
    } else if (src.sizes[i] == 1) {
      sst[d] = 0;
    } else {
      fail("copy_: source size " + std::to_string(src.sizes[i]) + " does not broadcast to destination size " +
           std::to_string(dst.sizes[d]) + " at dim " + std::to_string(d));
    }
  }
  return sst;
}

namespace {

// Whether visit_dtype knows `dtype` (the types the shim computes with); the others (complex, float8, uint16 and
// wider) are copied bit for bit.
bool computed_dtype(int32_t dtype) {
  switch (static_cast<DType>(dtype)) {
    case DType::u8:
    case DType::i8:
    case DType::i16:
    case DType::i32:
    case DType::i64:
    case DType::f16:
    case DType::f32:
    case DType::f64:
    case DType::boolean:
    case DType::bf16: return true;
  }
  return false;
}

template <std::size_t N>
struct Bits {
  unsigned char b[N];
};

// dst <- src elementwise for one dtype the shim does not compute with: each element's bytes as they are.
void copy_bits(Tensor& dst, const Tensor& src, const std::vector<int64_t>& sst) {
  const auto run = [&](auto tag) {
    using E = decltype(tag);
    copy_loop(reinterpret_cast<E*>(dst.data()), dst.strides.data(), reinterpret_cast<const E*>(src.data()), sst.data(),
              dst.sizes.data(), static_cast<int>(dst.dim()));
  };
  switch (dst.itemsize()) {
    case 1: return run(Bits<1>{});
    case 2: return run(Bits<2>{});
    case 4: return run(Bits<4>{});
    case 8: return run(Bits<8>{});
    case 16: return run(Bits<16>{});
  }
  fail(std::string("copy_ of ") + dtype_name(dst.dtype) + " elements");
}

}  // namespace

void copy_into(Tensor& dst, const Tensor& src) {
  require_cpu(dst, "copy_");
  require_cpu(src, "copy_");
  const int nd = static_cast<int>(dst.dim());
  const std::vector<int64_t> sst = broadcast_strides(dst, src);
  if (dst.numel() == 0) return;
  // Same dtype, same dense layout: one memcpy.
  if (dst.dtype == src.dtype && dst.sizes == src.sizes && dst.is_contiguous() && src.is_contiguous()) {
    const std::size_t bytes = static_cast<std::size_t>(dst.numel()) * dst.itemsize();
    if (dst.data() == src.data()) return;
    if (ranges_overlap(dst, src)) std::memmove(dst.data(), src.data(), bytes);
    else copy_bytes(dst.data(), src.data(), bytes);
    return;
  }
  // Overlapping source and destination: go through a temporary.
  if (ranges_overlap(dst, src)) {
    TensorPtr tmp(new_contiguous(src.sizes, src.dtype));
    copy_into(*tmp, src);
    copy_into(dst, *tmp);
    return;
  }
  if (!computed_dtype(dst.dtype) || !computed_dtype(src.dtype)) {
    if (dst.dtype != src.dtype)
      fail(std::string("copy_ from ") + dtype_name(src.dtype) + " to " + dtype_name(dst.dtype) + " is not supported");
    copy_bits(dst, src, sst);
    return;
  }
  visit_dtype(dst.dtype, [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    visit_dtype(src.dtype, [&](auto stag) {
      using S = typename decltype(stag)::type;
      auto* d = reinterpret_cast<D*>(dst.data());
      const auto* s = reinterpret_cast<const S*>(src.data());
      if (nd > 0 && static_cast<std::size_t>(dst.numel()) * sizeof(D) >= kParallelCopyBytes)
        copy_split(d, dst.strides.data(), s, sst.data(), dst.sizes.data(), nd);
      else copy_loop(d, dst.strides.data(), s, sst.data(), dst.sizes.data(), nd);
    });
  });
}

TensorPtr contiguous_as(const Tensor& src, int32_t dtype) {
  if (src.dtype == dtype && src.is_contiguous()) return std::make_unique<Tensor>(src);
  TensorPtr out(new_contiguous(src.sizes, dtype));
  copy_into(*out, src);
  return out;
}

}  // namespace mpspack::shim

// ---- AtenTensorOpaque -------------------------------------------------------------------------------------

int64_t AtenTensorOpaque::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

char* AtenTensorOpaque::data() const {
  if (storage->data == nullptr) return nullptr;
  return static_cast<char*>(storage->data) + storage_offset * static_cast<int64_t>(itemsize());
}

bool AtenTensorOpaque::is_contiguous() const {
  int64_t expected = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] != 1 && strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

bool AtenTensorOpaque::is_non_overlapping_and_dense() const {
  if (sizes.size() == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<std::size_t> perm(sizes.size());
  std::iota(perm.begin(), perm.end(), 0);
  // Sort dims by stride (size-1 dims last: they do not matter).
  std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t expected = 1;
  for (std::size_t d : perm) {
    if (sizes[d] == 0) return true;
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}
