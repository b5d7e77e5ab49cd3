// `mpspack run` end to end: build a container from each fixture, run it, compare; and every
// failure the loader must catch, each as one line on stderr and a non-zero exit.
#include <catch2/catch.hpp>
#include <cli_runner.hpp>
#include <fixtures.hpp>
#include <nlohmann/json.hpp>

#include "mpspack/bytes.hpp"
#include "mpspack/tensor_io.hpp"

#include <gnu/libc-version.h>

#include <cstring>
#include <fstream>

using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  fs::path dir;
  std::string in_spec;   // ":i64:2x16"
  std::string out_spec;  // ":f32:2x16x100"
};

std::string short_dtype(const std::string& torch_name) {
  if (torch_name == "torch.float32") return "f32";
  if (torch_name == "torch.int64") return "i64";
  if (torch_name == "torch.float64") return "f64";
  if (torch_name == "torch.int32") return "i32";
  FAIL("unexpected dtype " << torch_name);
  return "";
}

std::string spec_of(const nlohmann::json& t) {
  std::string shape;
  for (const auto& d : t.at("shape")) shape += (shape.empty() ? "" : "x") + std::to_string(d.get<int64_t>());
  return ":" + short_dtype(t.at("dtype").get<std::string>()) + ":" + shape;
}

std::vector<Case> rebuilt_cases() {
  std::vector<Case> cases;
  const auto root = fixtures_dir() / "rebuilt-bookworm";
  if (!fs::exists(root / "manifest.json")) return cases;
  const auto m = nlohmann::json::parse(std::ifstream(root / "manifest.json"));
  for (const auto& c : m.at("cases")) {
    REQUIRE(c.at("inputs").size() == 1);
    REQUIRE(c.at("outputs").size() == 1);
    cases.push_back({c.at("dir").get<std::string>(), root / c.at("dir").get<std::string>(), spec_of(c.at("inputs")[0]),
                     spec_of(c.at("outputs")[0])});
  }
  return cases;
}

// mpspack build model.so [--weights weights.blob] -o out [extra...]
CliResult build(const fs::path& dir, const fs::path& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"build", (dir / "model.so").string(), "-o", out.string()};
  if (fs::exists(dir / "weights.blob")) args.insert(args.end(), {"--weights", (dir / "weights.blob").string()});
  args.insert(args.end(), extra.begin(), extra.end());
  return run_mpspack(args);
}

void require_ok(const CliResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
}

// One error line "mpspack: ..." on stderr (the model's own message may come before it), exit 2.
void require_error(const CliResult& r, const std::string& needle, int code = 2) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == code);
  const auto lines = r.err_lines();
  REQUIRE(!lines.empty());
  CHECK(lines.back().rfind("mpspack: ", 0) == 0);
  CHECK(lines.back().find(needle) != std::string::npos);
}

fs::path tiny_mlp_dir() { return binary_dir() / "examples" / "tiny_mlp"; }
fs::path fake_model(const char* which) { return binary_dir() / "tests" / "runtime" / "fake_models" / which; }

// Builds the fake model `which` (a target of this build, so it must exist) into a container in `tmp` and runs it
// on one 4-float input.
CliResult build_and_run_fake_model(const char* which, const TempDir& tmp) {
  const auto so = fake_model(which);
  REQUIRE(fs::exists(so));
  const auto mpk = tmp / "fake.mpk";
  require_ok(run_mpspack({"build", so.string(), "-o", mpk.string()}));
  write_bytes(tmp / "x.bin", std::string(16, '\0'));
  return run_mpspack({"run", mpk.string(), "--input", (tmp / "x.bin").string() + ":f32:4"});
}

}  // namespace

