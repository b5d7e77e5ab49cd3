// The loader's check of a library's symbol versions against this system (loader/system_versions.hpp): the line it
// gives for a glibc, a libstdc++ or a libgcc_s that is too old, and what it finds of this process's own libraries.
#include "runtime/loader/system_versions.hpp"

#include "mpspack/file.hpp"

#include <catch2/catch.hpp>

#include <gnu/libc-version.h>

#include <algorithm>

using namespace mpspack;
using namespace mpspack::runtime::loader;

TEST_CASE("missing_versions: the highest missing version, what the system has, what to do", "[loader][versions]") {
  SystemVersions system;
  system.glibc = "2.36";
  system.libraries["libstdc++.so.6"] = {
      "/usr/lib/libstdc++.so.6", {"GLIBCXX_3.4", "GLIBCXX_3.4.9", "GLIBCXX_3.4.30", "CXXABI_1.3", "CXXABI_1.3.13"}};
  system.libraries["libgcc_s.so.1"] = {"/lib/libgcc_s.so.1", {"GCC_3.0", "GCC_4.2.0"}};

  SECTION("everything there: nothing to say") {
    CHECK(missing_versions({{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.36", "GLIBC_PRIVATE"}},
                            {"libstdc++.so.6", {"GLIBCXX_3.4.30", "CXXABI_1.3"}},
                            {"libgomp.so.1", {"GOMP_5.0"}}},  // not loaded: left to dlopen
                           system)
              .empty());
  }
  SECTION("glibc, from any of its libraries, by number") {
    CHECK(missing_versions({{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.38", "GLIBC_2.37"}}, {"libm.so.6", {"GLIBC_2.4"}}},
                           system) ==
          "needs GLIBC_2.38 (this system has glibc 2.36): run it on a newer system or rebuild it against glibc 2.36");
    CHECK(missing_versions({{"libm.so.6", {"GLIBC_2.40"}}}, system).starts_with("needs GLIBC_2.40 (this system"));
    system.glibc = "2.4";  // 2.10 is newer than 2.4 (numbers, not text)
    CHECK(missing_versions({{"libc.so.6", {"GLIBC_2.10"}}}, system).starts_with("needs GLIBC_2.10"));
  }
  SECTION("libstdc++: the highest missing version, and the highest there is of its kind") {
    CHECK(missing_versions({{"libstdc++.so.6", {"GLIBCXX_3.4", "GLIBCXX_3.4.33", "GLIBCXX_3.4.31"}}}, system) ==
          "needs GLIBCXX_3.4.33 of libstdc++.so.6 (/usr/lib/libstdc++.so.6 here has up to GLIBCXX_3.4.30): run it "
          "on a newer system or rebuild it against this system's libstdc++.so.6");
    CHECK(missing_versions({{"libstdc++.so.6", {"CXXABI_1.3.15"}}}, system)
              .starts_with(
                  "needs CXXABI_1.3.15 of libstdc++.so.6 (/usr/lib/libstdc++.so.6 here has up to CXXABI_1.3.13)"));
  }
  SECTION("libgcc_s") {
    CHECK(missing_versions({{"libgcc_s.so.1", {"GCC_3.0", "GCC_14.0"}}}, system)
              .starts_with("needs GCC_14.0 of libgcc_s.so.1 (/lib/libgcc_s.so.1 here has up to GCC_4.2.0)"));
  }
  SECTION("glibc is named first") {
    CHECK(missing_versions({{"libstdc++.so.6", {"GLIBCXX_3.4.33"}}, {"libc.so.6", {"GLIBC_2.38"}}}, system)
              .starts_with("needs GLIBC_2.38"));
  }
}

TEST_CASE("this_system: glibc's version and this process's own libstdc++", "[loader][versions]") {
  auto s = this_system(
      {{"libstdc++.so.6", {"GLIBCXX_3.4"}}, {"libc.so.6", {"GLIBC_2.2.5"}}, {"libnot-loaded.so.1", {"NL_1.0"}}});
  REQUIRE(s.ok());
  CHECK(s->glibc == gnu_get_libc_version());
  REQUIRE(s->libraries.contains("libstdc++.so.6"));
  const auto& cxx = s->libraries.at("libstdc++.so.6");
  CHECK(cxx.path.ends_with("libstdc++.so.6"));
  CHECK(std::find(cxx.defined.begin(), cxx.defined.end(), "GLIBCXX_3.4") != cxx.defined.end());
  CHECK_FALSE(s->libraries.contains("libc.so.6"));           // compared by glibc's number
  CHECK_FALSE(s->libraries.contains("libnot-loaded.so.1"));  // left to dlopen
  // A version no libstdc++ will define names the file and what this one has.
  const std::string line = missing_versions({{"libstdc++.so.6", {"GLIBCXX_3.4.999"}}}, *s);
  CHECK(line.starts_with("needs GLIBCXX_3.4.999 of libstdc++.so.6 (" + cxx.path + " here has up to GLIBCXX_3.4."));
}

TEST_CASE("this_system: the versions read from a loaded library's image are those its file defines",
          "[loader][versions]") {
  auto s = this_system({{"libstdc++.so.6", {"GLIBCXX_3.4"}}, {"libgcc_s.so.1", {"GCC_3.0"}}});
  REQUIRE(s.ok());
  REQUIRE(s->libraries.contains("libstdc++.so.6"));
  for (const auto& [file, lib] : s->libraries) {
    INFO(lib.path);
    auto mapped = MappedFile::open(lib.path);
    REQUIRE(mapped.ok());
    auto elf = elf::ElfFile::parse(mapped->view());
    REQUIRE(elf.ok());
    auto defined = elf->version_definitions();
    REQUIRE(defined.ok());
    CHECK(defined->size() > 3);
    CHECK(lib.defined == *defined);
  }
}
