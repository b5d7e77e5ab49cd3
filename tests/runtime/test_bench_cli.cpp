// `mpspack run --bench`: the report's fields in every format, --export-times, --cold, --duration.
// No timing thresholds here: speed is measured by benchmarks (bench/), never by tests.
#include <catch2/catch.hpp>
#include <cli_runner.hpp>
#include <fixtures.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

using namespace mpspack::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path tiny_mlp_dir() { return binary_dir() / "examples" / "tiny_mlp"; }

// The bundled example with its example recorded, so `run --bench` needs no --input.
fs::path build_tiny(const TempDir& tmp) {
  const auto dir = tiny_mlp_dir();
  const auto mpk = tmp / "tiny.mpk";
  auto r = run_mpspack({"build", (dir / "model.so").string(), "-o", mpk.string(), "--example-input",
                        (dir / "input0.bin").string() + ":f32:4x16", "--example-output",
                        (dir / "expected0.bin").string() + ":f32:4x8"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return mpk;
}

CliResult bench(std::vector<std::string> args) {
  args.insert(args.begin(), {"run", "--bench"});
  auto r = run_mpspack(args);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return r;
}

}  // namespace

TEST_CASE("run --bench --format json: every documented field, and --export-times writes each iteration",
          "[run][cli][bench]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  const auto times = tmp / "times.json";
  auto r =
      bench({mpk.string(), "--format", "json", "--warmup", "2", "--iterations", "7", "--export-times", times.string()});
  const json j = json::parse(r.out);
  for (const char* k : {"open_ms", "checks_ms", "library_ms", "weights_ms", "create_ms", "constants_ms", "first_run_ms",
                        "load_total_ms", "load_to_first_result_ms"}) {
    INFO(k);
    CHECK(j.at("load_ms").at(k).is_number());
    CHECK(j.at("load_ms").at(k).get<double>() >= 0);
  }
  const json& l = j.at("latency_ms");
  for (const char* k : {"min", "mean", "p50", "p90", "p99", "max", "stddev"}) CHECK(l.at(k).is_number());
  CHECK(l.at("min").get<double>() <= l.at("p50").get<double>());
  CHECK(l.at("p50").get<double>() <= l.at("p90").get<double>());
  CHECK(l.at("p90").get<double>() <= l.at("p99").get<double>());
  CHECK(l.at("p99").get<double>() <= l.at("max").get<double>());
  CHECK(j.at("iterations") == 7);
  CHECK(j.at("warmup_runs") == 2);
  CHECK(j.at("throughput_per_s").get<double>() > 0);
  CHECK(j.at("peak_rss_bytes").get<uint64_t>() > 0);
  CHECK(j.at("backend") == "cpu");
  CHECK(j.at("include_transfers") == false);
  CHECK(j.at("cuda_graph") == false);
  CHECK_FALSE(j.contains("device"));  // GPU runs only
  CHECK(j.at("cold") == false);
  CHECK_FALSE(j.contains("cold_cache"));
  CHECK(j.at("checked") == true);
  CHECK(j.at("ok") == true);
  CHECK(j.at("weights_mode").get<std::string>().find("embedded") != std::string::npos);
  CHECK(j.at("container_sha256").get<std::string>().size() == 64);
  CHECK(j.at("time_to_first_result_ms").get<double>() >= j.at("load_ms").at("first_run_ms").get<double>());
  CHECK_FALSE(j.at("mpspack_version").get<std::string>().empty());
  CHECK_FALSE(j.at("machine").at("cpu").get<std::string>().empty());
  CHECK(j.at("machine").at("cores").get<int>() >= 1);
  CHECK_FALSE(j.at("machine").at("os").get<std::string>().empty());
  CHECK_FALSE(j.at("machine").at("blas_kernels").get<std::string>().empty());

  const json t = json::parse(std::ifstream(times));
  REQUIRE(t.is_array());
  CHECK(t.size() == 7);
  for (const auto& v : t) CHECK(v.is_number());
}

TEST_CASE("run --bench: the container's SHA-256 is that of the file", "[run][cli][bench]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  auto sum = bench({mpk.string(), "--format", "json", "--iterations", "1"});
  // Against coreutils' sha256sum where the system has it.
  if (std::system("command -v sha256sum > /dev/null 2>&1") == 0) {
    const auto out = tmp / "sum.txt";
    REQUIRE(std::system(("sha256sum '" + mpk.string() + "' > '" + out.string() + "'").c_str()) == 0);
    std::string line;
    std::getline(std::ifstream(out) >> std::ws, line);
    CHECK(line.substr(0, 64) == json::parse(sum.out).at("container_sha256").get<std::string>());
  }
}

TEST_CASE("run --bench: text, csv and md reports, --cold says what the drop did, --duration", "[run][cli][bench]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  const auto mpk = build_tiny(tmp);

  auto text = bench({mpk.string(), "--iterations", "3"});
  CHECK(text.out.find("latency (ms): min") != std::string::npos);
  CHECK(text.out.find("load (ms):") != std::string::npos);
  CHECK(text.out.find("throughput:") != std::string::npos);

  auto csv = bench({mpk.string(), "--format", "csv", "--iterations", "3"});
  std::istringstream lines(csv.out);
  std::string head, data, extra;
  REQUIRE(std::getline(lines, head));
  REQUIRE(std::getline(lines, data));
  CHECK_FALSE(std::getline(lines, extra));
  for (const char* k : {"load_ms.create_ms", "latency_ms.p99", "throughput_per_s", "peak_rss_bytes", "container_sha256",
                        "machine.cpu", "iterations"}) {
    INFO(k);
    CHECK(head.find(k) != std::string::npos);
  }

  auto md = bench({mpk.string(), "--format", "md", "--iterations", "3"});
  // A job summary: a heading naming the run, then the table, closed by a blank line so that the next report
  // appended to the summary starts a table of its own.
  CHECK(md.out.rfind(
            "### mpspack run --bench: " + mpk.string() + " (library 'model', cpu)\n\n| metric | value |\n|---|---|\n",
            0) == 0);
  REQUIRE(md.out.size() > 3);
  CHECK(md.out.substr(md.out.size() - 3) == "|\n\n");
  CHECK(md.out.find("| latency_ms.p50 |") != std::string::npos);
  CHECK(md.out.find("| iterations | 3 |") != std::string::npos);

  auto cold = bench({mpk.string(), "--format", "json", "--iterations", "2", "--cold", "--warmup-ms", "1"});
  const json c = json::parse(cold.out);
  CHECK(c.at("cold") == true);
  CHECK(c.at("cold_cache").at("attempted") == true);
  CHECK(c.at("cold_cache").at("ok").is_boolean());
  CHECK(c.at("cold_cache").contains("resident_fraction_after"));

  auto dur = bench({mpk.string(), "--format", "json", "--duration", "0.05", "--warmup", "0"});
  const json d = json::parse(dur.out);
  CHECK(d.at("warmup_runs") == 0);
  CHECK(d.at("iterations").get<uint64_t>() >= 1);
}

TEST_CASE("run --bench with --input and no recorded example: nothing checked, still a report", "[run][cli][bench]") {
  const auto dir = tiny_mlp_dir();
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto mpk = tmp / "plain.mpk";
  REQUIRE(run_mpspack({"build", (dir / "model.so").string(), "-o", mpk.string()}).exit_code == 0);
  auto r = bench(
      {mpk.string(), "--input", (dir / "input0.bin").string() + ":f32:4x16", "--format", "json", "--iterations", "2"});
  const json j = json::parse(r.out);
  CHECK(j.at("checked") == false);
  CHECK(j.at("iterations") == 2);
  // Without inputs and without a recorded example: refused.
  auto none = run_mpspack({"run", "--bench", mpk.string()});
  CHECK(none.exit_code == 2);
}

TEST_CASE("run --bench --include-transfers times full runs, --cuda-graph is refused on a CPU library",
          "[run][cli][bench]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  auto r = bench({mpk.string(), "--format", "json", "--iterations", "3", "--include-transfers"});
  const json j = json::parse(r.out);
  CHECK(j.at("include_transfers") == true);
  CHECK(j.at("iterations") == 3);
  auto bad = run_mpspack({"run", mpk.string(), "--bench", "--cuda-graph"});
  INFO("stderr: " << bad.err);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--cuda-graph needs a CUDA library") != std::string::npos);
  CHECK(bad.out.empty());
}

TEST_CASE("run --bench reports whether float32 convolutions may use TF32, and --no-tf32 turns it off",
          "[run][cli][bench]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  const char* env = std::getenv("MPSPACK_CUDNN_TF32");
  const bool by_default = !(env != nullptr && std::string(env) == "0");
  CHECK(json::parse(bench({mpk.string(), "--format", "json", "--iterations", "1"}).out).at("cudnn_tf32") == by_default);
  CHECK(json::parse(bench({mpk.string(), "--format", "json", "--iterations", "1", "--no-tf32"}).out).at("cudnn_tf32") ==
        false);
}

TEST_CASE("run --bench --json prints the JSON report, and --json with another --format is refused",
          "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  auto r = bench({mpk.string(), "--iterations", "2", "--warmup", "0", "--json"});
  const json j = json::parse(r.out);
  CHECK(j.contains("latency_ms"));
  CHECK(j.contains("load_ms"));
  auto refused = run_mpspack({"run", "--bench", mpk.string(), "--json", "--format", "csv"});
  CHECK(refused.exit_code == 2);
  REQUIRE(refused.err_lines().size() == 1);
  CHECK(refused.err_lines()[0] == "mpspack: --json excludes --format csv (see --help)");
  CHECK(refused.out.empty());
}

TEST_CASE("run --bench --format csv has the same columns whatever the options, one header when appended to a file",
          "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  auto plain = bench({mpk.string(), "--format", "csv", "--iterations", "2"});
  auto cold = bench(
      {mpk.string(), "--format", "csv", "--iterations", "2", "--cold", "--export-times", (tmp / "t.json").string()});
  const std::string head = plain.out.substr(0, plain.out.find('\n'));
  CHECK(cold.out.substr(0, cold.out.find('\n')) == head);
  const auto columns = std::count(head.begin(), head.end(), ',');
  const std::string row = cold.out.substr(cold.out.find('\n') + 1);
  CHECK(std::count(row.begin(), row.end(), ',') >= columns);  // quoted fields may hold commas
  // Appended to a file that already holds a table: no second header.
  const auto table = tmp / "runs.csv";
  const std::string cmd = "'" + mpspack_binary() + "' run --bench '" + mpk.string() +
                          "' --iterations 2 --format csv >> '" + table.string() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::istringstream lines(slurp(table));
  std::vector<std::string> all;
  for (std::string l; std::getline(lines, l);) all.push_back(l);
  REQUIRE(all.size() == 3);
  CHECK(all[0] == head);
  CHECK(all[1].rfind(mpk.string() + ",", 0) == 0);
  CHECK(all[2].rfind(mpk.string() + ",", 0) == 0);
}

TEST_CASE("run --bench --format jsonl writes one line per run, and report puts saved runs side by side",
          "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  auto one = bench({mpk.string(), "--format", "jsonl", "--iterations", "2"});
  REQUIRE(std::count(one.out.begin(), one.out.end(), '\n') == 1);
  const json j = json::parse(one.out);
  auto two = bench({mpk.string(), "--format", "jsonl", "--iterations", "2", "--cold"});
  write_bytes(tmp / "runs.jsonl", one.out + two.out);
  auto saved = bench({mpk.string(), "--format", "json", "--iterations", "2"});
  write_bytes(tmp / "third.json", saved.out);
  auto r = run_mpspack({"report", (tmp / "runs.jsonl").string(), (tmp / "third.json").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::vector<std::string> all;
  for (std::string l; std::getline(lines, l);) all.push_back(l);
  REQUIRE(all.size() == 5);  // header, rule, three runs
  CHECK(all[0].find("| p50 ms |") != std::string::npos);
  CHECK(all[2].rfind("| 1 | tiny.mpk | cpu |", 0) == 0);
  CHECK(all[2].find("| 1.00x |") != std::string::npos);
  CHECK(all[4].rfind("| 3 | tiny.mpk |", 0) == 0);
  const double p50 = j.at("latency_ms").at("p50").get<double>();
  CHECK(all[2].find(fmt::format("| {:.4f} |", p50)) != std::string::npos);

  write_bytes(tmp / "bad.jsonl", one.out + "{\"schema_version\": 1}\n");
  auto bad = run_mpspack({"report", (tmp / "bad.jsonl").string()});
  CHECK(bad.exit_code == 2);
  REQUIRE(bad.err_lines().size() == 1);
  CHECK(bad.err_lines()[0].find("bad.jsonl:2: not a run --bench report") != std::string::npos);
  CHECK(bad.out.empty());
  // A field of another JSON type is refused the same way (nlohmann's value() would throw on it).
  write_bytes(tmp / "typed.json", "{\"schema_version\": \"1\"}\n");
  auto typed = run_mpspack({"report", (tmp / "typed.json").string()});
  CHECK(typed.exit_code == 2);
  REQUIRE(typed.err_lines().size() == 1);
  CHECK(typed.err_lines()[0].find("typed.json: not a run --bench report") != std::string::npos);
}

TEST_CASE("run --bench: the text report lists the load phases in the order they happen, md rounds its numbers",
          "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  auto text = bench({mpk.string(), "--iterations", "2"});
  size_t at = 0;
  for (const char* phase : {"open_ms", "checks_ms", "library_ms", "weights_ms", "create_ms", "constants_ms",
                            "first_run_ms", "load_total_ms", "load_to_first_result_ms"}) {
    INFO(phase);
    const size_t next = text.out.find(std::string(" ") + phase + " ", at);
    REQUIRE(next != std::string::npos);
    at = next;
  }
  auto md = bench({mpk.string(), "--format", "md", "--iterations", "2"});
  std::istringstream lines(md.out);
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("| latency_ms.", 0) != 0 && l.rfind("| load_ms.", 0) != 0) continue;
    INFO(l);
    std::string value = l.substr(l.find(" | ") + 3);
    value = value.substr(0, value.find_first_of("e |"));                           // the mantissa
    value = value.substr(std::min(value.find_first_not_of("-0."), value.size()));  // its significant digits
    const auto digits = std::count_if(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    CHECK(digits <= 6);
  }
}

namespace {

// The iteration times --export-times wrote.
std::vector<double> exported_times(const fs::path& file) {
  return json::parse(std::ifstream(file)).get<std::vector<double>>();
}

// The percentile by linear interpolation between the sorted times, computed here as the reference.
double reference_percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * double(v.size() - 1);
  const size_t lo = size_t(pos), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

// Population mean and standard deviation.
std::pair<double, double> reference_mean_sd(const std::vector<double>& v) {
  double sum = 0, sq = 0;
  for (double x : v) sum += x;
  const double mean = sum / double(v.size());
  for (double x : v) sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sq / double(v.size()))};
}

}  // namespace