TEST_CASE("run: every rebuilt-bookworm fixture matches torch's output through --input/--expect", "[run][cli][e2e]") {
  const auto cases = rebuilt_cases();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm" / "manifest.json");
  REQUIRE(cases.size() == 6);
  for (const auto& c : cases) {
    SECTION(c.name) {
      TempDir tmp;
      const auto mpk = tmp / "model.mpk";
      require_ok(build(c.dir, mpk));
      auto r = run_mpspack({"run", mpk.string(), "--input", (c.dir / "input0.bin").string() + c.in_spec, "--expect",
                            (c.dir / "expected0.bin").string() + c.out_spec, "--rtol", "1e-4", "--atol", "1e-5"});
      require_ok(r);
      CHECK(r.out.find("output 0: ") != std::string::npos);
      CHECK(r.out.find("matches") != std::string::npos);
      // The same with the weights copied (external blob) / the default path (embedded).
      require_ok(
          run_mpspack({"run", mpk.string(), "--copy-weights", "--input", (c.dir / "input0.bin").string() + c.in_spec,
                       "--expect", (c.dir / "expected0.bin").string() + c.out_spec}));
    }
  }
}

TEST_CASE("run: every rebuilt-bookworm fixture matches through examples recorded at build", "[run][cli][e2e]") {
  const auto cases = rebuilt_cases();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm" / "manifest.json");
  for (const auto& c : cases) {
    SECTION(c.name) {
      TempDir tmp;
      const auto mpk = tmp / "model.mpk";
      require_ok(build(c.dir, mpk,
                       {"--example-input", (c.dir / "input0.bin").string() + c.in_spec, "--example-output",
                        (c.dir / "expected0.bin").string() + c.out_spec}));
      auto r = run_mpspack({"run", mpk.string(), "--json"});
      require_ok(r);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(j.at("ok") == true);
      CHECK(j.at("checked") == true);
      REQUIRE(j.at("outputs").size() == 1);
      CHECK(j.at("outputs")[0].at("match") == true);
      CHECK(j.at("timings").at("first_run_ms").get<double>() >= 0);
      // A raw --input without DTYPE:SHAPE takes the recorded example's.
      require_ok(run_mpspack({"run", mpk.string(), "--input", (c.dir / "input0.bin").string(), "--expect",
                              (c.dir / "expected0.bin").string()}));
    }
  }
}

TEST_CASE("run: the bundled tiny_mlp example, by --input/--expect and by recorded example", "[run][cli]") {
  const auto dir = tiny_mlp_dir();
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto mpk = tmp / "tiny.mpk";
  require_ok(run_mpspack({"build", (dir / "model.so").string(), "-o", mpk.string()}));
  require_ok(run_mpspack({"run", mpk.string(), "--input", (dir / "input0.bin").string() + ":f32:4x16", "--expect",
                          (dir / "expected0.bin").string() + ":f32:4x8"}));
  const auto mpk2 = tmp / "tiny_ex.mpk";
  require_ok(run_mpspack({"build", (dir / "model.so").string(), "-o", mpk2.string(), "--example-input",
                          (dir / "input0.bin").string() + ":f32:4x16", "--example-output",
                          (dir / "expected0.bin").string() + ":f32:4x8"}));
  auto r = run_mpspack({"run", mpk2.string()});
  require_ok(r);
  CHECK(r.out.find("matches the recorded example output0") != std::string::npos);
}

TEST_CASE("run --output writes .npy files that hold the outputs, --input alone exits 0", "[run][cli]") {
  const auto dir = tiny_mlp_dir();
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto mpk = tmp / "tiny.mpk";
  require_ok(run_mpspack({"build", (dir / "model.so").string(), "-o", mpk.string()}));
  const auto out = tmp / "outs";
  require_ok(run_mpspack(
      {"run", mpk.string(), "--input", (dir / "input0.bin").string() + ":f32:4x16", "--output", out.string()}));
  const std::string npy = slurp(out / "output0.npy");
  auto t =
      mpspack::parse_npy(mpspack::ByteView({reinterpret_cast<const uint8_t*>(npy.data()), npy.size()}, "output0.npy"));
  REQUIRE(t.ok());
  CHECK(t->dtype == mpspack::dtype::float32);
  CHECK(t->shape == std::vector<int64_t>{4, 8});
  // The written file is itself a valid reference.
  require_ok(run_mpspack({"run", mpk.string(), "--input", (dir / "input0.bin").string() + ":f32:4x16", "--expect",
                          (out / "output0.npy").string(), "--rtol", "0", "--atol", "0"}));
}

