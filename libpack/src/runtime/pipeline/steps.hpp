// The steps verify() and bench() share, each over one Context, in the order they run (verify.hpp).
#pragma once

#include "mpspack/format/container.hpp"
#include "mpspack/runtime/model.hpp"
#include "mpspack/runtime/verify.hpp"
#include "mpspack/tensor_io.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mpspack::runtime::pipeline {

// What the steps know so far. The model points into the container, so a Context is never moved or copied,
// and the model is declared after the container to be destroyed first.
struct Context {
  explicit Context(const VerifyOptions& o) : options(o) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const VerifyOptions& options;
  std::optional<format::Container> container;
  double open_ms = 0;
  uint32_t library_index = 0;
  std::string library_name;
  const ExampleInfo* example = nullptr;  // the container's recorded example of that library, if any
  std::vector<HostTensor> inputs;
  std::vector<TensorSpec> expect_specs;
  std::vector<HostTensor> expected;          // the references, in output order
  std::vector<std::string> reference_names;  // where each came from
  std::optional<Model> model;
  std::vector<OutputCheck> outputs;  // the last run's
};

// A recorded tensor (an example's input or output) copied out of the container, once its segment's hash checked.
Result<HostTensor> from_segment(const format::Container& c, const TensorInfo& info);

// The dtype and shape recorded for tensor i of an example's inputs or outputs, if `infos` has one.
std::optional<TensorHint> recorded_hint(const std::vector<TensorInfo>* infos, size_t i);

// open: the container, timed.
Status open_container(Context& ctx);
// library: the one options.library names, and its recorded example.
Status pick_library(Context& ctx);
// inputs: --input files, else generated from the seed, else the recorded example's (with its outputs as
// references when `with_references`).
Status gather_inputs(Context& ctx, bool with_references);
// inputs, with options.seed: generated (generated_inputs.cpp); no references.
Status generate_inputs(Context& ctx);
// Where the inputs come from, as the reports name it: "files", "seed" or "example".
std::string inputs_source(const VerifyOptions& o);
// Every expected file named exists and is a regular file, before the model is loaded.
Status check_expect_files(Context& ctx);
// load: the options' LoadOptions on the device options.device names.
Status load_model(Context& ctx);
// run: once on the inputs; the outputs become ctx.outputs.
Status run_model(Context& ctx);
// outputs: written to options.output_dir, when set.
Status write_outputs(Context& ctx);
// references: the expected files (read now that the outputs' dtypes and shapes are known) or the example's.
Status read_references(Context& ctx);
// compare: each output that has a reference, at the dtype's default tolerance unless rtol/atol say otherwise.
void compare_outputs(Context& ctx, std::optional<double> rtol, std::optional<double> atol);

}  // namespace mpspack::runtime::pipeline