TEST_CASE("run --bench --repetitions: each latency statistic is the mean over the repetitions, with its stddev",
          "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  const auto times = tmp / "t.json";
  auto r = bench({mpk.string(), "--format", "json", "--repetitions", "3", "--iterations", "4", "--warmup", "1",
                  "--export-times", times.string(), "--percentile", "75"});
  const json j = json::parse(r.out);
  CHECK(j.at("repetitions") == 3);
  CHECK(j.at("iterations") == 12);
  CHECK(j.at("warmup_runs") == 3);
  const std::vector<double> t = exported_times(times);
  REQUIRE(t.size() == 12);
  // Each repetition's statistics from its four times, then their mean and spread: what the report must say.
  std::vector<double> mins, maxs, p50s, p75s;
  for (size_t rep = 0; rep < 3; ++rep) {
    const std::vector<double> part(t.begin() + long(rep * 4), t.begin() + long(rep * 4 + 4));
    mins.push_back(*std::min_element(part.begin(), part.end()));
    maxs.push_back(*std::max_element(part.begin(), part.end()));
    p50s.push_back(reference_percentile(part, 50));
    p75s.push_back(reference_percentile(part, 75));
  }
  const json &mean = j.at("latency_ms"), &sd = j.at("latency_ms_stddev");
  for (auto [name, values] : {std::pair{"min", mins}, std::pair{"max", maxs}, std::pair{"p50", p50s}}) {
    INFO(name);
    const auto [m, s] = reference_mean_sd(values);
    CHECK(mean.at(name).get<double>() == Approx(m).epsilon(1e-9));
    CHECK(sd.at(name).get<double>() == Approx(s).epsilon(1e-9).margin(1e-12));
  }
  const auto [m75, s75] = reference_mean_sd(p75s);
  CHECK(j.at("percentiles_ms").at("p75").get<double>() == Approx(m75).epsilon(1e-9));
  CHECK(j.at("percentiles_ms_stddev").at("p75").get<double>() == Approx(s75).epsilon(1e-9).margin(1e-12));
  // schema_version 2: each repetition's own statistics, in the order they ran (what report --baseline tests).
  CHECK(j.at("schema_version") == 2);
  const json& reps = j.at("latency_ms_repetitions");
  REQUIRE(reps.size() == 3);
  for (size_t rep = 0; rep < 3; ++rep) {
    INFO("repetition " << rep);
    CHECK(reps[rep].at("p50").get<double>() == Approx(p50s[rep]).epsilon(1e-12));
    CHECK(reps[rep].at("min").get<double>() == mins[rep]);
    CHECK(reps[rep].at("max").get<double>() == maxs[rep]);
    CHECK(reps[rep].at("percentiles").at("p75").get<double>() == Approx(p75s[rep]).epsilon(1e-12));
  }

  // One repetition: no spread, and the statistics are those of all the times.
  auto one = bench({mpk.string(), "--format", "json", "--iterations", "5", "--export-times", times.string()});
  const json o = json::parse(one.out);
  CHECK(o.at("repetitions") == 1);
  for (const auto& [k, v] : o.at("latency_ms_stddev").items()) CHECK(v.get<double>() == 0.0);
  const std::vector<double> t1 = exported_times(times);
  CHECK(o.at("latency_ms").at("min").get<double>() == *std::min_element(t1.begin(), t1.end()));

  auto text = bench({mpk.string(), "--repetitions", "2", "--iterations", "3"});
  INFO(text.out);
  CHECK(text.out.find("latency (ms, mean ± stddev over 2 repetitions): min ") != std::string::npos);
  CHECK(text.out.find("(2 repetitions)") != std::string::npos);
  CHECK(run_mpspack({"run", "--bench", mpk.string(), "--repetitions", "0"}).exit_code == 2);
}

