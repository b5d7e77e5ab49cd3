// `inspect model.pt2`: a package's models, libraries, weights and constants table, without running anything, and
// one-line errors for packages it cannot read.
#include "cli_runner.hpp"
#include "fixtures.hpp"
#include "zip_writer.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace mpspack::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
fs::path pt2_fixture(const char* name) { return fixtures_dir() / "pt2" / name; }
}  // namespace

TEST_CASE("inspect --json on a .pt2: its model, library, blob and constants by FQN", "[cli][pt2][inspect]") {
  const auto pt2 = pt2_fixture("blob.pt2");
  MPK_REQUIRE_FIXTURE(pt2);
  auto r = run_mpspack({"inspect", pt2.string(), "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j.at("kind") == "pt2");
  CHECK(j.at("schema_version") == 1);
  REQUIRE(j.at("models").size() == 1);
  const json& m = j.at("models")[0];
  CHECK(m.at("device") == "cpu");
  CHECK(m.at("library").at("flavour") == "external-blob");
  CHECK(m.at("library").at("recorded_blob_size") == m.at("weights_size"));
  const auto& imports = m.at("library").at("imports");
  CHECK(std::find(imports.begin(), imports.end(), "aoti_torch_cpu_addmm_out") != imports.end());
  CHECK(m.at("library").at("missing_shim_imports").empty());
  REQUIRE(m.at("constants").size() == 1);
  CHECK(m.at("constants")[0].at("fqn") == "l.weight");
  CHECK(m.at("constants")[0].at("shape") == json::array({4, 8}));
  CHECK(m.at("totals_by_dtype").at("f32").at("parameters") == 32);
}

TEST_CASE("inspect on a .pt2 names a CUDA model's kernel files and prints the constants table", "[cli][pt2][inspect]") {
  const auto pt2 = pt2_fixture("cuda.pt2");
  MPK_REQUIRE_FIXTURE(pt2);
  auto r = run_mpspack({"inspect", pt2.string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("PyTorch .pt2 package, 1 model") != std::string::npos);
  CHECK(r.out.find("(device cuda)") != std::string::npos);
  CHECK(r.out.find("kernel files (.cubin): 1") != std::string::npos);
  CHECK(r.out.find("l.weight") != std::string::npos);
}

TEST_CASE("inspect refuses a zip that is not a .pt2, and a .pt2 whose library is not ELF, in one line",
          "[cli][pt2][inspect]") {
  TempDir tmp;
  const auto not_pt2 = tmp / "plain.zip";
  write_zip(not_pt2, {{"readme.txt", "hello"}});
  auto r = run_mpspack({"inspect", not_pt2.string()});
  CHECK(r.exit_code == 2);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err_lines()[0].rfind("mpspack: ", 0) == 0);
  CHECK(r.err_lines()[0].find("plain.zip") != std::string::npos);
  CHECK(r.out.empty());

  const auto bad_so = tmp / "bad.pt2";
  write_zip(bad_so, {{"bad/archive_format", "pt2"}, {"bad/data/aotinductor/m/h.wrapper.so", "not an ELF file"}});
  r = run_mpspack({"inspect", bad_so.string()});
  CHECK(r.exit_code == 2);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err_lines()[0].find("h.wrapper.so") != std::string::npos);
  CHECK(r.out.empty());
}
