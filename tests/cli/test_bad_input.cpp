// Bad input gets one line on stderr naming the file and the problem, a non-zero exit code, no
// crash, and no output file left behind.
#include "cli_runner.hpp"
#include "container_edit.hpp"
#include "fixtures.hpp"
#include "mpspack/bytes.hpp"
#include "mpspack/format/container.hpp"
#include "mpspack/format/header.hpp"
#include "mpspack/format/metadata.hpp"

#include <catch2/catch.hpp>

#include <functional>

using namespace mpspack;
using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

fs::path mlp_dir() { return fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded"; }

// Builds the MLP container into `dir` and returns its bytes.
std::string built_container(const TempDir& dir) {
  auto mpk = dir / "good.mpk";
  REQUIRE(run_mpspack({"build", (mlp_dir() / "model.so").string(), "-o", mpk.string()}).exit_code == 0);
  return slurp(mpk);
}

}  // namespace

TEST_CASE("a container truncated at each structural boundary is refused", "[cli][bad-input]") {
  MPK_REQUIRE_FIXTURE(mlp_dir());
  TempDir tmp;
  std::string good = built_container(tmp);
  ByteView view({reinterpret_cast<const uint8_t*>(good.data()), good.size()}, "c");
  auto h = format::read_header(view);
  REQUIRE(h.ok());
  auto c = format::Container::open(tmp / "good.mpk");
  REQUIRE(c.ok());
  std::vector<uint64_t> cuts = {0,
                                4,
                                8,
                                format::field::end - 1,
                                format::kHeaderSize - 1,
                                format::kHeaderSize,
                                h->metadata_offset + h->metadata_size / 2,
                                h->metadata_offset + h->metadata_size,
                                h->data_offset,
                                good.size() - 1};
  for (const auto& s : c->manifest().segments) {
    cuts.push_back(s.offset);
    cuts.push_back(s.offset + s.size / 2);
  }
  for (uint64_t cut : cuts) {
    DYNAMIC_SECTION("cut at " << cut) {
      auto path = tmp / "cut.mpk";
      write_bytes(path, good.substr(0, cut));
      check_one_line_error(run_mpspack({"inspect", path.string()}), "cut.mpk");
      auto v = run_mpspack({"verify", path.string()});
      CHECK(v.exit_code != 0);
      CHECK(v.exit_code < 128);
      check_one_line_error(run_mpspack({"unpack", path.string(), "-o", (tmp / "out").string()}), "cut.mpk");
      CHECK_FALSE(fs::exists(tmp / "out" / "model.so"));
    }
  }
}

TEST_CASE("a flipped byte in the header or metadata is caught on open", "[cli][bad-input]") {
  MPK_REQUIRE_FIXTURE(mlp_dir());
  TempDir tmp;
  std::string good = built_container(tmp);
  ByteView view({reinterpret_cast<const uint8_t*>(good.data()), good.size()}, "c");
  auto h = format::read_header(view);
  REQUIRE(h.ok());
  std::vector<uint64_t> positions;
  for (uint64_t i = 0; i < format::kHeaderSize; i += 3) positions.push_back(i);
  for (uint64_t i = 0; i < h->metadata_size; i += h->metadata_size / 16) positions.push_back(h->metadata_offset + i);
  for (uint64_t pos : positions) {
    DYNAMIC_SECTION("byte " << pos) {
      std::string bad = good;
      bad[pos] ^= 0x40;
      auto path = tmp / "flip.mpk";
      write_bytes(path, bad);
      check_one_line_error(run_mpspack({"inspect", path.string()}), "flip.mpk");
    }
  }
}

TEST_CASE("a flipped byte in a segment or the padding is caught by verify, not by inspect", "[cli][bad-input]") {
  MPK_REQUIRE_FIXTURE(mlp_dir());
  TempDir tmp;
  std::string good = built_container(tmp);
  auto c = format::Container::open(tmp / "good.mpk");
  REQUIRE(c.ok());
  const auto& segs = c->manifest().segments;
  std::vector<std::pair<std::string, uint64_t>> spots = {
      {"library", segs[0].offset + segs[0].size / 2},
      {"weights", segs[1].offset + segs[1].size - 1},
      {"padding", segs[0].offset + segs[0].size + 1},
      {"padding after metadata", c->header().metadata_offset + c->header().metadata_size + 7}};
  for (const auto& [what, pos] : spots) {
    DYNAMIC_SECTION(what) {
      std::string bad = good;
      bad[pos] ^= 0x01;
      auto path = tmp / "data.mpk";
      write_bytes(path, bad);
      CHECK(run_mpspack({"inspect", path.string()}).exit_code == 0);
      auto v = run_mpspack({"verify", path.string()});
      check_one_line_error(v, "data.mpk", 1);
      auto j = run_mpspack({"verify", "--json", path.string()});
      CHECK(j.exit_code == 1);
      CHECK(j.out.find("\"ok\": false") != std::string::npos);
    }
  }
}

