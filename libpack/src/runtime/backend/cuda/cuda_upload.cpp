#include "cuda_upload.hpp"

#include "mpspack/fd_io.hpp"
#include "runtime/tuning/tuning.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace mpspack::runtime::cuda_upload {
namespace {

using Kind = Error::Kind;
using Clock = std::chrono::steady_clock;
using cuda_copies::Piece;

// The most readers a long window gets below 96 MiB (16 x 2 x 2 MiB: 64 MiB of staging, read ahead).
constexpr uint64_t kMaxWholeReaders = 16;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// How an upload of `bytes` runs: chunk size, reader threads, staging kind. The MPSPACK_UPLOAD_* switches (Tuning)
// exist for measuring the pipeline's shape. MPSPACK_UPLOAD_MODE (the ways measured against each other in
// docs/PERFORMANCE.md, "CUDA weight upload"): "pread-thp" (default) reads into anonymous memory
// on transparent huge pages pinned with cudaHostRegister (pinning costs per page, so huge pages pin fastest);
// "pread" into buffers from cudaHostAlloc; "register" pins the container's own pages chunk by chunk instead of
// reading them (slowest).
struct Shape {
  uint64_t chunk = 0;
  unsigned workers = 0;
  std::string mode;
  bool register_pages = false, huge_pages = false;
};

Shape shape_for(uint64_t bytes, Window window) {
  Shape s;
  const Tuning& t = tuning();
  s.chunk = t.upload_chunk_mib << 20;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const uint64_t chunks = (bytes + s.chunk - 1) / s.chunk;
  // Twelve readers keep up with the bus. Below 48 chunks, fewer: every reader's staging is pinned before the upload,
  // one registration at a time in the driver, and pinning that has not ended when the upload starts holds it up
  // (docs/PERFORMANCE.md, "GPU"). With a long window there, up to 16, each holding two chunks read ahead.
  const uint64_t fitting = chunks >= 48             ? 12
                           : window == Window::Long ? std::min<uint64_t>((chunks + 1) / 2, kMaxWholeReaders)
                                                    : std::max<uint64_t>(chunks / 4, 1);
  const uint64_t readers = t.upload_threads > 0 ? t.upload_threads : fitting;
  s.workers = unsigned(std::min<uint64_t>({chunks, readers, hw}));
  s.mode = t.upload_mode;
  s.register_pages = s.mode == "register";
  s.huge_pages = s.mode == "pread-thp";
  return s;
}

// The pieces cut into chunk-sized jobs.
std::vector<Piece> cut(std::span<const Piece> pieces, uint64_t chunk) {
  std::vector<Piece> jobs;
  for (const Piece& p : pieces)
    for (uint64_t at = 0; at < p.len; at += chunk)
      jobs.push_back({p.dst + at, p.src + at, std::min(chunk, p.len - at)});
  return jobs;
}

// The reads expect() has the readers make ahead: reader w's slot k gets chunk k * workers + w of the segment, so
// the segment's first 2 x workers chunks are held when the upload starts.
struct AheadRead {
  unsigned reader, slot;
  uint64_t at, len;  // file offset, bytes
};

std::vector<AheadRead> reads_ahead(uint64_t bytes, uint64_t file_offset, const Shape& s) {
  std::vector<AheadRead> reads;
  for (unsigned k = 0; k < 2; ++k)
    for (unsigned w = 0; w < s.workers; ++w) {
      const uint64_t pos = (uint64_t(k) * s.workers + w) * s.chunk;
      if (pos < bytes) reads.push_back({w, k, file_offset + pos, std::min(s.chunk, bytes - pos)});
    }
  return reads;
}

Error cuda_error(std::string_view what, cudaError_t e) {
  return make_error(Kind::Runtime, "{}: {}", what, cudaGetErrorString(e));
}

// One reader's pinned staging (two chunk-sized buffers), its stream and its buffers' events. Kept for the
// pipeline's lifetime: pinning is the costly part.
struct Staging {
  void* raw = nullptr;  // the mapping (huge-page aligned inside) or the cudaHostAlloc block
  uint64_t raw_len = 0;
  uint8_t* base = nullptr;
  uint64_t size = 0;
  bool mapped = false;
  cudaStream_t stream = nullptr;
  cudaEvent_t done[2] = {nullptr, nullptr};
  // What a slot holds from expect()'s read ahead (len 0: nothing), until the first upload ends; `queued`: its copy
  // was queued by the upload's own thread. `ahead_done`, under the pipeline's mutex: the reads ahead are over.
  struct Held {
    int fd = -1;
    uint64_t at = 0, len = 0;
    bool queued = false;
  } held[2];
  bool ahead_done = false;

