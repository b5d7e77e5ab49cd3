// A broken install: what mpspack opens only when a command needs it (the CUDA backend plugin under
// lib/mpspack, libzip for .pt2 packages) is missing or unloadable. One line naming the input and what is
// wrong, exit 2, no output file; never a crash.
#include "cli_runner.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>

using namespace mpspack::test;

static_assert(sizeof(MPSPACK_LIBZIP_SONAME) > 1, "MPSPACK_LIBZIP_SONAME is empty: CMake did not pass it");

namespace {

// Sets an environment variable for the commands run_mpspack starts while it lives.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> saved;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) saved = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (saved) ::setenv(name.c_str(), saved->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

// PREFIX/bin/mpspack, a copy of the tool under test with nothing beside it: it looks for its plugins under
// PREFIX/lib/mpspack. run_mpspack runs the copy while this lives.
struct CopiedTool {
  TempDir prefix;
  std::optional<ScopedEnv> bin;
  CopiedTool() {
    std::filesystem::create_directories(prefix / "bin");
    std::filesystem::copy_file(mpspack_binary(), prefix / "bin" / "mpspack");
    std::filesystem::permissions(prefix / "bin" / "mpspack", std::filesystem::perms::owner_all);
    bin.emplace("MPSPACK_BIN", (prefix / "bin" / "mpspack").string());
  }
};

}  // namespace

TEST_CASE("a CUDA library with the CUDA backend plugin missing: one line naming the plugin, exit 2", "[cli][install]") {
#if !MPSPACK_HAVE_CUDA
  WARN("skipped: this build has no CUDA backend, so there is no plugin to miss");
  return;
#endif
  auto fixture = fixtures_dir() / "torch-built" / "cuda_mlp_default";
  MPK_REQUIRE_FIXTURE(fixture / "model.so");
  TempDir tmp;
  auto mpk = tmp / "cuda.mpk";
  REQUIRE(run_mpspack({"build", (fixture / "model.so").string(), "-o", mpk.string()}).exit_code == 0);

  CopiedTool tool;
  auto r = run_mpspack(
      {"run", mpk.string(), "--input", (fixture / "input0.bin").string() + ":f32:8x64", "-o", (tmp / "out").string()});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err.find(mpk.string()) != std::string::npos);
  CHECK(r.err.find("cuda backend is missing: no " + (tool.prefix / "lib" / "mpspack" / "backend_cuda.so").string()) !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(tmp / "out"));
}

TEST_CASE("a .pt2 with an unloadable libzip: one line naming the package and the library, exit 2", "[cli][install]") {
  auto pt2 = fixtures_dir() / "pt2" / "blob.pt2";
  MPK_REQUIRE_FIXTURE(pt2);
  // A damaged libzip where the loader looks first. LD_LIBRARY_PATH rather than the tool's RUNPATH: under
  // AddressSanitizer the dlopen call comes from libasan's interceptor, whose RUNPATH is not the tool's.
  TempDir libs;
  write_bytes(libs / MPSPACK_LIBZIP_SONAME, "not a shared library\n");
  ScopedEnv path("LD_LIBRARY_PATH", libs.path.string());
  TempDir tmp;
  auto r = run_mpspack({"build", pt2.string(), "-o", (tmp / "p.mpk").string()});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err.find(pt2.string() + ": cannot read .pt2 packages: cannot load " MPSPACK_LIBZIP_SONAME) !=
        std::string::npos);
  CHECK(tmp.entries().empty());
}
