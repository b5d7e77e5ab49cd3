// Hostile input: every damaged file gives an Error naming the problem, never a crash. Run this file
// under -fsanitize=address,undefined as well: the asan preset does (docs/RELIABILITY.md).
#include "elf_test_support.hpp"

#include <mpspack/aoti/library.hpp>
#include <mpspack/aoti/split.hpp>
#include <mpspack/elf/elf_file.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <random>

using namespace mpspack;
using namespace mpspack::test;

namespace {

std::vector<uint8_t> small_fixture() {
  auto path = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded" / "model.so";
  return read_bytes(path);
}

template <class T>
void poke(std::vector<uint8_t>& b, uint64_t offset, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) b[offset + i] = uint8_t(uint64_t(value) >> (8 * i));
}

uint64_t peek64(const std::vector<uint8_t>& b, uint64_t offset) { return load_u64le(b.data() + offset); }
uint16_t peek16(const std::vector<uint8_t>& b, uint64_t offset) { return load_u16le(b.data() + offset); }

// Parses, analyzes and (when analysis succeeds) splits and restores: the whole pipeline must cope.
void run_everything(const std::vector<uint8_t>& bytes) {
  ByteView v = view_of(bytes, "hostile.so");
  auto elf = elf::ElfFile::parse(v);
  if (elf.ok()) {
    (void)elf->needed();
    (void)elf->dynamic_symbols();
    (void)elf->static_symbols();
    (void)elf->version_needed_files();
    (void)elf->version_needs();
    (void)elf->version_definitions();
    (void)elf->dynamic_relocations();
  }
  auto a = aoti::analyze_library(v);
  if (!a.ok()) return;
  for (bool drop : {false, true}) {
    auto s = aoti::split_library(v, *a, drop);
    if (!s.ok()) continue;
    std::vector<uint8_t> out;
    ByteView removed(std::span<const uint8_t>(bytes.data() + s->removed_offset, s->removed_size));
    auto st = aoti::restore_library(view_of(s->stored), removed, s->removed_offset, s->restore,
                                    [&](const uint8_t* p, uint64_t n) -> Status {
                                      out.insert(out.end(), p, p + n);
                                      return {};
                                    });
    REQUIRE(st.ok());
    REQUIRE(out == bytes);  // whatever we accept, we must give back exactly
  }
}

Error parse_error(const std::vector<uint8_t>& bytes) {
  auto r = elf::ElfFile::parse(view_of(bytes, "hostile.so"));
  REQUIRE_FALSE(r.ok());
  return r.error();
}

Error analyze_error(const std::vector<uint8_t>& bytes) {
  auto r = aoti::analyze_library(view_of(bytes, "hostile.so"));
  REQUIRE_FALSE(r.ok());
  return r.error();
}

}  // namespace

TEST_CASE("not ELF at all", "[elf][hostile]") {
  std::vector<uint8_t> empty;
  auto e = parse_error(empty);
  CHECK(e.kind == Error::Kind::NotThisFormat);
  CHECK_THAT(e.message, Catch::Contains("not an ELF file"));
  std::string text = "#!/bin/sh\necho hello\n";
  e = parse_error(std::vector<uint8_t>(text.begin(), text.end()));
  CHECK(e.kind == Error::Kind::NotThisFormat);
  e = analyze_error(std::vector<uint8_t>(text.begin(), text.end()));
  CHECK(e.kind == Error::Kind::NotThisFormat);
}

TEST_CASE("ELF32, big-endian and unknown identities", "[elf][hostile]") {
  auto b = small_fixture();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  auto c32 = b;
  c32[EI_CLASS] = ELFCLASS32;
  auto e = parse_error(c32);
  CHECK(e.kind == Error::Kind::Unsupported);
  CHECK_THAT(e.message, Catch::Contains("ELFCLASS32"));
  auto be = b;
  be[EI_DATA] = ELFDATA2MSB;
  e = parse_error(be);
  CHECK(e.kind == Error::Kind::Unsupported);
  CHECK_THAT(e.message, Catch::Contains("big-endian"));
  auto odd = b;
  odd[EI_CLASS] = 7;
  CHECK_THAT(parse_error(odd).message, Catch::Contains("EI_CLASS"));
  odd = b;
  odd[EI_DATA] = 9;
  CHECK_THAT(parse_error(odd).message, Catch::Contains("EI_DATA"));
}