  // The stream and events, made once (on the calling thread's current device).
  bool queue_ready() {
    if (!stream && cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) stream = nullptr;
    for (cudaEvent_t& e : done)
      if (!e && cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) e = nullptr;
    return stream && done[0] && done[1];
  }
  Status reserve(uint64_t bytes, bool huge_pages) {
    if (size >= bytes) return {};
    release();
    if (huge_pages) {
      constexpr uint64_t huge = 2ull << 20;
      raw_len = bytes + huge;
      raw = ::mmap(nullptr, raw_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (raw == MAP_FAILED) {
        raw = nullptr;
        return make_error(Kind::Io, "staging memory for the weight upload: {}", std::strerror(errno));
      }
      mapped = true;
      base = reinterpret_cast<uint8_t*>((uint64_t(raw) + huge - 1) / huge * huge);
      ::madvise(base, bytes, MADV_HUGEPAGE);
      std::memset(base, 0, bytes);  // fault the (huge) pages in before pinning them
      if (auto e = cudaHostRegister(base, bytes, cudaHostRegisterDefault); e != cudaSuccess) {
        release();
        return cuda_error("pinning the staging buffers of the weight upload", e);
      }
    } else {
      if (auto e = cudaHostAlloc(&raw, bytes, cudaHostAllocDefault); e != cudaSuccess) {
        raw = nullptr;
        return cuda_error("pinned staging buffers for the weight upload", e);
      }
      base = static_cast<uint8_t*>(raw);
    }
    size = bytes;
    return {};
  }
  void release() {
    if (raw && mapped) {
      if (size) cudaHostUnregister(base);
      ::munmap(raw, raw_len);
    } else if (raw) {
      cudaFreeHost(raw);
    }
    raw = nullptr, base = nullptr, size = 0, mapped = false;
  }
  ~Staging() {
    release();
    for (cudaEvent_t e : done)
      if (e) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
  }
};

// Per reader: when it started and queued its first copy (from the upload's start), what it spent its time on, how
// many of its chunks it had read ahead.
struct LaneTimes {
  double start_ms = 0, first_copy_ms = 0, read_ms = 0, wait_ms = 0, pin_ms = 0;
  unsigned held = 0;
};

}  // namespace

struct Pipeline::Impl {
  int device;
  struct Reader {
    Staging staging;
    std::thread thread;
  };
  std::vector<std::unique_ptr<Reader>> readers;

  // One upload at a time: `round` counts them; readers [0, lanes) run `lane` in it; `running` of them are not done.
  std::mutex mutex;
  std::condition_variable wake, finished;
  uint64_t round = 0;
  unsigned lanes = 0, running = 0;
  std::function<void(unsigned, Staging&)> lane;
  bool quit = false;
  // expect()'s reads ahead, which the readers it started make before their first round, from file `ahead_fd`,
  // and the shape it chose, which the next upload keeps (its readers hold the chunks that shape assigned them).
  std::vector<AheadRead> ahead;
  int ahead_fd = -1;
  std::optional<Shape> expected;

  explicit Impl(int d) : device(d) {}
  ~Impl() {
    {
      std::lock_guard lock(mutex);
      quit = true;
    }
    wake.notify_all();
    for (auto& r : readers) r->thread.join();
  }