TEST_CASE("run: a wrong output is exit 1, naming the output and the errors", "[run][cli]") {
  const auto dir = tiny_mlp_dir();
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto mpk = tmp / "tiny.mpk";
  require_ok(run_mpspack({"build", (dir / "model.so").string(), "-o", mpk.string()}));
  std::string expected = slurp(dir / "expected0.bin");
  float f;
  std::memcpy(&f, expected.data() + 4 * 5, 4);
  f += 1.0f;
  std::memcpy(expected.data() + 4 * 5, &f, 4);
  write_bytes(tmp / "wrong.bin", expected);
  auto r = run_mpspack({"run", mpk.string(), "--input", (dir / "input0.bin").string() + ":f32:4x16", "--expect",
                        (tmp / "wrong.bin").string() + ":f32:4x8"});
  require_error(r, "output 0 does not match", 1);
  CHECK(r.out.find("DOES NOT MATCH") != std::string::npos);
  CHECK(r.out.find("1 of 32 elements") != std::string::npos);
  CHECK(r.out.find("first at [0, 5]") != std::string::npos);
  // A reference of the wrong shape does not match either (exit 1, says why).
  auto r2 = run_mpspack({"run", mpk.string(), "--input", (dir / "input0.bin").string() + ":f32:4x16", "--expect",
                         (dir / "expected0.bin").string() + ":f32:8x4"});
  require_error(r2, "does not match", 1);
  CHECK(r2.out.find("shape 4x8 differs from the expected 8x4") != std::string::npos);
}

TEST_CASE("run takes a CUDA library to the GPU, or refuses it in one line before loading it", "[run][cli][errors]") {
  const auto dir = fixtures_dir() / "torch-built" / "cuda_mlp_blob";
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto mpk = tmp / "cuda.mpk";
  require_ok(build(dir, mpk));
  auto r = run_mpspack({"run", mpk.string(), "--input", (dir / "input0.bin").string() + ":f32:8x64", "--expect",
                        (dir / "expected0.bin").string() + ":f32:8x10", "--rtol", "1e-3", "--atol", "1e-4"});
#if MPSPACK_TEST_WITH_CUDA
  if (r.exit_code == 0) {  // a GPU is here: the output matched torch's
    CHECK(r.out.find("matches") != std::string::npos);
    return;
  }
  WARN("skipped the GPU run: no usable CUDA device here (tests/device/run.sh runs it on the device machine)");
  require_error(r, "no usable CUDA device here");
  // Says why in terms of the machine (no driver, an old driver, no GPU) and what to do, not CUDA's text alone.
  CHECK(r.err.find("NVIDIA") != std::string::npos);
#else
  require_error(r, "was built for cuda; this mpspack runs cpu models only");
#endif
  CHECK(r.err_lines().size() == 1);  // nothing of the library ran or printed
}

// The torch-built libraries need GLIBC_2.38 (Ubuntu 24.04's glibc): on an older system run says so before dlopen,
// whose own message names neither the library nor what to do; on a newer one the model runs.
TEST_CASE("run refuses a library needing a newer glibc than this system's, in one line saying what to do",
          "[run][cli][errors]") {
  const auto dir = fixtures_dir() / "torch-built" / "cpu_mlp_nolt";
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto mpk = tmp / "nolt.mpk";
  require_ok(build(dir, mpk));
  auto r = run_mpspack({"run", mpk.string(), "--input", (dir / "input0.bin").string() + ":f32:8x64", "--expect",
                        (dir / "expected0.bin").string() + ":f32:8x10", "--rtol", "1e-3", "--atol", "1e-4"});
  const std::string glibc = gnu_get_libc_version();
  const auto dot = glibc.find('.');
  const bool new_enough = std::stoi(glibc.substr(0, dot)) > 2 ||
                          (std::stoi(glibc.substr(0, dot)) == 2 && std::stoi(glibc.substr(dot + 1)) >= 38);
  if (new_enough) {
    require_ok(r);
  } else {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    REQUIRE(r.err_lines().size() == 1);
    CHECK(r.err_lines()[0] == "mpspack: " + mpk.string() +
                                  ": library 'model' needs GLIBC_2.38 (this system has glibc " + glibc +
                                  "): run it on a newer system or rebuild it against glibc " + glibc);
    CHECK(r.out.empty());
  }
  // inspect shows the versions without loading anything, for the container and the library alike.
  for (const fs::path& file : {mpk, dir / "model.so"}) {
    auto text = run_mpspack({"inspect", file.string()});
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("highest symbol versions needed: GLIBC_2.38 (glibc), GCC_4.2.0 (libgcc_s)\n") !=
          std::string::npos);
    auto json = run_mpspack({"inspect", "--json", file.string()});
    REQUIRE(json.exit_code == 0);
    const auto j = nlohmann::json::parse(json.out);
    const auto& needs = file == mpk ? j.at("libraries").at(0).at("version_needs") : j.at("version_needs");
    CHECK(needs.at("highest").at("glibc") == "GLIBC_2.38");
    CHECK(needs.at("highest").at("gcc") == "GCC_4.2.0");
    CHECK(needs.at("highest").at("glibcxx").is_null());
    bool listed = false;
    for (const auto& f : needs.at("files"))
      if (f.at("file") == "libc.so.6")
        for (const auto& v : f.at("versions")) listed = listed || v == "GLIBC_2.38";
    CHECK(listed);
  }
}

