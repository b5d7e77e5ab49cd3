// `mpspack report --baseline`: the regression gate on recorded runs, never on the wall clock; and the rank
// statistics it rests on (apps/report_gate.cpp) against their textbook values.
// tests/cli/data/gate_runs.jsonl holds 40 real runs of the bundled example on a 2-core machine shared with other
// builds, one after the other (`mpspack run tiny.mpk --bench --repetitions 5 --threads 1 --format jsonl`), trimmed
// to the fields report reads (each repetition's p50 and p90 only) with 6 significant digits.
#include "cli_runner.hpp"
#include "report_gate.hpp"

#include <catch2/catch.hpp>
#include <fixtures.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

using namespace mpspack::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The recorded runs, in the order they ran: pair i is runs 2i (the baseline) and 2i + 1.
std::vector<json> recorded_runs() {
  std::ifstream in(source_dir() / "tests" / "cli" / "data" / "gate_runs.jsonl");
  std::vector<json> runs;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) runs.push_back(json::parse(line));
  REQUIRE(runs.size() == 40);
  return runs;
}

// Every timing of a run multiplied by `factor`: the same run on a slower build.
json slower(json j, double factor) {
  for (auto& [k, v] : j["latency_ms"].items()) v = v.get<double>() * factor;
  for (auto& rep : j["latency_ms_repetitions"])
    for (auto& [k, v] : rep.items()) v = v.get<double>() * factor;
  for (auto& [k, v] : j["load_ms"].items()) v = v.get<double>() * factor;
  return j;
}

CliResult gate(const TempDir& tmp, const json& baseline, const json& run, std::vector<std::string> extra = {}) {
  write_bytes(tmp / "baseline.json", baseline.dump());
  write_bytes(tmp / "run.json", run.dump());
  std::vector<std::string> args = {"report", "--baseline", (tmp / "baseline.json").string(),
                                   (tmp / "run.json").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_mpspack(args);
}

}  // namespace

TEST_CASE("report --baseline: 20 recorded pairs of one container never fail at 10%, 30% slower always does",
          "[report][gate]") {
  const auto runs = recorded_runs();
  TempDir tmp;
  for (size_t i = 0; i < 20; ++i) {
    INFO("pair " << i);
    const json &base = runs[2 * i], &run = runs[2 * i + 1];
    REQUIRE(run.at("latency_ms_repetitions").size() == 5);
    auto same = gate(tmp, base, run, {"--max-slowdown", "10%"});
    INFO(same.out << same.err);
    CHECK(same.exit_code == 0);
    CHECK(same.err.empty());
    CHECK(same.out.find("gate: passed") != std::string::npos);
    CHECK(same.out.find("(plain threshold:") == std::string::npos);  // five figures a side: the rank test

    auto slow = gate(tmp, base, slower(run, 1.3), {"--max-slowdown", "10%"});
    INFO(slow.out << slow.err);
    CHECK(slow.exit_code == 1);
    CHECK(slow.out.find("| SLOWER by more than 10% |") != std::string::npos);
    CHECK(slow.out.find("gate: FAILED: 1 of 1 runs") != std::string::npos);
    REQUIRE(slow.err_lines().size() == 1);
    CHECK(slow.err_lines()[0].find("run.json: p50 1.") != std::string::npos);
    CHECK(slow.err_lines()[0].find("more than --max-slowdown 10%") != std::string::npos);
  }
}