TEST_CASE("another machine is refused by name", "[elf][hostile]") {
  auto b = small_fixture();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  poke<uint16_t>(b, offsetof(Elf64_Ehdr, e_machine), EM_386);
  REQUIRE(elf::ElfFile::parse(view_of(b)).ok());  // still ELF64 LE: the reader is fine with it
  auto e = analyze_error(b);
  CHECK(e.kind == Error::Kind::Unsupported);
  CHECK_THAT(e.message, Catch::Contains("EM 3"));
  poke<uint16_t>(b, offsetof(Elf64_Ehdr, e_machine), EM_RISCV);
  CHECK_THAT(analyze_error(b).message, Catch::Contains("EM 243"));
}

TEST_CASE("truncated at every header boundary and in between", "[elf][hostile]") {
  auto b = small_fixture();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  uint64_t phoff = peek64(b, offsetof(Elf64_Ehdr, e_phoff));
  uint64_t shoff = peek64(b, offsetof(Elf64_Ehdr, e_shoff));
  uint64_t phnum = peek16(b, offsetof(Elf64_Ehdr, e_phnum));
  uint64_t shnum = peek16(b, offsetof(Elf64_Ehdr, e_shnum));
  std::vector<uint64_t> cuts = {0,
                                1,
                                3,
                                4,
                                15,
                                16,
                                17,
                                63,
                                64,
                                phoff + 1,
                                phoff + phnum * elf::kPhdrSize - 1,
                                shoff,
                                shoff + 1,
                                shoff + shnum * elf::kShdrSize - 1};
  for (uint64_t len = 0; len < b.size(); len += 4093) cuts.push_back(len);
  for (uint64_t len : cuts) {
    INFO("truncated to " << len);
    std::vector<uint8_t> t(b.begin(), b.begin() + std::min<uint64_t>(len, b.size()));
    run_everything(t);
    // The section header table is at the end of the file: any cut loses part of it.
    auto r = elf::ElfFile::parse(view_of(t));
    CHECK_FALSE(r.ok());
    if (!r.ok()) CHECK_FALSE(r.error().message.empty());
  }
  auto e = parse_error(std::vector<uint8_t>(b.begin(), b.begin() + 40));
  CHECK_THAT(e.message, Catch::Contains("ELF header truncated"));
  e = parse_error(std::vector<uint8_t>(b.begin(), b.begin() + shoff + 10));
  CHECK_THAT(e.message, Catch::Contains("section header table"));
}

