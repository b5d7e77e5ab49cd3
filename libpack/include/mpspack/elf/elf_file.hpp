// A checked reader for ELF64 little-endian shared objects, the only kind AOTInductor model libraries
// come as on Linux (x86_64, aarch64). Modelled on LLVM's ELF reader: the file header, program
// headers, section headers and section names are validated once in parse(); every later table access
// (dynamic section, symbol tables, strings) goes through ByteView, which checks offset + size against
// the file without overflow. Nothing here casts bytes to structs: fields are decoded by offset, and
// the offsets come from <elf.h> via offsetof, so they match the spec by construction.
//
// Errors name the object (ByteView::what(), e.g. "model.so"), the table, the index, the field and the
// hex values, so a bad file can be located with `readelf -W` alone.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/result.hpp"

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mpspack::elf {

// On-disk sizes and field offsets of the ELF64 structures, for readers and for the few places
// (aoti/split) that rewrite a field in place.
inline constexpr uint64_t kEhdrSize = sizeof(Elf64_Ehdr);  // 64
inline constexpr uint64_t kPhdrSize = sizeof(Elf64_Phdr);  // 56
inline constexpr uint64_t kShdrSize = sizeof(Elf64_Shdr);  // 64
inline constexpr uint64_t kSymSize = sizeof(Elf64_Sym);    // 24
inline constexpr uint64_t kDynSize = sizeof(Elf64_Dyn);    // 16
inline constexpr uint64_t kRelaSize = sizeof(Elf64_Rela);  // 24

struct ProgramHeader {
  uint32_t index = 0;         // position in the program header table
  uint64_t entry_offset = 0;  // file offset of this entry in the table
  uint32_t type = 0;
  uint32_t flags = 0;
  uint64_t offset = 0;
  uint64_t vaddr = 0;
  uint64_t paddr = 0;
  uint64_t filesz = 0;
  uint64_t memsz = 0;
  uint64_t align = 0;
};

// Names (of sections and symbols) are views into the ELF bytes, valid as long as they are: a file
// whose headers all point at one long name costs nothing per header, where copies would multiply it.
struct Section {
  uint32_t index = 0;
  uint64_t entry_offset = 0;  // file offset of this header in the section header table
  std::string_view name;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint32_t info = 0;
  uint64_t addralign = 0;
  uint64_t entsize = 0;

  // SHT_NOBITS sections (.bss) occupy no bytes in the file.
  bool has_file_bytes() const { return type != SHT_NOBITS; }
};

struct DynamicEntry {
  int64_t tag = 0;
  uint64_t value = 0;
};

// The dynamic table as the loader sees it: PT_DYNAMIC (or the SHT_DYNAMIC section when there is no
// such program header). `slots` counts every entry the table has room for, including the DT_NULL
// terminator and the spare DT_NULLs linkers leave after it; `entries` stops before the first DT_NULL.
struct DynamicTable {
  uint64_t file_offset = 0;
  uint64_t slots = 0;
  std::vector<DynamicEntry> entries;
};

struct Symbol {
  std::string_view name;
  uint64_t value = 0;
  uint64_t size = 0;
  uint16_t section_index = 0;  // SHN_UNDEF for imports
  uint8_t type = 0;            // STT_*
  uint8_t binding = 0;         // STB_LOCAL, STB_GLOBAL, STB_WEAK, ...

  bool defined() const { return section_index != SHN_UNDEF; }
};

// One entry of a dynamic relocation table (Elf64_Rela): the loader writes a value computed from `symbol`
// (an index into .dynsym; 0 for none) and `addend` at vaddr `offset` of the loaded image.
struct Relocation {
  uint64_t offset = 0;
  uint32_t type = 0;  // R_X86_64_*, R_AARCH64_*
  uint32_t symbol = 0;
  int64_t addend = 0;
};

// Lists of names copied out of one file (DT_NEEDED, DT_VERNEED files) total at most this many bytes:
// many entries may point at one long string.
inline constexpr uint64_t kMaxNameListBytes = 16ull << 20;

// One DT_VERNEED entry (.gnu.version_r): a library the file takes versioned symbols from, and the versions it
// needs of it (its vna_name entries, in order): "libc.so.6" needs "GLIBC_2.2.5", "GLIBC_2.38", ...
struct VersionNeed {
  std::string file;
  std::vector<std::string> versions;
};

// The numbers of a version name that is `prefix` and dotted decimals ("GLIBC_2.38" with "GLIBC_" -> {2, 38});
// empty for any other name ("GLIBC_PRIVATE", "GLIBCXX_3.4" with "GLIBC_").
std::vector<uint32_t> version_numbers(std::string_view name, std::string_view prefix);
// Whether version a is older than b, number by number (2.9 < 2.10, 3.4 < 3.4.1).
bool version_less(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);
// The highest version called `prefix` and dotted decimals among every file's needed versions ("GLIBC_2.38"), or ""
// when none is.
std::string highest_version(const std::vector<VersionNeed>& needs, std::string_view prefix);

// "x86_64", "aarch64", or "EM <n>" for machines mpspack does not name.
std::string machine_name(uint16_t e_machine);

class ElfFile {
 public:
  // Validates the ELF header, the program header table, the section header table and the section
  // names. Not ELF -> Kind::NotThisFormat; ELF32 / big-endian -> Kind::Unsupported; anything out of
  // bounds or inconsistent -> Kind::Corrupt.
  static Result<ElfFile> parse(ByteView bytes);

  ByteView bytes() const { return bytes_; }
  const std::string& what() const { return bytes_.what(); }

  uint16_t type() const { return e_type_; }
  uint16_t machine_code() const { return e_machine_; }
  std::string machine() const { return machine_name(e_machine_); }
  uint64_t phoff() const { return e_phoff_; }
  uint64_t shoff() const { return e_shoff_; }

  const std::vector<ProgramHeader>& program_headers() const { return phdrs_; }
  const std::vector<Section>& sections() const { return sections_; }

  // The first section called `name`, or nullptr.
  const Section* section(std::string_view name) const;
  // The file bytes of a section; an error for SHT_NOBITS or out-of-file ranges.
  Result<ByteView> section_bytes(const Section& s) const;

  // The PT_LOAD whose file part holds [vaddr, vaddr + size), or nullptr.
  const ProgramHeader* load_backing(uint64_t vaddr, uint64_t size) const;
  // The PT_LOAD whose memory image holds [vaddr, vaddr + size), or nullptr.
  const ProgramHeader* load_containing(uint64_t vaddr, uint64_t size) const;
  // The file offset of [vaddr, vaddr + size), which must be backed by a PT_LOAD's file bytes.
  Result<uint64_t> vaddr_to_offset(uint64_t vaddr, uint64_t size, std::string_view field) const;
  // The allocated section whose address range holds [vaddr, vaddr + size), or nullptr.
  const Section* section_containing(uint64_t vaddr, uint64_t size) const;

  // The end of the ELF image proper: the largest end of any header table, section or segment.
  // Anything after it (e.g. mmap-self weights) is not described by the ELF headers.
  uint64_t image_end() const;

  Result<DynamicTable> dynamic() const;
  // DT_NEEDED names, in order, read through DT_STRTAB/DT_STRSZ.
  Result<std::vector<std::string>> needed() const;
  // The file names of DT_VERNEED entries (libraries whose symbol versions are required).
  Result<std::vector<std::string>> version_needed_files() const;
  // The DT_VERNEED entries with the versions each needs (versions.cpp).
  Result<std::vector<VersionNeed>> version_needs() const;
  // The version names DT_VERDEF (.gnu.version_d) defines, less the base entry that names the file itself: what a
  // system library offers ("GLIBCXX_3.4", ..., "GLIBCXX_3.4.30").
  Result<std::vector<std::string>> version_definitions() const;

  // The relocations the dynamic loader applies: the DT_RELA table, then the DT_JMPREL one (PLT slots), read
  // through the PT_LOADs as ld.so reads them. DT_REL tables (not used on x86_64 or aarch64) -> Unsupported.
  Result<std::vector<Relocation>> dynamic_relocations() const;

  // .dynsym, resolved through the string table its sh_link names. Empty when there is none.
  // Entry i of the result is symbol index i + 1 (index 0, the null symbol, is left out).
  Result<std::vector<Symbol>> dynamic_symbols() const;
  // .symtab (absent from stripped libraries: then empty).
  Result<std::vector<Symbol>> static_symbols() const;

 private:
  Result<std::vector<Symbol>> read_symbols(const Section& table) const;
  Result<ByteView> dynamic_strings(const DynamicTable& dyn) const;

  ByteView bytes_;
  uint16_t e_type_ = 0;
  uint16_t e_machine_ = 0;
  uint64_t e_phoff_ = 0;
  uint64_t e_shoff_ = 0;
  std::vector<ProgramHeader> phdrs_;
  std::vector<Section> sections_;
};

}  // namespace mpspack::elf
