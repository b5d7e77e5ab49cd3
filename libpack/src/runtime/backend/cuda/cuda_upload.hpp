// The weights' upload to the GPU: a crew of reader threads, each with its own pinned staging buffers and stream,
// that read the weights from the container file with pread() in chunks (2 MiB) and queue each chunk's copy to the
// device while reading the next. Reading with pread() avoids the page faults of touching the mapping (the slow part
// of AOTInductor's own path); pinned buffers let the copies run at the bus's speed; twelve readers keep up with it;
// small huge-page buffers keep the cost of pinning low (docs/PERFORMANCE.md, "GPU").
//
// The readers are threads that live as long as the pipeline: each pins its buffers and makes its stream when it
// starts (expect(), while the library loads), reads its first two chunks of the weights segment into them, then waits
// for the upload. The upload's own thread queues the copies of what they hold, then wakes them (rather than starting
// threads) for the rest: at 64 MiB the reads, not the copies, were most of the upload's time, and sixteen readers
// take 0.2-0.5 ms to wake.
#pragma once

#include "cuda_weight_copies.hpp"
#include "mpspack/result.hpp"

#include <cstdint>
#include <memory>
#include <span>

namespace mpspack::runtime::cuda_upload {

// How long the caller's work between expect() and the upload lasts: the library step alone (Short, about 6 ms at
// 64 MiB), or that and more (Long: the backend opens cuBLAS or cuDNN first, 50 ms or more), time enough to pin
// staging for every chunk of 64 MiB and read them all ahead.
enum class Window { Short, Long };

class Pipeline {
 public:
  explicit Pipeline(int device);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Starts the readers an upload of the weights segment (`bytes` of file `fd` at `file_offset`) will use: each, on
  // its own thread, pins its staging and reads the segment's chunks w and workers + w into it; the caller goes on.
  // How many readers, and so how much is read ahead, follows from `bytes` and `window`.
  void expect(uint64_t bytes, int fd, uint64_t file_offset, Window window);
  // Copies each piece [src, src + len) of the weights to its device address: read from file `fd` at
  // `file_offset` + src when fd >= 0 (unless a reader holds those bytes already), else from `host` + src. Returns
  // when every copy has landed.
  Status upload(std::span<const cuda_copies::Piece> pieces, const uint8_t* host, int fd, uint64_t file_offset);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mpspack::runtime::cuda_upload
