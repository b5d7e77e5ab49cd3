// ElfFile::parse: the file header, program headers and section headers, validated once, in the
// order a loader would trust them (identity -> header -> tables -> names).
#include "mpspack/elf/elf_file.hpp"

#include <algorithm>

namespace mpspack::elf {
namespace {

using Kind = Error::Kind;

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// EI_CLASS / EI_DATA: only ELF64 little-endian is read. Anything else is named, not guessed at.
Status check_identity(ByteView b) {
  if (b.size() < SELFMAG || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0)
    return make_error(Kind::NotThisFormat, "{}: not an ELF file", b.what());
  if (b.size() < EI_NIDENT)
    return make_error(Kind::Corrupt, "{}: ELF identification truncated ({:#x} bytes, need {:#x})", b.what(), b.size(),
                      EI_NIDENT);
  uint8_t cls = b.data()[EI_CLASS];
  uint8_t data = b.data()[EI_DATA];
  if (cls == ELFCLASS32)
    return make_error(Kind::Unsupported, "{}: ELFCLASS32 (32-bit ELF) is not supported, only ELF64", b.what());
  if (cls != ELFCLASS64) return make_error(Kind::Corrupt, "{}: unknown EI_CLASS {}", b.what(), cls);
  if (data == ELFDATA2MSB)
    return make_error(Kind::Unsupported, "{}: big-endian ELF (ELFDATA2MSB) is not supported, only little-endian",
                      b.what());
  if (data != ELFDATA2LSB) return make_error(Kind::Corrupt, "{}: unknown EI_DATA byte order {}", b.what(), data);
  if (b.size() < kEhdrSize)
    return make_error(Kind::Corrupt, "{}: ELF header truncated ({:#x} bytes, need {:#x})", b.what(), b.size(),
                      kEhdrSize);
  return {};
}

// A table of `count` entries of `entsize` bytes at `offset`: the entry size must be the ELF64 one,
// count * entsize must not overflow, and the table must lie in the file after the ELF header.
Status check_table(ByteView b, std::string_view table, std::string_view off_field, uint64_t offset, uint64_t count,
                   uint64_t entsize, uint64_t expected_entsize) {
  if (count == 0) return {};
  if (entsize != expected_entsize)
    return make_error(Kind::Corrupt, "{}: {} entry size is {:#x}, expected {:#x}", b.what(), table, entsize,
                      expected_entsize);
  uint64_t size = 0;
  if (!checked_mul(count, entsize, size))
    return make_error(Kind::Corrupt, "{}: {} size overflows ({} entries of {:#x} bytes)", b.what(), table, count,
                      entsize);
  if (!range_fits(offset, size, b.size()))
    return make_error(Kind::Corrupt, "{}: {} at {} {:#x} + {:#x} ({} entries) runs past the file size {:#x}", b.what(),
                      table, off_field, offset, size, count, b.size());
  if (offset < kEhdrSize)
    return make_error(Kind::Corrupt, "{}: {} at {} {:#x} overlaps the ELF header", b.what(), table, off_field, offset);
  return {};
}

ProgramHeader read_phdr(const uint8_t* p, uint32_t index, uint64_t entry_offset) {
  ProgramHeader h;
  h.index = index;
  h.entry_offset = entry_offset;
  h.type = load_u32le(p + offsetof(Elf64_Phdr, p_type));
  h.flags = load_u32le(p + offsetof(Elf64_Phdr, p_flags));
  h.offset = load_u64le(p + offsetof(Elf64_Phdr, p_offset));
  h.vaddr = load_u64le(p + offsetof(Elf64_Phdr, p_vaddr));
  h.paddr = load_u64le(p + offsetof(Elf64_Phdr, p_paddr));
  h.filesz = load_u64le(p + offsetof(Elf64_Phdr, p_filesz));
  h.memsz = load_u64le(p + offsetof(Elf64_Phdr, p_memsz));
  h.align = load_u64le(p + offsetof(Elf64_Phdr, p_align));
  return h;
}

Section read_shdr(const uint8_t* p, uint32_t index, uint64_t entry_offset) {
  Section s;
  s.index = index;
  s.entry_offset = entry_offset;
  s.type = load_u32le(p + offsetof(Elf64_Shdr, sh_type));
  s.flags = load_u64le(p + offsetof(Elf64_Shdr, sh_flags));
  s.addr = load_u64le(p + offsetof(Elf64_Shdr, sh_addr));
  s.offset = load_u64le(p + offsetof(Elf64_Shdr, sh_offset));
  s.size = load_u64le(p + offsetof(Elf64_Shdr, sh_size));
  s.link = load_u32le(p + offsetof(Elf64_Shdr, sh_link));
  s.info = load_u32le(p + offsetof(Elf64_Shdr, sh_info));
  s.addralign = load_u64le(p + offsetof(Elf64_Shdr, sh_addralign));
  s.entsize = load_u64le(p + offsetof(Elf64_Shdr, sh_entsize));
  return s;
}

// A segment's file bytes must be in the file; a PT_LOAD must also be loadable as ld.so maps it.
Status check_phdr(ByteView b, const ProgramHeader& h) {
  if (!range_fits(h.offset, h.filesz, b.size()))
    return make_error(Kind::Corrupt,
                      "{}: program header [{}] (type {:#x}) has p_offset {:#x} + p_filesz {:#x} past "
                      "the file size {:#x}",
                      b.what(), h.index, h.type, h.offset, h.filesz, b.size());
  if (h.type != PT_LOAD) return {};
  if (h.filesz > h.memsz)
    return make_error(Kind::Corrupt, "{}: PT_LOAD [{}] has p_filesz {:#x} larger than p_memsz {:#x}", b.what(), h.index,
                      h.filesz, h.memsz);
  uint64_t end = 0;
  if (!checked_add(h.vaddr, h.memsz, end))
    return make_error(Kind::Corrupt, "{}: PT_LOAD [{}] p_vaddr {:#x} + p_memsz {:#x} overflows", b.what(), h.index,
                      h.vaddr, h.memsz);
  if (h.align > 1) {
    if (!is_power_of_two(h.align))
      return make_error(Kind::Corrupt, "{}: PT_LOAD [{}] p_align {:#x} is not a power of two", b.what(), h.index,
                        h.align);
    if (h.offset % h.align != h.vaddr % h.align)
      return make_error(Kind::Corrupt,
                        "{}: PT_LOAD [{}] p_offset {:#x} and p_vaddr {:#x} differ modulo p_align "
                        "{:#x}",
                        b.what(), h.index, h.offset, h.vaddr, h.align);
  }
  return {};
}

Status check_section_range(ByteView b, const Section& s) {
  if (!s.has_file_bytes()) return {};
  if (!range_fits(s.offset, s.size, b.size()))
    return make_error(Kind::Corrupt, "{}: section [{}] has sh_offset {:#x} + sh_size {:#x} past the file size {:#x}",
                      b.what(), s.index, s.offset, s.size, b.size());
  return {};
}

// The table counts from the ELF header, before extended numbering is applied.
struct TableCounts {
  uint64_t phnum = 0;
  uint64_t shnum = 0;
  uint32_t shstrndx = 0;
};

// Section 0 carries the real counts when they do not fit in 16 bits (extended numbering).
Status apply_extended_numbering(ByteView b, uint64_t shoff, uint64_t shentsize, TableCounts& c) {
  if (shoff != 0) {
    MPK_CHECK(check_table(b, "section header table", "e_shoff", shoff, 1, shentsize, kShdrSize));
    Section s0 = read_shdr(b.data() + shoff, 0, shoff);
    if (c.shnum == 0) c.shnum = s0.size;
    if (c.shstrndx == SHN_XINDEX) c.shstrndx = s0.link;
    if (c.phnum == PN_XNUM) c.phnum = s0.info;
  } else if (c.shnum != 0) {
    return make_error(Kind::Corrupt, "{}: e_shnum is {} but e_shoff is 0", b.what(), c.shnum);
  }
  return {};
}

Result<std::vector<ProgramHeader>> read_phdrs(ByteView b, uint64_t phoff, uint64_t phnum, uint64_t phentsize) {
  MPK_CHECK(check_table(b, "program header table", "e_phoff", phoff, phnum, phentsize, kPhdrSize));
  std::vector<ProgramHeader> out;
  out.reserve(phnum);
  for (uint64_t i = 0; i < phnum; ++i) {
    uint64_t at = phoff + i * kPhdrSize;
    out.push_back(read_phdr(b.data() + at, uint32_t(i), at));
    MPK_CHECK(check_phdr(b, out.back()));
  }
  return out;
}

Result<std::vector<Section>> read_shdrs(ByteView b, uint64_t shoff, uint64_t shnum, uint64_t shentsize) {
  MPK_CHECK(check_table(b, "section header table", "e_shoff", shoff, shnum, shentsize, kShdrSize));
  std::vector<Section> out;
  out.reserve(shnum);
  for (uint64_t i = 0; i < shnum; ++i) {
    uint64_t at = shoff + i * kShdrSize;
    out.push_back(read_shdr(b.data() + at, uint32_t(i), at));
    MPK_CHECK(check_section_range(b, out.back()));
  }
  return out;
}

// Section names: e_shstrndx must name a string table inside the file (SHN_UNDEF: the sections are unnamed).
Status name_sections(ByteView b, std::vector<Section>& sections, uint32_t shstrndx) {
  if (sections.empty() || shstrndx == SHN_UNDEF) return {};
  if (shstrndx >= sections.size())
    return make_error(Kind::Corrupt, "{}: e_shstrndx {} is out of range ({} sections)", b.what(), shstrndx,
                      sections.size());
  const Section& strtab = sections[shstrndx];
  if (strtab.type != SHT_STRTAB)
    return make_error(Kind::Corrupt, "{}: e_shstrndx {} names a section of type {:#x}, not SHT_STRTAB", b.what(),
                      shstrndx, strtab.type);
  MPK_TRY(ByteView names, b.slice(strtab.offset, strtab.size, "section name table"));
  for (Section& s : sections) {
    uint32_t name_off = load_u32le(b.data() + s.entry_offset + offsetof(Elf64_Shdr, sh_name));
    if (name_off == 0 && s.index == 0) continue;
    auto name = names.cstring(name_off, fmt::format("section [{}] sh_name", s.index), names.size());
    if (!name.ok()) return name.error();
    s.name = *name;
  }
  return {};
}

}  // namespace

std::string machine_name(uint16_t e_machine) {
  switch (e_machine) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
  }
  return fmt::format("EM {}", e_machine);
}

