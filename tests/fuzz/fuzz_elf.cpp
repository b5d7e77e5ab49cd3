// fuzz_elf: bytes as a model library (model.so) through the ELF reader (headers, program and
// section tables, dynamic table, DT_NEEDED, version needs, symbol tables) and what `inspect
// model.so` and `build` do with it: the AOTInductor analysis, then the split into stored library +
// weights and the byte-exact restore. The restore is checked: it must give back the input exactly.
#include "fuzz_support.hpp"
#include "mpspack/aoti/library.hpp"
#include "mpspack/aoti/split.hpp"
#include "mpspack/elf/elf_file.hpp"

#include <cstring>
#include <vector>

using namespace mpspack;

namespace {

void read_tables(ByteView bytes) {
  auto elf = elf::ElfFile::parse(bytes);
  if (!elf.ok()) return;
  for (const auto& s : elf->sections()) {
    auto b = elf->section_bytes(s);
    if (b.ok() && b->size() != s.size) fuzz::property_failed("section_bytes size differs from sh_size");
    (void)elf->section_containing(s.addr, s.size);
  }
  for (const auto& p : elf->program_headers()) {
    (void)elf->load_backing(p.vaddr, p.filesz);
    (void)elf->load_containing(p.vaddr, p.memsz);
    auto off = elf->vaddr_to_offset(p.vaddr, p.filesz, "fuzz");
    if (off.ok() && !range_fits(*off, p.filesz, bytes.size()))
      fuzz::property_failed("vaddr_to_offset gave a range outside the file");
  }
  (void)elf->image_end();
  (void)elf->dynamic();
  (void)elf->needed();
  (void)elf->version_needed_files();
  (void)elf->version_needs();
  (void)elf->version_definitions();
  (void)elf->dynamic_symbols();
  (void)elf->dynamic_relocations();
  (void)elf->static_symbols();
  (void)elf->section(".dynsym");
}

void split_and_restore(ByteView original) {
  auto analysis = aoti::analyze_library(original);
  if (!analysis.ok()) return;
  for (bool drop_libtorch : {false, true}) {
    auto split = aoti::split_library(original, *analysis, drop_libtorch);
    if (!split.ok()) continue;
    if (split->stored.size() + split->removed_size != original.size())
      fuzz::property_failed("stored size + removed size != original size");
    auto removed = original.slice(split->removed_offset, split->removed_size, "removed");
    if (!removed.ok()) fuzz::property_failed("the removed range lies outside the original");
    std::vector<uint8_t> back;
    back.reserve(original.size());
    auto st = aoti::restore_library(ByteView({split->stored.data(), split->stored.size()}, "stored"), *removed,
                                    split->removed_offset, split->restore, [&](const uint8_t* p, uint64_t n) -> Status {
                                      back.insert(back.end(), p, p + n);
                                      return {};
                                    });
    if (!st.ok()) fuzz::property_failed("restore_library refused what split_library produced");
    if (back.size() != original.size() || std::memcmp(back.data(), original.data(), back.size()) != 0)
      fuzz::property_failed("split + restore did not give back the original bytes");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ByteView bytes({data, size}, "fuzz.so");
  read_tables(bytes);
  split_and_restore(bytes);
  return 0;
}
