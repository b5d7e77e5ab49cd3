// mpspack diff: 0 for the same model (however and wherever it was built), 1 with the differences
// named, 2 when a file cannot be compared.
#include "cli_runner.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>

using namespace mpspack::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path rebuilt(const std::string& name) { return fixtures_dir() / "rebuilt-bookworm" / name; }

void build(const std::vector<std::string>& args) {
  auto r = run_mpspack(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

json diff_json(const fs::path& a, const fs::path& b, int expected_exit) {
  auto r = run_mpspack({"diff", a.string(), b.string(), "--json"});
  INFO(r.err << r.out);
  REQUIRE(r.exit_code == expected_exit);
  return json::parse(r.out);
}

// The paths of the reported differences.
std::vector<std::string> paths(const json& j) {
  std::vector<std::string> v;
  for (const auto& d : j.at("differences")) v.push_back(d.at("path").get<std::string>());
  return v;
}

bool has_path(const json& j, const std::string& p) {
  auto v = paths(j);
  return std::find(v.begin(), v.end(), p) != v.end();
}

const json* find_diff(const json& j, const std::string& p) {
  for (const auto& d : j.at("differences"))
    if (d.at("path") == p) return &d;
  return nullptr;
}

}  // namespace

TEST_CASE("diff: the same fixture built twice, into two output names, is the same model", "[cli][diff]") {
  auto so = rebuilt("cpu_mlp_embedded") / "model.so";
  MPK_REQUIRE_FIXTURE(so);
  TempDir tmp;
  build({"build", so.string(), "-o", (tmp / "a.mpk").string()});
  build({"build", so.string(), "-o", (tmp / "other_name.mpk").string()});
  auto j = diff_json(tmp / "a.mpk", tmp / "other_name.mpk", 0);
  CHECK(j.at("schema_version") == 1);
  CHECK(j.at("same") == true);
  CHECK(j.at("differences").empty());
  // A container compared with itself, and the text form.
  auto r = run_mpspack({"diff", (tmp / "a.mpk").string(), (tmp / "a.mpk").string()});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "same model\n");
  auto q = run_mpspack({"--quiet", "diff", (tmp / "a.mpk").string(), (tmp / "a.mpk").string()});
  CHECK(q.exit_code == 0);
  CHECK(q.out.empty());
}

TEST_CASE("diff: a changed byte in an external weights blob is a changed weights segment", "[cli][diff]") {
  auto dir = rebuilt("cpu_mlp_blob");
  MPK_REQUIRE_FIXTURE(dir / "weights.blob");
  TempDir tmp;
  std::string blob = slurp(dir / "weights.blob");
  REQUIRE(blob.size() > 100);
  fs::create_directories(tmp / "changed");
  blob[100] = char(blob[100] ^ 0x01);
  write_bytes(tmp / "changed" / "weights.blob", blob);
  build({"build", (dir / "model.so").string(), "--weights", (dir / "weights.blob").string(), "-o",
         (tmp / "a.mpk").string()});
  build({"build", (dir / "model.so").string(), "--weights", (tmp / "changed" / "weights.blob").string(), "-o",
         (tmp / "b.mpk").string()});
  auto j = diff_json(tmp / "a.mpk", tmp / "b.mpk", 1);
  CHECK(j.at("same") == false);
  INFO(j.dump(2));
  // A .so carries no constants table: the whole weights segments are compared by hash.
  CHECK(has_path(j, "weights[model].xxh3"));
  CHECK_FALSE(has_path(j, "weights[model].size"));
  // Nothing about the library changed.
  for (const auto& p : paths(j)) CHECK(p.rfind("libraries[", 0) != 0);
  // The blob's source entry says so too (same name, same size, another SHA-256).
  CHECK(has_path(j, "sources[1].sha256"));
  CHECK_FALSE(has_path(j, "sources[1].name"));
  // Text: one difference a line.
  auto r = run_mpspack({"diff", (tmp / "a.mpk").string(), (tmp / "b.mpk").string()});
  CHECK(r.exit_code == 1);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == long(j.at("differences").size()));
  CHECK(r.out.find("weights[model].xxh3: ") != std::string::npos);
}

TEST_CASE("diff: another library (cpu_mlp vs cpu_cnn, embedded)", "[cli][diff]") {
  auto mlp = rebuilt("cpu_mlp_embedded") / "model.so";
  auto cnn = rebuilt("cpu_cnn_embedded") / "model.so";
  MPK_REQUIRE_FIXTURE(mlp);
  MPK_REQUIRE_FIXTURE(cnn);
  TempDir tmp;
  build({"build", mlp.string(), "-o", (tmp / "mlp.mpk").string()});
  build({"build", cnn.string(), "-o", (tmp / "cnn.mpk").string()});
  auto j = diff_json(tmp / "mlp.mpk", tmp / "cnn.mpk", 1);
  INFO(j.dump(2));
  CHECK(has_path(j, "libraries[model].original_sha256"));
  CHECK(has_path(j, "libraries[model].library_xxh3"));
  CHECK(has_path(j, "weights[model].xxh3"));
  const json* d = find_diff(j, "libraries[model].original_sha256");
  REQUIRE(d);
  CHECK(d->at("a") != d->at("b"));
  CHECK(d->at("a").is_string());
}

