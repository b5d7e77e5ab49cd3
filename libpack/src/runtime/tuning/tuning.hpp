// The runtime's tuning switches: every MPSPACK_* environment variable mpspack reads, in one struct read from the
// environment once, at the first tuning() call (thread-safe), and nowhere else. Most keep the alternative a default
// was measured against runnable (docs/CODING.md, rule 10); a few name a library on a machine laid out differently.
// docs/CLI.md's Environment section is the table of them, with each default and what it is for; the test "tuning:
// the switches the code reads are docs/CLI.md's table" (docs/tools/tuning_table.py) checks that every
// "MPSPACK_..." name in tuning.cpp is in the table and the other way round.
//
// Built into mpspack_shim, the lowest of the runtime's libraries: the shim, the loader, the backends and the CUDA
// plugin (which takes it from the executable that opens it) read the same values. The oneDNN plugin takes nothing
// from the executable; the shim passes it what it needs when it opens it (onednn_api.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace mpspack {

// How embedded weights are put back into the library's constants region before Create. Mapping is fastest to the
// first result, warm and cold, and needs the least memory; memcpy is the comparison, and what the loader does
// where the pages cannot be mapped. The other ways measured (memcpy after MADV_WILLNEED, pread, MAP_POPULATE) lost
// to mmap on every count (docs/PERFORMANCE.md, "Embedded weights: how they reach the constants region").
enum class EmbeddedWeights {
  Mmap,    // the container's pages mapped over the region (MAP_PRIVATE|MAP_FIXED), lazily
  Memcpy,  // memcpy from the container's mapping
};
const char* to_string(EmbeddedWeights e);

// When the page tables of CPU weights used from the container's pages are filled (MADV_POPULATE_READ).
enum class PopulateWeights {
  Off,         // by the first run's faults
  AtLoad,      // before load() returns
  Background,  // on a thread of the model's own while it runs
};
const char* to_string(PopulateWeights p);

struct Tuning {
  // --- The loader (docs/PERFORMANCE.md, "Embedded weights" and "Weights without a copy").
  EmbeddedWeights embedded_weights = EmbeddedWeights::Mmap;  // MPSPACK_EMBEDDED_WEIGHTS
  // MPSPACK_LARGE_BLOCKS=libc turns off: for a library with 32 MiB of constants or more, its mallocs of 32 MiB or
  // more get memory faulted in up front by several threads, and its copies that large run on the same threads
  // (large_blocks.hpp); off leaves every allocation and copy to the C library.
  bool large_blocks = true;
  // MPSPACK_MAP_WEIGHTS_MIN_BYTES: on the CPU, weights of this many bytes or more (embedded, or an external blob
  // without a constants table) reach the model as the weights segment mapped from the container instead of
  // through Create's copy; on a GPU, from the same size, the library's own copies of them to the device are made
  // by the backend's upload pipeline. Both need large_blocks. Below it, finding the library's malloc costs more
  // than the copy saves.
  uint64_t map_weights_min_bytes = uint64_t(1) << 20;
  // MPSPACK_POPULATE_WEIGHTS: for CPU weights used from the container's pages (mapped block, or in place). Off by
  // default: where the first run's faults are cheap (the device machine), filling the tables first costs more
  // than it saves ("The first run's page faults").
  PopulateWeights populate_weights = PopulateWeights::Off;
  // MPSPACK_MODEL_TEAMS=0: the shim's and oneDNN's OpenMP teams are not routed to follow the model's own
  // (docs/PERFORMANCE.md, "CPU: the model's OpenMP teams").
  bool model_teams = true;
  // MPSPACK_CPU_PREFAULT=threads: external CPU weights' page tables filled by one thread per core before the
  // first run, instead of by its faults.
  bool cpu_prefault_threads = false;

