#include "gemv.hpp"

#include "blas_threads.hpp"

#include <dlfcn.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace mpspack::shim {
namespace {

// Four rows at a time against one pass over x: four independent streams keep the memory system busy.
__attribute__((target("avx2,fma"))) void rows4_avx2(const float* a, int64_t lda, const float* x, int64_t n,
                                                    float* out) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 xv = _mm256_loadu_ps(x + j);
    for (int r = 0; r < 4; ++r) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(a + r * lda + j), xv, acc[r]);
  }
  for (int r = 0; r < 4; ++r) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc[r]), _mm256_extractf128_ps(acc[r], 1));
    s = _mm_hadd_ps(s, s);
    s = _mm_hadd_ps(s, s);
    float t = _mm_cvtss_f32(s);
    for (int64_t k = j; k < n; ++k) t += a[r * lda + k] * x[k];
    out[r] = t;
  }
}

float dot_portable(const float* a, const float* x, int64_t n) {
  float acc[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; ++k) acc[k] += a[j + k] * x[j + k];
  float t = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; j < n; ++j) t += a[j] * x[j];
  return t;
}

void rows_block(int64_t begin, int64_t end, int64_t cols, float alpha, const float* a, int64_t lda,
                const float* x, float beta, float* y, int64_t incy, bool avx2) {
  auto store = [&](int64_t i, float dot) {
    float& out = y[i * incy];
    out = beta == 0.0f ? alpha * dot : alpha * dot + beta * out;  // beta 0: y may hold NaN, as BLAS ignores it
  };
  int64_t i = begin;
  if (avx2)
    for (; i + 4 <= end; i += 4) {
      float d[4];
      rows4_avx2(a + i * lda, lda, x, cols, d);
      for (int r = 0; r < 4; ++r) store(i + r, d[r]);
    }
  for (; i < end; ++i) store(i, dot_portable(a + i * lda, x, cols));
}

// Worker threads that run one job split in parts; the caller runs part 0. One job at a time.
class Pool {
 public:
  explicit Pool(unsigned threads) {
    for (unsigned t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  unsigned size() const { return unsigned(workers_.size()) + 1; }

  void run(const std::function<void(unsigned)>& part) {
    std::lock_guard one_job(job_mutex_);
    {
      std::lock_guard lock(m_);
      job_ = &part;
      pending_ = unsigned(workers_.size());
      ++generation_;
    }
    start_.notify_all();
    part(0);
    std::unique_lock lock(m_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void work(unsigned index) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(unsigned)>* job;
      {
        std::unique_lock lock(m_);
        start_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        job = job_;
      }
      (*job)(index);
      std::lock_guard lock(m_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex job_mutex_, m_;
  std::condition_variable start_, done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned pending_ = 0;
  uint64_t generation_ = 0;
};

// Made at the first large product and kept for the process (its threads sleep between products).
Pool& pool() {
  static Pool* p = new Pool(usable_cores());
  return *p;
}

// MPSPACK_CPU_GEMV=blas: OpenBLAS's GEMV; =pool: always our own pool (measurements); default: see openmp().
std::string_view gemv_mode() {
  static const std::string_view mode = [] {
    const char* v = std::getenv("MPSPACK_CPU_GEMV");
    return std::string_view(v ? v : "");
  }();
  return mode;
}

// The OpenMP runtime a model library brought (torch's CPU kernels are OpenMP loops, libgomp), or nullptr. When
// there is one the product runs on its thread team: a pool of our own beside it oversubscribed the cores, since
// OpenMP's threads spin for a while after each loop (docs/PERFORMANCE.md, "CPU inference").
struct OpenMp {
  void (*parallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) = nullptr;  // GOMP_parallel
  int (*thread_num)() = nullptr;
  int (*num_threads)() = nullptr;
};
const OpenMp* openmp() {
  static std::atomic<const OpenMp*> found{nullptr};
  if (const OpenMp* f = found.load(std::memory_order_acquire)) return f;
  // RTLD_NOLOAD: only one that is already there; the loader keeps it loaded (pin_openmp_runtime). Until a model
  // brings one, each large product asks again (a lookup of ~1 us, next to a product of milliseconds).
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (gomp == nullptr) return nullptr;
  static OpenMp api;
  static std::once_flag once;
  std::call_once(once, [gomp] {
    api.parallel = reinterpret_cast<decltype(api.parallel)>(dlsym(gomp, "GOMP_parallel"));
    api.thread_num = reinterpret_cast<decltype(api.thread_num)>(dlsym(gomp, "omp_get_thread_num"));
    api.num_threads = reinterpret_cast<decltype(api.num_threads)>(dlsym(gomp, "omp_get_num_threads"));
  });
  if (!api.parallel || !api.thread_num || !api.num_threads) return nullptr;
  found.store(&api, std::memory_order_release);
  return &api;
}

// Runs part(t, parts) for t in [0, parts) on the model's OpenMP team if it has one, else on our pool.
void run_parts(const std::function<void(unsigned, unsigned)>& part) {
  const OpenMp* omp = gemv_mode() != "pool" ? openmp() : nullptr;
  if (omp == nullptr) {
    Pool& p = pool();
    p.run([&](unsigned t) { part(t, p.size()); });
    return;
  }
  struct Job {
    const OpenMp* omp;
    const std::function<void(unsigned, unsigned)>* part;
  } job{omp, &part};
  omp->parallel(
      [](void* data) {
        auto* j = static_cast<Job*>(data);
        (*j->part)(unsigned(j->omp->thread_num()), unsigned(j->omp->num_threads()));
      },
      &job, 0, 0);
}

}  // namespace

bool threaded_gemv_on_openmp() { return gemv_mode() != "pool" && openmp() != nullptr; }

bool threaded_gemv_f32(int64_t rows, int64_t cols, float alpha, const float* a, int64_t lda, const float* x,
                       int64_t incx, float beta, float* y, int64_t incy) {
  if (incx != 1 || rows * cols < kThreadedGemvMinElements || gemv_mode() == "blas") return false;
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  run_parts([&](unsigned t, unsigned threads) {
    const unsigned parts = unsigned(std::min<int64_t>(threads, std::max<int64_t>(1, rows / 4)));
    if (t >= parts) return;
    // Blocks of whole 4-row groups, so every part but the last runs the 4-row kernel throughout.
    const int64_t per = (rows / parts + 3) / 4 * 4;
    const int64_t begin = std::min<int64_t>(rows, int64_t(t) * per);
    const int64_t end = t + 1 == parts ? rows : std::min<int64_t>(rows, begin + per);
    rows_block(begin, end, cols, alpha, a, lda, x, beta, y, incy, avx2);
  });
  return true;
}

}  // namespace mpspack::shim