Result<ElfFile> ElfFile::parse(ByteView b) {
  MPK_CHECK(check_identity(b));
  const uint8_t* h = b.data();
  ElfFile f;
  f.bytes_ = b;
  f.e_type_ = load_u16le(h + offsetof(Elf64_Ehdr, e_type));
  f.e_machine_ = load_u16le(h + offsetof(Elf64_Ehdr, e_machine));
  f.e_phoff_ = load_u64le(h + offsetof(Elf64_Ehdr, e_phoff));
  f.e_shoff_ = load_u64le(h + offsetof(Elf64_Ehdr, e_shoff));
  uint64_t phentsize = load_u16le(h + offsetof(Elf64_Ehdr, e_phentsize));
  uint64_t shentsize = load_u16le(h + offsetof(Elf64_Ehdr, e_shentsize));
  TableCounts c;
  c.phnum = load_u16le(h + offsetof(Elf64_Ehdr, e_phnum));
  c.shnum = load_u16le(h + offsetof(Elf64_Ehdr, e_shnum));
  c.shstrndx = load_u16le(h + offsetof(Elf64_Ehdr, e_shstrndx));

  MPK_CHECK(apply_extended_numbering(b, f.e_shoff_, shentsize, c));
  MPK_TRY(f.phdrs_, read_phdrs(b, f.e_phoff_, c.phnum, phentsize));
  MPK_TRY(f.sections_, read_shdrs(b, f.e_shoff_, c.shnum, shentsize));
  MPK_CHECK(name_sections(b, f.sections_, c.shstrndx));
  return f;
}