TEST_CASE("run --bench --percentile: extra percentiles in every format, 0 < P < 100", "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  const auto times = tmp / "t.json";
  auto r = bench({mpk.string(), "--format", "json", "--iterations", "9", "--percentile", "75", "--percentile", "99.9",
                  "--export-times", times.string()});
  const json j = json::parse(r.out);
  const std::vector<double> t = exported_times(times);
  REQUIRE(j.at("percentiles_ms").size() == 2);
  CHECK(j.at("percentiles_ms").at("p75").get<double>() == Approx(reference_percentile(t, 75)).epsilon(1e-9));
  CHECK(j.at("percentiles_ms").at("p99.9").get<double>() == Approx(reference_percentile(t, 99.9)).epsilon(1e-9));
  CHECK(json::parse(bench({mpk.string(), "--format", "json", "--iterations", "2"}).out).at("percentiles_ms").empty());

  auto text = bench({mpk.string(), "--iterations", "3", "--percentile", "99.9"});
  CHECK(text.out.find("  p99.9 ") != std::string::npos);
  auto md = bench({mpk.string(), "--format", "md", "--iterations", "3", "--percentile", "75"});
  CHECK(md.out.find("| percentiles_ms.p75 |") != std::string::npos);
  auto csv =
      bench({mpk.string(), "--format", "csv", "--iterations", "3", "--percentile", "75", "--percentile", "90.5"});
  CHECK(csv.out.find(",p75=") != std::string::npos);
  CHECK(csv.out.find(";p90.5=") != std::string::npos);
  auto jsonl = bench({mpk.string(), "--format", "jsonl", "--iterations", "3", "--percentile", "75"});
  CHECK(json::parse(jsonl.out).at("percentiles_ms").contains("p75"));

  for (const char* p : {"100", "0"}) {
    auto bad = run_mpspack({"run", "--bench", mpk.string(), "--percentile", p});
    INFO(bad.err);
    CHECK(bad.exit_code == 2);
    REQUIRE(bad.err_lines().size() == 1);
    CHECK(bad.err_lines()[0] ==
          std::string("mpspack: --percentile: ") + p + " is outside 0..100 (both excluded) (see --help)");
  }
}