  // Reader w's thread: its stream and pinned staging first (a failure here is met again, and reported, by its
  // lane), its reads ahead, then each round it is part of.
  void serve(unsigned w, Staging& staging, const Shape& shape, int fd, const std::vector<AheadRead>& reads) {
    cudaSetDevice(device);
    (void)staging.queue_ready();
    if (!shape.register_pages && staging.reserve(2 * shape.chunk, shape.huge_pages).ok())
      for (const AheadRead& r : reads) {
        uint64_t got = 0;
        if (r.reader == w && pread_exact(fd, staging.base + r.slot * shape.chunk, r.len, r.at, got) && got == r.len)
          staging.held[r.slot] = {fd, r.at, r.len};
      }
    uint64_t seen = 0;
    std::unique_lock lock(mutex);
    staging.ahead_done = true;
    for (;;) {
      wake.wait(lock, [&] { return quit || round != seen; });
      if (quit) return;
      seen = round;
      if (w < lanes) {
        lock.unlock();
        lane(w, staging);
        lock.lock();
        if (--running == 0) finished.notify_all();
      }
      staging.held[0] = staging.held[1] = {};
    }
  }

  // Starts readers up to shape.workers; the new ones make their `reads` from `fd` (-1: none).
  void grow(const Shape& shape, int fd = -1, const std::vector<AheadRead>& reads = {}) {
    while (readers.size() < shape.workers) {
      auto r = std::make_unique<Reader>();
      const unsigned w = unsigned(readers.size());
      Staging& staging = r->staging;
      r->thread = std::thread([this, w, &staging, shape, fd, reads] { serve(w, staging, shape, fd, reads); });
      readers.push_back(std::move(r));
    }
  }

  // Runs `body` on readers [0, n) and waits for all of them.
  void run_round(unsigned n, std::function<void(unsigned, Staging&)> body) {
    std::unique_lock lock(mutex);
    lane = std::move(body);
    lanes = n, running = n;
    ++round;
    wake.notify_all();
    finished.wait(lock, [&] { return running == 0; });
    lane = nullptr;
  }