TEST_CASE("report --baseline: the verdict per row with its interval, and what is compared", "[report][gate]") {
  const auto runs = recorded_runs();
  TempDir tmp;
  // The baseline compared with itself: a ratio of exactly 1, within noise.
  auto self = gate(tmp, runs[0], runs[0]);
  INFO(self.out << self.err);
  REQUIRE(self.exit_code == 0);
  CHECK(self.out.find("| baseline 1 | ") != std::string::npos);
  CHECK(self.out.find(" | 1.000x | ") != std::string::npos);
  CHECK(self.out.find("| same within noise |") != std::string::npos);
  CHECK(self.out.find("p50 / baseline | 95% interval | verdict |") != std::string::npos);

  // A set of runs as the baseline (a jsonl file): 3 x 5 figures; 10% faster is told apart from noise.
  write_bytes(tmp / "set.jsonl", runs[0].dump() + "\n" + runs[2].dump() + "\n" + runs[4].dump() + "\n");
  write_bytes(tmp / "fast.json", slower(runs[1], 0.7).dump());
  auto set = run_mpspack({"report", "--baseline", (tmp / "set.jsonl").string(), (tmp / "fast.json").string()});
  INFO(set.out << set.err);
  CHECK(set.exit_code == 0);
  CHECK(set.out.find("| baseline 3 | ") != std::string::npos);
  CHECK(set.out.find("p50: 15 baseline figures") != std::string::npos);
  CHECK(set.out.find("| faster |") != std::string::npos);

  // p90 and the load time are compared when asked; the load time is one figure a run: a plain threshold.
  auto p90 = gate(tmp, runs[0], slower(runs[1], 2.0), {"--metric", "p90"});  // p90 is the noisier: 2.1 to 3.5 us
  CHECK(p90.exit_code == 1);
  CHECK(p90.err.find(": p90 ") != std::string::npos);
  auto load = gate(tmp, runs[0], slower(runs[0], 1.2), {"--metric", "load_to_first_result"});
  INFO(load.out);
  CHECK(load.exit_code == 1);
  CHECK(load.out.find("SLOWER by more than 10% (plain threshold: one figure in the run)") != std::string::npos);
  auto rss = gate(tmp, runs[0], runs[1], {"--metric", "peak_rss", "--max-slowdown", "50"});
  CHECK(rss.exit_code == 0);
  CHECK(rss.out.find("within 50% (plain threshold: one figure in the run)") != std::string::npos);
}

