// h2d_copies: how fast the copy engine takes host-to-device copies of pinned memory cut into pieces, against one
// copy of the whole (the "plain pinned copy" the weight upload is measured against, docs/PERFORMANCE.md). Device
// machine. No reading from files: only the copies, so the figures are the ceiling of any pipeline that stages
// pieces of that size.
//
// Each way copies `total` bytes into one device block:
//   whole         one cudaMemcpyAsync from a cudaHostAlloc buffer of `total` bytes (as copy_bandwidth in the backend)
//   C MiB x S     total / C copies of C MiB, copy c on stream c % S, from 2 x S staging slots of transparent huge
//                 pages pinned with cudaHostRegister (as the upload's readers stage them), each slot reused only
//                 after its previous copy's event
// The ways alternate in each round; the table gives each way's median GB/s and its share of the whole copy's,
// per round and overall. A second table times the pinning of the upload's staging (`readers` x 2 slots of 2 MiB):
//   per reader    each reader thread maps, faults in and registers its own 4 MiB, all at once (as the upload does)
//   one block     one thread maps, faults in and registers all of them as one block
//   cudaHostAlloc one cudaHostAlloc of the same size
//
//   h2d_copies [total_mib=1024] [rounds=5] [chunks_mib="1 2 4 8 16"] [streams="1 4 12"] [readers=12]
#include <cuda_runtime_api.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "h2d_copies: %s\n", what.c_str());
  std::exit(1);
}
void ok(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) die(std::string(what) + ": " + cudaGetErrorString(rc));
}

std::vector<uint64_t> numbers(const char* text) {
  std::vector<uint64_t> v;
  std::istringstream in(text);
  for (uint64_t x; in >> x;) v.push_back(x);
  return v;
}

