// Runs transfers on a few threads, each with its own HTTP session; the first error stops the rest.
#pragma once

#include "http.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

namespace mpspack::registry {

inline Status for_each_parallel(size_t count, unsigned threads,
                                const std::function<Status(HttpSession&, size_t)>& work) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::optional<Error> first_error;
  auto worker = [&] {
    HttpSession session;
    for (size_t i; !failed && (i = next++) < count;) {
      if (auto s = work(session, i); !s.ok()) {
        std::lock_guard lock(mutex);
        if (!first_error) first_error = s.error();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  const size_t extra = std::min<size_t>(std::max(1u, threads), count) - (count > 0 ? 1 : 0);
  for (size_t t = 0; t < extra; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (first_error) return *first_error;
  return {};
}

// Adds up bytes from several threads and reports the total.
class SharedProgress {
 public:
  SharedProgress(const std::function<void(uint64_t, uint64_t)>& report, uint64_t total)
      : report_(report), total_(total) {}
  void add(uint64_t n) {
    if (!report_) return;
    std::lock_guard lock(mutex_);
    done_ += n;
    report_(done_, total_);
  }

 private:
  const std::function<void(uint64_t, uint64_t)>& report_;
  uint64_t total_;
  uint64_t done_ = 0;
  std::mutex mutex_;
};

}  // namespace mpspack::registry
