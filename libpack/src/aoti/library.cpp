// analyze_library: classify a model.so from its ELF tables and the bytes at the constants symbols.
#include "mpspack/aoti/library.hpp"

#include "mpspack/elf/elf_file.hpp"

#include <algorithm>
#include <cctype>

namespace mpspack::aoti {
namespace {

using Kind = Error::Kind;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// CUDA runtime (cudaMalloc) and driver (cuLaunchKernel) entry points. "cu" alone would also match
// libc's cuserid, so the driver form needs an upper-case letter after the prefix.
bool is_cuda_api(std::string_view s) {
  if (starts_with(s, "cuda")) return true;
  return s.size() > 2 && starts_with(s, "cu") && std::isupper(static_cast<unsigned char>(s[2]));
}

std::string device_of(const std::vector<std::string>& imports) {
  bool mps = false;
  for (const std::string& s : imports) {
    if (starts_with(s, "aoti_torch_cuda_") || is_cuda_api(s)) return "cuda";
    if (starts_with(s, "aoti_torch_mps_")) mps = true;
  }
  return mps ? "mps" : "cpu";
}

struct ConstantsSymbols {
  uint64_t start = 0;
  uint64_t end = 0;
};

// Defined `name` in `symbols`, or nullptr.
const elf::Symbol* find_defined(const std::vector<elf::Symbol>& symbols, std::string_view name) {
  for (const elf::Symbol& s : symbols)
    if (s.defined() && s.name == name) return &s;
  return nullptr;
}

// The constants symbols are exported (.dynsym); a library linked with hidden visibility may only
// have them in .symtab, so that is the fallback.
Result<ConstantsSymbols> find_constants_symbols(const elf::ElfFile& elf, const std::vector<elf::Symbol>& dynsyms) {
  const elf::Symbol* start = find_defined(dynsyms, kConstantsStart);
  const elf::Symbol* end = find_defined(dynsyms, kConstantsEnd);
  std::vector<elf::Symbol> symtab;
  if (!start || !end) {
    MPK_TRY(symtab, elf.static_symbols());
    start = find_defined(symtab, kConstantsStart);
    end = find_defined(symtab, kConstantsEnd);
  }
  if (!start || !end)
    return make_error(Kind::NotThisFormat, "{}: has no {}/{}: not an AOTInductor model library", elf.what(),
                      kConstantsStart, kConstantsEnd);
  if (end->value < start->value)
    return make_error(Kind::Corrupt, "{}: {} {:#x} is below {} {:#x}", elf.what(), kConstantsEnd, end->value,
                      kConstantsStart, start->value);
  return ConstantsSymbols{start->value, end->value};
}

// Where the constants are: in which PT_LOAD and section, at which file offset. The bytes must be in
// the file in every flavour (the weights, or the u64s that describe them).
Result<ConstantsRegion> locate_region(const elf::ElfFile& elf, ConstantsSymbols syms) {
  uint64_t size = syms.end - syms.start;
  const elf::ProgramHeader* seg = elf.load_containing(syms.start, size);
  if (!seg)
    return make_error(Kind::Corrupt, "{}: constants at vaddr {:#x} + {:#x} are in no PT_LOAD segment", elf.what(),
                      syms.start, size);
  if (!elf.load_backing(syms.start, size))
    return make_error(Kind::Corrupt,
                      "{}: constants at vaddr {:#x} + {:#x} are not backed by file bytes (PT_LOAD [{}] "
                      "has p_filesz {:#x})",
                      elf.what(), syms.start, size, seg->index, seg->filesz);
  ConstantsRegion r;
  r.start_vaddr = syms.start;
  r.end_vaddr = syms.end;
  r.file_offset = seg->offset + (syms.start - seg->vaddr);
  r.writable = (seg->flags & PF_W) != 0;
  if (const elf::Section* s = elf.section_containing(syms.start, size)) r.section = std::string(s->name);
  return r;
}

// mmap-self (aoti-abi.md section 1): the region holds {appended_size, magic}; the file ends with
// the weights then the magic, starting on a 16 KiB boundary after the ELF image. Torch's loader
// computes weights_offset = file_size - appended_size and requires weights_offset % 16384 == 0 and
// the last u64 of the mapping == magic. Returns false when the file does not end with the magic
// (then the 16 bytes are ordinary embedded weights).
Result<bool> read_mmap_self(const elf::ElfFile& elf, const ConstantsRegion& r, LibraryAnalysis& a) {
  ByteView b = elf.bytes();
  MPK_TRY(uint64_t appended, b.u64(r.file_offset, "mmap-self weights size"));
  MPK_TRY(uint64_t magic, b.u64(r.file_offset + 8, "mmap-self magic"));
  if (b.size() < 8 || load_u64le(b.data() + b.size() - 8) != magic) return false;
  if (appended < 8 || appended > b.size())
    return make_error(Kind::Corrupt,
                      "{}: mmap-self magic {:#x} found, but the recorded size {:#x} does not fit the "
                      "file ({:#x} bytes)",
                      elf.what(), magic, appended, b.size());
  uint64_t offset = b.size() - appended;
  if (offset % kMmapSelfAlignment != 0)
    return make_error(Kind::Corrupt, "{}: mmap-self weights start at {:#x}, not on a {:#x} boundary", elf.what(),
                      offset, kMmapSelfAlignment);
  if (offset < elf.image_end())
    return make_error(Kind::Corrupt, "{}: mmap-self weights at {:#x} overlap the ELF image (ends at {:#x})", elf.what(),
                      offset, elf.image_end());
  a.flavour = Flavour::MmapSelf;
  a.weights_offset = offset;
  a.weights_size = appended - 8;
  a.mmap_magic = magic;
  return true;
}

Status classify_flavour(const elf::ElfFile& elf, LibraryAnalysis& a) {
  uint64_t size = a.region.end_vaddr - a.region.start_vaddr;
  if (size == 8) {
    // External blob: one u64, the blob's size; the weights are not in this file.
    MPK_TRY(a.recorded_blob_size, elf.bytes().u64(a.region.file_offset, "external blob size"));
    a.flavour = Flavour::ExternalBlob;
    return {};
  }
  if (size == 16) {
    MPK_TRY(bool mmap_self, read_mmap_self(elf, a.region, a));
    if (mmap_self) return {};
  }
  a.flavour = Flavour::Embedded;
  a.weights_offset = a.region.file_offset;
  a.weights_size = size;
  return {};
}

}  // namespace

bool is_host_import(std::string_view s) {
  return starts_with(s, "aoti_torch_") || starts_with(s, "Sleef_") || is_cuda_api(s);
}

bool is_torch_cxx_symbol(std::string_view s) {
  // Itanium mangling: _Z, then optionally a special-name prefix (TV vtable, TI typeinfo, TS its
  // name, TT VTT, GV guard variable), then a nested name N [qualifiers] <namespace length><name>.
  if (!starts_with(s, "_Z")) return false;
  s.remove_prefix(2);
  for (std::string_view special : {"TV", "TI", "TS", "TT", "GV"})
    if (starts_with(s, special)) {
      s.remove_prefix(2);
      break;
    }
  if (!starts_with(s, "N")) return false;
  s.remove_prefix(1);
  while (!s.empty() && (s[0] == 'K' || s[0] == 'V' || s[0] == 'r' || s[0] == 'R' || s[0] == 'O')) s.remove_prefix(1);
  return starts_with(s, "5torch") || starts_with(s, "3c10") || starts_with(s, "2at");
}

bool is_libtorch_needed(std::string_view soname) {
  return starts_with(soname, "libtorch") && soname.find(".so") != std::string_view::npos;
}

// The distinct host imports, sorted. Many symbols may name one long string: their total is bounded
// before anything is copied or compared.
Result<std::vector<std::string>> host_imports(ByteView so, const std::vector<elf::Symbol>& dynsyms) {
  std::vector<std::string_view> names;
  uint64_t total = 0;
  for (const elf::Symbol& s : dynsyms)
    if (!s.defined() && is_host_import(s.name)) {
      names.push_back(s.name);
      total += s.name.size();
    }
  if (total > elf::kMaxNameListBytes)
    return make_error(Kind::Corrupt, "{}: the imported symbols' names total more than {} bytes", so.what(),
                      elf::kMaxNameListBytes);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return std::vector<std::string>(names.begin(), names.end());
}

Result<LibraryAnalysis> analyze_library(ByteView so) {
  MPK_TRY(elf::ElfFile elf, elf::ElfFile::parse(so));
  if (elf.machine_code() != EM_X86_64 && elf.machine_code() != EM_AARCH64)
    return make_error(Kind::Unsupported, "{}: machine {} is not supported (only x86_64 and aarch64)", so.what(),
                      elf.machine());
  if (elf.type() != ET_DYN)
    return make_error(Kind::Unsupported, "{}: ELF type {} is not a shared library (ET_DYN)", so.what(), elf.type());

  LibraryAnalysis a;
  a.machine = elf.machine();
  MPK_TRY(a.needed, elf.needed());
  MPK_TRY(a.version_needs, elf.version_needs());
  MPK_TRY(std::vector<elf::Symbol> dynsyms, elf.dynamic_symbols());
  MPK_TRY(a.imports, host_imports(so, dynsyms));
  a.device = device_of(a.imports);

  MPK_TRY(ConstantsSymbols syms, find_constants_symbols(elf, dynsyms));
  MPK_TRY(a.region, locate_region(elf, syms));
  MPK_CHECK(classify_flavour(elf, a));
  return a;
}

}  // namespace mpspack::aoti
