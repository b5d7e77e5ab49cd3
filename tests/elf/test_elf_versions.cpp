// Symbol versioning: the versions a library needs (DT_VERNEED) and a system library defines (DT_VERDEF), on the
// fixtures and this system's libstdc++, as `readelf -V` shows them; and hostile version tables.
#include "elf_test_support.hpp"

#include <mpspack/elf/elf_file.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <dlfcn.h>
#include <link.h>

using namespace mpspack;
using namespace mpspack::test;

namespace {

const elf::VersionNeed* need_of(const std::vector<elf::VersionNeed>& needs, std::string_view file) {
  for (const auto& n : needs)
    if (n.file == file) return &n;
  return nullptr;
}

bool has(const std::vector<std::string>& v, std::string_view s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("version names: numbers, order, highest", "[elf][versions]") {
  CHECK(elf::version_numbers("GLIBC_2.38", "GLIBC_") == std::vector<uint32_t>{2, 38});
  CHECK(elf::version_numbers("GLIBC_2.2.5", "GLIBC_") == std::vector<uint32_t>{2, 2, 5});
  CHECK(elf::version_numbers("GLIBC_PRIVATE", "GLIBC_").empty());
  CHECK(elf::version_numbers("GLIBCXX_3.4", "GLIBC_").empty());
  CHECK(elf::version_numbers("GLIBC_2.", "GLIBC_").empty());
  CHECK(elf::version_numbers("GLIBC_2..3", "GLIBC_").empty());
  CHECK(elf::version_numbers("GLIBC_", "GLIBC_").empty());
  CHECK(elf::version_less({2, 9}, {2, 10}));  // numbers, not text
  CHECK(elf::version_less({3, 4}, {3, 4, 1}));
  CHECK_FALSE(elf::version_less({2, 38}, {2, 38}));
  std::vector<elf::VersionNeed> needs = {
      {"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.10", "GLIBC_2.9", "GLIBC_PRIVATE"}},
      {"libstdc++.so.6", {"GLIBCXX_3.4.9", "GLIBCXX_3.4.30", "CXXABI_1.3.9", "CXXABI_1.3"}},
      {"libm.so.6", {"GLIBC_2.27"}}};
  CHECK(elf::highest_version(needs, "GLIBC_") == "GLIBC_2.27");
  CHECK(elf::highest_version(needs, "GLIBCXX_") == "GLIBCXX_3.4.30");
  CHECK(elf::highest_version(needs, "CXXABI_") == "CXXABI_1.3.9");
  CHECK(elf::highest_version(needs, "GCC_").empty());
}

TEST_CASE("version needs of the fixtures, as readelf -V shows them", "[elf][versions][fixtures]") {
  const auto rebuilt = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob" / "model.so";
  const auto torch = fixtures_dir() / "torch-built" / "cpu_mlp_nolt" / "model.so";
  MPK_REQUIRE_FIXTURE(rebuilt);
  MPK_REQUIRE_FIXTURE(torch);
  {
    auto bytes = read_bytes(rebuilt);
    auto f = elf::ElfFile::parse(view_of(bytes, "model.so"));
    REQUIRE(f.ok());
    auto needs = f->version_needs();
    REQUIRE(needs.ok());
    const auto* cxx = need_of(*needs, "libstdc++.so.6");
    REQUIRE(cxx != nullptr);
    CHECK(has(cxx->versions, "GLIBCXX_3.4.30"));
    CHECK(has(cxx->versions, "CXXABI_1.3.9"));
    REQUIRE(need_of(*needs, "libc.so.6") != nullptr);
    CHECK(elf::highest_version(*needs, "GLIBC_") == "GLIBC_2.34");
    CHECK(elf::highest_version(*needs, "GLIBCXX_") == "GLIBCXX_3.4.30");
    CHECK(elf::highest_version(*needs, "GCC_") == "GCC_3.0");
    // The same files as the existing list of DT_VERNEED files, in order.
    auto files = f->version_needed_files();
    REQUIRE(files.ok());
    REQUIRE(files->size() == needs->size());
    for (size_t i = 0; i < files->size(); ++i) CHECK((*files)[i] == (*needs)[i].file);
  }
  {
    auto bytes = read_bytes(torch);
    auto f = elf::ElfFile::parse(view_of(bytes, "model.so"));
    REQUIRE(f.ok());
    auto needs = f->version_needs();
    REQUIRE(needs.ok());
    CHECK(elf::highest_version(*needs, "GLIBC_") == "GLIBC_2.38");
    CHECK(elf::highest_version(*needs, "GCC_") == "GCC_4.2.0");
    CHECK(elf::highest_version(*needs, "GLIBCXX_").empty());
    const auto* libc = need_of(*needs, "libc.so.6");
    REQUIRE(libc != nullptr);
    CHECK(has(libc->versions, "GLIBC_2.38"));
    CHECK(has(libc->versions, "GLIBC_2.2.5"));
  }
}

TEST_CASE("version definitions of this process's libstdc++", "[elf][versions]") {
  // The libstdc++ this test runs on: its path from the loaded objects.
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        std::string_view name = info->dlpi_name ? info->dlpi_name : "";
        if (name.ends_with("/libstdc++.so.6")) *static_cast<std::string*>(data) = std::string(name);
        return 0;
      },
      &path);
  REQUIRE_FALSE(path.empty());
  auto bytes = read_bytes(path);
  auto f = elf::ElfFile::parse(view_of(bytes, "libstdc++.so.6"));
  REQUIRE(f.ok());
  auto defined = f->version_definitions();
  REQUIRE(defined.ok());
  CHECK(has(*defined, "GLIBCXX_3.4"));
  CHECK(has(*defined, "CXXABI_1.3"));
  CHECK_FALSE(has(*defined, "libstdc++.so.6"));  // the base entry names the file, not a version
  // It needs versions of glibc itself.
  auto needs = f->version_needs();
  REQUIRE(needs.ok());
  CHECK(need_of(*needs, "libc.so.6") != nullptr);
}

