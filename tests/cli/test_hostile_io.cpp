// Files and names a hostile user picks: FIFOs and devices as inputs and outputs, bytes that are not UTF-8
// or that drive a terminal, containers whose outputs collide or amplify, outputs that are inputs, signals.
// Each command answers with one line and exit 2, within seconds, and leaves nothing behind.
#include "cli_runner.hpp"
#include "container_edit.hpp"
#include "fixtures.hpp"
#include "slow_build.hpp"
#include "zip_writer.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <algorithm>

using namespace mpspack;
using namespace mpspack::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kLimitS = 10;  // every crafted input finishes within this

fs::path fixture(const std::string& name) { return fixtures_dir() / "rebuilt-bookworm" / name; }

// Builds `inputs` into `out`; the build must succeed.
void build(const std::vector<std::string>& inputs, const fs::path& out) {
  std::vector<std::string> args = {"build"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.insert(args.end(), {"-o", out.string()});
  auto r = run_mpspack(args, 120);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

// No byte that a terminal acts on: C0 controls but newline, DEL, a byte that does not start a UTF-8
// sequence (a raw C1 control among them), and U+0080..U+009F.
bool terminal_safe(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n') || c == 0x7f) return false;
      ++i;
      continue;
    }
    const size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
    if (c == 0xc2 && static_cast<unsigned char>(s[i + 1]) <= 0x9f) return false;
    i += len;
  }
  return true;
}

// stdout parses as JSON (nlohmann refuses invalid UTF-8) and says which strings were not UTF-8.
json parse_json(const CliResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  json j;
  REQUIRE_NOTHROW(j = json::parse(r.out));
  return j;
}

bool lists_invalid(const json& j, const std::string& pointer, const std::string& hex) {
  if (!j.contains("invalid_utf8")) return false;
  for (const auto& e : j["invalid_utf8"])
    if (e["pointer"] == pointer && e["hex"] == hex) return true;
  return false;
}

std::string hex_of(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += fmt::format("{:02x}", c);
  return out;
}

}  // namespace

TEST_CASE("a FIFO or a device given as any input is refused at once, naming it", "[cli][hostile-io]") {
  const auto mlp = fixture("cpu_mlp_embedded");
  const auto blob = fixture("cpu_mlp_blob");
  MPK_REQUIRE_FIXTURE(fixture(""));
  TempDir tmp;
  const auto good = tmp / "good.mpk";
  build({(mlp / "model.so").string()}, good);
  const auto fifo = tmp / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string f = fifo.string(), in = (mlp / "input0.bin").string() + ":f32:8x64";
  const std::string out = (tmp / "out.mpk").string(), dir = (tmp / "unpacked").string();
  const std::vector<std::vector<std::string>> commands = {
      {"inspect", f},
      {"inspect", "--json", f},
      {"verify", f},
      {"verify", "--json", f},
      {"unpack", f, "-o", dir},
      {"diff", f, good.string()},
      {"diff", good.string(), f},
      {"build", f, "-o", out},
      {"build", f + ".pt2", "-o", out},
      {"build", (blob / "model.so").string(), "--weights", f, "-o", out},
      {"build", (mlp / "model.so").string(), "--example-input", f + ":f32:8x64", "-o", out},
      {"run", f},
      {"run", good.string(), "--input", f + ":f32:8x64"},
      {"run", good.string(), "--input", in, "--expect", f + ":f32:8x10"},
      {"run", "--bench", "--cold", "--iterations", "1", f},
  };
  fs::create_symlink(fifo, tmp / "fifo.pt2");  // a .pt2 name does not change what the file is
  for (size_t i = 0; i < commands.size(); ++i) {
    const auto& args = commands[i];
    // Named by position, not by the command line: the temp folder's name changes on every pass.
    DYNAMIC_SECTION("command " << i << ": " << args[0]) {
      auto r = run_mpspack(args, kLimitS);
      REQUIRE(r.exit_code != kTimedOut);
      check_one_line_error(r, "fifo");
      CHECK(r.err.find("is a FIFO, not a regular file") != std::string::npos);
      CHECK_FALSE(fs::exists(out));
      CHECK_FALSE(fs::exists(dir));
    }
  }
  SECTION("a character device") {
    auto r = run_mpspack({"inspect", "/dev/zero"}, kLimitS);
    check_one_line_error(r, "/dev/zero");
    CHECK(r.err.find("is a character device, not a regular file") != std::string::npos);
  }
}

