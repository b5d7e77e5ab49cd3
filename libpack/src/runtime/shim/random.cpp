// Random ops of the CPU shim: rand, randn, randint, randperm, the functional normal/uniform/exponential,
// bernoulli_ (a probability or a tensor of them) and native_dropout. They give values from the same distributions as
// torch, not the same values: torch's generators (their state and the order in which its kernels draw) cannot be
// reproduced outside torch. Every op draws from one per-process engine seeded from std::random_device, and generator
// arguments are accepted and ignored (a model that passes one gets fresh values, as it would from an unseeded torch
// generator).
#include "aoti_shim.h"
#include "element.hpp"
#include "factory.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <numbers>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;

namespace {

// The process's engine, seeded once from std::random_device; callers hold the lock while they draw.
struct Engine {
  std::mutex mutex;
  std::mt19937_64 bits;
  Engine() {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd(), rd(), rd(), rd(), rd()};
    bits.seed(seq);
  }
};
Engine& engine() {
  static Engine e;
  return e;
}

bool is_floating(int32_t dt) {
  return dt == int32_t(DType::f32) || dt == int32_t(DType::f64) || dt == int32_t(DType::f16) ||
         dt == int32_t(DType::bf16);
}

void require_floating(const Tensor& t, const char* op) {
  if (!is_floating(t.dtype))
    fail(std::string(op) + ": expected a floating point tensor (float32, float64, float16, bfloat16), got " +
         dtype_name(t.dtype));
}

// Mantissa digits of a floating dtype, as torch's uniform_real_distribution uses them: a uniform draw is
// k * 2^-digits for a random k of that many bits, so it is exact in the dtype and below 1.
int mantissa_digits(int32_t dt) {
  switch (static_cast<DType>(dt)) {
    case DType::f64: return 53;
    case DType::f32: return 24;
    case DType::f16: return 11;
    default: return 8;  // bfloat16
  }
}

// Calls f() for each element of t (in row-major order) and stores what it returns (a double) there.
template <class F>
void fill_each(Tensor& t, F&& f) {
  visit_dtype(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* base = reinterpret_cast<T*>(t.data());
    for_each_index(t.sizes, [&](std::span<const int64_t> idx) { store(base + offset_of(idx, t.strides), f()); });
  });
}

// U[from, to) as torch computes it: from + k * 2^-digits * (to - from), in float for the 16- and 32-bit types.
void fill_uniform(Tensor& t, double from, double to) {
  const int digits = mantissa_digits(t.dtype);
  const uint64_t mask = (uint64_t(1) << digits) - 1;
  const double unit = std::ldexp(1.0, -digits);
  const bool wide = t.dtype == int32_t(DType::f64);
  std::lock_guard lock(engine().mutex);
  auto& bits = engine().bits;
  fill_each(t, [&]() -> double {
    const double u = double(bits() & mask) * unit;
    if (wide) return u * (to - from) + from;
    return double(float(u) * (float(to) - float(from)) + float(from));
  });
}

// A standard normal draw (Box-Muller on two uniforms in [0, 1), the first one moved to (0, 1]).
double standard_normal(std::mt19937_64& bits) {
  const double u1 = 1.0 - double(bits() >> 11) * 0x1p-53, u2 = double(bits() >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

void fill_normal(Tensor& t, double mean, double std) {
  std::lock_guard lock(engine().mutex);
  auto& bits = engine().bits;
  fill_each(t, [&] { return mean + std * standard_normal(bits); });
}

// Integers uniform in [low, high), high > low; stored exactly in every dtype whose range the caller checked.
void fill_integers(Tensor& t, int64_t low, int64_t high) {
  const uint64_t span = uint64_t(high) - uint64_t(low);
  std::uniform_int_distribution<uint64_t> pick(0, span - 1);
  std::lock_guard lock(engine().mutex);
  auto& bits = engine().bits;
  visit_dtype(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* base = reinterpret_cast<T*>(t.data());
    for_each_index(t.sizes, [&](std::span<const int64_t> idx) {
      store(base + offset_of(idx, t.strides), int64_t(uint64_t(low) + pick(bits)));
    });
  });
}

// torch's random_(from, to) checks: from < to, and from and to - 1 inside the dtype's range.
void check_int_range(const char* op, int64_t low, int64_t high, int32_t dt) {
  if (low >= high)
    fail(std::string(op) + ": random_ expects 'from' to be less than 'to', but got from=" + std::to_string(low) +
         " >= to=" + std::to_string(high));
  double lo = 0, hi = 0;
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Half>) {
      lo = -65504.0, hi = 65504.0;
    } else if constexpr (std::is_same_v<T, BF16> || std::is_floating_point_v<T>) {
      lo = -double(std::numeric_limits<float>::max()), hi = double(std::numeric_limits<float>::max());
    } else {
      lo = double(std::numeric_limits<T>::lowest()), hi = double(std::numeric_limits<T>::max());
    }
  });
  if (double(low) < lo) fail(std::string(op) + ": from is out of bounds for " + dtype_name(dt));
  if (double(high - 1) > hi) fail(std::string(op) + ": to - 1 is out of bounds for " + dtype_name(dt));
}