const Section* ElfFile::section(std::string_view name) const {
  for (const Section& s : sections_)
    if (s.index != 0 && s.name == name) return &s;
  return nullptr;
}

Result<ByteView> ElfFile::section_bytes(const Section& s) const {
  if (!s.has_file_bytes())
    return make_error(Error::Kind::Corrupt, "{}: section [{}] '{}' is SHT_NOBITS and has no file bytes", what(),
                      s.index, s.name);
  return bytes_.slice(s.offset, s.size, fmt::format("section [{}] '{}'", s.index, s.name));
}

const ProgramHeader* ElfFile::load_backing(uint64_t vaddr, uint64_t size) const {
  for (const ProgramHeader& p : phdrs_) {
    if (p.type != PT_LOAD || vaddr < p.vaddr) continue;
    if (range_fits(vaddr - p.vaddr, size, p.filesz)) return &p;
  }
  return nullptr;
}

const ProgramHeader* ElfFile::load_containing(uint64_t vaddr, uint64_t size) const {
  for (const ProgramHeader& p : phdrs_) {
    if (p.type != PT_LOAD || vaddr < p.vaddr) continue;
    if (range_fits(vaddr - p.vaddr, size, p.memsz)) return &p;
  }
  return nullptr;
}

Result<uint64_t> ElfFile::vaddr_to_offset(uint64_t vaddr, uint64_t size, std::string_view field) const {
  const ProgramHeader* p = load_backing(vaddr, size);
  if (!p)
    return make_error(Error::Kind::Corrupt,
                      "{}: {} at vaddr {:#x} + {:#x} is not backed by the file bytes of any PT_LOAD", what(), field,
                      vaddr, size);
  return p->offset + (vaddr - p->vaddr);
}

const Section* ElfFile::section_containing(uint64_t vaddr, uint64_t size) const {
  for (const Section& s : sections_) {
    if (!(s.flags & SHF_ALLOC) || vaddr < s.addr) continue;
    if (range_fits(vaddr - s.addr, size, s.size)) return &s;
  }
  return nullptr;
}

uint64_t ElfFile::image_end() const {
  // Every sum below was range-checked against the file size in parse().
  uint64_t end = kEhdrSize;
  if (!phdrs_.empty()) end = std::max(end, e_phoff_ + phdrs_.size() * kPhdrSize);
  if (!sections_.empty()) end = std::max(end, e_shoff_ + sections_.size() * kShdrSize);
  for (const ProgramHeader& p : phdrs_) end = std::max(end, p.offset + p.filesz);
  for (const Section& s : sections_)
    if (s.has_file_bytes()) end = std::max(end, s.offset + s.size);
  return end;
}

}  // namespace mpspack::elf
