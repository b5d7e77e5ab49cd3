// split_library: cut the weights out of a model library and fix the ELF headers so the rest still
// loads; record the original bytes of every edit so restore_library() is exact.
//
// Coordinates: "original" offsets are in the input file; "stored" offsets are in the output, where
// everything at or past the end of the cut has moved up by the cut's size. Edits are computed from
// the original headers and written at stored offsets; the restore patches are then found by
// comparing the two files outside the cut, so they cover every changed byte by construction.
#include "mpspack/aoti/split.hpp"

#include "mpspack/elf/elf_file.hpp"

#include <algorithm>

namespace mpspack::aoti {
namespace {

using Kind = Error::Kind;

// The removed range [begin, end) in original coordinates.
struct Cut {
  uint64_t begin = 0;
  uint64_t end = 0;

  uint64_t size() const { return end - begin; }
  // True when [offset, offset + len) shares a byte with the cut.
  bool overlaps(uint64_t offset, uint64_t len) const {
    if (len == 0 || size() == 0 || offset >= end) return false;
    return offset >= begin || len > begin - offset;
  }
  // Where an original offset lands in the stored file. Offsets strictly inside the cut (only
  // zero-sized things may point there) collapse to its start.
  uint64_t map(uint64_t offset) const {
    if (offset >= end) return offset - size();
    if (offset > begin) return begin;
    return offset;
  }
};

// Writes header fields into the stored bytes, addressed by their ORIGINAL offsets (all of which lie
// outside the cut: checked before any edit).
class StoredEditor {
 public:
  StoredEditor(std::vector<uint8_t>& out, Cut cut) : out_(out), cut_(cut) {}
  void put_u32(uint64_t original_offset, uint32_t v) { store_u32le(at(original_offset, 4), v); }
  void put_u64(uint64_t original_offset, uint64_t v) { store_u64le(at(original_offset, 8), v); }