  Status upload(std::span<const Piece> pieces, const uint8_t* host, int fd, uint64_t file_offset);
};

// Long: one upload; its lanes share the jobs, their claims, the stop flag, the first failure and the timings.
Status Pipeline::Impl::upload(std::span<const Piece> pieces, const uint8_t* host, int fd, uint64_t file_offset) {
  uint64_t total = 0;
  for (const Piece& p : pieces) total += p.len;
  if (total == 0) return {};
  const Shape shape = expected ? *expected : shape_for(total, Window::Short);
  expected.reset();
  const uint64_t chunk = shape.chunk;
  const std::vector<Piece> jobs = cut(pieces, chunk);
  const unsigned workers = unsigned(std::min<uint64_t>(jobs.size(), shape.workers));
  grow(shape);
  // The jobs by file offset, for the readers to find what they read ahead. The queue lists the jobs nobody was to
  // read ahead first: a reader comes to one that another read ahead only when that one is late, and reads it
  // itself (whoever claims a job first makes its copy).
  std::unordered_map<uint64_t, uint64_t> by_offset;
  if (fd >= 0)
    for (uint64_t j = 0; j < jobs.size(); ++j) by_offset.emplace(file_offset + jobs[j].src, j);
  auto job_at = [&](uint64_t at, uint64_t len) -> std::optional<uint64_t> {
    const auto it = by_offset.find(at);
    if (it == by_offset.end() || jobs[it->second].len != len) return std::nullopt;
    return it->second;
  };
  std::vector<bool> ahead_job(jobs.size(), false);
  if (fd == ahead_fd)
    for (const AheadRead& r : ahead)
      if (auto j = job_at(r.at, r.len)) ahead_job[*j] = true;
  std::vector<uint64_t> queue;
  for (bool late : {false, true})
    for (uint64_t j = 0; j < jobs.size(); ++j)
      if (ahead_job[j] == late) queue.push_back(j);
  const auto claimed = std::make_unique<std::atomic<bool>[]>(jobs.size());
  std::atomic<uint64_t> next{0};  // the queue's next job: readers take the next one as they become free
  std::mutex fail_mutex;
  std::string failure;
  auto fail = [&](std::string why) {
    std::lock_guard lock(fail_mutex);
    if (failure.empty()) failure = std::move(why);
  };
  std::atomic<bool> stop{false};
  std::vector<LaneTimes> times(workers);
  const auto t0 = Clock::now();
  // The chunks readers already hold are queued from here, before the readers are woken: sixteen threads take
  // 0.2 ms to wake, and a reader awake early would read again a chunk whose holder is not yet.
  auto queue_copy = [&](Staging& staging, uint64_t c, const uint8_t* src, int slot, LaneTimes& tm) {
    if (cudaMemcpyAsync(jobs[c].dst, src, jobs[c].len, cudaMemcpyHostToDevice, staging.stream) != cudaSuccess ||
        cudaEventRecord(staging.done[slot], staging.stream) != cudaSuccess) {
      fail("queueing the weight upload to the GPU failed");
      return false;
    }
    if (tm.first_copy_ms == 0) tm.first_copy_ms = ms_between(t0, Clock::now());
    return true;
  };
  // The copy of what `slot` of `staging` read ahead: nullopt when it holds no job of this upload or another reader
  // claimed it first, else whether it was queued.
  auto queue_held = [&](Staging& staging, int slot, LaneTimes& tm) -> std::optional<bool> {
    const Staging::Held& h = staging.held[slot];
    if (h.len == 0 || h.fd != fd) return std::nullopt;
    const auto c = job_at(h.at, h.len);
    if (!c || claimed[*c].exchange(true)) return std::nullopt;
    return queue_copy(staging, *c, staging.base + uint64_t(slot) * chunk, slot, tm);
  };
  if (fd >= 0) {
    std::lock_guard lock(mutex);
    for (unsigned w = 0; w < workers; ++w) {
      Staging& staging = readers[w]->staging;
      if (!staging.ahead_done || !staging.stream || !staging.done[0] || !staging.done[1]) continue;
      for (int slot = 0; slot < 2; ++slot)
        if (const auto queued = queue_held(staging, slot, times[w])) staging.held[slot].queued = *queued;
    }
  }
  run_round(workers, [&](unsigned w, Staging& staging) {
    LaneTimes& tm = times[w];
    auto t = Clock::now();
    tm.start_ms = ms_between(t0, t);
    bool ok = staging.queue_ready();
    if (!ok) fail("could not create the streams and events of the weight upload");
    if (ok && !shape.register_pages) {  // already pinned by the reader's start, unless that failed
      if (Status st = staging.reserve(2 * chunk, shape.huge_pages); !st.ok()) {
        fail(st.error().message);
        ok = false;
      }
      tm.pin_ms += ms_between(t, Clock::now());
    }
    cudaStream_t s = staging.stream;
    auto copy = [&](uint64_t c, const uint8_t* src, int slot) { return queue_copy(staging, c, src, slot, tm); };
    int k = 0;  // the slot the next read goes to: the one whose copy was queued first
    // What this reader read ahead, copied first (unless the upload's thread queued it already).
    for (int slot = 0; ok && fd >= 0 && slot < 2; ++slot) {
      if (!staging.held[slot].queued) {
        const auto queued = queue_held(staging, slot, tm);
        if (!queued) continue;
        ok = *queued;
      }
      ++tm.held;
      k = 1 - slot;
    }
    void* pinned[2] = {nullptr, nullptr};  // register mode: the range pinned for each slot
    for (uint64_t q = next++; ok && !stop && q < queue.size(); q = next++) {
      const uint64_t c = queue[q];
      if (claimed[c].exchange(true)) continue;
      const uint64_t off = jobs[c].src, len = jobs[c].len;
      // The slot's previous copy must have left it before it is refilled.
      t = Clock::now();
      if (cudaEventSynchronize(staging.done[k]) != cudaSuccess) {
        fail("the weight upload to the GPU failed");
        break;
      }
      tm.wait_ms += ms_between(t, Clock::now());
      const uint8_t* src = nullptr;
      t = Clock::now();
      if (shape.register_pages) {
        if (pinned[k]) cudaHostUnregister(pinned[k]);
        pinned[k] = const_cast<uint8_t*>(host + off);
        if (cudaHostRegister(pinned[k], len, cudaHostRegisterReadOnly) != cudaSuccess) {
          pinned[k] = nullptr;
          fail("cudaHostRegister of the container's weights failed");
          break;
        }
        tm.pin_ms += ms_between(t, Clock::now());
        src = host + off;
      } else {
        uint8_t* dst = staging.base + uint64_t(k) * chunk;
        if (fd >= 0) {
          uint64_t got = 0;
          const bool read = pread_exact(fd, dst, len, file_offset + off, got);
          if (!read || got != len) {
            fail(fmt::format("reading the weights segment: {}", !read ? std::strerror(errno) : "unexpected end"));
            break;
          }
        } else {
          std::memcpy(dst, host + off, len);
        }
        tm.read_ms += ms_between(t, Clock::now());
        src = dst;
      }
      if (!copy(c, src, k)) break;
      k = 1 - k;
    }
    if (!failure.empty()) stop = true;
    t = Clock::now();
    if (s && cudaStreamSynchronize(s) != cudaSuccess) fail("the weight upload to the GPU failed");
    tm.wait_ms += ms_between(t, Clock::now());
    for (void* range : pinned)
      if (range) cudaHostUnregister(range);
  });
  ahead.clear();  // the readers forgot what they held when their lanes ended
  const double pipe_ms = ms_between(t0, Clock::now());
  LaneTimes sum;
  double last_start = 0, first_copy = pipe_ms;
  for (const LaneTimes& t : times) {
    sum.read_ms += t.read_ms, sum.wait_ms += t.wait_ms, sum.pin_ms += t.pin_ms, sum.held += t.held;
    last_start = std::max(last_start, t.start_ms);
    if (t.first_copy_ms > 0) first_copy = std::min(first_copy, t.first_copy_ms);
  }
  spdlog::info("weight upload: {} bytes, {} threads x 2 x {} MiB ({}): {} of {} chunks read ahead; pipeline {:.2f} "
               "ms, the last reader started at {:.2f} ms, the first copy queued at {:.2f} ms (per thread: pin {:.1f} "
               "ms, read {:.1f} ms, waiting for copies {:.1f} ms)",
               total, workers, chunk >> 20, shape.mode, sum.held, jobs.size(), pipe_ms, last_start, first_copy,
               sum.pin_ms / workers, sum.read_ms / workers, sum.wait_ms / workers);
  if (!failure.empty()) return make_error(Kind::Io, "{}", failure);
  return {};
}

Pipeline::Pipeline(int device) : impl_(std::make_unique<Impl>(device)) {}
Pipeline::~Pipeline() = default;

void Pipeline::expect(uint64_t bytes, int fd, uint64_t file_offset, Window window) {
  if (!tuning().upload_pin_early) return;  // pinned, and nothing read ahead, when the upload starts
  const Shape shape = shape_for(bytes, window);
  impl_->expected = shape;
  if (fd >= 0 && !shape.register_pages && tuning().upload_read_ahead) {
    impl_->ahead = reads_ahead(bytes, file_offset, shape);
    impl_->ahead_fd = fd;
  }
  impl_->grow(shape, impl_->ahead_fd, impl_->ahead);
}

Status Pipeline::upload(std::span<const Piece> pieces, const uint8_t* host, int fd, uint64_t file_offset) {
  return impl_->upload(pieces, host, fd, file_offset);
}

}  // namespace mpspack::runtime::cuda_upload
