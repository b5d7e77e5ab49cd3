// Running a stored model library without libtorch: the loader.
//
//   Model::load(container, library, options)
//     hashes  -> the library segment and its cubins checked against the container's hashes (always); the weights
//                segment checked on every core beside the steps below (LoadOptions::verify_weights)
//     refuse  -> device not this backend's, machine not this host's, imports the shim lacks, libtorch NEEDED
//     memory  -> the stored library into a memfd, dlopen("/proc/self/fd/N", RTLD_NOW | RTLD_LOCAL)
//     weights -> by flavour (embedded: the container's pages mapped at base + region.start_vaddr
//                (or copied there) before Create, and on the CPU Create's block for them offered as
//                the segment mapped from the container;
//                external blob: tensors over the container's mapping, no copy; without a constants
//                table UpdateConstantsFromBlob with its block offered the same way; a copy with
//                copy_weights; mmap-self: its file in the memfd with a hole for the weights, its mapping
//                of them answered with the segment mapped from the container, and on the CPU Create's block
//                for them offered the same way)
//     cubins  -> the library's stored kernel files written to a private temporary folder, removed with the model
//     Create  -> AOTInductorModelContainerCreateWithDevice(&h, 1, backend device, that folder or nullptr)
//   model.run(inputs) -> outputs (checked first: count, and dtype/shape when an example is recorded; returned
//                        only once the weights' check passed: a damaged segment is run()'s error)
//
// Every phase is timed (timings()). The container must outlive the Model: external-blob weights
// are used in place from its mapping.
#pragma once

#include "mpspack/format/container.hpp"
#include "mpspack/manifest.hpp"
#include "mpspack/result.hpp"
#include "mpspack/tensor_io.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mpspack::runtime {

// What a program using the loader chooses. How the weights reach the model beyond that (mapped, faulted in up front,
// uploaded by mpspack) is the measured default; the MPSPACK_* environment variables that change it for
// measurements are docs/CLI.md's "Environment".
struct LoadOptions {
  // Check the weights segment against its recorded hashes (chunked over every core, beside the load and the first
  // run); run() then returns its outputs only once the check passed, and a damaged segment is its error. The
  // library segment and its kernel files are always checked, before they are written to memory: false skips
  // only the weights.
  bool verify_weights = true;
  // External blob: copy the weights into the model (AOTInductorModelUpdateConstantsFromBlob)
  // instead of handing it tensors that point into the container's mapping.
  bool copy_weights = false;
  // Which device of the library's kind runs it ("cuda:1" -> 1); the CPU has only 0.
  int32_t device_index = 0;
  // The library's aoti_torch_* imports bound to this process's shim by the loader (made weak in its copy before
  // dlopen, its GOT slots written after), not through the global scope: for the C API's shared library, which a
  // host may open RTLD_LOCAL, and in a process where torch put its own aoti_torch_* in the global scope.
  bool bind_shim_privately = false;
};

// What a device reports for --bench (zeros where it has nothing to say: the CPU).
struct DeviceFigures {
  std::string name;
  uint64_t memory_total = 0, memory_used = 0;         // the device's, now
  uint64_t pool_peak = 0;                             // most bytes the shim's memory pool held at once
  double h2d_pinned_gbps = 0, h2d_pageable_gbps = 0;  // a plain copy of copy_bytes, for comparison
};

// How the weights reached the model.
enum class WeightsMode {
  None,              // the library has no constants
  EmbeddedCopied,    // put back into the library's constants region; Create copied them
  EmbeddedMapped,    // Create's block for them is the weights segment mapped from the container (no copy)
  BlobInPlace,       // external blob: tensors over the container's mapping (no copy)
  EmbeddedUploaded,  // GPU: Create's copies of them to the device made by mpspack's upload pipeline instead
  BlobUploaded,      // external blob: uploaded by mpspack into the GPU memory the model reads them from
  BlobCopied,        // external blob: AOTInductorModelUpdateConstantsFromBlob (one copy)
  BlobMapped,        // external blob: UpdateConstantsFromBlob's block is the segment mapped from the container
  MmapSelf,          // the self-mapped file rebuilt in memory; the library maps its weights itself
  MmapSelfMapped,    // the library's mapping of its weights, and the block Create copies them into, are the
                     // segment mapped from the container (no copy)
  MmapSelfCopied,    // its mapping of them is the segment mapped from the container; Create copied them out of it
  MmapSelfUploaded,  // GPU: its copies of them to the device made by mpspack's upload pipeline instead
};
const char* to_string(WeightsMode m);

// Milliseconds spent in each phase of load() and in the first run().
struct PhaseTimings {
  double open_ms = 0;         // Container::open (only when load() opened it)
  double checks_ms = 0;       // device / machine / imports checks
  double library_ms = 0;      // library segment -> memfd -> dlopen
  double weights_ms = 0;      // weights ready for Create (embedded copy, mmap-self file)
  double create_ms = 0;       // AOTInductorModelContainerCreateWithDevice
  double constants_ms = 0;    // external blob: user-managed tensors or the blob copy (upload included)
  uint64_t upload_bytes = 0;  // external blob on a GPU: bytes mpspack uploaded itself
  double upload_ms = 0;       // ... and the time that took (part of constants_ms)
  double first_run_ms = -1;   // the first run(), -1 until it happened (waiting for the weights' check included)
  double verify_ms = -1;      // the weights' hash check, run beside the load and the first run; -1: not checked
  double verify_wait_ms = 0;  // the part of first_run_ms spent waiting for that check to finish
};

