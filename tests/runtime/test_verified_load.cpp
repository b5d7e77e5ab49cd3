// `mpspack run` checks every byte it executes or feeds the model: a flipped byte in any segment of a container of
// every flavour stops the run with exit 2, naming the segment, before any output is reported or written;
// --no-verify skips the weights only, and says so. `diff` tells a damaged container from an intact one.
#include <catch2/catch.hpp>
#include <cli_runner.hpp>
#include <fixtures.hpp>
#include <nlohmann/json.hpp>

#include "mpspack/format/container.hpp"
#include "mpspack/format/hash.hpp"

#include <fmt/format.h>

#include <fstream>

using namespace mpspack;
using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

// A container and the run arguments that feed it its recorded example's input from a file.
struct Packed {
  std::string name;
  fs::path mpk;
  std::vector<std::string> with_input;  // --input FILE --expect FILE
};

void require_ok(const CliResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
}

// The synthetic Linear model (bench/synthetic) in every layout, with 17 MiB of weights: more than one 16 MiB hash
// chunk, so the weights are checked chunk by chunk on several threads.
std::vector<Packed> make_synthetic(const TempDir& tmp) {
  const fs::path out = tmp.path / "linear";
  const std::string cmd = fmt::format("bash '{}/bench/synthetic/make_linear.sh' '{}' 17 '{}' >/dev/null",
                                      source_dir().string(), binary_dir().string(), out.string());
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::vector<Packed> v;
  for (const char* layout : {"embedded", "blob", "mmap", "pt2"})
    v.push_back({fmt::format("synthetic {}", layout),
                 out / (std::string(layout) + ".mpk"),
                 {"--input", (out / "input0.bin").string(), "--expect", (out / "expected0.bin").string()}});
  return v;
}

// The rebuilt-bookworm fixtures (embedded and blob, real AOTInductor code), packed with their example.
std::vector<Packed> make_fixtures(const TempDir& tmp) {
  const fs::path root = fixtures_dir() / "rebuilt-bookworm";
  const auto m = nlohmann::json::parse(std::ifstream(root / "manifest.json"));
  std::vector<Packed> v;
  for (const auto& c : m.at("cases")) {
    const std::string name = c.at("dir").get<std::string>();
    const fs::path dir = root / name;
    auto spec = [](const nlohmann::json& t) {
      static const std::map<std::string, std::string> dtypes{{"torch.float32", "f32"}, {"torch.int64", "i64"}};
      std::string shape;
      for (const auto& d : t.at("shape")) shape += (shape.empty() ? "" : "x") + std::to_string(d.get<int64_t>());
      return ":" + dtypes.at(t.at("dtype").get<std::string>()) + ":" + shape;
    };
    const fs::path mpk = tmp.path / (name + ".mpk");
    std::vector<std::string> args = {"build",
                                     (dir / "model.so").string(),
                                     "-o",
                                     mpk.string(),
                                     "--example-input",
                                     (dir / "input0.bin").string() + spec(c.at("inputs")[0]),
                                     "--example-output",
                                     (dir / "expected0.bin").string() + spec(c.at("outputs")[0])};
    if (fs::exists(dir / "weights.blob")) args.insert(args.end(), {"--weights", (dir / "weights.blob").string()});
    require_ok(run_mpspack(args));
    v.push_back({name, mpk, {"--input", (dir / "input0.bin").string(), "--expect", (dir / "expected0.bin").string()}});
  }
  return v;
}

// Each set is made once per process: Catch runs a test case's body again for every section.
const std::vector<Packed>& synthetic() {
  static TempDir tmp;
  static const std::vector<Packed> packed = make_synthetic(tmp);
  return packed;
}

const std::vector<Packed>& fixtures() {
  static TempDir tmp;
  static const std::vector<Packed> packed = make_fixtures(tmp);
  return packed;
}

// A copy of `from` with the byte at `offset` inverted.
fs::path flipped(const fs::path& from, const fs::path& to, uint64_t offset) {
  std::string bytes = slurp(from);
  REQUIRE(offset < bytes.size());
  bytes[offset] = char(~uint8_t(bytes[offset]));
  write_bytes(to, bytes);
  return to;
}

// Where to flip a byte of segment `s`: in its last hash chunk when it has several (so that a chunk other than the
// first is the one found), else in its middle.
uint64_t flip_offset(const SegmentInfo& s) {
  if (s.chunk_xxh3.size() > 1) return s.offset + (s.chunk_xxh3.size() - 1) * format::kHashChunkBytes + 5;
  return s.offset + s.size / 2;
}

std::string segment_named(uint32_t i, const SegmentInfo& s) { return fmt::format("segment {} ('{}',", i, s.name); }

void require_damage_refused(const CliResult& r, uint32_t i, const SegmentInfo& s, const fs::path& out_dir) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  const auto lines = r.err_lines();
  REQUIRE(!lines.empty());
  CHECK(lines.back().rfind("mpspack: ", 0) == 0);
  CHECK(lines.back().find(segment_named(i, s)) != std::string::npos);
  CHECK(lines.back().find("is damaged") != std::string::npos);
  CHECK(r.out.empty());                                    // no output reported
  CHECK((!fs::exists(out_dir) || fs::is_empty(out_dir)));  // nor written
}

}  // namespace

