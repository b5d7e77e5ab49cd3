// references and compare: what each output should be, and whether it is.
#include "steps.hpp"

namespace mpspack::runtime::pipeline {
namespace {

std::string plural(size_t n) { return n == 1 ? "" : "s"; }

// The --expect files, each read with the output's dtype and shape as the hint a raw file needs (the recorded
// example's when the inputs are the example's).
Status read_expect_files(Context& ctx) {
  const VerifyOptions& o = ctx.options;
  if (ctx.expect_specs.size() != ctx.outputs.size())
    return make_error(Error::Kind::Invalid, "{}: {} --expect given, but library '{}' has {} output{}", o.container,
                      ctx.expect_specs.size(), ctx.library_name, ctx.outputs.size(), plural(ctx.outputs.size()));
  const bool example_inputs = ctx.example && o.inputs.empty();
  for (size_t i = 0; i < ctx.expect_specs.size(); ++i) {
    const HostTensor& got = ctx.outputs[i].tensor;
    auto hint = recorded_hint(example_inputs ? &ctx.example->outputs : nullptr, i);
    if (!hint) hint = TensorHint{got.dtype, got.shape};
    auto t = read_tensor(ctx.expect_specs[i], hint);
    if (!t.ok()) return t.error().context(fmt::format("--expect {}", i));
    ctx.expected.push_back(std::move(t).value());
    ctx.reference_names.push_back(ctx.expect_specs[i].path.string());
  }
  return {};
}

}  // namespace

Status read_references(Context& ctx) {
  if (!ctx.expect_specs.empty()) return read_expect_files(ctx);
  if (!ctx.expected.empty() && ctx.expected.size() != ctx.outputs.size())
    return make_error(Error::Kind::Corrupt, "{}: the recorded example has {} outputs, the model returned {}",
                      ctx.options.container, ctx.expected.size(), ctx.outputs.size());
  return {};
}

void compare_outputs(Context& ctx, std::optional<double> rtol, std::optional<double> atol) {
  for (size_t i = 0; i < ctx.expected.size() && i < ctx.outputs.size(); ++i) {
    Tolerance tol = default_tolerance(ctx.expected[i].dtype);
    if (rtol) tol.rtol = *rtol;
    if (atol) tol.atol = *atol;
    ctx.outputs[i].reference =
        OutputReference{ctx.reference_names[i], tol, compare_tensors(ctx.outputs[i].tensor, ctx.expected[i], tol)};
  }
}

}  // namespace mpspack::runtime::pipeline