TEST_CASE("report --baseline: a single figure on either side falls back to a plain threshold and says so",
          "[report][gate]") {
  const auto runs = recorded_runs();
  TempDir tmp;
  json one = runs[1];  // one repetition
  one["latency_ms_repetitions"] = json::array({one["latency_ms_repetitions"][0]});
  json v1 = runs[0];  // a schema_version 1 report: only the mean of each statistic
  v1.erase("latency_ms_repetitions");
  v1["schema_version"] = 1;
  for (const auto& [base, run, reason] :
       {std::tuple{runs[0], one, "one figure in the run"}, std::tuple{v1, runs[1], "one figure in the baseline"}}) {
    INFO(reason);
    const double ratio = run["latency_ms"]["p50"].get<double>() / base["latency_ms"]["p50"].get<double>();
    auto r = gate(tmp, base, run, {"--max-slowdown", "900"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find(std::string("within 900% (plain threshold: ") + reason + ")") != std::string::npos);
    (void)ratio;
    auto slow = gate(tmp, base, slower(run, 1.5 * 1.5), {"--max-slowdown", "10"});
    CHECK(slow.out.find(std::string("SLOWER by more than 10% (plain threshold: ") + reason + ")") != std::string::npos);
    CHECK(slow.exit_code == 1);
    REQUIRE(slow.err_lines().size() == 1);
    CHECK(slow.err_lines()[0].find(std::string("(interval none: ") + reason + ")") != std::string::npos);
  }
}

TEST_CASE("report --baseline: runs of another container, machine, backend or thread count are refused, exit 2",
          "[report][gate]") {
  const auto runs = recorded_runs();
  TempDir tmp;
  json container = runs[1], machine = runs[1], backend = runs[1], threads = runs[1];
  container["container_sha256"] = std::string(64, 'a');
  machine["machine"]["cpu"] = "Another CPU";
  backend["backend"] = "cuda:0";
  threads["threads"] = runs[1]["threads"].get<unsigned>() + 1;
  for (const auto& [run, what] : {std::pair{container, "another container than the baseline's (sha256 aaaa"},
                                  std::pair{machine, "another machine than the baseline's (Another CPU, "},
                                  std::pair{backend, "another backend than the baseline's (cuda:0 against cpu in "},
                                  std::pair{threads, "another thread count than the baseline's ("}}) {
    INFO(what);
    auto r = gate(tmp, runs[0], run);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    REQUIRE(r.err_lines().size() == 1);
    CHECK(r.err_lines()[0].rfind("mpspack: " + (tmp / "run.json").string() + ": " + what, 0) == 0);
  }
  // A field of another type than mpspack writes (the reports are files anyone can edit): refused, not a crash.
  json odd = runs[1];
  odd["machine"]["cores"] = "two";
  odd["machine"]["cpu"] = 7;
  auto hostile = gate(tmp, runs[0], odd);
  CHECK(hostile.exit_code == 2);
  REQUIRE(hostile.err_lines().size() == 1);
  CHECK(hostile.err_lines()[0].find("another machine than the baseline's (7, two cores, x86_64 against ") !=
        std::string::npos);
  // Within the baseline's set too.
  write_bytes(tmp / "mixed.jsonl", runs[0].dump() + "\n" + backend.dump() + "\n");
  auto mixed = run_mpspack({"report", "--baseline", (tmp / "mixed.jsonl").string(), (tmp / "mixed.jsonl").string()});
  CHECK(mixed.exit_code == 2);
  REQUIRE(mixed.err_lines().size() == 1);
  CHECK(mixed.err_lines()[0].find("mixed.jsonl:2: another backend") != std::string::npos);
}

TEST_CASE("report --max-slowdown: 0 < P < 1000 percent, with or without the sign, and only with --baseline",
          "[report][gate]") {
  const auto runs = recorded_runs();
  TempDir tmp;
  for (const char* bad : {"0", "0%", "1000", "1000%", "-5%", "1e9", "ten%", "%"}) {
    INFO(bad);
    auto r = gate(tmp, runs[0], runs[1], {"--max-slowdown", bad});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    REQUIRE(r.err_lines().size() == 1);
    CHECK(r.err_lines()[0].rfind("mpspack: --max-slowdown: ", 0) == 0);
    CHECK(r.err_lines()[0].find("0..1000 (both excluded) (see --help)") != std::string::npos);
  }
  for (const char* good : {"0.5", "10", "10%", "999.9%"}) {
    INFO(good);
    CHECK(gate(tmp, runs[0], runs[0], {"--max-slowdown", good}).exit_code == 0);
  }
  write_bytes(tmp / "run.json", runs[0].dump());
  auto alone = run_mpspack({"report", (tmp / "run.json").string(), "--max-slowdown", "10"});
  CHECK(alone.exit_code == 2);
  CHECK(alone.err == "mpspack: --max-slowdown requires --baseline (see --help)\n");
}

TEST_CASE("Mann-Whitney U: the interval's rank from U's exact distribution, as the printed tables give it",
          "[report][gate][unit]") {
  using mpspack::cli::rank_interval_rank;
  // Two-sided 5% critical values of U (the largest U with P(U <= u) <= 2.5%): the rank is one more.
  CHECK(rank_interval_rank(5, 5) == 3);      // U_crit 2
  CHECK(rank_interval_rank(10, 10) == 24);   // U_crit 23
  CHECK(rank_interval_rank(20, 20) == 128);  // U_crit 127
  CHECK(rank_interval_rank(8, 12) == 23);    // U_crit 22
  CHECK(rank_interval_rank(4, 4) == 1);      // 1/70 <= 2.5% < 2/70
  CHECK(rank_interval_rank(3, 3) == 0);      // 1/20 > 2.5%: no outcome is extreme enough
  CHECK(rank_interval_rank(1, 30) == 0);     // 1/31 > 2.5%
  CHECK(rank_interval_rank(1, 40) == 1);     // 1/41 <= 2.5%
  // Past the exact limit, the normal approximation: mean 1800, deviation sqrt(60 * 60 * 121 / 12) = 190.5, and
  // 1800 - 1.96 * 190.5 = 1426.6.
  CHECK(rank_interval_rank(60, 60) == 1426);
}

TEST_CASE("Mann-Whitney U: the Hodges-Lehmann ratio of a run exactly 1.2 times its baseline is 1.2",
          "[report][gate][unit]") {
  const std::vector<double> base = {1.0, 1.1, 1.3, 1.6, 2.0};
  std::vector<double> run;
  for (double b : base) run.push_back(1.2 * b);
  const auto i = mpspack::cli::rank_interval(run, base);
  REQUIRE(i);
  CHECK(i->ratio == Approx(1.2).epsilon(1e-12));
  CHECK(i->low < 1.2);
  CHECK(i->high > 1.2);
  // The 3rd smallest and largest of the 25 ratios: 1.2 * 1.0/1.6 ... with these figures.
  CHECK_FALSE(mpspack::cli::gate(run, base, 0.1).fails);  // 20% slower, but within noise of this spread
  CHECK_FALSE(mpspack::cli::rank_interval({1.0}, base));
}