// randint: a null dtype is torch's default dtype, float32, not the schema's int64 default: torch's C shim passes
// null through as an empty optional, which at::randint builds its result from.
TensorPtr random_integers(const char* op, int64_t low, int64_t high, const int64_t* size, int64_t size_len,
                          const int32_t* dtype, const int32_t* layout, const int32_t* device) {
  const int32_t dt = factory_dtype(op, dtype, int32_t(DType::f32), layout, device);
  const std::vector<int64_t> sizes = factory_sizes(op, size, size_len);
  check_int_range(op, low, high, dt);
  TensorPtr out(new_contiguous(sizes, dt));
  fill_integers(*out, low, high);
  return out;
}

// rand / randn: a new contiguous tensor (float32 unless dtype says otherwise) of U[0, 1) or N(0, 1) draws.
TensorPtr random_floats(const char* op, bool normal, const int64_t* size, int64_t size_len, const int32_t* dtype,
                        const int32_t* layout, const int32_t* device) {
  const int32_t dt = factory_dtype(op, dtype, int32_t(DType::f32), layout, device);
  const std::vector<int64_t> sizes = factory_sizes(op, size, size_len);
  if (!is_floating(dt))
    fail(std::string(op) + ": expected a floating point dtype (float32, float64, float16, bfloat16), got " +
         dtype_name(dt));
  TensorPtr out(new_contiguous(sizes, dt));
  if (normal) fill_normal(*out, 0.0, 1.0);
  else fill_uniform(*out, 0.0, 1.0);
  return out;
}

// A random permutation of 0..n-1 (Fisher-Yates), int64 unless dtype says otherwise.
TensorPtr randperm_op(int64_t n, const int32_t* dtype, const int32_t* layout, const int32_t* device) {
  const int32_t dt = factory_dtype("randperm", dtype, int32_t(DType::i64), layout, device);
  if (n < 0) fail("randperm: n must be non-negative, got " + std::to_string(n));
  if (dt == int32_t(DType::boolean)) fail("randperm: not implemented for bool");
  if (is_floating(dt) && dt != int32_t(DType::f64)) {
    const int64_t limit = (int64_t(1) << mantissa_digits(dt)) + 1;  // beyond it, not every integer is exact
    if (n > limit)
      fail("randperm: n cannot be greater than " + std::to_string(limit) + " for " + dtype_name(dt) + " type.");
  } else if (n > 0) {
    double top = 0;
    visit_dtype(dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) top = double(std::numeric_limits<T>::max());
      else top = 0x1p53;  // float64: every integer below 2^53 is exact
    });
    if (double(n - 1) > top) fail("randperm: n " + std::to_string(n) + " is too large for " + dtype_name(dt));
  }
  std::vector<int64_t> perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  {
    std::lock_guard lock(engine().mutex);
    std::shuffle(perm.begin(), perm.end(), engine().bits);
  }
  TensorPtr out(new_contiguous(std::vector<int64_t>{n}, dt));
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* base = reinterpret_cast<T*>(out->data());
    for (int64_t i = 0; i < n; ++i) store(base + i, perm[static_cast<std::size_t>(i)]);
  });
  return out;
}

// A new tensor shaped like self (torch.empty_like's strides), for the functional normal/uniform/exponential.
TensorPtr like(const Tensor& self, const char* op) {
  require_cpu(self, op);
  require_floating(self, op);
  return TensorPtr(new_tensor(self.sizes, empty_like_strides(self), self.dtype));
}

