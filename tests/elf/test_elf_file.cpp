// ElfFile on the real fixtures: what readelf would say, checked against manifest.json.
#include "elf_test_support.hpp"

#include <mpspack/elf/elf_file.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

using namespace mpspack;
using namespace mpspack::test;

namespace {

nlohmann::json torch_built_manifest() {
  std::ifstream in(fixtures_dir() / "torch-built" / "manifest.json");
  return nlohmann::json::parse(in);
}

// "00000000001ba600 _binary_constants_bin_start" -> {name, value}
std::pair<std::string, uint64_t> parse_nm_line(const std::string& line) {
  auto space = line.find(' ');
  return {line.substr(space + 1), std::stoull(line.substr(0, space), nullptr, 16)};
}

}  // namespace

TEST_CASE("machine names", "[elf]") {
  CHECK(elf::machine_name(EM_X86_64) == "x86_64");
  CHECK(elf::machine_name(EM_AARCH64) == "aarch64");
  CHECK(elf::machine_name(EM_386) == "EM 3");
  CHECK(elf::machine_name(40) == "EM 40");
}

TEST_CASE("every fixture library parses with consistent tables", "[elf][fixtures]") {
  auto libs = all_fixture_libraries();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  REQUIRE(libs.size() >= 12);
  for (const auto& path : libs) {
    INFO(case_name(path));
    auto bytes = read_bytes(path);
    auto elf = elf::ElfFile::parse(view_of(bytes));
    REQUIRE(elf.ok());
    CHECK(elf->machine() == "x86_64");
    CHECK(elf->type() == ET_DYN);
    CHECK_FALSE(elf->program_headers().empty());
    REQUIRE(elf->section(".dynsym"));
    REQUIRE(elf->section(".dynstr"));
    CHECK(elf->section(".no-such-section") == nullptr);
    // The section name table is itself named.
    CHECK(elf->section(".shstrtab"));
    CHECK(elf->image_end() <= bytes.size());

    auto dyn = elf->dynamic();
    REQUIRE(dyn.ok());
    CHECK(dyn->slots > dyn->entries.size());  // room for DT_NULL
    auto needed = elf->needed();
    REQUIRE(needed.ok());
    CHECK(std::find(needed->begin(), needed->end(), "libc.so.6") != needed->end());

    auto syms = elf->dynamic_symbols();
    REQUIRE(syms.ok());
    bool has_start = false, has_import = false;
    for (const auto& s : *syms) {
      if (s.name == "_binary_constants_bin_start") {
        has_start = s.defined();
        CHECK(s.binding == STB_GLOBAL);
      }
      if (s.name.rfind("aoti_torch_", 0) == 0 && !s.defined()) has_import = true;
    }
    CHECK(has_start);
    CHECK(has_import);
  }
}

TEST_CASE("NEEDED and constants symbols match the torch-built manifest", "[elf][fixtures]") {
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "torch-built" / "manifest.json");
  auto manifest = torch_built_manifest();
  for (const auto& c : manifest["cases"]) {
    std::string dir = c["dir"];
    INFO(dir);
    auto bytes = read_bytes(fixtures_dir() / "torch-built" / dir / "model.so");
    REQUIRE(bytes.size() == c["so_bytes"].get<uint64_t>());
    auto elf = elf::ElfFile::parse(view_of(bytes));
    REQUIRE(elf.ok());
    auto needed = elf->needed();
    REQUIRE(needed.ok());
    CHECK(*needed == c["needed"].get<std::vector<std::string>>());

    auto syms = elf->dynamic_symbols();
    REQUIRE(syms.ok());
    for (const auto& line : c["syms"]) {
      if (line.get<std::string>().empty()) continue;
      auto [name, value] = parse_nm_line(line);
      auto it = std::find_if(syms->begin(), syms->end(), [&](const elf::Symbol& s) { return s.name == name; });
      REQUIRE(it != syms->end());
      CHECK(it->value == value);
      CHECK(it->defined());
    }
    // The same symbols are in .symtab (these libraries are not stripped).
    auto symtab = elf->static_symbols();
    REQUIRE(symtab.ok());
    CHECK_FALSE(symtab->empty());
  }
}

TEST_CASE("vaddr_to_offset maps through PT_LOAD file parts only", "[elf][fixtures]") {
  auto path = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded" / "model.so";
  MPK_REQUIRE_FIXTURE(path);
  auto bytes = read_bytes(path);
  auto elf = elf::ElfFile::parse(view_of(bytes));
  REQUIRE(elf.ok());
  for (const auto& p : elf->program_headers()) {
    if (p.type != PT_LOAD) continue;
    auto off = elf->vaddr_to_offset(p.vaddr, p.filesz, "test");
    REQUIRE(off.ok());
    CHECK(*off == p.offset);
    if (p.memsz > p.filesz) {
      // .bss: in memory, not in the file.
      CHECK_FALSE(elf->vaddr_to_offset(p.vaddr + p.filesz, 1, "bss").ok());
      CHECK(elf->load_containing(p.vaddr + p.filesz, 1) == &p);
    }
  }
  auto far = elf->vaddr_to_offset(UINT64_MAX - 4, 8, "far away");
  REQUIRE_FALSE(far.ok());
  CHECK_THAT(far.error().message, Catch::Contains("far away"));
}

TEST_CASE("dynamic relocations: both tables, entry for entry, with the allocator's PLT slots", "[elf][fixtures]") {
  auto libs = all_fixture_libraries();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  for (const auto& path : libs) {
    INFO(case_name(path));
    auto bytes = read_bytes(path);
    auto elf = elf::ElfFile::parse(view_of(bytes));
    REQUIRE(elf.ok());
    auto relocs = elf->dynamic_relocations();
    REQUIRE(relocs.ok());
    // Read through the dynamic section; the section headers say independently how many there are.
    const elf::Section* dyn = elf->section(".rela.dyn");
    const elf::Section* plt = elf->section(".rela.plt");
    REQUIRE(plt);
    CHECK(relocs->size() == ((dyn ? dyn->size : 0) + plt->size) / elf::kRelaSize);
    auto syms = elf->dynamic_symbols();
    REQUIRE(syms.ok());
    std::vector<std::string> slotted;
    for (const elf::Relocation& r : *relocs) {
      REQUIRE(r.symbol <= syms->size());
      if (r.type != R_X86_64_JUMP_SLOT) continue;
      const elf::Section* got = elf->section_containing(r.offset, 8);
      REQUIRE(got);
      CHECK(got->name == ".got.plt");
      CHECK(r.addend == 0);
      REQUIRE(r.symbol > 0);
      slotted.emplace_back((*syms)[r.symbol - 1].name);
    }
    CHECK(slotted.size() == plt->size / elf::kRelaSize);  // .rela.plt holds PLT slots only
    for (const char* f : {"malloc", "free"}) CHECK(std::find(slotted.begin(), slotted.end(), f) != slotted.end());
  }
}