 private:
  uint8_t* at(uint64_t original_offset, uint64_t len) {
    uint64_t o = cut_.map(original_offset);
    // Callers only pass offsets of header fields validated by ElfFile::parse and checked against the
    // cut; this guard keeps a logic error from writing out of bounds.
    if (!range_fits(o, len, out_.size())) return scratch_;
    return out_.data() + o;
  }
  std::vector<uint8_t>& out_;
  Cut cut_;
  uint8_t scratch_[8] = {};
};

std::string phdr_name(const elf::ProgramHeader& p) {
  return fmt::format("program header [{}] (p_type {:#x})", p.index, p.type);
}

// The header tables themselves must not be in the cut: they are edited, not moved away.
Status check_tables_outside(const elf::ElfFile& elf, Cut cut) {
  uint64_t ph_size = elf.program_headers().size() * elf::kPhdrSize;
  uint64_t sh_size = elf.sections().size() * elf::kShdrSize;
  if (cut.overlaps(0, elf::kEhdrSize) || cut.overlaps(elf.phoff(), ph_size) || cut.overlaps(elf.shoff(), sh_size))
    return make_error(Kind::Unsupported, "{}: the ELF header tables overlap the constants at {:#x}..{:#x}", elf.what(),
                      cut.begin, cut.end);
  return {};
}

// The PT_LOAD whose file part holds the cut; its file part must end exactly where the cut ends,
// since bytes after the constants in the same segment would have to stay at their file offsets.
Result<const elf::ProgramHeader*> containing_segment(const elf::ElfFile& elf, Cut cut) {
  for (const elf::ProgramHeader& p : elf.program_headers()) {
    if (p.type != PT_LOAD || p.offset > cut.begin || cut.end > p.offset + p.filesz) continue;
    if (cut.end != p.offset + p.filesz)
      return make_error(Kind::Unsupported,
                        "{}: {:#x} bytes follow the constants inside PT_LOAD [{}] (file part "
                        "{:#x}..{:#x}, constants {:#x}..{:#x}); only constants at the end of their "
                        "segment can be cut out",
                        elf.what(), p.offset + p.filesz - cut.end, p.index, p.offset, p.offset + p.filesz, cut.begin,
                        cut.end);
    return &p;
  }
  return make_error(Kind::Invalid, "{}: constants at {:#x}..{:#x} are in no PT_LOAD's file part", elf.what(), cut.begin,
                    cut.end);
}

// Program headers: the containing PT_LOAD stops its file part at the constants (p_memsz stays, so
// ld.so zero-fills their addresses); headers after the cut move up. A PT_LOAD after the cut must
// keep p_offset = p_vaddr (mod p_align), which holds only when the cut size is a multiple of its
// p_align. Rather than pad (which would make the stored file differ from "original minus the cut"),
// such layouts are refused: no AOTInductor build seen so far has one (x86-64 puts .lrodata alone in
// the last PT_LOAD).
Status relayout_program_headers(const elf::ElfFile& elf, Cut cut, const elf::ProgramHeader& seg, StoredEditor& ed) {
  ed.put_u64(seg.entry_offset + offsetof(Elf64_Phdr, p_filesz), cut.begin - seg.offset);
  for (const elf::ProgramHeader& p : elf.program_headers()) {
    if (p.index == seg.index) continue;
    if (cut.overlaps(p.offset, p.filesz))
      return make_error(Kind::Unsupported, "{}: {} at {:#x} + {:#x} overlaps the constants at {:#x}..{:#x}", elf.what(),
                        phdr_name(p), p.offset, p.filesz, cut.begin, cut.end);
    if (p.offset < cut.end) continue;
    if (p.type == PT_LOAD && p.align > 1 && cut.size() % p.align != 0)
      return make_error(Kind::Unsupported,
                        "{}: PT_LOAD [{}] follows the constants in the file; cutting {:#x} bytes "
                        "would break its p_offset/p_vaddr alignment {:#x}",
                        elf.what(), p.index, cut.size(), p.align);
    ed.put_u64(p.entry_offset + offsetof(Elf64_Phdr, p_offset), cut.map(p.offset));
  }
  return {};
}

// Section headers: a section wholly inside the cut becomes SHT_NOBITS (its addresses are still
// allocated, its bytes are gone); one that starts before the cut and ends inside it (.lrodata with
// a prefix before _binary_constants_bin_start) keeps its type and is shortened to its bytes still in
// the file, the rest of its addresses being zero-fill like .bss after .data. Sections after the cut
// move up.
Status relayout_sections(const elf::ElfFile& elf, Cut cut, StoredEditor& ed) {
  for (const elf::Section& s : elf.sections()) {
    if (s.index == 0) continue;
    uint64_t type_at = s.entry_offset + offsetof(Elf64_Shdr, sh_type);
    uint64_t offset_at = s.entry_offset + offsetof(Elf64_Shdr, sh_offset);
    uint64_t size_at = s.entry_offset + offsetof(Elf64_Shdr, sh_size);
    if (!s.has_file_bytes() || s.size == 0) {
      ed.put_u64(offset_at, cut.map(s.offset));
      continue;
    }
    uint64_t end = s.offset + s.size;  // no overflow: checked in parse()
    if (end <= cut.begin) continue;
    if (s.offset >= cut.end) {
      ed.put_u64(offset_at, cut.map(s.offset));
    } else if (s.offset >= cut.begin && end <= cut.end) {
      ed.put_u32(type_at, SHT_NOBITS);
      ed.put_u64(offset_at, cut.begin);
    } else if (s.offset < cut.begin && end <= cut.end) {
      ed.put_u64(size_at, cut.begin - s.offset);
    } else {
      return make_error(Kind::Unsupported,
                        "{}: section [{}] '{}' at {:#x}..{:#x} extends past the constants at "
                        "{:#x}..{:#x}",
                        elf.what(), s.index, s.name, s.offset, end, cut.begin, cut.end);
    }
  }
  return {};
}

Status relayout_embedded(const elf::ElfFile& elf, Cut cut, StoredEditor& ed) {
  if (cut.size() == 0) return {};
  MPK_CHECK(check_tables_outside(elf, cut));
  MPK_TRY(const elf::ProgramHeader* seg, containing_segment(elf, cut));
  ed.put_u64(offsetof(Elf64_Ehdr, e_phoff), cut.map(elf.phoff()));
  if (elf.shoff() != 0) ed.put_u64(offsetof(Elf64_Ehdr, e_shoff), cut.map(elf.shoff()));
  MPK_CHECK(relayout_program_headers(elf, cut, *seg, ed));
  return relayout_sections(elf, cut, ed);
}

// Which NEEDED entries to drop: libtorch*.so, unless the library imports a torch C++ symbol (then
// it really needs libtorch) or a symbol version from it (ld.so requires every DT_VERNEED file to be
// loaded).
Result<std::vector<std::string>> libtorch_to_drop(const elf::ElfFile& elf, const LibraryAnalysis& a) {
  std::vector<std::string> drop;
  for (const std::string& n : a.needed)
    if (is_libtorch_needed(n)) drop.push_back(n);
  if (drop.empty()) return drop;
  MPK_TRY(std::vector<elf::Symbol> dynsyms, elf.dynamic_symbols());
  for (const elf::Symbol& s : dynsyms)
    if (!s.defined() && is_torch_cxx_symbol(s.name)) return std::vector<std::string>{};
  MPK_TRY(std::vector<std::string> versioned, elf.version_needed_files());
  std::erase_if(
      drop, [&](const std::string& n) { return std::find(versioned.begin(), versioned.end(), n) != versioned.end(); });
  return drop;
}

// Rewrites the dynamic table without the dropped DT_NEEDED entries: later entries move up, the
// freed slots at the end become DT_NULL.
Status drop_needed_entries(const elf::ElfFile& elf, Cut cut, const std::vector<std::string>& drop, StoredEditor& ed) {
  MPK_TRY(elf::DynamicTable dyn, elf.dynamic());
  MPK_TRY(std::vector<std::string> needed, elf.needed());
  if (cut.overlaps(dyn.file_offset, dyn.slots * elf::kDynSize))
    return make_error(Kind::Unsupported, "{}: the dynamic table overlaps the constants", elf.what());
  std::vector<elf::DynamicEntry> kept;
  size_t needed_index = 0;
  for (const elf::DynamicEntry& e : dyn.entries) {
    if (e.tag == DT_NEEDED && needed_index < needed.size()) {
      const std::string& name = needed[needed_index++];
      if (std::find(drop.begin(), drop.end(), name) != drop.end()) continue;
    }
    kept.push_back(e);
  }
  for (uint64_t i = 0; i < dyn.slots; ++i) {
    elf::DynamicEntry e = i < kept.size() ? kept[i] : elf::DynamicEntry{DT_NULL, 0};
    uint64_t at = dyn.file_offset + i * elf::kDynSize;
    ed.put_u64(at + offsetof(Elf64_Dyn, d_tag), uint64_t(e.tag));
    ed.put_u64(at + offsetof(Elf64_Dyn, d_un), e.value);
  }
  return {};
}

// Appends patches for the bytes where `orig` and `stored` differ; runs closer than kMergeGap are
// merged so a rewritten header becomes one patch, not one per byte.
void diff_into(const uint8_t* orig, const uint8_t* stored, uint64_t n, uint64_t base, std::vector<Patch>& out) {
  constexpr uint64_t kMergeGap = 16;
  uint64_t i = 0;
  while (i < n) {
    if (orig[i] == stored[i]) {
      ++i;
      continue;
    }
    uint64_t start = i, last = i;
    for (uint64_t j = i + 1; j < n && j <= last + kMergeGap; ++j)
      if (orig[j] != stored[j]) last = j;
    out.push_back(Patch{base + start, std::vector<uint8_t>(orig + start, orig + last + 1)});
    i = last + 1;
  }
}

std::vector<Patch> diff_patches(ByteView original, const std::vector<uint8_t>& stored, Cut cut) {
  std::vector<Patch> out;
  diff_into(original.data(), stored.data(), cut.begin, 0, out);
  diff_into(original.data() + cut.end, stored.data() + cut.begin, original.size() - cut.end, cut.end, out);
  return out;
}

Result<Cut> cut_for(ByteView original, const LibraryAnalysis& a) {
  Cut cut;
  if (a.flavour == Flavour::ExternalBlob) return cut;
  if (!range_fits(a.weights_offset, a.weights_size, original.size()))
    return make_error(Kind::Invalid,
                      "{}: weights at {:#x} + {:#x} are outside the file ({:#x} bytes): the analysis "
                      "does not belong to this library",
                      original.what(), a.weights_offset, a.weights_size, original.size());
  cut.begin = a.weights_offset;
  cut.end = a.weights_offset + a.weights_size;
  return cut;
}

}  // namespace

Result<SplitLibrary> split_library(ByteView original, const LibraryAnalysis& a, bool drop_libtorch) {
  MPK_TRY(elf::ElfFile elf, elf::ElfFile::parse(original));
  MPK_TRY(Cut cut, cut_for(original, a));

  SplitLibrary out;
  out.removed_offset = cut.begin;
  out.removed_size = cut.size();
  out.stored.reserve(original.size() - cut.size());
  out.stored.insert(out.stored.end(), original.data(), original.data() + cut.begin);
  out.stored.insert(out.stored.end(), original.data() + cut.end, original.data() + original.size());

  StoredEditor ed(out.stored, cut);
  // mmap-self weights are outside the ELF image: nothing in the headers points at them.
  if (a.flavour == Flavour::Embedded) MPK_CHECK(relayout_embedded(elf, cut, ed));
  if (drop_libtorch) {
    MPK_TRY(out.dropped_needed, libtorch_to_drop(elf, a));
    if (!out.dropped_needed.empty()) MPK_CHECK(drop_needed_entries(elf, cut, out.dropped_needed, ed));
  }
  out.restore = diff_patches(original, out.stored, cut);

  // The stored library must itself be a well-formed ELF file.
  auto check = elf::ElfFile::parse(ByteView(out.stored, original.what()));
  if (!check.ok()) return check.error().context("the library with its weights cut out is not valid ELF");
  return out;
}

}  // namespace mpspack::aoti
