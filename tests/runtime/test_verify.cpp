// The verification pipeline as a library (mpspack/runtime/verify.hpp, bench.hpp): the bundled example verified
// and benchmarked through the API, without the CLI; what its reports say.
#include <catch2/catch.hpp>
#include <cli_runner.hpp>
#include <fixtures.hpp>

#include "mpspack/pack/build.hpp"
#include "mpspack/runtime/bench.hpp"
#include "mpspack/runtime/verify.hpp"

#include <cstring>

using namespace mpspack;
using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

fs::path tiny_mlp_dir() { return binary_dir() / "examples" / "tiny_mlp"; }

// The bundled example in a container, with its input and output recorded as the example.
fs::path build_tiny(const TempDir& tmp) {
  const auto dir = tiny_mlp_dir();
  pack::BuildOptions o;
  o.inputs = {dir / "model.so"};
  o.output = tmp / "tiny.mpk";
  o.example_inputs = {(dir / "input0.bin").string() + ":f32:4x16"};
  o.example_outputs = {(dir / "expected0.bin").string() + ":f32:4x8"};
  auto m = pack::build(o);
  INFO((m.ok() ? "" : m.error().message));
  REQUIRE(m.ok());
  return o.output;
}

// A quick benchmark of a container: one warm-up run, three timed.
runtime::BenchOptions short_bench(const fs::path& container) {
  runtime::BenchOptions o;
  o.model.container = container.string();
  o.warmup = 1;
  o.iterations = 3;
  return o;
}

}  // namespace

TEST_CASE("verify: the bundled example matches its recorded outputs", "[verify][pipeline]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  runtime::VerifyOptions o;
  o.container = build_tiny(tmp).string();
  auto r = runtime::verify(o);
  INFO((r.ok() ? "" : r.error().message));
  REQUIRE(r.ok());
  CHECK(r->container == o.container);
  CHECK(r->library == "model");
  CHECK(r->weights_mode != runtime::WeightsMode::None);
  CHECK(r->timings.open_ms >= 0);
  CHECK(r->timings.first_run_ms >= 0);
  CHECK(runtime::load_total_ms(r->timings) >= r->timings.create_ms);
  REQUIRE(r->outputs.size() == 1);
  const auto& out = r->outputs[0];
  CHECK(out.index == 0);
  CHECK(out.tensor.shape == std::vector<int64_t>{4, 8});
  CHECK(out.written.empty());
  REQUIRE(out.reference);
  CHECK(out.reference->name == "the recorded example output0");
  CHECK(out.reference->comparison.match);
  CHECK(r->checked());
  CHECK(r->ok());
  CHECK(r->mismatched().empty());
  CHECK(runtime::verdict(*r).ok());
}

TEST_CASE("verify: a perturbed expectation is a mismatch in the report, not an error", "[verify][pipeline]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  std::string expected = slurp(tiny_mlp_dir() / "expected0.bin");
  float f;
  std::memcpy(&f, expected.data() + 4 * 5, 4);
  f += 1.0f;
  std::memcpy(expected.data() + 4 * 5, &f, 4);
  write_bytes(tmp / "wrong.bin", expected);

  runtime::VerifyOptions o;
  o.container = build_tiny(tmp).string();
  o.expects = {(tmp / "wrong.bin").string()};  // raw: takes the output's dtype and shape
  auto r = runtime::verify(o);
  INFO((r.ok() ? "" : r.error().message));
  REQUIRE(r.ok());
  REQUIRE(r->outputs.size() == 1);
  const auto& ref = r->outputs[0].reference;
  REQUIRE(ref);
  CHECK(ref->name == (tmp / "wrong.bin").string());
  CHECK_FALSE(ref->comparison.match);
  CHECK(ref->comparison.mismatches == 1);
  CHECK(ref->comparison.first_mismatch_index == std::vector<int64_t>{0, 5});
  CHECK(r->checked());
  CHECK_FALSE(r->ok());
  CHECK(r->mismatched() == std::vector<size_t>{0});
  const Status v = runtime::verdict(*r);
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().message == o.container + ": output 0 does not match");
}

TEST_CASE("verify: a wrong number of inputs is an error before the model runs", "[verify][pipeline]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  const std::string in = (tiny_mlp_dir() / "input0.bin").string() + ":f32:4x16";
  runtime::VerifyOptions o;
  o.container = build_tiny(tmp).string();
  o.inputs = {in, in};
  auto r = runtime::verify(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("library 'model': takes 1 input, 2 given") != std::string::npos);
}