TEST_CASE("header fields pointing past the end or overflowing", "[elf][hostile]") {
  auto b = small_fixture();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  uint64_t shoff = peek64(b, offsetof(Elf64_Ehdr, e_shoff));
  uint64_t phoff = peek64(b, offsetof(Elf64_Ehdr, e_phoff));

  SECTION("e_phoff past EOF") {
    poke<uint64_t>(b, offsetof(Elf64_Ehdr, e_phoff), b.size() + 8);
    CHECK_THAT(parse_error(b).message, Catch::Contains("e_phoff"));
  }
  SECTION("e_phoff near 2^64") {
    poke<uint64_t>(b, offsetof(Elf64_Ehdr, e_phoff), UINT64_MAX - 16);
    CHECK_THAT(parse_error(b).message, Catch::Contains("program header table"));
  }
  SECTION("e_shoff past EOF") {
    poke<uint64_t>(b, offsetof(Elf64_Ehdr, e_shoff), b.size());
    CHECK_THAT(parse_error(b).message, Catch::Contains("e_shoff"));
  }
  SECTION("e_shoff near 2^64") {
    poke<uint64_t>(b, offsetof(Elf64_Ehdr, e_shoff), UINT64_MAX - 8);
    CHECK_THAT(parse_error(b).message, Catch::Contains("section header table"));
  }
  SECTION("huge e_phnum") {
    poke<uint16_t>(b, offsetof(Elf64_Ehdr, e_phnum), 0xfffe);
    CHECK_THAT(parse_error(b).message, Catch::Contains("65534 entries"));
  }
  SECTION("huge e_shnum") {
    poke<uint16_t>(b, offsetof(Elf64_Ehdr, e_shnum), 0xfeff);
    CHECK_THAT(parse_error(b).message, Catch::Contains("section header table"));
  }
  SECTION("wrong entry sizes") {
    poke<uint16_t>(b, offsetof(Elf64_Ehdr, e_phentsize), 32);
    CHECK_THAT(parse_error(b).message, Catch::Contains("entry size is 0x20"));
  }
  SECTION("e_shstrndx out of range") {
    uint16_t shnum = peek16(b, offsetof(Elf64_Ehdr, e_shnum));
    poke<uint16_t>(b, offsetof(Elf64_Ehdr, e_shstrndx), shnum + 3);
    CHECK_THAT(parse_error(b).message, Catch::Contains("e_shstrndx"));
  }
  SECTION("e_shstrndx naming a non-string section") {
    poke<uint16_t>(b, offsetof(Elf64_Ehdr, e_shstrndx), 1);
    CHECK_THAT(parse_error(b).message, Catch::Contains("SHT_STRTAB"));
  }
  SECTION("program header table over the ELF header") {
    poke<uint64_t>(b, offsetof(Elf64_Ehdr, e_phoff), 8);
    CHECK_THAT(parse_error(b).message, Catch::Contains("overlaps the ELF header"));
  }
  SECTION("a section whose sh_offset + sh_size overflows") {
    uint64_t sec = shoff + 5 * elf::kShdrSize;
    poke<uint64_t>(b, sec + offsetof(Elf64_Shdr, sh_offset), UINT64_MAX - 4);
    auto e = parse_error(b);
    CHECK_THAT(e.message, Catch::Contains("section [5]") && Catch::Contains("sh_offset"));
  }
  SECTION("a section running past EOF") {
    uint64_t sec = shoff + 3 * elf::kShdrSize;
    poke<uint64_t>(b, sec + offsetof(Elf64_Shdr, sh_size), b.size());
    CHECK_THAT(parse_error(b).message, Catch::Contains("past the file size"));
  }
  SECTION("a section name outside the name table") {
    uint64_t sec = shoff + 2 * elf::kShdrSize;
    poke<uint32_t>(b, sec + offsetof(Elf64_Shdr, sh_name), 0x7fffffff);
    CHECK_THAT(parse_error(b).message, Catch::Contains("sh_name"));
  }
  SECTION("a PT_LOAD whose file part overflows") {
    uint64_t ph = phoff + 1 * elf::kPhdrSize;
    poke<uint64_t>(b, ph + offsetof(Elf64_Phdr, p_filesz), UINT64_MAX);
    CHECK_THAT(parse_error(b).message, Catch::Contains("program header [1]"));
  }
  SECTION("a PT_LOAD with p_filesz > p_memsz") {
    uint64_t ph = phoff + 4 * elf::kPhdrSize;
    uint64_t memsz = peek64(b, ph + offsetof(Elf64_Phdr, p_memsz));
    poke<uint64_t>(b, ph + offsetof(Elf64_Phdr, p_memsz), memsz - 1);
    CHECK_THAT(parse_error(b).message, Catch::Contains("larger than p_memsz"));
  }
  SECTION("a misaligned PT_LOAD") {
    uint64_t ph = phoff + 1 * elf::kPhdrSize;
    uint64_t off = peek64(b, ph + offsetof(Elf64_Phdr, p_offset));
    poke<uint64_t>(b, ph + offsetof(Elf64_Phdr, p_offset), off + 1);
    CHECK_THAT(parse_error(b).message, Catch::Contains("modulo p_align"));
  }
}