TEST_CASE("run --bench --threads: the CPU team's size is set and reported, more CPUs than the process has refused",
          "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  const json j = json::parse(bench({mpk.string(), "--format", "json", "--iterations", "2", "--threads", "1"}).out);
  CHECK(j.at("threads") == 1);
  CHECK(j.at("threads_source") == "option");
  CHECK(j.at("cpus_allowed") == 1);  // the affinity mask, read back: narrowed
  const json d = json::parse(bench({mpk.string(), "--format", "json", "--iterations", "2"}).out);
  CHECK(d.at("threads").get<unsigned>() >= 1);
  CHECK(d.at("threads_source") == (std::getenv("OMP_NUM_THREADS") ? "OMP_NUM_THREADS" : "cores"));
  CHECK(d.at("cpus_allowed").get<unsigned>() >= 1);
  CHECK(d.at("cpus_allowed").get<unsigned>() <= d.at("machine").at("cores").get<unsigned>());
  auto text = bench({mpk.string(), "--iterations", "2", "--threads", "1"});
  CHECK(text.out.find("CPU threads: 1 (--threads)\n") != std::string::npos);
  auto bad = run_mpspack({"run", "--bench", mpk.string(), "--threads", "1024"});  // the most the option takes
  CHECK(bad.exit_code == 2);
  REQUIRE(bad.err_lines().size() == 1);
  CHECK(bad.err_lines()[0].find("--threads 1024: this process may run on ") != std::string::npos);
  CHECK(bad.out.empty());
}

