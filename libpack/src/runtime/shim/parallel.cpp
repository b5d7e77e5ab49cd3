#include "parallel.hpp"

#include "call_profile.hpp"
#include "runtime/tuning/tuning.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace mpspack::shim {

std::string_view gemv_mode() { return tuning().cpu_gemv; }

unsigned usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return unsigned(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {

// Worker threads that run one job split in parts; the caller runs part 0. One job at a time. After a job that
// asks for it, a worker spins for kSpin before it sleeps on the condition variable, as an OpenMP team's threads do
// after each loop: the products of a decode step come tens of microseconds apart, and a sleeping thread takes
// 20-100 us to wake (docs/PERFORMANCE.md, "Full-size zoo models"). Not where the process has an OpenMP team too:
// its threads spin after the model's loops, and ours beside them took the cores from the model's.
class Pool {
 public:
  static constexpr auto kSpin = std::chrono::microseconds(200);

  explicit Pool(unsigned threads) {
    for (unsigned t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  unsigned size() const { return unsigned(workers_.size()) + 1; }

  void run(const std::function<void(unsigned)>& part, bool spin) {
    std::lock_guard one_job(job_mutex_);
    job_ = &part;
    spin_.store(spin, std::memory_order_relaxed);
    pending_.store(unsigned(workers_.size()), std::memory_order_relaxed);
    {
      // Under the lock, so that a worker going to sleep either sees the new job or is counted in sleepers_.
      std::lock_guard lock(m_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    if (sleepers_.load(std::memory_order_relaxed) > 0) start_.notify_all();
    part(0);
    if (spin && spin_until([&] { return pending_.load(std::memory_order_acquire) == 0; })) return;
    std::unique_lock lock(m_);
    done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
  }

 private:
  // Spins until ready() or kSpin has passed; returns ready().
  template <class Ready>
  static bool spin_until(const Ready& ready) {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (unsigned i = 0; !ready(); ++i) {
      pause();
      if (i % 64 == 63 && std::chrono::steady_clock::now() > until) return ready();
    }
    return true;
  }

  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  void work(unsigned index) {
    uint64_t seen = 0;
    bool spin = false;  // as the last job asked
    for (;;) {
      auto fresh = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!(spin && spin_until(fresh))) {
        std::unique_lock lock(m_);
        sleepers_.fetch_add(1, std::memory_order_relaxed);
        start_.wait(lock, fresh);
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = generation_.load(std::memory_order_acquire);
      spin = spin_.load(std::memory_order_relaxed);
      (*job_)(index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard lock(m_);  // the caller may be between its check and its wait
        done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex job_mutex_, m_;
  std::condition_variable start_, done_;
  const std::function<void(unsigned)>* job_ = nullptr;  // written before generation_'s release, read after
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> spin_{false};
  std::atomic<unsigned> pending_{0}, sleepers_{0};
};

// Made at the first large product and kept for the process (between products its threads spin briefly, then sleep).
Pool& pool() {
  static Pool* p = new Pool(usable_cores());
  return *p;
}

// The OpenMP runtime a model library brought (torch's CPU kernels are OpenMP loops, libgomp), or nullptr. When
// there is one the product runs on its thread team: a pool of our own beside it oversubscribed the cores, since
// OpenMP's threads spin for a while after each loop (docs/PERFORMANCE.md, "CPU: OpenBLAS's kernels and threads").
struct OpenMp {
  void (*parallel)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) = nullptr;  // GOMP_parallel
  int (*thread_num)() = nullptr;
  int (*num_threads)() = nullptr;
  int (*max_threads)() = nullptr;
  void (*set_num_threads)(int) = nullptr;
};
// How many objects the dynamic loader has loaded in this process so far (dl_iterate_phdr's dlpi_adds), or 0 where
// it does not say.
unsigned long long loads_so_far() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* out) {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
          *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;  // the first object carries the count
      },
      &adds);
  return adds;
}

const OpenMp* openmp() {
  static std::atomic<const OpenMp*> found{nullptr};
  if (const OpenMp* f = found.load(std::memory_order_acquire)) return f;
  // RTLD_NOLOAD: only one that is already there; the loader keeps it loaded (pin_openmp_runtime). Until a model
  // brings one, each product asks again, but only once something was loaded since the last miss: glibc's
  // dlopen(RTLD_NOLOAD) of a library not loaded still searches the disk for it (6 system calls, tens of us, three
  // times a product), which a small product does not amortize.
  static std::atomic<unsigned long long> missed_at{0};
  const unsigned long long loads = loads_so_far();
  if (loads != 0 && loads == missed_at.load(std::memory_order_relaxed)) return nullptr;
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (gomp == nullptr) {
    missed_at.store(loads, std::memory_order_relaxed);
    return nullptr;
  }
  static OpenMp api;
  static std::once_flag once;
  std::call_once(once, [gomp] {
    api.parallel = reinterpret_cast<decltype(api.parallel)>(dlsym(gomp, "GOMP_parallel"));
    api.thread_num = reinterpret_cast<decltype(api.thread_num)>(dlsym(gomp, "omp_get_thread_num"));
    api.num_threads = reinterpret_cast<decltype(api.num_threads)>(dlsym(gomp, "omp_get_num_threads"));
    api.max_threads = reinterpret_cast<decltype(api.max_threads)>(dlsym(gomp, "omp_get_max_threads"));
    api.set_num_threads = reinterpret_cast<decltype(api.set_num_threads)>(dlsym(gomp, "omp_set_num_threads"));
  });
  if (!api.parallel || !api.thread_num || !api.num_threads || !api.max_threads || !api.set_num_threads) return nullptr;
  found.store(&api, std::memory_order_release);
  return &api;
}

// The largest team a model library's own regions asked for (model_parallel), 0 before any; whether that is more
// than this machine's cores (the model was compiled on a larger machine).
std::atomic<unsigned> g_model_team{0};
std::atomic<bool> g_model_oversubscribes{false};

bool model_oversubscribes() { return g_model_oversubscribes.load(std::memory_order_relaxed); }

// The OpenMP team the products run on, or nullptr for mpspack's pool.
const OpenMp* team() { return gemv_mode() != "pool" && !model_oversubscribes() ? openmp() : nullptr; }

}  // namespace

bool threads_on_openmp() { return team() != nullptr; }

bool openmp_available() { return openmp() != nullptr; }

// Without libgomp the pool spins (run_parts_now); with it, only a team does. One lookup where libgomp is absent:
// openmp() then searches the loaded objects again at each call.
bool threads_wake_fast() { return openmp() == nullptr || team() != nullptr; }

unsigned model_team() { return g_model_team.load(std::memory_order_relaxed); }

unsigned thread_count() {
  const OpenMp* omp = team();
  return omp ? unsigned(std::max(1, omp->max_threads())) : pool().size();
}

namespace {

using Clock = std::chrono::steady_clock;

void run_parts_now(const std::function<void(unsigned, unsigned)>& part) {
  // Inside a part of the pool's job (a product split inside attention's parts): on this thread, as a nested
  // OpenMP region would run; the pool takes one job at a time.
  thread_local bool in_pool_part = false;
  if (in_pool_part) return part(0, 1);
  const OpenMp* omp = team();
  if (omp == nullptr) {
    Pool& p = pool();
    // A part's own OpenMP calls (oneDNN's products in attention) run on its thread too, not as a team of their own
    // per pool thread.
    const OpenMp* nested = openmp();
    p.run(
        [&](unsigned t) {
          if (nested && t > 0 && nested->max_threads() != 1) nested->set_num_threads(1);
          struct InPart {
            InPart() { in_pool_part = true; }
            ~InPart() { in_pool_part = false; }
          } in_part;
          part(t, p.size());
        },
        /*spin=*/nested == nullptr);
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

void raise_to(std::atomic<Clock::rep>& max, Clock::rep v) {
  for (Clock::rep seen = max.load(std::memory_order_relaxed); v > seen;)
    if (max.compare_exchange_weak(seen, v, std::memory_order_relaxed)) break;
}

// run_parts under MPSPACK_PROFILE_SHIM: what a split call's time is made of, each a step of the call that split
// (call_profile::record_within). The time until the last part started is the cost of waking the threads (asleep,
// or busy elsewhere); the slowest part is the work; what the call took beyond both is the join.
void run_parts_profiled(const std::function<void(unsigned, unsigned)>& part) {
  const Clock::time_point start = Clock::now();
  std::atomic<Clock::rep> last_start{0}, slowest{0};
  run_parts_now([&](unsigned t, unsigned parts) {
    const Clock::time_point begin = Clock::now();
    part(t, parts);
    raise_to(last_start, (begin - start).count());
    raise_to(slowest, (Clock::now() - begin).count());
  });
  const Clock::duration all = Clock::now() - start, waking{last_start.load()}, work{slowest.load()};
  call_profile::record_within("run_parts: until the last part started", waking);
  call_profile::record_within("run_parts: the slowest part", work);
  call_profile::record_within("run_parts: the rest (join)", all - std::min(all, waking + work));
}

}  // namespace

void run_parts(const std::function<void(unsigned, unsigned)>& part) {
  if (call_profile::enabled()) run_parts_profiled(part);
  else run_parts_now(part);
}

void model_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  // The loader routes the import only once openmp() has found the library's libgomp (openmp_available()).
  const OpenMp* omp = openmp();
  if (num_threads > g_model_team.load(std::memory_order_relaxed)) {
    g_model_team.store(num_threads, std::memory_order_relaxed);
    g_model_oversubscribes.store(num_threads > usable_cores(), std::memory_order_relaxed);
  }
  // nthreads-var is the calling thread's: it sizes the teams of its next calls into the shim, oneDNN's and
  // run_parts'. Up to this machine's cores, the model's largest team. Beyond them any team of ours either shrinks
  // libgomp's pool (ending threads the model's next region starts again) or oversubscribes the cores as the
  // model's own do, and both cost more than they save on short calls: oneDNN then runs on the calling thread and
  // run_parts on mpspack's own pool (team()), whose threads sleep between products.
  if (const unsigned team = g_model_team.load(std::memory_order_relaxed); team > 0) {
    const int wanted = model_oversubscribes() ? 1 : int(team);
    if (omp->max_threads() != wanted) omp->set_num_threads(wanted);
  }
  if (call_profile::enabled()) {  // the model's own loops, beside the shim's calls in the table
    call_profile::Scope timed("GOMP_parallel (the model's own OpenMP loops)");
    omp->parallel(fn, data, num_threads, flags);
    return;
  }
  omp->parallel(fn, data, num_threads, flags);
}

}  // namespace mpspack::shim