TEST_CASE("run --device refuses another kind of device than the library's, and bad device names",
          "[run][cli][errors]") {
  const auto dir = fixtures_dir() / "torch-built" / "cuda_mlp_blob";
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto mpk = tmp / "cuda.mpk";
  require_ok(build(dir, mpk));
  const std::string input = (dir / "input0.bin").string() + ":f32:8x64";
  auto r = run_mpspack({"run", mpk.string(), "--device", "cpu", "--input", input});
  require_error(r, "library 'model' was compiled for cuda; it cannot run on --device cpu");
  CHECK(r.err_lines().size() == 1);
  r = run_mpspack({"run", mpk.string(), "--device", "gpu0", "--input", input});
  require_error(r, "--device gpu0: expected cpu, cuda or cuda:N");
  r = run_mpspack({"run", mpk.string(), "--device", "cuda:-1", "--input", input});
  require_error(r, "--device cuda:-1: expected cpu, cuda or cuda:N");
  // A CPU library on the GPU is refused the same way.
  const auto cpu_mpk = tmp / "cpu.mpk";
  require_ok(run_mpspack({"build", (tiny_mlp_dir() / "model.so").string(), "-o", cpu_mpk.string()}));
  r = run_mpspack({"run", cpu_mpk.string(), "--device", "cuda:0", "--input",
                   (tiny_mlp_dir() / "input0.bin").string() + ":f32:4x16"});
  require_error(r, "was compiled for cpu; it cannot run on --device cuda:0");
}

TEST_CASE("run refuses a library importing functions the shim lacks, naming them", "[run][cli][errors]") {
  const auto so = fake_model("missing_import.so");
  MPK_REQUIRE_FIXTURE(so);
  TempDir tmp;
  const auto mpk = tmp / "missing.mpk";
  require_ok(run_mpspack({"build", so.string(), "-o", mpk.string()}));
  write_bytes(tmp / "x.bin", std::string(16, '\0'));
  auto r = run_mpspack({"run", mpk.string(), "--input", (tmp / "x.bin").string() + ":f32:4"});
  require_error(r, "imports 1 function this mpspack's shim does not provide: aoti_torch_does_not_exist");
  CHECK(r.err_lines().size() == 1);
  // inspect says the same without running anything.
  auto text = run_mpspack({"inspect", mpk.string()});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("not provided by this mpspack's shim (1): aoti_torch_does_not_exist") != std::string::npos);
  auto json = run_mpspack({"inspect", "--json", mpk.string()});
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find("\"missing_shim_imports\": [\n        \"aoti_torch_does_not_exist\"") != std::string::npos);
}

TEST_CASE("run: a model that reports an error is exit 2 with the model's message passed on", "[run][cli][errors]") {
  TempDir tmp;
  auto r = build_and_run_fake_model("fail_run.so", tmp);
  require_error(r, "the model reported an error (see above)");
  // The embedded constants were restored before Create (the model prints their first byte, 0x2a).
  CHECK(r.err.find("deliberate failure in Run (constants start with 42)") != std::string::npos);
}