TensorPtr uniform_op(const Tensor& self, double from, double to) {
  TensorPtr out = like(self, "uniform");
  const double top = self.dtype == int32_t(DType::f64)   ? std::numeric_limits<double>::max()
                     : self.dtype == int32_t(DType::f16) ? 65504.0
                                                         : double(std::numeric_limits<float>::max());
  if (!(std::abs(from) <= top)) fail("uniform: from is out of bounds for " + std::string(dtype_name(self.dtype)));
  if (!(std::abs(to) <= top)) fail("uniform: to is out of bounds for " + std::string(dtype_name(self.dtype)));
  if (from > to)
    fail("uniform: uniform_ expects to return a [from, to) range, but found from=" + std::to_string(from) +
         " > to=" + std::to_string(to));
  fill_uniform(*out, from, to);
  return out;
}

TensorPtr normal_op(const Tensor& self, double mean, double std) {
  TensorPtr out = like(self, "normal_functional");
  if (!(std >= 0.0)) fail("normal_functional: normal expects std >= 0.0, but found std " + std::to_string(std));
  fill_normal(*out, mean, std);
  return out;
}

// Exp(lambda): -log(1 - u) / lambda for u uniform in [0, 1).
TensorPtr exponential_op(const Tensor& self, double lambd) {
  TensorPtr out = like(self, "exponential");
  if (!(lambd > 0.0)) fail("exponential: exponential_ expects lambda > 0.0, but found lambda=" + std::to_string(lambd));
  std::lock_guard lock(engine().mutex);
  auto& bits = engine().bits;
  fill_each(*out, [&] { return -std::log1p(-double(bits() >> 11) * 0x1p-53) / lambd; });
  return out;
}

// self <- 1 with probability p, else 0, in self's dtype. u < p for u in [0, 1): p = 0 never, p = 1 always.
void bernoulli_fill(Tensor& self, double p) {
  std::lock_guard lock(engine().mutex);
  auto& bits = engine().bits;
  fill_each(self, [&] { return double(bits() >> 11) * 0x1p-53 < p ? 1.0 : 0.0; });
}

void check_probability(const char* op, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    fail(std::string(op) + ": bernoulli_ expects p to be in [0, 1], but got p=" + std::to_string(p));
}

// torch's native_dropout on the CPU: with train (or train unset) each element is kept with probability 1 - p
// and scaled by 1 / (1 - p) (0 when p = 1), the mask saying which were kept; without train, a copy and an
// all-true mask. An empty input comes back as itself, with an uninitialised mask of its own dtype, as in torch.
void native_dropout_op(const Tensor& input, double p, const int32_t* train, AtenTensorHandle* ret0,
                       AtenTensorHandle* ret1) {
  require_cpu(input, "native_dropout");
  if (ret0 == nullptr || ret1 == nullptr) fail("native_dropout: ret0/ret1 is null");
  const std::vector<int64_t> strides = empty_like_strides(input);
  if (input.numel() == 0) {
    *ret0 = new Tensor(input);
    *ret1 = new_tensor(input.sizes, strides, input.dtype);
    return;
  }
  const bool training = train == nullptr || *train != 0;
  TensorPtr out(new_tensor(input.sizes, strides, input.dtype));
  TensorPtr mask(new_tensor(input.sizes, strides, int32_t(DType::boolean)));
  if (!training) {
    copy_into(*out, input);
    std::fill_n(reinterpret_cast<bool*>(mask->data()), mask->numel(), true);  // dense: numel elements
  } else {
    if (!is_floating(input.dtype))
      fail(std::string("native_dropout: result type Float can't be cast to the desired output type ") +
           dtype_name(input.dtype));
    check_probability("native_dropout", 1.0 - p);
    bernoulli_fill(*mask, 1.0 - p);
    const double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
    visit_dtype(input.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using V = decltype(load(static_cast<const T*>(nullptr)));  // float for the 16-bit types, as torch computes
      const T* src = reinterpret_cast<const T*>(input.data());
      T* dst = reinterpret_cast<T*>(out->data());
      const bool* keep = reinterpret_cast<const bool*>(mask->data());
      for_each_index(input.sizes, [&](std::span<const int64_t> idx) {
        const int64_t o = offset_of(idx, strides);
        store(dst + o, load(src + offset_of(idx, input.strides)) * V(keep[o] ? 1 : 0) * V(scale));
      });
    });
  }
  *ret0 = out.release();
  *ret1 = mask.release();
}