TEST_CASE("run --bench: the text report's latency histogram counts every timed run", "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  auto text = bench({mpk.string(), "--iterations", "10", "--repetitions", "2"});
  const size_t at = text.out.find("histogram (ms, 20 runs):\n");
  REQUIRE(at != std::string::npos);
  std::istringstream rows(text.out.substr(text.out.find('\n', at) + 1));
  size_t total = 0, n = 0, widest = 0;
  double previous_from = -1;
  for (std::string row; std::getline(rows, row) && row.rfind("  ", 0) == 0;) {
    INFO(row);
    const size_t bar = row.find('|'), end = row.rfind('|');
    REQUIRE(bar != std::string::npos);
    REQUIRE(end > bar);
    const double from = std::stod(row.substr(0, row.find(" - ")));
    CHECK(from >= previous_from);
    previous_from = from;
    const std::string hashes = row.substr(bar + 1, end - bar - 1);
    const size_t count = std::stoul(row.substr(end + 1));
    CHECK(hashes.size() == 40);  // the bar's field, padded
    CHECK((count == 0) == (hashes.find('#') == std::string::npos));
    widest = std::max<size_t>(widest, size_t(std::count(hashes.begin(), hashes.end(), '#')));
    total += count;
    ++n;
  }
  CHECK(total == 20);
  CHECK(n >= 1);
  CHECK(n <= 8);
  CHECK(widest == 40);  // the fullest bucket's bar is full width
}

