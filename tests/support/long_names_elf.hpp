// An ELF library whose every section header and dynamic symbol is named by one 16 KiB name (2,000 of each, 192 KB
// in all): the shape that made readers that copy names use gigabytes. Used by the ELF reader's tests and by
// bench/hostile.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace mpspack::test {

constexpr uint64_t kNameBytes = 16 << 10;
constexpr uint32_t kSections = 2000;
constexpr uint32_t kSymbols = 2000;

template <class T>
inline void put(std::vector<uint8_t>& b, uint64_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

inline void section(std::vector<uint8_t>& b, uint64_t shoff, uint32_t index, uint32_t type, uint64_t offset,
                    uint64_t size, uint32_t link = 0, uint64_t entsize = 0) {
  const uint64_t at = shoff + index * sizeof(Elf64_Shdr);
  put<uint32_t>(b, at + offsetof(Elf64_Shdr, sh_name), index == 0 ? 0 : 1);  // all at the long name
  put<uint32_t>(b, at + offsetof(Elf64_Shdr, sh_type), type);
  put<uint64_t>(b, at + offsetof(Elf64_Shdr, sh_offset), offset);
  put<uint64_t>(b, at + offsetof(Elf64_Shdr, sh_size), size);
  put<uint32_t>(b, at + offsetof(Elf64_Shdr, sh_link), link);
  put<uint64_t>(b, at + offsetof(Elf64_Shdr, sh_entsize), entsize);
}

// Sections: [0] null, [1] the name table, [2] .dynsym (every symbol named by the long name),
// [3] its string table (the same bytes), then plain sections up to kSections.
inline std::vector<uint8_t> one_long_name() {
  const uint64_t names = sizeof(Elf64_Ehdr), names_size = kNameBytes + 2;
  const uint64_t symtab = (names + names_size + 7) / 8 * 8, symtab_size = (kSymbols + 1) * sizeof(Elf64_Sym);
  const uint64_t shoff = symtab + symtab_size;
  std::vector<uint8_t> b(shoff + kSections * sizeof(Elf64_Shdr), 0);
  std::memcpy(b.data(), ELFMAG, SELFMAG);
  b[EI_CLASS] = ELFCLASS64;
  b[EI_DATA] = ELFDATA2LSB;
  b[EI_VERSION] = EV_CURRENT;
  put<uint16_t>(b, offsetof(Elf64_Ehdr, e_type), ET_DYN);
  put<uint16_t>(b, offsetof(Elf64_Ehdr, e_machine), EM_X86_64);
  put<uint64_t>(b, offsetof(Elf64_Ehdr, e_shoff), shoff);
  put<uint16_t>(b, offsetof(Elf64_Ehdr, e_ehsize), sizeof(Elf64_Ehdr));
  put<uint16_t>(b, offsetof(Elf64_Ehdr, e_shentsize), sizeof(Elf64_Shdr));
  put<uint16_t>(b, offsetof(Elf64_Ehdr, e_shnum), kSections);
  put<uint16_t>(b, offsetof(Elf64_Ehdr, e_shstrndx), 1);
  std::memset(b.data() + names + 1, 'A', kNameBytes);
  for (uint32_t i = 1; i <= kSymbols; ++i) put<uint32_t>(b, symtab + i * sizeof(Elf64_Sym), 1);
  section(b, shoff, 0, SHT_NULL, 0, 0);
  section(b, shoff, 1, SHT_STRTAB, names, names_size);
  section(b, shoff, 2, SHT_DYNSYM, symtab, symtab_size, 3, sizeof(Elf64_Sym));
  section(b, shoff, 3, SHT_STRTAB, names, names_size);
  for (uint32_t i = 4; i < kSections; ++i) section(b, shoff, i, SHT_PROGBITS, 0, 0);
  return b;
}

}  // namespace mpspack::test
