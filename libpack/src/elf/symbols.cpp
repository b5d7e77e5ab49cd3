// Symbol tables (.dynsym, .symtab): entries decoded field by field, names through the string table
// named by sh_link, every index and offset checked.
#include "mpspack/elf/elf_file.hpp"

namespace mpspack::elf {

Result<std::vector<Symbol>> ElfFile::read_symbols(const Section& table) const {
  using Kind = Error::Kind;
  if (table.entsize != kSymSize)
    return make_error(Kind::Corrupt, "{}: symbol table [{}] '{}' has sh_entsize {:#x}, expected {:#x}", what(),
                      table.index, table.name, table.entsize, kSymSize);
  if (table.size % kSymSize != 0)
    return make_error(Kind::Corrupt, "{}: symbol table [{}] '{}' has sh_size {:#x}, not a multiple of {:#x}", what(),
                      table.index, table.name, table.size, kSymSize);
  if (table.link == 0 || table.link >= sections_.size())
    return make_error(Kind::Corrupt, "{}: symbol table [{}] '{}' has sh_link {} out of range ({} sections)", what(),
                      table.index, table.name, table.link, sections_.size());
  const Section& strtab = sections_[table.link];
  if (strtab.type != SHT_STRTAB)
    return make_error(Kind::Corrupt, "{}: symbol table [{}] '{}' links section [{}], which is not SHT_STRTAB", what(),
                      table.index, table.name, strtab.index);
  MPK_TRY(ByteView entries, section_bytes(table));
  MPK_TRY(ByteView names, section_bytes(strtab));

  std::vector<Symbol> out;
  uint64_t count = table.size / kSymSize;
  out.reserve(count > 0 ? count - 1 : 0);
  for (uint64_t i = 1; i < count; ++i) {  // entry 0 is the reserved null symbol
    const uint8_t* p = entries.data() + i * kSymSize;
    Symbol s;
    uint32_t name_off = load_u32le(p + offsetof(Elf64_Sym, st_name));
    uint8_t info = p[offsetof(Elf64_Sym, st_info)];
    s.type = ELF64_ST_TYPE(info);
    s.binding = ELF64_ST_BIND(info);
    s.section_index = load_u16le(p + offsetof(Elf64_Sym, st_shndx));
    s.value = load_u64le(p + offsetof(Elf64_Sym, st_value));
    s.size = load_u64le(p + offsetof(Elf64_Sym, st_size));
    if (name_off != 0) {
      // The message is made only on failure: the table's name may be long, and there may be many symbols.
      auto name = names.cstring(name_off, "st_name", names.size());
      if (!name.ok())
        return make_error(Kind::Corrupt,
                          "{}: symbol table [{}] symbol {} st_name {:#x} lies outside its string "
                          "table [{}] or is not NUL-terminated",
                          what(), table.index, i, name_off, strtab.index);
      s.name = *name;
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<Symbol>> ElfFile::dynamic_symbols() const {
  for (const Section& s : sections_)
    if (s.type == SHT_DYNSYM) return read_symbols(s);
  return std::vector<Symbol>{};
}

Result<std::vector<Symbol>> ElfFile::static_symbols() const {
  for (const Section& s : sections_)
    if (s.type == SHT_SYMTAB) return read_symbols(s);
  return std::vector<Symbol>{};
}

}  // namespace mpspack::elf