TEST_CASE("offsets outside the file, overlapping, overflowing or misaligned are refused", "[cli][bad-input]") {
  MPK_REQUIRE_FIXTURE(mlp_dir());
  TempDir tmp;
  std::string good = built_container(tmp);
  std::vector<std::pair<std::string, std::function<void(Manifest&)>>> edits = {
      {"segment past the end", [](Manifest& m) { m.segments[1].size += 1; }},
      {"segment offset overflows", [](Manifest& m) { m.segments[1].offset = UINT64_MAX - 63; }},
      {"segments overlap", [](Manifest& m) { m.segments[1].offset = m.segments[0].offset; }},
      {"misaligned segment", [](Manifest& m) { m.segments[0].offset += 8; }},
      {"alignment not a power of two", [](Manifest& m) { m.segments[0].alignment = 3; }},
      {"library segment out of range", [](Manifest& m) { m.libraries[0].segment = 7; }},
      {"library segment of the wrong kind", [](Manifest& m) { m.libraries[0].segment = 1; }},
      {"weights index out of range", [](Manifest& m) { m.libraries[0].weights = 5; }},
      // Also a fuzz_container regression input (tests/fuzz/regressions/fuzz_container/): the library
      // check must not read the segment of its weights before that index is checked.
      {"weights segment out of range", [](Manifest& m) { m.weights[0].segment = 7; }},
      {"removed size disagrees", [](Manifest& m) { m.libraries[0].removed_size += 1; }},
      {"restore patch outside the library", [](Manifest& m) { m.libraries[0].restore[0].offset = UINT64_MAX - 1; }},
  };
  for (const auto& [what, edit] : edits) {
    DYNAMIC_SECTION(what) {
      auto path = tmp / "edit.mpk";
      write_bytes(path, with_manifest(good, edit));
      check_one_line_error(run_mpspack({"inspect", path.string()}), "edit.mpk");
      check_one_line_error(run_mpspack({"verify", path.string()}), "edit.mpk", 1);
    }
  }
}

TEST_CASE("unpack refuses stored names that would leave the output folder", "[cli][bad-input]") {
  MPK_REQUIRE_FIXTURE(mlp_dir());
  TempDir tmp;
  std::string good = built_container(tmp);
  // "model" -> "../ev": same length, so the metadata keeps its size; the checksum is recomputed.
  std::string bad = with_manifest(good, [](Manifest& m) { m.libraries[0].name = "../ev"; });
  auto path = tmp / "evil.mpk";
  write_bytes(path, bad);
  fs::create_directories(tmp / "out");
  auto r = run_mpspack({"unpack", path.string(), "-o", (tmp / "out").string()});
  check_one_line_error(r, "../ev");
  CHECK_FALSE(fs::exists(tmp / "ev.so"));
  CHECK(fs::is_empty(tmp / "out"));
}