TEST_CASE("JSON output is valid UTF-8 whatever bytes a path or a stored name holds", "[cli][hostile-io]") {
  const auto mlp = fixture("cpu_mlp_embedded");
  MPK_REQUIRE_FIXTURE(mlp);
  TempDir tmp;
  const std::string latin1 = "caf\xe9";  // "café" in Latin-1: not UTF-8
  SECTION("verify --json of a missing file with such a name") {
    const auto missing = tmp / (latin1 + ".mpk");
    auto r = run_mpspack({"verify", "--json", missing.string()});
    CHECK(r.exit_code == 2);
    json j = parse_json(r);
    CHECK(j["file"] == (tmp / "caf\xef\xbf\xbd.mpk").string());
    CHECK(lists_invalid(j, "/file", hex_of(missing.string())));
    // The problem line names the file too.
    REQUIRE(j.contains("invalid_utf8"));
    CHECK(std::any_of(j["invalid_utf8"].begin(), j["invalid_utf8"].end(),
                      [](const json& e) { return e["pointer"] == "/problems/0"; }));
  }
  SECTION("a container built from such a file") {
    const auto so = tmp / (latin1 + ".so");
    fs::copy_file(mlp / "model.so", so);
    const auto mpk = tmp / (latin1 + ".mpk");
    auto b = run_mpspack({"build", "--json", so.string(), "-o", mpk.string()});
    REQUIRE(b.exit_code == 0);
    CHECK(lists_invalid(parse_json(b), "/output", hex_of(mpk.string())));

    auto inspect = run_mpspack({"inspect", "--json", mpk.string()});
    REQUIRE(inspect.exit_code == 0);
    json j = parse_json(inspect);
    CHECK(j["libraries"][0]["name"] == "caf\xef\xbf\xbd");
    CHECK(lists_invalid(j, "/libraries/0/name", hex_of(latin1)));
    CHECK(lists_invalid(j, "/sources/0/name", hex_of(latin1 + ".so")));  // the file name, without its folder

    auto verify = run_mpspack({"verify", "--json", mpk.string()});
    CHECK(verify.exit_code == 0);
    CHECK(parse_json(verify)["ok"] == true);

    const auto other = tmp / "other.mpk";
    build({(mlp / "model.so").string()}, other);
    auto diff = run_mpspack({"diff", "--json", mpk.string(), other.string()});
    CHECK(diff.exit_code == 1);
    CHECK(parse_json(diff)["same"] == false);

    auto run = run_mpspack({"run", "--json", mpk.string(), "--input", (mlp / "input0.bin").string() + ":f32:8x64"});
    CHECK(run.exit_code == 0);
    CHECK(lists_invalid(parse_json(run), "/library", hex_of(latin1)));

    // Text output escapes the byte instead.
    auto text = run_mpspack({"inspect", mpk.string()});
    REQUIRE(text.exit_code == 0);
    CHECK(text.out.find("caf\\xe9") != std::string::npos);
    CHECK(text.out.find(latin1) == std::string::npos);
  }
}

TEST_CASE("names that would drive a terminal are escaped in every text output", "[cli][hostile-io]") {
  const auto mlp = fixture("cpu_mlp_embedded");
  MPK_REQUIRE_FIXTURE(mlp);
  TempDir tmp;
  fs::copy_file(mlp / "model.so", tmp / "abcd.so");
  build({(tmp / "abcd.so").string()}, tmp / "plain.mpk");
  const std::string good = slurp(tmp / "plain.mpk");
  // Same lengths, so the metadata keeps its size: U+009B (CSI) in the name, an OSC title change as the machine,
  // a raw C1 CSI byte as the device, an escape and a carriage return in a needed library.
  const std::string bad = with_manifest(good, [](Manifest& m) {
    auto& l = m.libraries[0];
    l.name = "\xc2\x9b"
             "2J";
    REQUIRE(l.machine.size() == 6);
    l.machine = "\x1b]0;X\x07";
    REQUIRE(l.device.size() == 3);
    l.device = "\x9b"
               "1m";
    REQUIRE(!l.needed.empty());
    l.needed[0] = std::string(l.needed[0].size(), '\r');
    l.needed[0][0] = '\x1b';
  });
  const auto mpk = tmp / "escapes.mpk";
  write_bytes(mpk, bad);
  for (std::vector<std::string> args : {std::vector<std::string>{"inspect", mpk.string()},
                                        {"verify", mpk.string()},
                                        {"diff", mpk.string(), (tmp / "plain.mpk").string()},
                                        {"unpack", mpk.string(), "-o", (tmp / "out").string()},
                                        {"inspect", mpk.string(), "\x1b]0;typed\x07"},
                                        {"run", mpk.string(), "--format",
                                         "\x9b"
                                         "2J"}}) {
    DYNAMIC_SECTION(args[0] << " " << args.size()) {
      auto r = run_mpspack(args, kLimitS);
      INFO("stdout: " << r.out << "\nstderr: " << r.err);
      CHECK(r.exit_code != kTimedOut);
      CHECK(terminal_safe(r.out));
      CHECK(terminal_safe(r.err));
    }
  }
}

