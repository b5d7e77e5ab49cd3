// The dynamic section: its entries, DT_NEEDED names, the DT_VERNEED file names and the relocation tables
// (DT_RELA, DT_JMPREL), read the way ld.so reads them (PT_DYNAMIC, tables through the PT_LOADs).
#include "mpspack/elf/elf_file.hpp"

namespace mpspack::elf {
namespace {

using Kind = Error::Kind;

const DynamicEntry* find_tag(const DynamicTable& dyn, int64_t tag) {
  for (const DynamicEntry& e : dyn.entries)
    if (e.tag == tag) return &e;
  return nullptr;
}

}  // namespace

Result<DynamicTable> ElfFile::dynamic() const {
  DynamicTable dyn;
  uint64_t size = 0;
  bool found = false;
  for (const ProgramHeader& p : phdrs_) {
    if (p.type != PT_DYNAMIC) continue;
    dyn.file_offset = p.offset;
    size = p.filesz;
    found = true;
    break;
  }
  if (!found) {
    for (const Section& s : sections_) {
      if (s.type != SHT_DYNAMIC) continue;
      dyn.file_offset = s.offset;
      size = s.size;
      found = true;
      break;
    }
  }
  if (!found) return dyn;
  if (size % kDynSize != 0)
    return make_error(Kind::Corrupt, "{}: dynamic table at {:#x} has size {:#x}, not a multiple of {:#x}", what(),
                      dyn.file_offset, size, kDynSize);
  MPK_TRY(ByteView table, bytes_.slice(dyn.file_offset, size, "dynamic table"));
  dyn.slots = size / kDynSize;
  for (uint64_t i = 0; i < dyn.slots; ++i) {
    const uint8_t* p = table.data() + i * kDynSize;
    DynamicEntry e{int64_t(load_u64le(p + offsetof(Elf64_Dyn, d_tag))), load_u64le(p + offsetof(Elf64_Dyn, d_un))};
    if (e.tag == DT_NULL) break;
    dyn.entries.push_back(e);
  }
  return dyn;
}

Result<ByteView> ElfFile::dynamic_strings(const DynamicTable& dyn) const {
  const DynamicEntry* strtab = find_tag(dyn, DT_STRTAB);
  const DynamicEntry* strsz = find_tag(dyn, DT_STRSZ);
  if (strtab && strsz) {
    MPK_TRY(uint64_t off, vaddr_to_offset(strtab->value, strsz->value, "DT_STRTAB"));
    return bytes_.slice(off, strsz->value, "DT_STRTAB");
  }
  if (const Section* s = section(".dynstr")) return section_bytes(*s);
  return make_error(Kind::Corrupt, "{}: the dynamic section has no DT_STRTAB/DT_STRSZ and there is no .dynstr", what());
}

namespace {

// Appends `name`, refusing once the list's names pass kMaxNameListBytes.
Status append_name(std::vector<std::string>& out, uint64_t& total, std::string_view name, const std::string& what,
                   std::string_view list) {
  total += name.size();
  if (total > kMaxNameListBytes)
    return make_error(Error::Kind::Corrupt, "{}: the {} names total more than {} bytes", what, list, kMaxNameListBytes);
  out.emplace_back(name);
  return {};
}

}  // namespace

Result<std::vector<std::string>> ElfFile::needed() const {
  MPK_TRY(DynamicTable dyn, dynamic());
  std::vector<std::string> out;
  uint64_t total = 0;
  if (!find_tag(dyn, DT_NEEDED)) return out;
  MPK_TRY(ByteView strings, dynamic_strings(dyn));
  for (const DynamicEntry& e : dyn.entries) {
    if (e.tag != DT_NEEDED) continue;
    MPK_TRY(std::string_view name, strings.cstring(e.value, "DT_NEEDED name", strings.size()));
    MPK_CHECK(append_name(out, total, name, what(), "DT_NEEDED"));
  }
  return out;
}

Result<std::vector<std::string>> ElfFile::version_needed_files() const {
  MPK_TRY(DynamicTable dyn, dynamic());
  std::vector<std::string> out;
  uint64_t total = 0;
  const DynamicEntry* verneed = find_tag(dyn, DT_VERNEED);
  const DynamicEntry* count = find_tag(dyn, DT_VERNEEDNUM);
  if (!verneed || !count) return out;
  MPK_TRY(ByteView strings, dynamic_strings(dyn));
  MPK_TRY(uint64_t at, vaddr_to_offset(verneed->value, sizeof(Elf64_Verneed), "DT_VERNEED"));
  // Each entry is at least 16 bytes, so a file cannot hold more than size/16 of them: a hostile
  // DT_VERNEEDNUM cannot make this loop long.
  uint64_t limit = std::min<uint64_t>(count->value, bytes_.size() / sizeof(Elf64_Verneed));
  for (uint64_t i = 0; i < limit; ++i) {
    MPK_TRY(uint32_t file, bytes_.u32(at + offsetof(Elf64_Verneed, vn_file), "vn_file"));
    MPK_TRY(uint32_t next, bytes_.u32(at + offsetof(Elf64_Verneed, vn_next), "vn_next"));
    MPK_TRY(std::string_view name, strings.cstring(file, "DT_VERNEED file name", strings.size()));
    MPK_CHECK(append_name(out, total, name, what(), "DT_VERNEED file"));
    if (next == 0) break;
    if (!checked_add(at, next, at))
      return make_error(Kind::Corrupt, "{}: DT_VERNEED entry {} vn_next {:#x} overflows", what(), i, next);
  }
  return out;
}

Result<std::vector<Relocation>> ElfFile::dynamic_relocations() const {
  MPK_TRY(DynamicTable dyn, dynamic());
  const DynamicEntry* pltrel = find_tag(dyn, DT_PLTREL);
  if (find_tag(dyn, DT_REL) || (pltrel && pltrel->value != uint64_t(DT_RELA)))
    return make_error(Kind::Unsupported, "{}: has DT_REL relocations (only DT_RELA is read)", what());
  if (const DynamicEntry* ent = find_tag(dyn, DT_RELAENT); ent && ent->value != kRelaSize)
    return make_error(Kind::Corrupt, "{}: DT_RELAENT is {:#x}, expected {:#x}", what(), ent->value, kRelaSize);
  std::vector<Relocation> out;
  auto read_table = [&](int64_t at_tag, int64_t size_tag, std::string_view name) -> Status {
    const DynamicEntry* at = find_tag(dyn, at_tag);
    const DynamicEntry* size = find_tag(dyn, size_tag);
    if (!at || !size || size->value == 0) return {};
    if (size->value % kRelaSize != 0)
      return make_error(Kind::Corrupt, "{}: {} size {:#x} is not a multiple of {:#x}", what(), name, size->value,
                        kRelaSize);
    MPK_TRY(uint64_t offset, vaddr_to_offset(at->value, size->value, name));
    MPK_TRY(ByteView table, bytes_.slice(offset, size->value, name));
    for (uint64_t i = 0; i < size->value / kRelaSize; ++i) {
      const uint8_t* p = table.data() + i * kRelaSize;
      const uint64_t info = load_u64le(p + offsetof(Elf64_Rela, r_info));
      out.push_back({load_u64le(p + offsetof(Elf64_Rela, r_offset)), uint32_t(ELF64_R_TYPE(info)),
                     uint32_t(ELF64_R_SYM(info)), int64_t(load_u64le(p + offsetof(Elf64_Rela, r_addend)))});
    }
    return {};
  };
  MPK_CHECK(read_table(DT_RELA, DT_RELASZ, "DT_RELA"));
  MPK_CHECK(read_table(DT_JMPREL, DT_PLTRELSZ, "DT_JMPREL"));
  return out;
}

}  // namespace mpspack::elf