TEST_CASE("build refuses inputs that are not AOTInductor model libraries and leaves no output", "[cli][bad-input]") {
  MPK_REQUIRE_FIXTURE(mlp_dir());
  TempDir tmp;
  auto out = tmp / "out.mpk";
  std::string so = slurp(mlp_dir() / "model.so");

  auto expect_refused = [&](const std::vector<std::string>& inputs, const std::string& name) {
    std::vector<std::string> args = {"build"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    args.push_back("-o");
    args.push_back(out.string());
    check_one_line_error(run_mpspack(args), name);
    CHECK_FALSE(fs::exists(out));
    for (const auto& e : tmp.entries()) CHECK(e.find("out.mpk") == std::string::npos);
  };

  SECTION("missing file") { expect_refused({(tmp / "nope.so").string()}, "nope.so"); }
  SECTION("empty file") {
    write_bytes(tmp / "empty.so", "");
    expect_refused({(tmp / "empty.so").string()}, "empty.so");
  }
  SECTION("a directory") {
    fs::create_directories(tmp / "adir.so");
    expect_refused({(tmp / "adir.so").string()}, "adir.so");
  }
  SECTION("not an ELF file") {
    write_bytes(tmp / "text.so", "hello, this is not a library\n");
    expect_refused({(tmp / "text.so").string()}, "text.so");
  }
  SECTION("an ELF for another machine") {
    std::string other = so;
    other[18] = 3;  // e_machine = EM_386
    other[19] = 0;
    write_bytes(tmp / "i386.so", other);
    expect_refused({(tmp / "i386.so").string()}, "i386.so");
  }
  SECTION("a truncated ELF") {
    write_bytes(tmp / "short.so", so.substr(0, 100));
    expect_refused({(tmp / "short.so").string()}, "short.so");
  }
  SECTION("a library without the constants symbols") {
    // Any ordinary shared library: the C++ runtime on this machine.
    fs::path plain = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
    if (!fs::exists(plain)) {
      WARN("skipped: " << plain << " not found");
      return;
    }
    expect_refused({plain.string()}, "libstdc++.so.6");
  }
  SECTION("an external blob of the wrong size") {
    auto blob_dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob";
    std::string blob = slurp(blob_dir / "weights.blob");
    write_bytes(tmp / "short.blob", blob.substr(0, blob.size() - 64));
    expect_refused({(blob_dir / "model.so").string(), "--weights", (tmp / "short.blob").string()}, "short.blob");
  }
  SECTION("an external-blob library whose blob is missing") {
    auto blob_dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob";
    expect_refused({(blob_dir / "model.so").string()}, "model_weights.blob");
  }
}

TEST_CASE("build refuses .pt2 packages with pickled weights or without a library", "[cli][bad-input][pt2]") {
  TempDir tmp;
  auto out = tmp / "out.mpk";
  auto make_zip = [&](const std::string& name, const std::string& entries_py) {
    auto script = tmp / "mk.py";
    write_bytes(script, "import zipfile,sys\nz=zipfile.ZipFile(sys.argv[1],'w')\n" + entries_py + "z.close()\n");
    std::string cmd = "python3 " + script.string() + " " + (tmp / name).string();
    REQUIRE(std::system(cmd.c_str()) == 0);
    return tmp / name;
  };
  SECTION("pickled weights") {
    auto so = mlp_dir() / "model.so";
    MPK_REQUIRE_FIXTURE(so);
    auto pkg = make_zip("pickled.pt2", "z.writestr('p/archive_format','pt2')\n"
                                       "z.write('" +
                                           so.string() +
                                           "','p/data/aotinductor/model/abc.wrapper.so')\n"
                                           "z.writestr('p/data/weights/weight_0','x'*64)\n"
                                           "z.writestr('p/data/weights/weights_config.json','{}')\n");
    check_one_line_error(run_mpspack({"build", pkg.string(), "-o", out.string()}), "pickled.pt2");
  }
  SECTION("no compiled library") {
    auto pkg = make_zip("nolib.pt2", "z.writestr('p/archive_format','pt2')\n"
                                     "z.writestr('p/data/aotinductor/model/abc.wrapper.cpp','// source only')\n");
    check_one_line_error(run_mpspack({"build", pkg.string(), "-o", out.string()}), "nolib.pt2");
  }
  SECTION("a zip that is not a .pt2") {
    auto pkg = make_zip("plain.zip", "z.writestr('readme.txt','hi')\n");
    check_one_line_error(run_mpspack({"build", pkg.string(), "-o", out.string()}), "plain.zip");
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("inspect and verify refuse files that are not containers", "[cli][bad-input]") {
  TempDir tmp;
  write_bytes(tmp / "empty.mpk", "");
  check_one_line_error(run_mpspack({"inspect", (tmp / "empty.mpk").string()}), "empty.mpk");
  check_one_line_error(run_mpspack({"verify", (tmp / "empty.mpk").string()}), "empty.mpk");
  write_bytes(tmp / "junk.mpk", std::string(4096, 'j'));
  check_one_line_error(run_mpspack({"inspect", (tmp / "junk.mpk").string()}), "junk.mpk");
  check_one_line_error(run_mpspack({"verify", (tmp / "junk.mpk").string()}), "junk.mpk");
  fs::create_directories(tmp / "dir.mpk");
  check_one_line_error(run_mpspack({"inspect", (tmp / "dir.mpk").string()}), "dir.mpk");
  check_one_line_error(run_mpspack({"verify", (tmp / "missing.mpk").string()}), "missing.mpk");
}

TEST_CASE("a value outside an option's set is refused in one line that names the option", "[cli][bad-input]") {
  // A hidden option included: CLI11 drops the name of an option hidden its own way.
  const std::vector<std::vector<std::string>> cases = {
      {"run", "x.mpk", "--format", "bogus"},
      {"push", "x.mpk", "--upload-chunk-bytes", "bogus"},
      {"--log-level", "bogus", "inspect", "x.mpk"},
  };
  for (const auto& args : cases) {
    const std::string& option = args[0].starts_with("--") ? args[0] : args[2];
    DYNAMIC_SECTION(option) {
      auto r = run_mpspack(args);
      INFO("stderr: " << r.err);
      CHECK(r.exit_code == 2);
      REQUIRE(r.err_lines().size() == 1);
      CHECK(r.err_lines()[0].rfind("mpspack: " + option + ": bogus", 0) == 0);
    }
  }
}

TEST_CASE("usage errors are one line starting mpspack:, exit 2", "[cli][bad-input]") {
  const std::vector<std::vector<std::string>> cases = {
      {"run"}, {"inspect", "a.mpk", "b.mpk"}, {"build", "--no-such-option"}, {"no-such-command"}, {}};
  for (const auto& args : cases) {
    auto r = run_mpspack(args);
    INFO("args: " << args.size() << " stderr: " << r.err);
    CHECK(r.exit_code == 2);
    REQUIRE(r.err_lines().size() == 1);
    CHECK(r.err_lines()[0].rfind("mpspack: ", 0) == 0);
    CHECK(r.out.empty());
  }
}

TEST_CASE("push --help leaves the hidden option out", "[cli]") {
  auto r = run_mpspack({"push", "--help"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--parallel") != std::string::npos);
  CHECK(r.out.find("--upload-chunk-bytes") == std::string::npos);
  CHECK(r.out.find("Hidden") == std::string::npos);
}

TEST_CASE("every command names a file of no kind it reads the same way: one line, exit 2", "[cli][bad-input]") {
  MPK_REQUIRE_FIXTURE(mlp_dir());
  TempDir tmp;
  const std::string container = (tmp / "good.mpk").string();
  built_container(tmp);
  std::string random(4096, '\0');
  uint32_t x = 12345;
  for (char& c : random) c = char((x = x * 1103515245u + 12345u) >> 24);
  random[0] = 'Z';  // no magic of any kind by chance
  const std::vector<std::pair<std::string, std::string>> files = {
      {"empty.bin", ""}, {"three.bin", "MPS"}, {"text.txt", "hello, this is not a model\n"}, {"random.bin", random}};
  const std::string all = "not an mpspack container, an ELF shared library or a .pt2 package)";
  const std::string container_only = "not an mpspack container)";
  const std::string build_kinds = "not an ELF shared library or a .pt2 package)";
  for (const auto& [name, bytes] : files) {
    const std::string path = (tmp / name).string();
    write_bytes(path, bytes);
    const std::string empty = bytes.empty() ? "an empty file, " : "";
    // The command, its arguments, and the rest of the line after "FILE: ".
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"inspect", path}, "not a file mpspack inspect reads (" + empty + all},
        {{"inspect", path, "--json"}, "not a file mpspack inspect reads (" + empty + all},
        {{"verify", path}, "not a file mpspack verify reads (" + empty + container_only},
        {{"run", path}, "not a file mpspack run reads (" + empty + container_only},
        {{"unpack", path, "-o", (tmp / "out").string()}, "not a file mpspack unpack reads (" + empty + container_only},
        {{"diff", path, container}, "not a file mpspack diff reads (" + empty + container_only},
        {{"diff", container, path}, "not a file mpspack diff reads (" + empty + container_only},
        {{"build", path, "-o", (tmp / "out.mpk").string()}, "not a file mpspack build reads (" + empty + build_kinds},
        {{"push", path, "127.0.0.1:1/r/m:v1", "--plain-http"},
         "not a file mpspack push reads (" + empty + container_only},
    };
    for (const auto& [args, expected] : cases) {
      INFO(name << ": " << args[0] << " " << args.back());
      auto r = run_mpspack(args);
      INFO(r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err == "mpspack: " + path + ": " + expected + "\n");  // one line
      CHECK_FALSE(fs::exists(tmp / "out"));
      CHECK_FALSE(fs::exists(tmp / "out.mpk"));
    }
  }
}

TEST_CASE("a known kind of file a command does not read is named as what it is", "[cli][bad-input]") {
  MPK_REQUIRE_FIXTURE(mlp_dir());
  TempDir tmp;
  built_container(tmp);
  const std::string so = (mlp_dir() / "model.so").string();
  const std::string mpk = (tmp / "good.mpk").string();
  auto r = run_mpspack({"verify", so});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "mpspack: " + so +
                     ": not a file mpspack verify reads (it is an ELF shared library, not an mpspack "
                     "container)\n");
  r = run_mpspack({"build", mpk, "-o", (tmp / "again.mpk").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "mpspack: " + mpk +
                     ": not a file mpspack build reads (it is an mpspack container, not an ELF shared "
                     "library or a .pt2 package)\n");
  CHECK_FALSE(fs::exists(tmp / "again.mpk"));
}