TEST_CASE("unpack refuses two outputs with one name, and diff agrees both ways", "[cli][hostile-io]") {
  const auto mlp = fixture("cpu_mlp_embedded");
  const auto cnn = fixture("cpu_cnn_embedded");
  MPK_REQUIRE_FIXTURE(fixture(""));
  TempDir tmp;
  fs::copy_file(mlp / "model.so", tmp / "aa.so");
  fs::copy_file(cnn / "model.so", tmp / "ab.so");
  const auto two = tmp / "two.mpk";
  build({(tmp / "aa.so").string(), (tmp / "ab.so").string()}, two);
  const auto dup = tmp / "dup.mpk";
  write_bytes(dup, with_manifest(slurp(two), [](Manifest& m) { m.libraries[1].name = "aa"; }));
  const auto out = tmp / "out";

  auto r = run_mpspack({"unpack", dup.string(), "-o", out.string()}, kLimitS);
  check_one_line_error(r, "'aa");
  CHECK((!fs::exists(out) || fs::is_empty(out)));

  auto ab = run_mpspack({"diff", dup.string(), two.string()}, kLimitS);
  auto ba = run_mpspack({"diff", two.string(), dup.string()}, kLimitS);
  INFO("A B: " << ab.out << ab.err << "\nB A: " << ba.out << ba.err);
  CHECK(ab.exit_code == ba.exit_code);
  CHECK(ab.exit_code == 2);
}

TEST_CASE("unpack refuses a cubin that would replace a library, and two cubins of one name", "[cli][hostile-io][pt2]") {
  const auto pkg = fixtures_dir() / "pt2" / "pkg.pt2";
  MPK_REQUIRE_FIXTURE(pkg);
  TempDir tmp;
  // The package's one model folder, "model", with two extra cubins: model/a/k.cubin and model/b/k.cubin (the
  // same file name in two folders), and model/ab.cubin, whose 8-byte name becomes "model.so" below.
  auto entries = read_zip(pkg);
  std::string folder;
  for (const auto& e : entries)
    if (e.name.size() > 11 && e.name.compare(e.name.size() - 11, 11, ".wrapper.so") == 0)
      folder = e.name.substr(0, e.name.rfind('/') + 1);
  REQUIRE(folder.substr(folder.size() - 6) == "model/");
  entries.push_back({folder + "a/k.cubin", "first cubin"});
  entries.push_back({folder + "b/k.cubin", "second cubin"});
  const auto pt2 = tmp / "cubins.pt2";
  write_zip(pt2, entries);
  const auto mpk = tmp / "cubins.mpk";
  // Refused by build or by unpack; never one k.cubin silently kept.
  auto b = run_mpspack({"build", pt2.string(), "-o", mpk.string()}, kLimitS);
  if (b.exit_code != 0) {
    check_one_line_error(b, "k.cubin");
  } else {
    auto r = run_mpspack({"unpack", mpk.string(), "-o", (tmp / "out1").string()}, kLimitS);
    check_one_line_error(r, "k.cubin");
    CHECK(!fs::exists(tmp / "out1" / "model.so"));
  }

  entries.resize(entries.size() - 2);
  entries.push_back({folder + "ab.cubin", "a cubin"});
  write_zip(pt2, entries);
  build({pt2.string()}, mpk);
  const auto as_library = tmp / "as_library.mpk";
  write_bytes(as_library, with_manifest(slurp(mpk), [](Manifest& m) {
                for (auto& s : m.segments)
                  if (s.name == "ab.cubin") s.name = "model.so";
              }));
  auto r = run_mpspack({"unpack", as_library.string(), "-o", (tmp / "out2").string()}, kLimitS);
  check_one_line_error(r, "model.so");
  CHECK(!fs::exists(tmp / "out2" / "model.so"));
}