  // --- The CPU shim: each empty by default, which picks by the rule its file states; another value forces one
  // way, for comparisons (docs/CLI.md lists the values).
  std::string cpu_conv;       // MPSPACK_CPU_CONV
  std::string cpu_gemm;       // MPSPACK_CPU_GEMM
  std::string cpu_gemv;       // MPSPACK_CPU_GEMV
  std::string cpu_int8mm;     // MPSPACK_CPU_INT8MM
  std::string cpu_int4mm;     // MPSPACK_CPU_INT4MM
  bool profile_shim = false;  // MPSPACK_PROFILE_SHIM: a table of the shim's calls at exit
  // MPSPACK_CPU_PACK_WEIGHTS (on by default): oneDNN keeps a model parameter's weight packed in its own layout
  // (products and convolutions), shim/constant_memory.hpp; off reorders it at every call (for comparisons).
  bool cpu_pack_weights = true;
  // MPSPACK_CPU_BLOCK_CACHE (on by default): freed CPU storages of 64 KiB or more are kept for the next allocation of
  // their size class (shim/cpu_block_cache.hpp); off frees every one to the C library.
  bool cpu_block_cache = true;
  // MPSPACK_CPU_ATTENTION (pairs by default): bf16 attention multiplies bf16 pairs where the CPU has AVX-512 BF16
  // (shim/attention.cpp, pairs_route); widen multiplies its operands widened to float32 (for comparisons).
  bool cpu_attention_pairs = true;
  // MPSPACK_CPU_BMM (threads by default): a float batch of products each too small to split well goes over the
  // threads at once (shim/matmul.cpp, batch_over_threads); one runs them one product after another (for comparisons).
  bool cpu_bmm_threads = true;
  // MPSPACK_CPU_ATTENTION_ROWS: float32 and bf16 attention's query rows per block, for comparisons; 0 (the default)
  // picks them by the makespan rule of shim/attention.cpp (rows_per_block_f32).
  uint64_t cpu_attention_rows = 0;

  // --- CUDA: the libraries opened at first use (empty: the usual names), convolutions, attention, and the shape of
  // the weight upload (docs/PERFORMANCE.md, "GPU").
  std::string cublas;                                  // MPSPACK_CUBLAS
  std::string cudnn;                                   // MPSPACK_CUDNN
  bool cudnn_tf32 = true;                              // MPSPACK_CUDNN_TF32=0: no TF32 (see tf32_convolutions())
  std::string cuda_attention;                          // MPSPACK_CUDA_ATTENTION: empty, fused or blocked
  std::string cuda_gemm;                               // MPSPACK_CUDA_GEMM: empty or gemv, batched, plain
  int64_t attention_score_bytes = int64_t(256) << 20;  // MPSPACK_ATTENTION_SCORE_BYTES
  bool open_libraries_early = true;                    // MPSPACK_OPEN_LIBRARIES_EARLY
  std::string upload_mode = "pread-thp";               // MPSPACK_UPLOAD_MODE
  uint64_t upload_chunk_mib = 2;                       // MPSPACK_UPLOAD_CHUNK_MIB
  uint64_t upload_threads = 0;    // MPSPACK_UPLOAD_THREADS; 0: as many as the upload's size calls for
  bool upload_pin_early = true;   // MPSPACK_UPLOAD_PIN_EARLY=0: staging pinned when the upload starts
  bool upload_read_ahead = true;  // MPSPACK_UPLOAD_READ_AHEAD=0: nothing read before the upload starts
};

// The switches in force: the environment's, read at the first call, or a ScopedTuning's while one lives.
const Tuning& tuning();

// The switches as `lookup` (getenv, or a test's map) gives them. A value that is not one of a switch's own gets
// one line on stderr and leaves the default.
Tuning read_tuning(const char* (*lookup)(const char* name));

// For tests and benchmarks that compare ways inside one process: `values` are in force until the object is
// destroyed. Set and destroyed while no other thread reads them.
class ScopedTuning {
 public:
  explicit ScopedTuning(const Tuning& values);
  ~ScopedTuning();
  ScopedTuning(const ScopedTuning&) = delete;
  ScopedTuning& operator=(const ScopedTuning&) = delete;

 private:
  Tuning values_;
  const Tuning* previous_;
};

// Whether float32 convolutions on a GPU may use TF32: yes, as torch's default, unless MPSPACK_CUDNN_TF32=0 or
// turn_off_tf32_convolutions() (run --no-tf32, the C API's tf32_convolutions = 0: process-wide, as torch's flag).
bool tf32_convolutions();
void turn_off_tf32_convolutions();

}  // namespace mpspack
