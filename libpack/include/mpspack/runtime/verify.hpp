// Verifying a container's model on this machine, as a library call: what `mpspack run` does, without printing.
//
//   verify(options)
//     open       -> the container (timed: the report's open_ms)
//     library    -> the one options.library names
//     inputs     -> options.inputs, else generated from options.seed, else the recorded example's (whose outputs
//                   become the references); the expected files are checked to exist before the model runs
//     load       -> Model::load with options.load, on options.device
//     run        -> once, on the inputs
//     outputs    -> written to options.output_dir (when set)
//     references -> the expected files (a raw file takes the output's dtype and shape), or the example's
//     compare    -> each output against its reference, at the dtype's tolerance or options.rtol/atol
//     report     -> VerifyReport
//
// What stops verification comes back as the Result's error, the one line `mpspack run` prints (it names the
// options by their command-line names: "--input 1", "--expect"). Outputs that do not match are no error of
// verify(): the report says so, and verdict() turns that into one.
// Progress and timings are logged through spdlog; nothing is printed.
#pragma once

#include "mpspack/result.hpp"
#include "mpspack/runtime/model.hpp"
#include "mpspack/tensor_io.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mpspack::runtime {

struct VerifyOptions {
  std::string container;            // the .mpk file
  std::string library;              // NAME or INDEX; "" = the only one
  std::vector<std::string> inputs;  // FILE[:DTYPE:SHAPE], one per model input; none = the recorded example's
  // Instead of files: inputs of the recorded example's dtypes and shapes, each value drawn from this seed within
  // the range of that input's recorded values (so indices stay in range). No reference but the expects.
  std::optional<uint64_t> seed;
  std::vector<std::string> expects;  // FILE[:DTYPE:SHAPE], one per output; none = the example's (without inputs)
  std::optional<double> rtol;        // instead of the dtype's default tolerance (default_tolerance())
  std::optional<double> atol;
  std::string output_dir;  // where to write the outputs (output<i>.npy; bf16, which NumPy lacks, as raw .bin)
  std::string device;      // cpu, cuda or cuda:N; "" = the kind the library was compiled for, index 0
  LoadOptions load;        // its device_index is set from `device`
  // false: float32 convolutions on a GPU without TF32. The CUDA shim is a plugin that reads
  // MPSPACK_CUDNN_TF32 at its first convolution, so this sets that variable (to 0) for the process.
  bool tf32_convolutions = true;
  // Called with the container as soon as it is open, before anything of it is read into memory or loaded; an
  // error stops there. `run --key` checks the container's signature here, on the very mapping and descriptor the
  // loader then reads, not on a file that could be renamed over in between.
  std::function<Status(const format::Container&)> check_opened;
};

// What an output was compared with, and how it went.
struct OutputReference {
  std::string name;  // the expected file, or "the recorded example output<i>"
  Tolerance tolerance;
  Comparison comparison;
};

struct OutputCheck {
  size_t index = 0;
  HostTensor tensor;                         // what the model returned
  std::string written;                       // the file it was written to, "" when none
  std::optional<OutputReference> reference;  // absent: there was nothing to compare it with
};

struct VerifyReport {
  std::string container;
  std::string library;
  std::string inputs;            // "example", "files" (--input) or "seed" (generated)
  std::optional<uint64_t> seed;  // with generated inputs
  WeightsMode weights_mode = WeightsMode::None;
  PhaseTimings timings;  // open_ms included
  std::vector<OutputCheck> outputs;

  bool checked() const;  // some output had a reference
  bool ok() const;       // every output that had one matched it
  std::vector<size_t> mismatched() const;
};

Result<VerifyReport> verify(const VerifyOptions& options);

// The report as an error when an output did not match ("FILE: outputs 0, 2 do not match"), else ok.
Status verdict(const VerifyReport& report);

// The device index options.device ("cpu", "cuda", "cuda:N"; "" = 0) names for library `lib` of options.container:
// a library runs only on the kind of device it was compiled for, and the CPU has index 0 only (`run --device`).
Result<int32_t> device_index(const VerifyOptions& options, const LibraryInfo& lib);

// The milliseconds from opening the container to a model ready to run (the first run not included).
double load_total_ms(const PhaseTimings& t);

}  // namespace mpspack::runtime