TEST_CASE("a failed unpack leaves none of its files, and a library must restore to its recorded SHA-256",
          "[cli][hostile-io]") {
  const auto mlp = fixture("cpu_mlp_embedded");
  const auto cnn = fixture("cpu_cnn_embedded");
  MPK_REQUIRE_FIXTURE(fixture(""));
  TempDir tmp;
  const auto two = tmp / "two.mpk";
  build({(mlp / "model.so").string(), (cnn / "model.so").string()}, two);
  // The second library's recorded hash is wrong: the first library is written before that is found.
  const auto bad = tmp / "bad.mpk";
  write_bytes(bad, with_manifest(slurp(two), [](Manifest& m) {
                auto& h = m.libraries[1].original_sha256;
                h[0] = h[0] == '0' ? '1' : '0';
              }));
  const auto out = tmp / "out";
  fs::create_directories(out);
  auto r = run_mpspack({"unpack", bad.string(), "-o", out.string()}, kLimitS);
  check_one_line_error(r, "SHA-256");
  CHECK(fs::is_empty(out));
}

TEST_CASE("a container whose libraries share one segment is refused before unpack could amplify it",
          "[cli][hostile-io]") {
  const auto block = fixture("cpu_block_embedded");
  MPK_REQUIRE_FIXTURE(block);
  TempDir tmp;
  const auto one = tmp / "one.mpk";
  build({(block / "model.so").string()}, one);
  // 200 libraries that share one library segment and one weights segment would be a container of about 1 MB
  // whose libraries restore to about 120 MB: the writer refuses it (rule S5), and so does every reader at open.
  auto c = format::Container::open(one);
  REQUIRE(c.ok());
  std::vector<format::PendingSegment> pending = segments_of(*c);
  Manifest m = c->manifest();
  LibraryInfo l = m.libraries[0];
  l.imports.clear();
  m.libraries.clear();
  for (int i = 0; i < 200; ++i) {
    l.name = fmt::format("l{:03}", i);
    m.libraries.push_back(l);
  }
  const auto many = tmp / "many.mpk";
  auto written = format::write_container(many, std::move(m), pending);
  REQUIRE_FALSE(written.ok());
  CHECK_THAT(written.error().message, Catch::Contains("rule S5"));
  CHECK_FALSE(fs::exists(many));
}

TEST_CASE("build -o refuses a FIFO, a device, a folder and the input itself", "[cli][hostile-io]") {
  const auto mlp = fixture("cpu_mlp_embedded");
  MPK_REQUIRE_FIXTURE(mlp);
  TempDir tmp;
  const std::string so = (mlp / "model.so").string();
  SECTION("a FIFO") {
    const auto fifo = tmp / "out.mpk";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto r = run_mpspack({"build", so, "-o", fifo.string()}, kLimitS);
    check_one_line_error(r, "out.mpk");
    CHECK(fs::is_fifo(fifo));
  }
  SECTION("a character device") {
    const auto dev = tmp / "null";
    if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
      WARN("skipped: cannot create a device node here (needs root)");
      return;
    }
    auto r = run_mpspack({"build", so, "-o", dev.string()}, kLimitS);
    check_one_line_error(r, "null");
    CHECK(fs::is_character_file(dev));
  }
  SECTION("a folder") {
    fs::create_directories(tmp / "dir.mpk");
    check_one_line_error(run_mpspack({"build", so, "-o", (tmp / "dir.mpk").string()}, kLimitS), "dir.mpk");
  }
  SECTION("the input itself, and an example input") {
    const auto in = tmp / "in.so";
    fs::copy_file(so, in);
    const std::string before = slurp(in);
    check_one_line_error(run_mpspack({"build", in.string(), "-o", in.string()}, kLimitS), "in.so");
    CHECK(slurp(in) == before);
    const auto x = tmp / "x.bin";
    fs::copy_file(mlp / "input0.bin", x);
    check_one_line_error(
        run_mpspack({"build", in.string(), "--example-input", x.string() + ":f32:8x64", "-o", x.string()}, kLimitS),
        "x.bin");
    CHECK(slurp(x) == slurp(mlp / "input0.bin"));
  }
  CHECK_FALSE(has_temp_file(tmp.path));
}