TEST_CASE("run: a flipped byte in any segment of any flavour is exit 2 naming the segment, before outputs",
          "[run][cli][verify]") {
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm" / "manifest.json");
  TempDir tmp;
  std::vector<Packed> all = synthetic();
  all.insert(all.end(), fixtures().begin(), fixtures().end());
  for (const Packed& p : all) {
    auto c = format::Container::open(p.mpk);
    REQUIRE(c.ok());
    const auto& segments = c->manifest().segments;
    for (uint32_t i = 0; i < segments.size(); ++i) {
      const SegmentInfo& s = segments[i];
      if (s.size == 0) continue;
      DYNAMIC_SECTION(p.name << ", segment " << i << " (" << to_string(s.kind) << ")") {
        const fs::path bad = flipped(p.mpk, tmp.path / "bad.mpk", flip_offset(s));
        const fs::path out_dir = tmp.path / "outputs";
        require_damage_refused(run_mpspack({"run", bad.string(), "-o", out_dir.string()}), i, s, out_dir);
        // With the inputs given as files, the recorded examples are not read: the library and the weights are
        // still checked.
        if (s.kind == SegmentKind::Library || s.kind == SegmentKind::Weights) {
          std::vector<std::string> args = {"run", bad.string(), "-o", out_dir.string()};
          args.insert(args.end(), p.with_input.begin(), p.with_input.end());
          require_damage_refused(run_mpspack(args), i, s, out_dir);
          std::vector<std::string> bench = {"run", bad.string(), "--bench", "--iterations", "2", "--warmup", "0"};
          require_damage_refused(run_mpspack(bench), i, s, out_dir);
        }
        // --no-verify skips the weights' check only, and says so.
        const auto r = run_mpspack({"run", bad.string(), "--no-verify", "-o", out_dir.string()});
        INFO("stdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.err.find("not checked against their hashes (--no-verify)") != std::string::npos);
        if (s.kind == SegmentKind::Weights) {
          CHECK(r.err.find("is damaged") == std::string::npos);
          CHECK((r.exit_code == 0 || r.exit_code == 1));  // it ran: the outputs match or not
          CHECK(fs::exists(out_dir / "output0.npy"));
        } else {
          require_damage_refused(r, i, s, out_dir);
        }
        fs::remove_all(out_dir);
      }
    }
  }
}

TEST_CASE("run: an intact container runs with its weights checked, and the report says how long the check took",
          "[run][cli][verify]") {
  for (const Packed& p : synthetic()) {
    DYNAMIC_SECTION(p.name) {
      auto r = run_mpspack({"run", p.mpk.string(), "--json"});
      require_ok(r);
      const auto t = nlohmann::json::parse(r.out).at("timings");
      CHECK(t.at("verify_ms").get<double>() >= 0);
      CHECK(t.at("verify_wait_ms").get<double>() >= 0);
      r = run_mpspack({"run", p.mpk.string(), "--json", "--no-verify"});
      require_ok(r);
      CHECK(nlohmann::json::parse(r.out).at("timings").at("verify_ms").is_null());
    }
  }
}

TEST_CASE("verify: a flipped byte in a later hash chunk of a large segment is named by its chunk", "[cli][verify]") {
  TempDir tmp;
  const Packed p = synthetic().at(1);  // blob: the weights segment is 17 MiB, two chunks
  auto c = format::Container::open(p.mpk);
  REQUIRE(c.ok());
  const SegmentInfo& s = c->manifest().segments.at(c->manifest().weights.at(0).segment);
  REQUIRE(s.chunk_xxh3.size() == 2);
  const fs::path bad = flipped(p.mpk, tmp.path / "bad.mpk", flip_offset(s));
  const auto r = run_mpspack({"verify", bad.string()});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  CHECK((r.out + r.err).find("is damaged") != std::string::npos);
}

TEST_CASE("diff: a container with one flipped byte differs from the intact one, and --metadata-only says what it read",
          "[cli][diff][verify]") {
  TempDir tmp;
  for (const Packed& p : synthetic()) {
    auto c = format::Container::open(p.mpk);
    REQUIRE(c.ok());
    const auto& segments = c->manifest().segments;
    for (uint32_t i = 0; i < segments.size(); ++i) {
      DYNAMIC_SECTION(p.name << ", segment " << i << " (" << to_string(segments[i].kind) << ")") {
        const fs::path bad = flipped(p.mpk, tmp.path / "bad.mpk", flip_offset(segments[i]));
        auto r = run_mpspack({"diff", p.mpk.string(), bad.string(), "--json"});
        INFO("stdout: " << r.out << "\nstderr: " << r.err);
        CHECK(r.exit_code == 1);
        auto j = nlohmann::json::parse(r.out);
        CHECK(j.at("same") == false);
        CHECK(j.at("compared") == "bytes");
        r = run_mpspack({"diff", p.mpk.string(), bad.string(), "--metadata-only"});
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("metadata only") != std::string::npos);
      }
    }
  }
}