TEST_CASE("diff: a changed constant shape in a .pt2's constants table", "[cli][diff]") {
  // Only .pt2 inputs carry shapes (parsed from the wrapper .cpp); a raw .so has none. The package is
  // rewritten with l_weight declared [8,4] (stride [4,1]) instead of [4,8]: same bytes, same library.
  auto pt2 = fixtures_dir() / "pt2" / "pkg.pt2";
  MPK_REQUIRE_FIXTURE(pt2);
  if (std::system("python3 -c 'import zipfile' >/dev/null 2>&1") != 0) {
    WARN("skipped: python3 is needed to rewrite the .pt2");
    return;
  }
  TempDir tmp;
  fs::create_directories(tmp / "changed");
  write_bytes(tmp / "rewrite.py", R"PY(
import sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
old = [b"constants_info_[0].shape = {4, 8};", b"constants_info_[0].stride = {8, 1};"]
new = [b"constants_info_[0].shape = {8, 4};", b"constants_info_[0].stride = {4, 1};"]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
    for info in zin.infolist():
        data = zin.read(info)
        if info.filename.endswith(".wrapper.cpp"):
            for o, n in zip(old, new):
                assert data.count(o) == 1, o
                data = data.replace(o, n)
        zout.writestr(info, data)
)PY");
  std::string cmd =
      "python3 " + (tmp / "rewrite.py").string() + " " + pt2.string() + " " + (tmp / "changed" / "pkg.pt2").string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  build({"build", pt2.string(), "-o", (tmp / "a.mpk").string()});
  build({"build", (tmp / "changed" / "pkg.pt2").string(), "-o", (tmp / "b.mpk").string()});
  auto j = diff_json(tmp / "a.mpk", tmp / "b.mpk", 1);
  INFO(j.dump(2));
  // The library name comes from the package; find the shape difference whatever it is.
  const json* shape = nullptr;
  for (const auto& d : j.at("differences")) {
    auto p = d.at("path").get<std::string>();
    if (p.find(".constants[l_weight].shape") != std::string::npos) shape = &d;
    // Same bytes and same library: only the shape (and the package's own hash) differ.
    CHECK(p.find("xxh3") == std::string::npos);
    CHECK(p.find("libraries[") != 0);
  }
  REQUIRE(shape);
  CHECK(shape->at("a") == "[4,8]");
  CHECK(shape->at("b") == "[8,4]");
}

TEST_CASE("diff: a file that is not a container is an error (exit 2)", "[cli][diff]") {
  TempDir tmp;
  write_bytes(tmp / "junk.mpk", "not a container");
  auto r = run_mpspack({"diff", (tmp / "junk.mpk").string(), (tmp / "junk.mpk").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err_lines().size() == 1);
  auto missing = run_mpspack({"diff", (tmp / "none.mpk").string(), (tmp / "junk.mpk").string()});
  CHECK(missing.exit_code == 2);
}

TEST_CASE("the global options quiet and log-level work with every command, before or after it",
          "[cli][global-options]") {
  auto so = rebuilt("cpu_mlp_embedded") / "model.so";
  MPK_REQUIRE_FIXTURE(so);
  TempDir tmp;
  auto mpk = (tmp / "m.mpk").string();
  build({"build", so.string(), "-o", mpk});
  std::vector<std::vector<std::string>> commands = {{"build", so.string(), "-o", (tmp / "q.mpk").string()},
                                                    {"inspect", mpk},
                                                    {"verify", mpk},
                                                    {"unpack", mpk, "-o", (tmp / "out").string()},
                                                    {"diff", mpk, mpk}};
  for (const auto& cmd : commands) {
    INFO(cmd[0]);
    for (std::vector<std::string> global :
         {std::vector<std::string>{"--quiet"}, {"-q"}, {"--log-level", "debug"}, {"--log-level", "off"}}) {
      auto before = global;
      before.insert(before.end(), cmd.begin(), cmd.end());
      auto after = cmd;
      after.insert(after.end(), global.begin(), global.end());
      for (const auto& args : {before, after}) {
        auto r = run_mpspack(args);
        INFO(r.err);
        CHECK(r.exit_code == 0);
        if (global[0] != "--log-level") CHECK(r.err.empty());  // quiet: no log lines below error
      }
    }
    auto bad = cmd;
    bad.insert(bad.end(), {"--log-level", "loud"});
    CHECK(run_mpspack(bad).exit_code == 2);
  }
  auto v = run_mpspack({"--version"});
  CHECK(v.exit_code == 0);
  CHECK(v.out.rfind("mpspack 0.1.0", 0) == 0);
}