TEST_CASE("verify: outputs written where asked, and no references without an example", "[verify][pipeline]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  runtime::VerifyOptions o;
  o.container = build_tiny(tmp).string();
  o.inputs = {(tiny_mlp_dir() / "input0.bin").string() + ":f32:4x16"};
  o.output_dir = (tmp / "outs").string();
  auto r = runtime::verify(o);
  INFO((r.ok() ? "" : r.error().message));
  REQUIRE(r.ok());
  REQUIRE(r->outputs.size() == 1);
  CHECK(r->outputs[0].written == (tmp / "outs" / "output0.npy").string());
  CHECK(fs::exists(tmp / "outs" / "output0.npy"));
  CHECK_FALSE(r->outputs[0].reference);
  CHECK_FALSE(r->checked());
  CHECK(r->ok());
}

TEST_CASE("bench: the bundled example's report, checked against its recorded outputs", "[verify][pipeline][bench]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  runtime::BenchOptions o = short_bench(build_tiny(tmp));
  auto r = runtime::bench(o);
  INFO((r.ok() ? "" : r.error().message));
  REQUIRE(r.ok());
  CHECK(r->checked);
  CHECK(r->ok);
  CHECK(runtime::verdict(*r).ok());
  CHECK(r->backend == "cpu");
  CHECK(r->warmup_runs == 1);
  CHECK(r->times_ms.size() == 3);
  CHECK(r->latency.min <= r->latency.max);
  CHECK(r->time_to_first_result_ms >= r->timings.first_run_ms);
  CHECK(r->peak_rss_bytes > 0);
  CHECK(r->container_sha256.size() == 64);
  CHECK_FALSE(r->device);
  CHECK_FALSE(r->cold_cache);
  // --cuda-graph needs a GPU library.
  o.cuda_graph = true;
  auto refused = runtime::bench(o);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("--cuda-graph needs a CUDA library") != std::string::npos);
}

TEST_CASE("latency_stats: extra percentiles by linear interpolation, over_repetitions: mean and spread of each",
          "[verify][pipeline][bench]") {
  // 1..5 ms: p75 lies at 0.75 * 4 = 3 (the fourth value, 4 ms), p10 at 0.4 (between 1 and 2: 1.4 ms).
  const runtime::LatencyStats a = runtime::latency_stats({5, 1, 4, 2, 3}, {75, 10});
  REQUIRE(a.percentiles.size() == 2);
  CHECK(a.percentiles[0] == Approx(4.0));
  CHECK(a.percentiles[1] == Approx(1.4));
  CHECK(a.p50 == Approx(3.0));
  // 2..10 ms, twice the first: every statistic doubles.
  const runtime::LatencyStats b = runtime::latency_stats({10, 2, 8, 4, 6}, {75, 10});
  const runtime::LatencyOverRepetitions over = runtime::over_repetitions({a, b});
  CHECK(over.mean.min == Approx(1.5));    // (1 + 2) / 2
  CHECK(over.stddev.min == Approx(0.5));  // population: |1 - 2| / 2
  CHECK(over.mean.max == Approx(7.5));    // (5 + 10) / 2
  CHECK(over.stddev.max == Approx(2.5));
  CHECK(over.mean.percentiles[0] == Approx(6.0));    // (4 + 8) / 2
  CHECK(over.stddev.percentiles[1] == Approx(0.7));  // |1.4 - 2.8| / 2
  const runtime::LatencyOverRepetitions one = runtime::over_repetitions({a});
  CHECK(one.mean.p90 == a.p90);
  CHECK(one.stddev.p90 == 0.0);
}

TEST_CASE("bench: repetitions and extra percentiles through the API, and out-of-range options refused",
          "[verify][pipeline][bench]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  runtime::BenchOptions o = short_bench(build_tiny(tmp));
  o.repetitions = 2;
  o.percentiles = {75};
  auto r = runtime::bench(o);
  INFO((r.ok() ? "" : r.error().message));
  REQUIRE(r.ok());
  CHECK(r->repetitions == 2);
  CHECK(r->warmup_runs == 2);
  CHECK(r->times_ms.size() == 6);
  REQUIRE(r->repetition_latency.size() == 2);
  CHECK(r->latency.min == Approx((r->repetition_latency[0].min + r->repetition_latency[1].min) / 2));
  REQUIRE(r->latency.percentiles.size() == 1);
  CHECK(r->inputs == "example");
  CHECK_FALSE(r->seed);
  for (double bad : {0.0, 100.0, -1.0}) {
    o.percentiles = {bad};
    auto refused = runtime::bench(o);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("--percentile") != std::string::npos);
  }
  o.percentiles = {};
  o.repetitions = 0;
  CHECK_FALSE(runtime::bench(o).ok());
}
