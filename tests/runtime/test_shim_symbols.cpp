// The shim's exported names: they resolve in this (ENABLE_EXPORTS) binary, and they cover every fixture's imports.
#include "runtime/shim/provided.hpp"

#include <catch2/catch.hpp>
#include <fixtures.hpp>
#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

std::vector<char> slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

template <class T>
T read_at(const std::vector<char>& b, uint64_t off) {
  REQUIRE(off <= b.size());
  REQUIRE(b.size() - off >= sizeof(T));
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

// Undefined symbols of an ELF64 shared object's .dynsym (what `nm -D --undefined-only` lists).
std::set<std::string> undefined_dynamic_symbols(const std::filesystem::path& so) {
  const auto b = slurp(so);
  const auto eh = read_at<Elf64_Ehdr>(b, 0);
  REQUIRE(std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
  REQUIRE(eh.e_ident[EI_CLASS] == ELFCLASS64);
  std::set<std::string> out;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    const auto sh = read_at<Elf64_Shdr>(b, eh.e_shoff + uint64_t(i) * eh.e_shentsize);
    if (sh.sh_type != SHT_DYNSYM) continue;
    const auto str = read_at<Elf64_Shdr>(b, eh.e_shoff + uint64_t(sh.sh_link) * eh.e_shentsize);
    REQUIRE(sh.sh_entsize == sizeof(Elf64_Sym));
    for (uint64_t k = 1; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      const auto sym = read_at<Elf64_Sym>(b, sh.sh_offset + k * sizeof(Elf64_Sym));
      if (sym.st_shndx != SHN_UNDEF) continue;
      REQUIRE(sym.st_name < str.sh_size);
      const char* name = b.data() + str.sh_offset + sym.st_name;
      out.emplace(name, strnlen(name, str.sh_size - sym.st_name));
    }
  }
  return out;
}

bool shim_name(const std::string& s) { return s.rfind("aoti_torch_", 0) == 0 || s.rfind("Sleef_", 0) == 0; }

}  // namespace

// dlopen("") would return the program itself, where every name resolves.
static_assert(sizeof(MPSPACK_SLEEF_SONAME) > 1, "MPSPACK_SLEEF_SONAME is empty: CMake did not pass it");

TEST_CASE("the Sleef names the shim lists are all in the libsleef the loader opens", "[shim][symbols]") {
  void* sleef = dlopen(MPSPACK_SLEEF_SONAME, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(sleef != nullptr);
  size_t listed = 0;
  for (auto n : mpspack::shim::mpspack_shim_provided_symbols()) {
    const std::string s(n);
    if (s.rfind("Sleef_", 0) != 0) continue;
    ++listed;
    INFO(s);
    CHECK(dlsym(sleef, s.c_str()) != nullptr);
  }
  CHECK(listed > 100);
  CHECK(dlsym(sleef, "Sleef_expf16_u10") != nullptr);
}

TEST_CASE("every name in mpspack_shim_provided_symbols() resolves with dlsym(RTLD_DEFAULT)", "[shim][symbols]") {
  const auto names = mpspack::shim::mpspack_shim_provided_symbols();
  REQUIRE(std::is_sorted(names.begin(), names.end()));
  REQUIRE(std::adjacent_find(names.begin(), names.end()) == names.end());
  size_t aoti = 0, sleef = 0, missing = 0;
  for (auto n : names) {
    const std::string s(n);
    if (dlsym(RTLD_DEFAULT, s.c_str()) == nullptr) {
      UNSCOPED_INFO("does not resolve: " << s);
      ++missing;
    }
    (s.rfind("aoti_torch_", 0) == 0 ? aoti : sleef)++;
  }
  CHECK(missing == 0);
  CHECK(aoti >= 40);
  CHECK(sleef > 100);
  // OpenBLAS is linked statically with its symbols kept local.
  CHECK(dlsym(RTLD_DEFAULT, "cblas_sgemm") == nullptr);
}

TEST_CASE("shim_provides answers yes for exactly the names mpspack_shim_provided_symbols() lists", "[shim][symbols]") {
  const auto names = mpspack::shim::mpspack_shim_provided_symbols();
  const std::set<std::string_view> listed(names.begin(), names.end());
  size_t wrong = 0;
  for (auto n : names) {
    const std::string longer = std::string(n) + "_x", shorter(n.substr(0, n.size() - 1));
    for (const std::string& probe : {std::string(n), longer, shorter}) {
      if (mpspack::shim::shim_provides(probe) == (listed.count(probe) == 1)) continue;
      UNSCOPED_INFO("wrong answer for " << probe);
      ++wrong;
    }
  }
  CHECK(wrong == 0);
  CHECK_FALSE(mpspack::shim::shim_provides(""));
  CHECK_FALSE(mpspack::shim::shim_provides("aoti_torch_cpu_not_a_kernel"));
}

TEST_CASE("the shim provides every aoti_torch_*/Sleef_* import of every CPU fixture", "[shim][symbols]") {
  const auto names = mpspack::shim::mpspack_shim_provided_symbols();
  const std::set<std::string> provided(names.begin(), names.end());
  const auto root = mpspack::test::fixtures_dir();
  MPK_REQUIRE_FIXTURE(root);
  size_t checked = 0;
  for (const char* set : {"rebuilt-bookworm", "torch-built"}) {
    const auto manifest_path = root / set / "manifest.json";
    MPK_REQUIRE_FIXTURE(manifest_path);
    const auto manifest = nlohmann::json::parse(std::ifstream(manifest_path));
    for (const auto& c : manifest.at("cases")) {
      if (c.value("device", "cpu") != "cpu") continue;
      const auto dir = root / set / c.at("dir").get<std::string>();
      const auto so = dir / "model.so";
      MPK_REQUIRE_FIXTURE(so);
      std::set<std::string> imports;
      for (const auto& s : undefined_dynamic_symbols(so))
        if (shim_name(s)) imports.insert(s);
      if (c.contains("shim_imports"))  // torch-built: the manifest's list must agree with the ELF
        for (const auto& s : c.at("shim_imports")) CHECK(imports.count(s.get<std::string>()) == 1);
      INFO(set << "/" << c.at("dir").get<std::string>());
      CHECK_FALSE(imports.empty());
      for (const auto& s : imports) {
        INFO("import " << s);
        CHECK(provided.count(s) == 1);
      }
      ++checked;
    }
  }
  CHECK(checked == 10);
}