// A constant as the model holds it after loading (read through ExtractConstantsMap).
struct LiveConstant {
  std::string name;  // the key the model returned (AOTInductor uses the original FQN)
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  int64_t storage_offset = 0;
  const void* data = nullptr;  // first element
  uint64_t storage_bytes = 0;
};

// An input in memory its caller keeps, which a run only reads: host memory, or (on_device) memory of the model's
// device. Dense, row-major.
struct InputView {
  int32_t dtype = dtype::float32;
  std::span<const int64_t> shape;
  const void* data = nullptr;
  uint64_t nbytes = 0;
  bool on_device = false;
};

// An output left where the model put it: a dense tensor of the shim in the model's device memory (host memory on
// the CPU). Owned by whoever holds it until release_device_output(); the model must outlive it.
struct DeviceOutput {
  void* tensor = nullptr;  // the shim's tensor handle (AtenTensorHandle)
  int32_t dtype = dtype::float32;
  std::vector<int64_t> shape;
  void* data = nullptr;  // its first element
  uint64_t nbytes = 0;
};
void release_device_output(DeviceOutput& output);

// The host machine name as the container writes it ("x86_64", "aarch64").
std::string_view host_machine();

// The OpenBLAS kernel set the CPU shim's matrix products run on ("SkylakeX", "Haswell", ...), for benchmark
// reports: OpenBLAS picks its kernels at start-up (shim/blas.hpp).
std::string_view cpu_blas_kernels();

// The shim functions (aoti_torch_*, Sleef_*) `lib` imports that this mpspack's shim does not
// provide, sorted. Device runtime imports (cuda*, cu*) are a backend's business and not listed.
std::vector<std::string> missing_shim_imports(const LibraryInfo& lib);

// The library a user means by NAME or INDEX. "" means the only one: a container holding several is refused,
// with their names, so that the user chooses.
Result<uint32_t> find_library(const format::Container& c, std::string_view name_or_index);

class Model {
 public:
  static Result<Model> load(const format::Container& container, uint32_t library_index,
                            const LoadOptions& options = {});

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model();

  const LibraryInfo& library() const;
  size_t num_inputs() const;
  size_t num_outputs() const;
  // Dtypes and shapes of the inputs/outputs when the container records an example for this library.
  const std::optional<std::vector<TensorInfo>>& input_signature() const;
  const std::optional<std::vector<TensorInfo>>& output_signature() const;

  // What run() refuses before anything reaches the model: wrong count, and (when an example is
  // recorded) wrong dtype or shape. Errors name the input.
  Status check_inputs(std::span<const HostTensor> inputs) const;
  // Runs the model once. The inputs are copied to the backend (the model owns and frees those
  // copies); the outputs come back as host tensors. A model that fails prints its reason on
  // stderr and this returns Error "model reported an error (see above)".
  Result<std::vector<HostTensor>> run(std::span<const HostTensor> inputs);
  // The same checks and run on inputs the caller keeps (the C API's): memory of the model's device, and on the CPU
  // host memory at an address aligned for its dtype, is given to the model in place; other host memory is copied
  // to the device first.
  Status check_views(std::span<const InputView> inputs) const;
  Result<std::vector<HostTensor>> run_views(std::span<const InputView> inputs);
  // The same, the outputs left on the device (made dense there where the model returned a strided view), the
  // device's work finished when it returns.
  Result<std::vector<DeviceOutput>> run_views_on_device(std::span<const InputView> inputs);

  // For timing the model alone: prepare_inputs() copies the inputs to the device once; run_prepared() runs
  // the model on them (new handles on the same memory each time), waits for the device and drops the
  // outputs without copying them back. With `graph` (GPUs), the first call captures that run's device work
  // in a CUDA graph and every call replays it (nothing of the host side runs again).
  Status prepare_inputs(std::span<const HostTensor> inputs);
  Status run_prepared(bool graph = false);

  // The device's name and memory, and with copy_bytes > 0 the bandwidth of plain host-to-device copies.
  Result<DeviceFigures> device_figures(uint64_t copy_bytes) const;
  // "cpu", "cuda:0": where the model runs.
  std::string device() const;

  WeightsMode weights_mode() const;
  const PhaseTimings& timings() const;
  PhaseTimings& mutable_timings();  // lets a caller that opened the container record open_ms
  // The model's constants as it uses them (empty when the library cannot list them).
  Result<std::vector<LiveConstant>> constants() const;
  // The model's constant table as the C API tells it (name, fqn, dtype, type, size, from_folded,
  // blob offset = running sum of the non-folded sizes), with shape/stride/storage_offset filled in
  // from the loaded tensors (constants()). This is what a container's constants table holds.
  Result<std::vector<ConstantInfo>> constant_table() const;

  struct Impl;  // defined by the loader only

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mpspack::runtime
