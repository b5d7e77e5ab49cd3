// A container depends on its inputs' bytes, names and permission bits only (not on where they lie or the
// working folder), and `unpack` gives back files that `build` turns into the same container, byte for byte.
#include "cli_runner.hpp"
#include "fixture_cases.hpp"
#include "fixtures.hpp"
#include "format_1_0.hpp"
#include "mpspack/format/container.hpp"
#include "mpspack/tensor_io.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

using namespace mpspack;
using namespace mpspack::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// "input0.bin:f32:8x64" for a fixture case's first recorded input ("inputs") or output ("outputs"), from the
// set's manifest.json; empty when it records none.
std::string example_spec(const FixtureCase& c, const std::string& which, const std::string& file) {
  if (!fs::exists(c.dir / file)) return {};
  std::ifstream in(c.dir.parent_path() / "manifest.json");
  if (!in) return {};
  const json m = json::parse(in);
  for (const auto& k : m["cases"]) {
    if (k["dir"] != c.name || !k.contains(which) || k[which].empty()) continue;
    const auto& t = k[which][0];
    auto dtype = parse_dtype(t["dtype"].get<std::string>().substr(std::string("torch.").size()));
    if (!dtype) return {};
    return file + ":" + dtype_name(*dtype) + ":" + shape_string(t["shape"].get<std::vector<int64_t>>());
  }
  return {};
}

// build's arguments for a fixture case, file names relative to its folder; with its recorded example when
// `examples` is set and the set's manifest.json describes it.
std::vector<std::string> fixture_build_args(const FixtureCase& c, bool examples) {
  std::vector<std::string> args = {"build", "model.so"};
  if (c.blob()) args.insert(args.end(), {"--weights", "weights.blob"});
  if (examples) {
    if (auto in = example_spec(c, "inputs", "input0.bin"); !in.empty()) {
      args.insert(args.end(), {"--example-input", in});
      if (auto out = example_spec(c, "outputs", "expected0.bin"); !out.empty())
        args.insert(args.end(), {"--example-output", out});
    }
  }
  return args;
}

// `args` with every file operand made absolute against `dir` (the spec's FILE part included).
std::vector<std::string> absolute_in(const fs::path& dir, std::vector<std::string> args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) == 0) continue;
    args[i] = (dir / args[i]).string();
  }
  return args;
}

std::vector<std::string> with_output(std::vector<std::string> args, const fs::path& out) {
  args.insert(args.end(), {"-o", out.string()});
  return args;
}