TEST_CASE("build keeps a user's file named like a dead writer's temp file, and honours the umask",
          "[cli][hostile-io]") {
  const auto mlp = fixture("cpu_mlp_embedded");
  MPK_REQUIRE_FIXTURE(mlp);
  TempDir tmp;
  const auto out = tmp / "out.mpk";
  // pid 999999999 cannot exist (pid_max is at most 2^22), and the file is a user's: an ordinary mode.
  const auto lookalike = tmp / "out.mpk.mpk-tmp-999999999-abcdef";
  write_bytes(lookalike, "mine");
  for (mode_t mask : {mode_t(022), mode_t(002), mode_t(077)}) {
    DYNAMIC_SECTION("umask " << mask) {
      const mode_t old = ::umask(mask);
      auto r = run_mpspack({"build", (mlp / "model.so").string(), "-o", out.string()}, 60);
      ::umask(old);
      REQUIRE(r.exit_code == 0);
      struct stat st {};
      REQUIRE(::stat(out.c_str(), &st) == 0);
      CHECK((st.st_mode & 0777) == (0666 & ~mask));
      CHECK(slurp(lookalike) == "mine");
    }
  }
}

TEST_CASE("SIGINT, SIGTERM or SIGHUP during build leaves no temp file and the previous output", "[cli][hostile-io]") {
  MPK_REQUIRE_FIXTURE(blob_fixture_so());
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    DYNAMIC_SECTION("signal " << sig) {
      TempDir tmp;
      const auto big = make_slow_build_input(tmp.path);
      const auto out = tmp / "out.mpk";
      write_bytes(out, "previous contents");
      const auto r = interrupt_build(tmp.path, big, out, sig);
      REQUIRE(r.started);
      CHECK(WIFSIGNALED(r.status));
      if (WIFSIGNALED(r.status)) CHECK(WTERMSIG(r.status) == sig);  // dies of the signal, as a shell expects
      CHECK(slurp(out) == "previous contents");
      CHECK_FALSE(has_temp_file(tmp.path));
    }
  }
}

TEST_CASE("build refuses a .pt2 whose metadata JSON nests 100,000 deep, in one line", "[cli][hostile-io][pt2]") {
  TempDir tmp;
  const std::string nested = nested_metadata_json(100000);
  const auto pt2 = tmp / "deep.pt2";
  write_zip(pt2, {{"deep/archive_format", "pt2"},
                  {"deep/data/aotinductor/m/h.wrapper.so", "\x7f"
                                                           "ELF"},
                  {"deep/data/aotinductor/m/h.wrapper_metadata.json", nested, /*deflate=*/true}});
  auto r = run_mpspack({"build", pt2.string(), "-o", (tmp / "deep.mpk").string()}, kLimitS);
  check_one_line_error(r, "h.wrapper_metadata.json");
  CHECK_FALSE(fs::exists(tmp / "deep.mpk"));
}

TEST_CASE("run refuses a plain .so + blob whose weights segment is shorter than its constants, in one line",
          "[cli][hostile-io]") {
  // UpdateConstantsFromBlob reads every constant from the pointer it is given: a segment cut short would let the
  // library read past it. The loader asks the library for its constants' sizes first.
  const auto blob = fixture("cpu_mlp_blob");
  MPK_REQUIRE_FIXTURE(blob);
  TempDir tmp;
  const auto whole = tmp / "whole.mpk";
  build({(blob / "model.so").string(), "--weights", (blob / "weights.blob").string()}, whole);
  auto c = format::Container::open(whole);
  REQUIRE(c.ok());
  std::vector<format::PendingSegment> pending = segments_of(*c);
  const uint32_t w = c->manifest().weights.at(0).segment;
  REQUIRE(pending[w].bytes.size() > 64);
  pending[w].bytes = ByteView(pending[w].bytes.span().first(64), "weights");
  const auto cut = tmp / "cut.mpk";
  REQUIRE(format::write_container(cut, c->manifest(), pending).ok());
  auto r = run_mpspack({"run", cut.string(), "--input", (blob / "input0.bin").string() + ":f32:8x64"}, kLimitS);
  check_one_line_error(r, "the weights segment holds 0x40");
}