// Staging slots on transparent huge pages, faulted in and pinned, as the upload's readers make theirs.
struct Staging {
  void* raw = nullptr;
  uint8_t* base = nullptr;
  size_t raw_len = 0, len = 0;
  explicit Staging(size_t bytes) : len(bytes) {
    constexpr size_t huge = 2u << 20;
    raw_len = bytes + huge;
    raw = ::mmap(nullptr, raw_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) die("mmap of the staging slots");
    base = reinterpret_cast<uint8_t*>((uintptr_t(raw) + huge - 1) / huge * huge);
    ::madvise(base, bytes, MADV_HUGEPAGE);
    std::memset(base, 1, bytes);
    ok(cudaHostRegister(base, bytes, cudaHostRegisterDefault), "cudaHostRegister");
  }
  ~Staging() {
    cudaHostUnregister(base);
    ::munmap(raw, raw_len);
  }
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One copy of the whole, timed by events (after a warm-up copy), as the backend's copy_bandwidth does.
double whole_copy_gbps(uint8_t* dev, const uint8_t* host, size_t total, cudaStream_t s) {
  cudaEvent_t a, b;
  ok(cudaEventCreate(&a), "cudaEventCreate");
  ok(cudaEventCreate(&b), "cudaEventCreate");
  ok(cudaMemcpyAsync(dev, host, total, cudaMemcpyHostToDevice, s), "warm-up copy");
  ok(cudaEventRecord(a, s), "cudaEventRecord");
  ok(cudaMemcpyAsync(dev, host, total, cudaMemcpyHostToDevice, s), "copy");
  ok(cudaEventRecord(b, s), "cudaEventRecord");
  ok(cudaEventSynchronize(b), "copy");
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return double(total) / (double(ms) * 1e6);
}

// total / chunk copies over `n_streams` streams from 2 slots per stream, host clock from the first copy queued to
// the last one done.
double chunked_gbps(uint8_t* dev, const Staging& staging, size_t total, size_t chunk,
                    const std::vector<cudaStream_t>& streams, std::vector<cudaEvent_t>& slot_done) {
  const size_t n_streams = streams.size(), slots = 2 * n_streams;
  const auto t0 = Clock::now();
  for (size_t c = 0, copies = total / chunk; c < copies; ++c) {
    const size_t slot = c % slots;
    cudaStream_t s = streams[c % n_streams];
    ok(cudaEventSynchronize(slot_done[slot]), "waiting for a slot");
    ok(cudaMemcpyAsync(dev + c * chunk, staging.base + slot * chunk, chunk, cudaMemcpyHostToDevice, s), "copy");
    ok(cudaEventRecord(slot_done[slot], s), "cudaEventRecord");
  }
  ok(cudaDeviceSynchronize(), "copies");
  return double(total) / (seconds_since(t0) * 1e9);
}

// Milliseconds to make `readers` x 4 MiB of pinned staging one way (0: per reader, 1: one block, 2: cudaHostAlloc).
double pin_ms(int way, unsigned readers) {
  static constexpr size_t per_reader = 4u << 20;
  const auto t0 = Clock::now();
  if (way == 0) {
    std::vector<std::unique_ptr<Staging>> slots(readers);
    std::vector<std::thread> threads;
    for (unsigned r = 0; r < readers; ++r)
      threads.emplace_back([&slots, r] { slots[r] = std::make_unique<Staging>(per_reader); });
    for (auto& t : threads) t.join();
    const double ms = seconds_since(t0) * 1e3;
    return ms;
  }
  if (way == 1) {
    Staging block(readers * per_reader);
    return seconds_since(t0) * 1e3;
  }
  void* p = nullptr;
  ok(cudaHostAlloc(&p, readers * per_reader, cudaHostAllocDefault), "cudaHostAlloc");
  const double ms = seconds_since(t0) * 1e3;
  cudaFreeHost(p);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t total = size_t(argc > 1 ? std::atoll(argv[1]) : 1024) << 20;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::vector<uint64_t> chunks = numbers(argc > 3 ? argv[3] : "1 2 4 8 16");
  const std::vector<uint64_t> stream_counts = numbers(argc > 4 ? argv[4] : "1 4 12");
  const unsigned readers = unsigned(argc > 5 ? std::atoi(argv[5]) : 12);
  if (total == 0 || rounds < 1 || chunks.empty() || stream_counts.empty()) die("bad arguments");
  const uint64_t max_chunk = *std::max_element(chunks.begin(), chunks.end()) << 20;
  const uint64_t max_streams = *std::max_element(stream_counts.begin(), stream_counts.end());
  for (uint64_t c : chunks)
    if (c == 0 || total % (c << 20) != 0) die("every chunk size must divide the total");

  uint8_t* dev = nullptr;
  ok(cudaMalloc(reinterpret_cast<void**>(&dev), total), "cudaMalloc");
  void* whole_host = nullptr;
  ok(cudaHostAlloc(&whole_host, total, cudaHostAllocDefault), "cudaHostAlloc");
  std::memset(whole_host, 1, total);
  Staging staging(2 * max_streams * max_chunk);
  std::vector<cudaStream_t> all_streams(max_streams);
  for (auto& s : all_streams) ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  std::vector<cudaEvent_t> slot_done(2 * max_streams);
  for (auto& e : slot_done) ok(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");

  struct Way {
    std::string name;
    uint64_t chunk = 0, streams = 0;  // 0: the whole copy
    std::vector<double> gbps;
  };
  std::vector<Way> ways{{"whole (cudaHostAlloc)", 0, 0, {}}};
  for (uint64_t c : chunks)
    for (uint64_t s : stream_counts)
      ways.push_back({std::to_string(c) + " MiB x " + std::to_string(s), c << 20, s, {}});

  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("device: %s; %zu MiB per copy run; %d rounds, ways alternating; GB/s (share of the whole copy's, same "
              "round)\n\n",
              prop.name, total >> 20, rounds);
  std::vector<std::vector<double>> share(ways.size());
  for (int r = 0; r < rounds; ++r) {
    std::vector<size_t> order(ways.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = r % 2 == 0 ? i : order.size() - 1 - i;
    std::vector<double> got(ways.size());
    for (size_t i : order) {
      const Way& w = ways[i];
      if (w.chunk == 0) {
        got[i] = whole_copy_gbps(dev, static_cast<uint8_t*>(whole_host), total, all_streams[0]);
      } else {
        const std::vector<cudaStream_t> streams(all_streams.begin(), all_streams.begin() + long(w.streams));
        got[i] = chunked_gbps(dev, staging, total, w.chunk, streams, slot_done);
      }
    }
    for (size_t i = 0; i < ways.size(); ++i) {
      ways[i].gbps.push_back(got[i]);
      share[i].push_back(got[i] / got[0]);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  std::printf("| way | GB/s, median | share of the whole copy, median | each round |\n|---|---|---|---|\n");
  for (size_t i = 0; i < ways.size(); ++i) {
    std::string each;
    for (size_t r = 0; r < ways[i].gbps.size(); ++r)
      each += (r ? ", " : "") + std::to_string(int(ways[i].gbps[r] * 10 + 0.5) / 10.0).substr(0, 4) + " (" +
              std::to_string(int(share[i][r] * 100 + 0.5)) + "%)";
    std::printf("| %s | %.1f | %.0f%% | %s |\n", ways[i].name.c_str(), median(ways[i].gbps), 100 * median(share[i]),
                each.c_str());
  }
  const char* pin_ways[] = {"per reader (threads)", "one block", "cudaHostAlloc"};
  std::vector<double> pins[3];
  for (int r = 0; r < rounds; ++r)
    for (int k = 0; k < 3; ++k) {
      const int way = r % 2 == 0 ? k : 2 - k;
      pins[way].push_back(pin_ms(way, readers));
    }
  std::printf("\nPinning %u readers' staging (%u x 2 x 2 MiB), ms; ways alternating\n\n| way | median | each round |\n"
              "|---|---|---|\n",
              readers, readers);
  for (int k = 0; k < 3; ++k) {
    std::string each;
    for (size_t r = 0; r < pins[k].size(); ++r) each += (r ? ", " : "") + std::to_string(pins[k][r]).substr(0, 5);
    std::printf("| %s | %.2f | %s |\n", pin_ways[k], median(pins[k]), each.c_str());
  }
  cudaFreeHost(whole_host);
  cudaFree(dev);
  return 0;
}
