#include "parallel.hpp"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace mpspack::shim {

std::string_view gemv_mode() {
  static const std::string_view mode = [] {
    const char* v = std::getenv("MPSPACK_CPU_GEMV");
    return std::string_view(v ? v : "");
  }();
  return mode;
}

unsigned usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return unsigned(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {

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

// The OpenMP runtime a model library brought (torch's CPU kernels are OpenMP loops, libgomp), or nullptr. When
// there is one the product runs on its thread team: a pool of our own beside it oversubscribed the cores, since
// OpenMP's threads spin for a while after each loop (docs/PERFORMANCE.md, "CPU: GEMMs and OpenBLAS's threads").
struct OpenMp {
  void (*parallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) = nullptr;  // GOMP_parallel
  int (*thread_num)() = nullptr;
  int (*num_threads)() = nullptr;
  int (*max_threads)() = nullptr;
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
    api.max_threads = reinterpret_cast<decltype(api.max_threads)>(dlsym(gomp, "omp_get_max_threads"));
  });
  if (!api.parallel || !api.thread_num || !api.num_threads || !api.max_threads) return nullptr;
  found.store(&api, std::memory_order_release);
  return &api;
}

// The OpenMP team the products run on, or nullptr for mpspack's pool.
const OpenMp* team() { return gemv_mode() != "pool" ? openmp() : nullptr; }

}  // namespace

bool threads_on_openmp() { return team() != nullptr; }

unsigned thread_count() {
  const OpenMp* omp = team();
  return omp ? unsigned(std::max(1, omp->max_threads())) : pool().size();
}

void run_parts(const std::function<void(unsigned, unsigned)>& part) {
  const OpenMp* omp = team();
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

}  // namespace mpspack::shim