// torch's resize_ on an out argument: unchanged when the sizes match, else contiguous strides over storage that
// is grown (newly allocated, the old bytes copied) when it is too small.
void resize_out(Tensor& out, const std::vector<int64_t>& sizes) {
  if (out.sizes == sizes) return;
  std::vector<int64_t> strides = contiguous_strides(sizes);
  const std::size_t need =
      storage_nbytes(sizes, strides, out.itemsize()) + static_cast<std::size_t>(out.storage_offset) * out.itemsize();
  if (need > out.storage->nbytes) {
    auto grown = Storage::allocate(need);
    if (out.storage->nbytes > 0) std::memcpy(grown->data, out.storage->data, out.storage->nbytes);
    out.storage = grown;
  }
  out.sizes = sizes;
  out.strides = std::move(strides);
}

void randint_low_out_op(Tensor& out, int64_t low, int64_t high, const int64_t* size, int64_t size_len) {
  require_cpu(out, "randint_low_out");
  const std::vector<int64_t> sizes = factory_sizes("randint_low_out", size, size_len);
  check_int_range("randint_low_out", low, high, out.dtype);
  resize_out(out, sizes);
  fill_integers(out, low, high);
}

void give(AtenTensorHandle* ret0, const char* op, TensorPtr t) {
  if (ret0 == nullptr) fail(std::string(op) + ": ret0 is null");
  *ret0 = t.release();
}

}  // namespace