TEST_CASE("damaged symbol and dynamic tables", "[elf][hostile]") {
  auto b = small_fixture();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  auto elf = elf::ElfFile::parse(view_of(b));
  REQUIRE(elf.ok());
  const elf::Section* dynsym = elf->section(".dynsym");
  REQUIRE(dynsym);
  auto original = b;

  SECTION("dynsym entry size") {
    poke<uint64_t>(b, dynsym->entry_offset + offsetof(Elf64_Shdr, sh_entsize), 16);
    auto e = analyze_error(b);
    CHECK_THAT(e.message, Catch::Contains("sh_entsize"));
  }
  SECTION("dynsym string table link out of range") {
    poke<uint32_t>(b, dynsym->entry_offset + offsetof(Elf64_Shdr, sh_link), 999);
    CHECK_THAT(analyze_error(b).message, Catch::Contains("sh_link"));
  }
  SECTION("a symbol name past its string table") {
    poke<uint32_t>(b, dynsym->offset + 3 * elf::kSymSize + offsetof(Elf64_Sym, st_name), 0xffffff);
    CHECK_THAT(analyze_error(b).message, Catch::Contains("st_name"));
  }
  SECTION("DT_STRTAB pointing outside the file") {
    auto dyn = elf->dynamic();
    REQUIRE(dyn.ok());
    for (uint64_t i = 0; i < dyn->entries.size(); ++i)
      if (dyn->entries[i].tag == DT_STRTAB) poke<uint64_t>(b, dyn->file_offset + i * elf::kDynSize + 8, 0x7fff0000);
    CHECK_THAT(analyze_error(b).message, Catch::Contains("DT_STRTAB"));
  }
  SECTION("relocation tables past the file, of the wrong entry size, or of the REL kind") {
    auto dyn = elf->dynamic();
    REQUIRE(dyn.ok());
    auto poke_tag = [&](int64_t tag, uint64_t value) {
      bool found = false;
      for (uint64_t i = 0; i < dyn->entries.size(); ++i)
        if (dyn->entries[i].tag == tag) {
          poke<uint64_t>(b, dyn->file_offset + i * elf::kDynSize + 8, value);
          found = true;
        }
      REQUIRE(found);
    };
    auto relocation_error = [&] {
      auto damaged = elf::ElfFile::parse(view_of(b, "hostile.so"));
      REQUIRE(damaged.ok());
      auto r = damaged->dynamic_relocations();
      REQUIRE_FALSE(r.ok());
      return r.error();
    };
    SECTION("DT_RELASZ") {
      poke_tag(DT_RELASZ, 0x7fffffff0ull * elf::kRelaSize);
      CHECK_THAT(relocation_error().message, Catch::Contains("DT_RELA"));
    }
    SECTION("DT_PLTRELSZ") {
      poke_tag(DT_PLTRELSZ, 25);
      CHECK_THAT(relocation_error().message, Catch::Contains("DT_JMPREL size 0x19"));
    }
    SECTION("DT_RELAENT") {
      poke_tag(DT_RELAENT, 16);
      CHECK_THAT(relocation_error().message, Catch::Contains("DT_RELAENT"));
    }
    SECTION("DT_PLTREL") {
      poke_tag(DT_PLTREL, DT_REL);
      auto e = relocation_error();
      CHECK(e.kind == Error::Kind::Unsupported);
      CHECK_THAT(e.message, Catch::Contains("hostile.so") && Catch::Contains("DT_REL"));
    }
  }
  SECTION("a DT_NEEDED name past the string table") {
    auto dyn = elf->dynamic();
    REQUIRE(dyn.ok());
    REQUIRE(dyn->entries[0].tag == DT_NEEDED);
    poke<uint64_t>(b, dyn->file_offset + 8, 0xfffffff);
    CHECK_THAT(analyze_error(b).message, Catch::Contains("DT_NEEDED"));
  }
  SECTION("library without the constants symbols") {
    // Rename both symbols everywhere their names are stored (.dynstr and .strtab).
    for (std::string name : {"_binary_constants_bin_start", "_binary_constants_bin_end"}) {
      auto it = b.begin();
      while ((it = std::search(it, b.end(), name.begin(), name.end())) != b.end()) *(it + 1) = 'X';
    }
    auto e = analyze_error(b);
    CHECK(e.kind == Error::Kind::NotThisFormat);
    CHECK_THAT(e.message, Catch::Contains("not an AOTInductor model library"));
  }
  SECTION("constants symbols swapped") {
    auto syms = elf->dynamic_symbols();
    REQUIRE(syms.ok());
    uint64_t start = 0, end = 0;
    for (const auto& s : *syms) {
      if (s.name == "_binary_constants_bin_start") start = s.value;
      if (s.name == "_binary_constants_bin_end") end = s.value;
    }
    // Point the start symbol far past the end symbol, in both tables.
    for (uint64_t at = 0; at + 8 <= b.size(); ++at)
      if (load_u64le(b.data() + at) == start && at % 8 == 0) store_u64le(b.data() + at, end + 64);
    auto r = aoti::analyze_library(view_of(b));
    CHECK_FALSE(r.ok());
  }
  CHECK(original.size() == b.size());
}

TEST_CASE("a system library is not an AOTInductor model", "[elf][hostile]") {
  for (const char* path : {"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"}) {
    if (!std::filesystem::exists(path)) continue;
    auto b = read_bytes(path);
    auto e = analyze_error(b);
    CHECK(e.kind == Error::Kind::NotThisFormat);
    CHECK_THAT(e.message, Catch::Contains("_binary_constants_bin_start"));
    return;
  }
  WARN("skipped: no libm.so.6 found");
}

TEST_CASE("random byte damage in the headers never crashes", "[elf][hostile][fuzz]") {
  auto b = small_fixture();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  uint64_t shoff = peek64(b, offsetof(Elf64_Ehdr, e_shoff));
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 400; ++round) {
    auto t = b;
    int flips = 1 + int(rng() % 8);
    for (int i = 0; i < flips; ++i) {
      // Aim at the places the reader trusts least: the ELF header, the program headers, the
      // dynamic section area and the section header table.
      uint64_t region = rng() % 3;
      uint64_t at = region == 0 ? rng() % 0x300 : region == 1 ? shoff + rng() % (t.size() - shoff) : rng() % t.size();
      t[at] = uint8_t(rng());
    }
    INFO("round " << round);
    run_everything(t);
  }
}
