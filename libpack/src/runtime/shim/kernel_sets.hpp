// Which of a file's kernel sets (each compiled for AVX-512, AVX2 + FMA, or plain x86-64) this CPU can run, best
// first, for the shim's kernels that pick theirs at run time (gemv_rows, int8_rows, int4_rows, attention_kernels).
#pragma once

#include <span>
#include <vector>

namespace mpspack::shim {

// avx512 and avx2 are null where they are not compiled (not x86-64); portable runs everywhere and comes last. Found
// at the first call and kept (one list per Kernels type: each file has its own).
template <class Kernels>
std::span<const Kernels* const> kernel_sets_for_this_cpu(const Kernels* avx512, const Kernels* avx2,
                                                         const Kernels& portable) {
  static const std::vector<const Kernels*> sets = [&] {
    std::vector<const Kernels*> found;
#if defined(__x86_64__)
    __builtin_cpu_init();
    const bool has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (avx512 && has_avx2 && __builtin_cpu_supports("avx512f")) found.push_back(avx512);
    if (avx2 && has_avx2) found.push_back(avx2);
#endif
    found.push_back(&portable);
    return found;
  }();
  return sets;
}

}  // namespace mpspack::shim