extern "C" {

// The AtenGeneratorHandle* arguments below are accepted and ignored: see the top of this file.

AOTITorchError aoti_torch_cpu_rand(const int64_t* size, int64_t size_len_, int32_t* dtype, int32_t* layout,
                                   int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                   AtenTensorHandle* ret0) {
  (void)device_index_, (void)pin_memory;
  return guarded(__func__,
                 [&] { give(ret0, "rand", random_floats("rand", false, size, size_len_, dtype, layout, device)); });
}

AOTITorchError aoti_torch_cpu_rand_generator(const int64_t* size, int64_t size_len_, AtenGeneratorHandle* generator,
                                             int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                             int32_t* pin_memory, AtenTensorHandle* ret0) {
  (void)generator, (void)device_index_, (void)pin_memory;
  return guarded(__func__,
                 [&] { give(ret0, "rand", random_floats("rand", false, size, size_len_, dtype, layout, device)); });
}

AOTITorchError aoti_torch_cpu_randn(const int64_t* size, int64_t size_len_, int32_t* dtype, int32_t* layout,
                                    int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                    AtenTensorHandle* ret0) {
  (void)device_index_, (void)pin_memory;
  return guarded(__func__,
                 [&] { give(ret0, "randn", random_floats("randn", true, size, size_len_, dtype, layout, device)); });
}

AOTITorchError aoti_torch_cpu_randn_generator(const int64_t* size, int64_t size_len_, AtenGeneratorHandle* generator,
                                              int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                              int32_t* pin_memory, AtenTensorHandle* ret0) {
  (void)generator, (void)device_index_, (void)pin_memory;
  return guarded(__func__,
                 [&] { give(ret0, "randn", random_floats("randn", true, size, size_len_, dtype, layout, device)); });
}

AOTITorchError aoti_torch_cpu_randint(int64_t high, const int64_t* size, int64_t size_len_, int32_t* dtype,
                                      int32_t* layout, int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                      AtenTensorHandle* ret0) {
  (void)device_index_, (void)pin_memory;
  return guarded(__func__, [&] {
    give(ret0, "randint", random_integers("randint", 0, high, size, size_len_, dtype, layout, device));
  });
}

AOTITorchError aoti_torch_cpu_randint_generator(int64_t high, const int64_t* size, int64_t size_len_,
                                                AtenGeneratorHandle* generator, int32_t* dtype, int32_t* layout,
                                                int32_t* device, int32_t device_index_, int32_t* pin_memory,
                                                AtenTensorHandle* ret0) {
  (void)generator, (void)device_index_, (void)pin_memory;
  return guarded(__func__, [&] {
    give(ret0, "randint", random_integers("randint", 0, high, size, size_len_, dtype, layout, device));
  });
}

AOTITorchError aoti_torch_cpu_randint_low(int64_t low, int64_t high, const int64_t* size, int64_t size_len_,
                                          int32_t* dtype, int32_t* layout, int32_t* device, int32_t device_index_,
                                          int32_t* pin_memory, AtenTensorHandle* ret0) {
  (void)device_index_, (void)pin_memory;
  return guarded(__func__, [&] {
    give(ret0, "randint_low", random_integers("randint_low", low, high, size, size_len_, dtype, layout, device));
  });
}

AOTITorchError aoti_torch_cpu_randint_low_out(AtenTensorHandle out, int64_t low, int64_t high, const int64_t* size,
                                              int64_t size_len_) {
  return guarded(__func__, [&] { randint_low_out_op(deref(out, "out"), low, high, size, size_len_); });
}

AOTITorchError aoti_torch_cpu_randperm(int64_t n, int32_t* dtype, int32_t* layout, int32_t* device,
                                       int32_t device_index_, int32_t* pin_memory, AtenTensorHandle* ret0) {
  (void)device_index_, (void)pin_memory;
  return guarded(__func__, [&] { give(ret0, "randperm", randperm_op(n, dtype, layout, device)); });
}

AOTITorchError aoti_torch_cpu_normal_functional(AtenTensorHandle self, double mean, double std,
                                                AtenGeneratorHandle* generator, AtenTensorHandle* ret0) {
  (void)generator;
  return guarded(__func__, [&] { give(ret0, "normal_functional", normal_op(deref(self, "self"), mean, std)); });
}

AOTITorchError aoti_torch_cpu_uniform(AtenTensorHandle self, double from, double to, AtenGeneratorHandle* generator,
                                      AtenTensorHandle* ret0) {
  (void)generator;
  return guarded(__func__, [&] { give(ret0, "uniform", uniform_op(deref(self, "self"), from, to)); });
}

AOTITorchError aoti_torch_cpu_exponential(AtenTensorHandle self, double lambd, AtenGeneratorHandle* generator,
                                          AtenTensorHandle* ret0) {
  (void)generator;
  return guarded(__func__, [&] { give(ret0, "exponential", exponential_op(deref(self, "self"), lambd)); });
}

AOTITorchError aoti_torch_cpu_bernoulli__float(AtenTensorHandle self, double p, AtenGeneratorHandle* generator) {
  (void)generator;
  return guarded(__func__, [&] {
    Tensor& t = deref(self, "self");
    require_cpu(t, "bernoulli_");
    check_probability("bernoulli_", p);
    bernoulli_fill(t, p);
  });
}

// self[i] <- 1 with probability p[i] (p broadcast to self's shape), else 0, in self's dtype.
AOTITorchError aoti_torch_cpu_bernoulli__Tensor(AtenTensorHandle self, AtenTensorHandle p,
                                                AtenGeneratorHandle* generator) {
  (void)generator;
  return guarded(__func__, [&] {
    Tensor& t = deref(self, "self");
    const Tensor& probs = deref(p, "p");
    require_cpu(t, "bernoulli_");
    require_cpu(probs, "bernoulli_");
    const std::vector<int64_t> ps = broadcast_strides(t, probs);
    const auto pitem = static_cast<int64_t>(probs.itemsize()), titem = static_cast<int64_t>(t.itemsize());
    for_each_index(t.sizes, [&](std::span<const int64_t> idx) {
      check_probability("bernoulli_", load_as_double(probs.data() + offset_of(idx, ps) * pitem, probs.dtype));
    });
    std::lock_guard lock(engine().mutex);
    auto& bits = engine().bits;
    for_each_index(t.sizes, [&](std::span<const int64_t> idx) {
      const double q = load_as_double(probs.data() + offset_of(idx, ps) * pitem, probs.dtype);
      const double u = double(bits() >> 11) * 0x1p-53;
      store_from_double(t.data() + offset_of(idx, t.strides) * titem, t.dtype, u < q ? 1.0 : 0.0);
    });
  });
}

AOTITorchError aoti_torch_cpu_native_dropout(AtenTensorHandle input, double p, int32_t* train, AtenTensorHandle* ret0,
                                             AtenTensorHandle* ret1) {
  return guarded(__func__, [&] { native_dropout_op(deref(input, "input"), p, train, ret0, ret1); });
}

}  // extern "C"
