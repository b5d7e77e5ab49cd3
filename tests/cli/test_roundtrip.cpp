// build -> verify -> unpack is byte-identical for every real AOTInductor fixture, and the
// containers say what they hold.
#include "cli_runner.hpp"
#include "fixture_cases.hpp"
#include "fixtures.hpp"
#include "mpspack/format/container.hpp"
#include "mpspack/pt2/package.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>

using namespace mpspack;
using namespace mpspack::test;
using nlohmann::json;

namespace {

std::vector<std::string> build_args(const FixtureCase& c, const std::filesystem::path& out) {
  std::vector<std::string> args = {"build", c.so().string(), "-o", out.string()};
  if (c.blob()) {
    args.push_back("--weights");
    args.push_back((c.dir / "weights.blob").string());
  }
  return args;
}

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) { return slurp(a) == slurp(b); }

}  // namespace

TEST_CASE("every fixture library goes build -> verify -> unpack byte for byte", "[cli][fixtures]") {
  auto cases = fixture_cases();
  if (cases.empty()) MPK_SKIP_FOR_MISSING_FIXTURE("no fixtures under " << fixtures_dir().string());
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.set << "/" << c.name) {
      TempDir tmp;
      auto mpk = tmp / "model.mpk";
      auto built = run_mpspack(build_args(c, mpk));
      INFO(built.err);
      REQUIRE(built.exit_code == 0);
      auto verified = run_mpspack({"verify", mpk.string()});
      INFO(verified.err);
      CHECK(verified.exit_code == 0);
      auto unpacked = run_mpspack({"unpack", mpk.string(), "-o", (tmp / "out").string()});
      INFO(unpacked.err);
      REQUIRE(unpacked.exit_code == 0);
      CHECK(same_file(tmp / "out" / "model.so", c.so()));
      // The blob under the name it was given by (build records file names, unpack writes them back).
      if (c.blob()) CHECK(same_file(tmp / "out" / "weights.blob", c.dir / "weights.blob"));
      // CUDA builds without embedded kernels travel with their cubins.
      for (const auto& e : std::filesystem::directory_iterator(c.dir))
        if (e.path().extension() == ".cubin") CHECK(same_file(tmp / "out" / e.path().filename(), e.path()));
    }
  }
}

TEST_CASE("the embedded build's weights segment equals the blob build's weights.blob", "[cli][fixtures]") {
  int pairs = 0;
  for (const auto& c : fixture_cases()) {
    if (c.name.find("_embedded") == std::string::npos && c.name != "cpu_mlp_nolt") continue;
    std::string blob_name = c.name.substr(0, c.name.rfind('_')) + "_blob";
    auto blob = c.dir.parent_path() / blob_name / "weights.blob";
    if (!std::filesystem::exists(blob)) continue;
    DYNAMIC_SECTION(c.set << "/" << c.name) {
      TempDir tmp;
      auto mpk = tmp / "m.mpk";
      REQUIRE(run_mpspack(build_args(c, mpk)).exit_code == 0);
      auto container = format::Container::open(mpk);
      REQUIRE(container.ok());
      const auto& m = container->manifest();
      REQUIRE(m.libraries.size() == 1);
      REQUIRE(m.libraries[0].weights == 0);
      auto seg = container->segment(m.weights[0].segment);
      std::string expected = slurp(blob);
      REQUIRE(seg.size() == expected.size());
      CHECK(std::memcmp(seg.data(), expected.data(), seg.size()) == 0);
      // Placed so the pages can be mapped straight over the library's constants region.
      CHECK(m.segments[m.weights[0].segment].offset % 65536 == m.libraries[0].region->start_vaddr % 65536);
    }
    ++pairs;
  }
  if (pairs == 0) MPK_SKIP_FOR_MISSING_FIXTURE("no embedded/blob fixture pairs under " << fixtures_dir().string());
}

TEST_CASE(".pt2 packages round-trip and inspect names their constants", "[cli][fixtures][pt2]") {
  auto dir = fixtures_dir() / "pt2";
  MPK_REQUIRE_FIXTURE(dir);
  for (std::string name : {"pkg", "blob", "cuda"}) {
    DYNAMIC_SECTION(name) {
      TempDir tmp;
      auto pt2 = dir / (name + ".pt2");
      auto mpk = tmp / "m.mpk";
      auto built = run_mpspack({"build", pt2.string(), "-o", mpk.string()});
      INFO(built.err);
      REQUIRE(built.exit_code == 0);
      CHECK(run_mpspack({"verify", mpk.string()}).exit_code == 0);
      auto inspected = run_mpspack({"inspect", "--json", mpk.string()});
      REQUIRE(inspected.exit_code == 0);
      json j = json::parse(inspected.out);
      CHECK(j["schema_version"] == 1);
      REQUIRE(j["weights"].size() == 1);
      REQUIRE(j["weights"][0]["constants"].size() >= 1);
      CHECK(j["weights"][0]["constants"][0]["fqn"] == "l.weight");
      CHECK(j["weights"][0]["constants"][0]["shape"] == json::array({4, 8}));
      REQUIRE(run_mpspack({"unpack", mpk.string(), "-o", (tmp / "out").string()}).exit_code == 0);
      // The unpacked library equals the package's own entry.
      auto pkg = pt2::Pt2Package::open(pt2);
      REQUIRE(pkg.ok());
      auto entry = pkg->extract(pkg->models().at(0).library_entry);
      REQUIRE(entry.ok());
      std::string got = slurp(tmp / "out" / (pkg->models()[0].name + ".so"));
      REQUIRE(got.size() == entry->size());
      CHECK(std::memcmp(got.data(), entry->data(), got.size()) == 0);
    }
  }
}

