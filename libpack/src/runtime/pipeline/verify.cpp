// verify(): the steps in order (verify.hpp), and what the report says.
#include "mpspack/runtime/verify.hpp"

#include "steps.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace mpspack::runtime {
namespace {

void log_timings(const PhaseTimings& t) {
  spdlog::info("timings (ms): open {:.3f}, checks {:.3f}, library {:.3f}, weights {:.3f}, create {:.3f}, "
               "constants {:.3f}, first run {:.3f}",
               t.open_ms, t.checks_ms, t.library_ms, t.weights_ms, t.create_ms, t.constants_ms, t.first_run_ms);
}

VerifyReport report_of(pipeline::Context& ctx) {
  VerifyReport r;
  r.container = ctx.options.container;
  r.library = ctx.library_name;
  r.inputs = pipeline::inputs_source(ctx.options);
  r.seed = ctx.options.seed;
  r.weights_mode = ctx.model->weights_mode();
  r.timings = ctx.model->timings();
  r.outputs = std::move(ctx.outputs);
  return r;
}

}  // namespace

bool VerifyReport::checked() const {
  return std::any_of(outputs.begin(), outputs.end(), [](const OutputCheck& o) { return o.reference.has_value(); });
}

bool VerifyReport::ok() const { return mismatched().empty(); }

std::vector<size_t> VerifyReport::mismatched() const {
  std::vector<size_t> bad;
  for (const auto& o : outputs)
    if (o.reference && !o.reference->comparison.match) bad.push_back(o.index);
  return bad;
}

Result<VerifyReport> verify(const VerifyOptions& options) {
  using namespace pipeline;
  Context ctx(options);
  MPK_CHECK(open_container(ctx));
  MPK_CHECK(pick_library(ctx));
  // The references are the example's only when the example's inputs are used and no --expect is given.
  MPK_CHECK(gather_inputs(ctx, options.expects.empty()));
  MPK_CHECK(check_expect_files(ctx));
  MPK_CHECK(load_model(ctx));
  MPK_CHECK(run_model(ctx));
  MPK_CHECK(write_outputs(ctx));
  MPK_CHECK(read_references(ctx));
  compare_outputs(ctx, options.rtol, options.atol);
  log_timings(ctx.model->timings());
  return report_of(ctx);
}

Status verdict(const VerifyReport& report) {
  const std::vector<size_t> bad = report.mismatched();
  if (bad.empty()) return {};
  std::string which;
  for (size_t i : bad) which += fmt::format("{}{}", which.empty() ? "" : ", ", i);
  return make_error(Error::Kind::Invalid, "{}: output{} {} do{} not match", report.container,
                    bad.size() == 1 ? "" : "s", which, bad.size() == 1 ? "es" : "");
}

double load_total_ms(const PhaseTimings& t) {
  return t.open_ms + t.checks_ms + t.library_ms + t.weights_ms + t.create_ms + t.constants_ms;
}

}  // namespace mpspack::runtime