TEST_CASE("damaged version tables: an entry past the file is an error naming it, a chain ends at next 0",
          "[elf][versions]") {
  const auto rebuilt = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob" / "model.so";
  MPK_REQUIRE_FIXTURE(rebuilt);
  auto bytes = read_bytes(rebuilt);
  auto f = elf::ElfFile::parse(view_of(bytes, "model.so"));
  REQUIRE(f.ok());
  const elf::Section* r = f->section(".gnu.version_r");
  REQUIRE(r != nullptr);
  SECTION("vn_aux past the end of the file") {
    auto copy = bytes;
    store_u32le(copy.data() + r->offset + offsetof(Elf64_Verneed, vn_aux), 0xfffffff0u);
    auto g = elf::ElfFile::parse(view_of(copy, "model.so"));
    REQUIRE(g.ok());
    auto needs = g->version_needs();
    REQUIRE_FALSE(needs.ok());
    CHECK_THAT(needs.error().message, Catch::Contains("model.so"));
    CHECK_THAT(needs.error().message, Catch::Contains("DT_VERNEED version entry"));
  }
  SECTION("next offsets of 0 end the chains, whatever the counts say") {
    auto copy = bytes;
    // The first file's first version ends its list, and the first file ends the table: one file, one version.
    const uint32_t aux = load_u32le(copy.data() + r->offset + offsetof(Elf64_Verneed, vn_aux));
    store_u32le(copy.data() + r->offset + aux + offsetof(Elf64_Vernaux, vna_next), 0);
    store_u32le(copy.data() + r->offset + offsetof(Elf64_Verneed, vn_next), 0);
    auto g = elf::ElfFile::parse(view_of(copy, "model.so"));
    REQUIRE(g.ok());
    auto needs = g->version_needs();
    REQUIRE(needs.ok());
    REQUIRE(needs->size() == 1);
    CHECK(needs->front().versions.size() == 1);
  }
}