TEST_CASE("run --seed: inputs generated from the seed, compared only with --expect", "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  auto run_json = [&](std::vector<std::string> extra, int code = 0) {
    std::vector<std::string> args = {"run", mpk.string(), "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_mpspack(args);
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == code);
    return json::parse(r.out);
  };
  const json example = run_json({"-o", (tmp / "ex").string()});
  CHECK(example.at("inputs") == "example");
  CHECK(example.at("seed").is_null());
  const json a = run_json({"--seed", "7", "-o", (tmp / "a").string()});
  CHECK(a.at("inputs") == "seed");
  CHECK(a.at("seed") == 7);
  CHECK(a.at("checked") == false);  // nothing to compare generated inputs' outputs with
  run_json({"--seed", "7", "-o", (tmp / "b").string()});
  run_json({"--seed", "8", "-o", (tmp / "c").string()});
  const std::string out_a = slurp(tmp / "a" / "output0.npy");
  CHECK(out_a == slurp(tmp / "b" / "output0.npy"));   // the same seed, the same inputs
  CHECK(out_a != slurp(tmp / "c" / "output0.npy"));   // another seed, other inputs
  CHECK(out_a != slurp(tmp / "ex" / "output0.npy"));  // not the example's inputs

  // With --expect the outputs are compared: the seed-7 outputs match a seed-7 run, not a seed-8 one.
  const json same = run_json({"--seed", "7", "--expect", (tmp / "a" / "output0.npy").string()});
  CHECK(same.at("checked") == true);
  CHECK(same.at("ok") == true);
  run_json({"--seed", "7", "--expect", (tmp / "c" / "output0.npy").string()}, 1);

  auto text = run_mpspack({"run", mpk.string(), "--seed", "7"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("inputs: generated from seed 7; outputs not compared") != std::string::npos);

  // run --bench: the same, and the report says so.
  const json b = json::parse(bench({mpk.string(), "--seed", "7", "--format", "json", "--iterations", "2"}).out);
  CHECK(b.at("inputs") == "seed");
  CHECK(b.at("seed") == 7);
  CHECK(b.at("checked") == false);
  CHECK(b.at("ok") == true);
  const json be = json::parse(bench({mpk.string(), "--seed", "7", "--format", "json", "--iterations", "2", "--expect",
                                     (tmp / "a" / "output0.npy").string()})
                                  .out);
  CHECK(be.at("checked") == true);
  CHECK(be.at("ok") == true);
  auto btext = bench({mpk.string(), "--seed", "7", "--iterations", "2"});
  CHECK(btext.out.find("inputs: generated from seed 7; outputs not compared") != std::string::npos);
  auto mismatch = run_mpspack({"run", "--bench", mpk.string(), "--seed", "7", "--iterations", "1", "--expect",
                               (tmp / "c" / "output0.npy").string()});
  CHECK(mismatch.exit_code == 1);

  // Refused: with --input, and without a recorded example to take the shapes from.
  const auto dir = tiny_mlp_dir();
  auto both = run_mpspack({"run", mpk.string(), "--seed", "1", "--input", (dir / "input0.bin").string() + ":f32:4x16"});
  CHECK(both.exit_code == 2);
  CHECK(both.err == "mpspack: --input excludes --seed (see --help)\n");
  const auto plain = tmp / "plain.mpk";
  REQUIRE(run_mpspack({"build", (dir / "model.so").string(), "-o", plain.string()}).exit_code == 0);
  auto none = run_mpspack({"run", plain.string(), "--seed", "1"});
  CHECK(none.exit_code == 2);
  REQUIRE(none.err_lines().size() == 1);
  CHECK(none.err_lines()[0].find("--seed: the container records no example for library") != std::string::npos);
}