TEST_CASE("building the same inputs twice gives the same bytes, with or without --fsync", "[cli][fixtures]") {
  auto so = fixtures_dir() / "rebuilt-bookworm" / "cpu_cnn_embedded" / "model.so";
  MPK_REQUIRE_FIXTURE(so);
  TempDir tmp;
  REQUIRE(run_mpspack({"build", so.string(), "-o", (tmp / "a.mpk").string()}).exit_code == 0);
  REQUIRE(run_mpspack({"build", so.string(), "-o", (tmp / "b.mpk").string(), "--fsync"}).exit_code == 0);
  CHECK(slurp(tmp / "a.mpk") == slurp(tmp / "b.mpk"));
  auto unpacked = run_mpspack({"unpack", (tmp / "b.mpk").string(), "-o", (tmp / "out").string(), "--fsync"});
  INFO(unpacked.err);
  REQUIRE(unpacked.exit_code == 0);
  CHECK(slurp(tmp / "out" / "model.so") == slurp(so));
}

TEST_CASE("several libraries share one container and identical weights are stored once", "[cli][fixtures]") {
  auto a = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded" / "model.so";
  auto b = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob";
  MPK_REQUIRE_FIXTURE(a);
  MPK_REQUIRE_FIXTURE(b);
  TempDir tmp;
  auto mpk = tmp / "two.mpk";
  auto r = run_mpspack(
      {"build", a.string(), (b / "model.so").string(), "--weights", (b / "weights.blob").string(), "-o", mpk.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto c = format::Container::open(mpk);
  REQUIRE(c.ok());
  const auto& m = c->manifest();
  REQUIRE(m.libraries.size() == 2);
  CHECK(m.libraries[0].name != m.libraries[1].name);
  CHECK(m.weights.size() == 1);  // the embedded constants equal the blob
  CHECK(m.libraries[0].weights == 0);
  CHECK(m.libraries[1].weights == 0);
  REQUIRE(run_mpspack({"unpack", mpk.string(), "-o", (tmp / "out").string()}).exit_code == 0);
  CHECK(same_file(tmp / "out" / (m.libraries[0].name + ".so"), a));
  CHECK(same_file(tmp / "out" / (m.libraries[1].name + ".so"), b / "model.so"));
  // Both inputs were named model.so: the second library comes back under its stored name, the blob under its own.
  CHECK(same_file(tmp / "out" / "weights.blob", b / "weights.blob"));
}

TEST_CASE("inspect on a raw model library reports flavour, region and imports", "[cli][fixtures]") {
  auto dir = fixtures_dir() / "rebuilt-bookworm";
  MPK_REQUIRE_FIXTURE(dir);
  auto emb = run_mpspack({"inspect", "--json", (dir / "cpu_block_embedded" / "model.so").string()});
  REQUIRE(emb.exit_code == 0);
  json e = json::parse(emb.out);
  CHECK(e["kind"] == "library");
  CHECK(e["flavour"] == "embedded");
  CHECK(e["device"] == "cpu");
  CHECK(e["weights_size"] == std::filesystem::file_size(dir / "cpu_block_blob" / "weights.blob"));
  auto imports = e["imports"].get<std::vector<std::string>>();
  CHECK(std::find(imports.begin(), imports.end(), "aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu") !=
        imports.end());
  auto blob = run_mpspack({"inspect", "--json", (dir / "cpu_block_blob" / "model.so").string()});
  REQUIRE(blob.exit_code == 0);
  json b = json::parse(blob.out);
  CHECK(b["flavour"] == "external-blob");
  CHECK(b["recorded_blob_size"] == std::filesystem::file_size(dir / "cpu_block_blob" / "weights.blob"));
}

TEST_CASE("inspect shows the reference tensors recorded with --example-input/--example-output", "[cli][fixtures]") {
  auto dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_block_blob";
  MPK_REQUIRE_FIXTURE(dir);
  TempDir tmp;
  auto mpk = tmp / "ex.mpk";
  auto r = run_mpspack({"build", (dir / "model.so").string(), "--weights", (dir / "weights.blob").string(),
                        "--example-input", (dir / "input0.bin").string() + ":i64:2x16", "--example-output",
                        (dir / "expected0.bin").string() + ":f32:2x16x100", "-o", mpk.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = json::parse(run_mpspack({"inspect", "--json", mpk.string()}).out);
  REQUIRE(j["examples"].size() == 1);
  CHECK(j["examples"][0]["inputs"][0]["dtype"] == "i64");
  CHECK(j["examples"][0]["inputs"][0]["shape"] == json::array({2, 16}));
  CHECK(j["examples"][0]["outputs"][0]["shape"] == json::array({2, 16, 100}));
  auto text = run_mpspack({"inspect", mpk.string()});
  CHECK(text.out.find("inputs i64 [2,16] -> outputs f32 [2,16,100]") != std::string::npos);
}