TEST_CASE("run: a library importing SLEEF binds to the libsleef mpspack opens for it", "[run][cli]") {
  TempDir tmp;
  auto r = build_and_run_fake_model("sleef.so", tmp);
  // dlopen succeeded (no "undefined symbol: Sleef_expf_u10") and the model's call reached SLEEF.
  require_error(r, "the model reported an error (see above)");
  CHECK(r.err.find("deliberate failure in Run (exp(1) = 2.71828)") != std::string::npos);
}

TEST_CASE("run: a real model's failed check (token id out of range) is an error, not a crash", "[run][cli][errors]") {
  const auto dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_block_embedded";
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto mpk = tmp / "block.mpk";
  require_ok(build(dir, mpk));
  std::string ids(2 * 16 * 8, '\0');
  for (size_t i = 0; i < 32; ++i) ids[8 * i] = 3;
  mpspack::store_u64le(reinterpret_cast<uint8_t*>(ids.data()) + 8 * 5, 100000);  // vocabulary is 100
  write_bytes(tmp / "ids.bin", ids);
  auto r = run_mpspack({"run", mpk.string(), "--input", (tmp / "ids.bin").string() + ":i64:2x16"});
  require_error(r, "the model reported an error (see above)");
}

TEST_CASE("run checks inputs before the model runs: count, dtype, shape, size, missing file", "[run][cli][errors]") {
  const auto dir = tiny_mlp_dir();
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  const auto plain = tmp / "tiny.mpk";
  require_ok(run_mpspack({"build", (dir / "model.so").string(), "-o", plain.string()}));
  const auto with_ex = tmp / "tiny_ex.mpk";
  require_ok(run_mpspack({"build", (dir / "model.so").string(), "-o", with_ex.string(), "--example-input",
                          (dir / "input0.bin").string() + ":f32:4x16", "--example-output",
                          (dir / "expected0.bin").string() + ":f32:4x8"}));
  const std::string in = (dir / "input0.bin").string();

  SECTION("wrong number of inputs") {
    require_error(run_mpspack({"run", plain.string(), "--input", in + ":f32:4x16", "--input", in + ":f32:4x16"}),
                  "library 'model': takes 1 input, 2 given");
  }
  SECTION("wrong dtype (recorded example says f32)") {
    require_error(run_mpspack({"run", with_ex.string(), "--input", in + ":i32:4x16"}),
                  "input 0: dtype i32 given, the model takes f32");
  }
  SECTION("wrong shape (recorded example says 4x16)") {
    require_error(run_mpspack({"run", with_ex.string(), "--input", in + ":f32:8x8"}),
                  "input 0: shape 8x8 given, the model takes 4x16");
  }
  SECTION("file size does not match DTYPE:SHAPE") {
    require_error(run_mpspack({"run", plain.string(), "--input", in + ":f32:4x32"}),
                  "input0.bin: holds 256 bytes, but f32 4x32 needs 512");
  }
  SECTION("raw file without DTYPE:SHAPE and no example") {
    require_error(run_mpspack({"run", plain.string(), "--input", in}), "say its dtype and shape");
  }
  SECTION("missing input file") {
    require_error(run_mpspack({"run", plain.string(), "--input", (tmp / "nope.bin").string() + ":f32:4x16"}),
                  "nope.bin: no such file");
  }
  SECTION("missing expected file") {
    require_error(
        run_mpspack({"run", plain.string(), "--input", in + ":f32:4x16", "--expect", (tmp / "nope.bin").string()}),
        "nope.bin: no such file");
  }
  SECTION("no inputs and no recorded example") {
    require_error(run_mpspack({"run", plain.string()}), "records no example");
  }
  SECTION("unknown library") {
    require_error(run_mpspack({"run", plain.string(), "--library", "other", "--input", in + ":f32:4x16"}),
                  "no library 'other'");
  }
  SECTION("missing container") { require_error(run_mpspack({"run", (tmp / "nope.mpk").string()}), "nope.mpk"); }
}