TEST_CASE("run --bench --format csv: the new options add no column and change none", "[run][cli][bench]") {
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  auto plain = bench({mpk.string(), "--format", "csv", "--iterations", "2"});
  auto all = bench({mpk.string(), "--format", "csv", "--iterations", "2", "--repetitions", "2", "--percentile", "75",
                    "--threads", "1", "--seed", "3"});
  const std::string head = plain.out.substr(0, plain.out.find('\n'));
  CHECK(all.out.substr(0, all.out.find('\n')) == head);
  for (const char* k : {",inputs,", ",seed,", ",threads,", ",threads_source,", ",cpus_allowed,", ",repetitions,",
                        ",latency_ms_stddev.p50,", ",percentiles_ms,", ",percentiles_ms_stddev"}) {
    INFO(k);
    CHECK(head.find(k) != std::string::npos);
  }
}

namespace {

// The calls column of MPSPACK_PROFILE_SHIM's table on stderr, by function name.
std::map<std::string, long long> profiled_calls(const std::string& err) {
  std::map<std::string, long long> calls;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream cols(line);
    long long n = 0;
    double total = 0, mean = 0;
    std::string share, name;
    if (cols >> n >> total >> mean >> share >> name && (name.rfind("aoti_torch_", 0) == 0 || name == "GOMP_parallel"))
      calls[name] = n;
  }
  return calls;
}

}  // namespace

TEST_CASE("MPSPACK_PROFILE_SHIM: a table of the shim calls, run --bench's timed runs only", "[run][cli][bench]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  REQUIRE(setenv("MPSPACK_PROFILE_SHIM", "1", 1) == 0);
  const CliResult once = run_mpspack({"run", mpk.string()});
  const CliResult timed = run_mpspack({"run", mpk.string(), "--bench", "--warmup", "2", "--iterations", "3"});
  unsetenv("MPSPACK_PROFILE_SHIM");
  const CliResult quiet = run_mpspack({"run", mpk.string()});
  INFO("one run: " << once.err << "\nbench: " << timed.err);
  REQUIRE(once.exit_code == 0);
  REQUIRE(timed.exit_code == 0);
  CHECK(once.err.find("(MPSPACK_PROFILE_SHIM)") != std::string::npos);
  const auto per_run = profiled_calls(once.err), bench_calls = profiled_calls(timed.err);
  const long long products = per_run.count("aoti_torch_cpu_addmm_out") ? per_run.at("aoti_torch_cpu_addmm_out") : 0;
  REQUIRE(products > 0);
  // The load and the checked first run, and the two warm-up runs, are left out: three runs' worth.
  REQUIRE(bench_calls.count("aoti_torch_cpu_addmm_out") == 1);
  CHECK(bench_calls.at("aoti_torch_cpu_addmm_out") == 3 * products);
  CHECK(quiet.err.find("MPSPACK_PROFILE_SHIM") == std::string::npos);
}