json unpack_json(const fs::path& mpk, const fs::path& dir) {
  auto r = run_mpspack({"unpack", mpk.string(), "-o", dir.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("the same inputs give the same container from any folder, by absolute or relative paths",
          "[cli][fixtures][reproducible]") {
  const fs::path dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_block_blob";
  MPK_REQUIRE_FIXTURE(dir);
  const FixtureCase c{"rebuilt-bookworm", "cpu_block_blob", dir};
  const auto args = fixture_build_args(c, true);
  REQUIRE(std::find(args.begin(), args.end(), "--example-output") != args.end());
  TempDir tmp;
  // 1: in the fixture's folder, relative names.
  auto a = run_mpspack_in(dir, with_output(args, tmp / "a.mpk"));
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  // 2: from elsewhere, absolute paths.
  auto b = run_mpspack_in(tmp.path, with_output(absolute_in(dir, args), tmp / "b.mpk"));
  INFO(b.err);
  REQUIRE(b.exit_code == 0);
  // 3: from the folder above, relative paths with a folder in them.
  auto c3 = run_mpspack_in(dir.parent_path(), with_output(absolute_in("cpu_block_blob", args), tmp / "c.mpk"));
  INFO(c3.err);
  REQUIRE(c3.exit_code == 0);
  // 4: copies of the files (same bytes and modes) in another folder.
  fs::create_directories(tmp / "copy");
  for (const char* f : {"model.so", "weights.blob", "input0.bin", "expected0.bin"})
    fs::copy_file(dir / f, tmp / "copy" / f);
  auto d = run_mpspack_in(tmp / "copy", with_output(args, tmp / "d.mpk"));
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  const std::string bytes = slurp(tmp / "a.mpk");
  CHECK(slurp(tmp / "b.mpk") == bytes);
  CHECK(slurp(tmp / "c.mpk") == bytes);
  CHECK(slurp(tmp / "d.mpk") == bytes);
  // What is recorded of each input: its file name, never its folder; its mode.
  auto opened = format::Container::open(tmp / "b.mpk");
  REQUIRE(opened.ok());
  std::vector<std::string> names;
  for (const auto& s : opened->manifest().sources) {
    names.push_back(s.name);
    CHECK(s.mode == mode_of(dir / s.name));
  }
  CHECK(names == std::vector<std::string>{"model.so", "weights.blob", "input0.bin", "expected0.bin"});
  CHECK(opened->header().version_minor == 1);
}

TEST_CASE("unpack then build gives the container back byte for byte, for every fixture library",
          "[cli][fixtures][reproducible]") {
  auto cases = fixture_cases();
  if (cases.empty()) MPK_SKIP_FOR_MISSING_FIXTURE("no fixtures under " << fixtures_dir().string());
  // Catch runs the test case once per section: whether any case records its example is known before any runs.
  const bool any_example = std::any_of(cases.begin(), cases.end(), [](const FixtureCase& c) {
    return !example_spec(c, "inputs", "input0.bin").empty();
  });
  if (!any_example) MPK_SKIP_FOR_MISSING_FIXTURE("no fixture case's manifest.json records its example");
  for (const auto& c : cases) {
    for (bool examples : {false, true}) {
      DYNAMIC_SECTION(c.set << "/" << c.name << (examples ? " with examples" : "")) {
        TempDir tmp;
        const auto args = fixture_build_args(c, examples);
        if (examples && args.size() == 2 + (c.blob() ? 2 : 0)) continue;  // the manifest records no example
        auto built = run_mpspack(with_output(absolute_in(c.dir, args), tmp / "m.mpk"));
        INFO(built.err);
        REQUIRE(built.exit_code == 0);
        const json u = unpack_json(tmp / "m.mpk", tmp / "out");
        INFO(u.dump());
        CHECK(u["rebuild"]["identical"] == true);
        // The files come back under their own names, with their own bytes and modes.
        std::vector<std::string> files = {"model.so"};
        if (c.blob()) files.push_back("weights.blob");
        if (examples) files.insert(files.end(), {"input0.bin", "expected0.bin"});
        for (const auto& f : files) {
          INFO(f);
          CHECK(slurp(tmp / "out" / f) == slurp(c.dir / f));
          CHECK(mode_of(tmp / "out" / f) == mode_of(c.dir / f));
        }
        // The recorded command, run in the unpacked folder, writes the same bytes.
        auto again = run_mpspack_in(
            tmp / "out", with_output(u["rebuild"]["args"].get<std::vector<std::string>>(), tmp / "again.mpk"));
        INFO(again.err);
        REQUIRE(again.exit_code == 0);
        CHECK(slurp(tmp / "again.mpk") == slurp(tmp / "m.mpk"));
      }
    }
  }
}

TEST_CASE("unpack's rebuild.sh rebuilds the container, and a .npy example comes back as the same .npy",
          "[cli][fixtures][reproducible]") {
  const fs::path dir = fixtures_dir() / "torch-built" / "cpu_mlp_mmap";
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  const FixtureCase c{"torch-built", "cpu_mlp_mmap", dir};
  const std::string spec = example_spec(c, "inputs", "input0.bin");
  REQUIRE(!spec.empty());
  auto parsed = parse_tensor_spec((dir / spec).string());
  REQUIRE(parsed.ok());
  auto tensor = read_tensor(*parsed);
  REQUIRE(tensor.ok());
  TempDir tmp;
  REQUIRE(write_tensor(tmp / "x.npy", *tensor).ok());  // NumPy's layout, as numpy.save writes it
  auto built = run_mpspack({"build", (dir / "model.so").string(), "--example-input", (tmp / "x.npy").string(), "-o",
                            (tmp / "m.mpk").string()});
  INFO(built.err);
  REQUIRE(built.exit_code == 0);
  const json u = unpack_json(tmp / "m.mpk", tmp / "out");
  INFO(u.dump());
  CHECK(u["rebuild"]["identical"] == true);
  CHECK(u["rebuild"]["args"] == json::array({"build", "model.so", "--example-input", "x.npy"}));
  CHECK(slurp(tmp / "out" / "x.npy") == slurp(tmp / "x.npy"));
  const fs::path script = tmp / "out" / "rebuild.sh";
  REQUIRE(fs::exists(script));
  CHECK(mode_of(script) == 0755);
  // The script finds mpspack through $MPSPACK, and takes -o relative to its own folder.
  ::setenv("MPSPACK", mpspack_binary().c_str(), 1);
  auto r = run_program({"/bin/sh", script.string(), "-o", "again.mpk"}, tmp.path);
  ::unsetenv("MPSPACK");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(tmp / "out" / "again.mpk") == slurp(tmp / "m.mpk"));
}

TEST_CASE("unpack restores the recorded permission bits exactly, whatever the umask", "[cli][fixtures][reproducible]") {
  const fs::path dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob";
  MPK_REQUIRE_FIXTURE(dir);
  TempDir tmp;
  fs::create_directories(tmp / "in");
  fs::copy_file(dir / "model.so", tmp / "in" / "net.so");
  fs::copy_file(dir / "weights.blob", tmp / "in" / "w.bin");
  fs::permissions(tmp / "in" / "net.so", fs::perms(0750));
  fs::permissions(tmp / "in" / "w.bin", fs::perms(0604));
  auto built = run_mpspack({"build", (tmp / "in" / "net.so").string(), "--weights", (tmp / "in" / "w.bin").string(),
                            "-o", (tmp / "m.mpk").string()});
  INFO(built.err);
  REQUIRE(built.exit_code == 0);
  auto inspected = run_mpspack({"inspect", "--json", (tmp / "m.mpk").string()});
  REQUIRE(inspected.exit_code == 0);
  const json j = json::parse(inspected.out);
  CHECK(j["sources"][0]["mode"] == 0750);
  CHECK(j["sources"][1]["mode"] == 0604);
  const mode_t old = ::umask(077);
  const json u = unpack_json(tmp / "m.mpk", tmp / "out");
  ::umask(old);
  CHECK(mode_of(tmp / "out" / "net.so") == 0750);
  CHECK(mode_of(tmp / "out" / "w.bin") == 0604);
  CHECK(u["rebuild"]["args"] == json::array({"build", "net.so", "--weights", "w.bin"}));
  // Another mode is another input: the container differs, and diff says where.
  fs::permissions(tmp / "in" / "net.so", fs::perms(0755));
  REQUIRE(run_mpspack({"build", (tmp / "in" / "net.so").string(), "--weights", (tmp / "in" / "w.bin").string(), "-o",
                       (tmp / "n.mpk").string()})
              .exit_code == 0);
  CHECK(slurp(tmp / "n.mpk") != slurp(tmp / "m.mpk"));
  auto d = run_mpspack({"diff", (tmp / "m.mpk").string(), (tmp / "n.mpk").string()});
  CHECK(d.exit_code == 1);
  CHECK(d.out.find("sources[0].mode") != std::string::npos);
}

TEST_CASE("a format 1.0 container (no recorded modes, sources with their folders) still unpacks",
          "[cli][fixtures][reproducible]") {
  const fs::path dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_block_blob";
  MPK_REQUIRE_FIXTURE(dir);
  const FixtureCase c{"rebuilt-bookworm", "cpu_block_blob", dir};
  TempDir tmp;
  auto built = run_mpspack(with_output(absolute_in(dir, fixture_build_args(c, true)), tmp / "new.mpk"));
  INFO(built.err);
  REQUIRE(built.exit_code == 0);
  auto opened = format::Container::open(tmp / "new.mpk");
  REQUIRE(opened.ok());
  Manifest m = opened->manifest();
  for (auto& s : m.sources) s.name = (dir / s.name).string();  // what a 1.0 writer recorded: the path as given
  const std::string fresh = slurp(tmp / "new.mpk");
  const auto old = as_format_1_0(std::vector<uint8_t>(fresh.begin(), fresh.end()), m);
  write_bytes(tmp / "old.mpk", std::string(old.begin(), old.end()));
  auto reopened = format::Container::open(tmp / "old.mpk");
  REQUIRE(reopened.ok());
  CHECK(reopened->header().version_minor == 0);
  for (const auto& s : reopened->manifest().sources) CHECK(s.mode == 0);
  CHECK(run_mpspack({"verify", (tmp / "old.mpk").string()}).exit_code == 0);

  const json u = unpack_json(tmp / "old.mpk", tmp / "out");
  INFO(u.dump());
  // The files by their recorded file names, with the defaults for an unrecorded mode.
  CHECK(slurp(tmp / "out" / "model.so") == slurp(dir / "model.so"));
  CHECK(mode_of(tmp / "out" / "model.so") == 0755);
  CHECK(slurp(tmp / "out" / "weights.blob") == slurp(dir / "weights.blob"));
  CHECK(mode_of(tmp / "out" / "weights.blob") == 0644);
  CHECK(mode_of(tmp / "out" / "input0.bin") == 0644);
  CHECK(u["rebuild"]["identical"] == false);
  CHECK(u["rebuild"]["why_not"].get<std::string>().find("with its folder") != std::string::npos);
  // Its rebuild is the container a 1.1 writer makes of the same files.
  auto again =
      run_mpspack_in(tmp / "out", with_output(u["rebuild"]["args"].get<std::vector<std::string>>(), tmp / "again.mpk"));
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  auto a = format::Container::open(tmp / "again.mpk");
  REQUIRE(a.ok());
  CHECK(a->manifest().segments.size() == m.segments.size());
  CHECK(a->manifest().sources.size() == m.sources.size());
}

TEST_CASE("a container built from a .pt2 unpacks to its pieces, and says the rebuild is not the same bytes",
          "[cli][fixtures][reproducible][pt2]") {
  const fs::path pt2 = fixtures_dir() / "pt2" / "blob.pt2";
  MPK_REQUIRE_FIXTURE(pt2);
  TempDir tmp;
  REQUIRE(run_mpspack({"build", pt2.string(), "-o", (tmp / "m.mpk").string()}).exit_code == 0);
  const json u = unpack_json(tmp / "m.mpk", tmp / "out");
  INFO(u.dump());
  CHECK(u["rebuild"]["identical"] == false);
  CHECK(u["rebuild"]["why_not"].get<std::string>().find(".pt2") != std::string::npos);
  auto again =
      run_mpspack_in(tmp / "out", with_output(u["rebuild"]["args"].get<std::vector<std::string>>(), tmp / "again.mpk"));
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  // The same libraries and weights come back; the constants table does not (it came from the package).
  auto a = format::Container::open(tmp / "m.mpk");
  auto b = format::Container::open(tmp / "again.mpk");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(a->manifest().segments.size() == b->manifest().segments.size());
  for (size_t i = 0; i < a->manifest().segments.size(); ++i) {
    INFO("segment " << i);
    CHECK(a->manifest().segments[i].xxh3 == b->manifest().segments[i].xxh3);
  }
  CHECK(b->manifest().weights.at(0).constants.empty());
}

TEST_CASE("a container built with --keep-libtorch rebuilds with it", "[cli][fixtures][reproducible]") {
  const fs::path so = fixtures_dir() / "torch-built" / "cpu_mlp_default" / "model.so";
  MPK_REQUIRE_FIXTURE(so);
  TempDir tmp;
  REQUIRE(run_mpspack({"build", so.string(), "--keep-libtorch", "-o", (tmp / "k.mpk").string()}).exit_code == 0);
  const json u = unpack_json(tmp / "k.mpk", tmp / "out");
  INFO(u.dump());
  CHECK(u["rebuild"]["args"] == json::array({"build", "model.so", "--keep-libtorch"}));
  auto again =
      run_mpspack_in(tmp / "out", with_output(u["rebuild"]["args"].get<std::vector<std::string>>(), tmp / "again.mpk"));
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(slurp(tmp / "again.mpk") == slurp(tmp / "k.mpk"));
  // Without the option the same library loses its libtorch entries: the rebuild must not leave it out.
  REQUIRE(run_mpspack({"build", so.string(), "-o", (tmp / "d.mpk").string()}).exit_code == 0);
  CHECK(slurp(tmp / "d.mpk") != slurp(tmp / "k.mpk"));
}