TEST_CASE("MPSPACK_PROFILE_SHIM: the model's own OpenMP loops are a row of the table", "[run][cli][bench]") {
  const auto dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_cnn_embedded";
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto mpk = tmp / "cnn.mpk";
  REQUIRE(run_mpspack({"build", (dir / "model.so").string(), "-o", mpk.string()}).exit_code == 0);
  const std::string input = (dir / "input0.bin").string() + ":f32:4x3x32x32";
  REQUIRE(setenv("MPSPACK_PROFILE_SHIM", "1", 1) == 0);
  const CliResult once = run_mpspack({"run", mpk.string(), "--input", input});
  const CliResult timed = run_mpspack({"run", mpk.string(), "--input", input, "--bench", "--iterations", "3"});
  unsetenv("MPSPACK_PROFILE_SHIM");
  INFO("one run: " << once.err << "\nbench: " << timed.err);
  REQUIRE(once.exit_code == 0);
  REQUIRE(timed.exit_code == 0);
  const auto per_run = profiled_calls(once.err), bench_calls = profiled_calls(timed.err);
  REQUIRE(per_run.count("GOMP_parallel") == 1);  // the CNN's pooling and activations are OpenMP loops
  REQUIRE(bench_calls.count("GOMP_parallel") == 1);
  CHECK(bench_calls.at("GOMP_parallel") == 3 * per_run.at("GOMP_parallel"));
}

TEST_CASE("the loader's switches (MPSPACK_EMBEDDED_WEIGHTS, _LARGE_BLOCKS, _MAP_WEIGHTS_MIN_BYTES, _POPULATE_WEIGHTS) "
          "change the load and run --bench reports them",
          "[run][cli][bench]") {
  MPK_REQUIRE_FIXTURE(tiny_mlp_dir() / "model.so");
  TempDir tmp;
  const auto mpk = build_tiny(tmp);
  // The example's weights are a few KiB, under the mapping threshold: its allocations are not looked at unless
  // the threshold is lowered (and large blocks are routed), and then they are left alone all the same, since the
  // example imports no malloc (debug line). Mapped weights are the loader tests' (test_loader.cpp).
  struct Way {
    std::vector<std::pair<const char*, const char*>> env;
    const char *embedded, *blocks;
    bool populate, looked_at;
  };
  const std::string looked = "large allocations left to the C library: it does not import malloc";
  for (const Way& way :
       {Way{{}, "mmap", "prefault", false, false},
        Way{{{"MPSPACK_MAP_WEIGHTS_MIN_BYTES", "1"}}, "mmap", "prefault", false, true},
        Way{{{"MPSPACK_MAP_WEIGHTS_MIN_BYTES", "1"}, {"MPSPACK_LARGE_BLOCKS", "libc"}}, "mmap", "libc", false, false},
        Way{{{"MPSPACK_EMBEDDED_WEIGHTS", "memcpy"}, {"MPSPACK_POPULATE_WEIGHTS", "on"}},
            "memcpy",
            "prefault",
            true,
            false}}) {
    std::string named;
    for (const auto& [name, value] : way.env) {
      REQUIRE(setenv(name, value, 1) == 0);
      named += std::string(name) + "=" + value + " ";
    }
    const CliResult r =
        run_mpspack({"--log-level", "debug", "run", "--bench", mpk.string(), "--format", "json", "--iterations", "1"});
    for (const auto& [name, value] : way.env) unsetenv(name);
    INFO(named << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j.at("ok") == true);  // the first run matched the recorded outputs
    CHECK(j.at("embedded_weights") == way.embedded);
    CHECK(j.at("large_blocks") == way.blocks);
    CHECK(j.at("populate_weights") == way.populate);
    CHECK(j.at("weights_mode") == "embedded (restored in memory, copied by Create)");
    CHECK((r.err.find(looked) != std::string::npos) == way.looked_at);
  }
  // A value that is not the switch's own: one warning naming it, the default used, the run as usual.
  REQUIRE(setenv("MPSPACK_LARGE_BLOCKS", "bogus", 1) == 0);
  const CliResult r = run_mpspack({"run", "--bench", mpk.string(), "--format", "json", "--iterations", "1"});
  unsetenv("MPSPACK_LARGE_BLOCKS");
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out).at("large_blocks") == "prefault");
  CHECK(r.err == "mpspack: MPSPACK_LARGE_BLOCKS=bogus is not one of prefault, libc; the default, prefault, is used\n");
}
