// split_library + restore_library: byte-identical round trips on every fixture, stored libraries
// that are valid ELF (and load with dlopen where this machine can), restore streaming edge cases.
#include "elf_test_support.hpp"

#include <mpspack/aoti/split.hpp>
#include <mpspack/elf/elf_file.hpp>

#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>

using namespace mpspack;
using namespace mpspack::test;

namespace {

std::vector<uint8_t> restore_to_vector(const aoti::SplitLibrary& s, ByteView removed) {
  std::vector<uint8_t> out;
  auto st = aoti::restore_library(view_of(s.stored, "stored"), removed, s.removed_offset, s.restore,
                                  [&](const uint8_t* p, uint64_t n) -> Status {
                                    out.insert(out.end(), p, p + n);
                                    return {};
                                  });
  REQUIRE(st.ok());
  return out;
}

uint64_t patch_bytes(const std::vector<Patch>& patches) {
  uint64_t n = 0;
  for (const auto& p : patches) n += p.bytes.size();
  return n;
}

const elf::ProgramHeader* segment_at(const elf::ElfFile& elf, uint64_t index) {
  for (const auto& p : elf.program_headers())
    if (p.index == index) return &p;
  return nullptr;
}

// A temp file holding `bytes`, removed when the test ends.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::vector<uint8_t>& bytes) {
    std::string templ = (std::filesystem::temp_directory_path() / "mpk-elf-XXXXXX.so").string();
    int fd = mkstemps(templ.data(), 3);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
    close(fd);
    path = templ;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("split + restore is byte-identical for every fixture library", "[aoti][split][fixtures]") {
  auto libs = all_fixture_libraries();
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  REQUIRE(libs.size() >= 12);
  for (const auto& path : libs) {
    for (bool drop : {false, true}) {
      INFO(case_name(path) << " drop_libtorch=" << drop);
      auto so = read_bytes(path);
      auto a = aoti::analyze_library(view_of(so));
      REQUIRE(a.ok());
      auto s = aoti::split_library(view_of(so), *a, drop);
      if (!s.ok()) FAIL(s.error().message);

      // The cut is exactly the weights.
      CHECK(s->removed_offset == (a->flavour == Flavour::ExternalBlob ? 0 : a->weights_offset));
      CHECK(s->removed_size == a->weights_size);
      CHECK(s->stored.size() == so.size() - s->removed_size);
      ByteView removed(std::span<const uint8_t>(so.data() + s->removed_offset, s->removed_size));

      // Restore patches are header bytes, never weights, and small.
      CHECK(patch_bytes(s->restore) < 4096);
      for (const auto& p : s->restore)
        CHECK((p.offset + p.bytes.size() <= s->removed_offset || p.offset >= s->removed_offset + s->removed_size));

      CHECK(restore_to_vector(*s, removed) == so);

      // The stored library is valid ELF with the same dynamic symbols.
      auto stored = elf::ElfFile::parse(view_of(s->stored, "stored"));
      REQUIRE(stored.ok());
      auto needed = stored->needed();
      REQUIRE(needed.ok());
      std::vector<std::string> expect_needed;
      for (const auto& n : a->needed)
        if (std::find(s->dropped_needed.begin(), s->dropped_needed.end(), n) == s->dropped_needed.end())
          expect_needed.push_back(n);
      CHECK(*needed == expect_needed);
      if (!drop) CHECK(s->dropped_needed.empty());
      if (a->flavour == Flavour::ExternalBlob && !drop) CHECK(s->restore.empty());
    }
  }
}

TEST_CASE("embedded split: the segment stops at the constants, the section loses its bytes",
          "[aoti][split][fixtures]") {
  for (const auto& path : all_fixture_libraries()) {
    auto so = read_bytes(path);
    auto a = aoti::analyze_library(view_of(so));
    REQUIRE(a.ok());
    if (a->flavour != Flavour::Embedded) continue;
    INFO(case_name(path));
    auto s = aoti::split_library(view_of(so), *a, false);
    REQUIRE(s.ok());
    auto orig = elf::ElfFile::parse(view_of(so));
    auto stored = elf::ElfFile::parse(view_of(s->stored, "stored"));
    REQUIRE(orig.ok());
    REQUIRE(stored.ok());
    const elf::ProgramHeader* seg = orig->load_containing(a->region.start_vaddr, 1);
    REQUIRE(seg);
    const elf::ProgramHeader* now = segment_at(*stored, seg->index);
    REQUIRE(now);
    CHECK(now->offset == seg->offset);
    CHECK(now->vaddr == seg->vaddr);
    CHECK(now->memsz == seg->memsz);
    CHECK(now->offset + now->filesz == a->region.file_offset);

    const elf::Section* lro = stored->section(a->region.section);
    REQUIRE(lro);
    const elf::Section* lro_orig = orig->section(a->region.section);
    if (lro_orig->offset == a->region.file_offset) {
      CHECK(lro->type == SHT_NOBITS);
    } else {  // a prefix before _binary_constants_bin_start stays in the file
      CHECK(lro->type == lro_orig->type);
      CHECK(lro->offset + lro->size == a->region.file_offset);
    }
    // Non-loaded sections after the cut moved up with their bytes.
    const elf::Section* comment = stored->section(".comment");
    const elf::Section* comment_orig = orig->section(".comment");
    REQUIRE(comment);
    CHECK(comment->offset == comment_orig->offset - s->removed_size);
    CHECK(std::memcmp(s->stored.data() + comment->offset, so.data() + comment_orig->offset, comment->size) == 0);
    auto symtab = stored->static_symbols();
    REQUIRE(symtab.ok());
    CHECK_FALSE(symtab->empty());
  }
}

TEST_CASE("mmap-self split keeps the ELF image, padding and trailing magic", "[aoti][split][fixtures]") {
  auto path = fixtures_dir() / "torch-built" / "cpu_mlp_mmap" / "model.so";
  MPK_REQUIRE_FIXTURE(path);
  auto so = read_bytes(path);
  auto a = aoti::analyze_library(view_of(so));
  REQUIRE(a.ok());
  REQUIRE(a->flavour == Flavour::MmapSelf);
  auto s = aoti::split_library(view_of(so), *a, false);
  REQUIRE(s.ok());
  CHECK(s->stored.size() == a->weights_offset + 8);
  CHECK(load_u64le(s->stored.data() + s->stored.size() - 8) == a->mmap_magic);
  CHECK(std::equal(so.begin(), so.begin() + a->weights_offset, s->stored.begin()));
  CHECK(s->restore.empty());
}

TEST_CASE("drop_libtorch removes libtorch NEEDED entries of default builds", "[aoti][split][fixtures]") {
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "torch-built" / "cuda_mlp_default");
  for (const char* dir : {"cpu_mlp_default", "cpu_mlp_mmap", "cuda_mlp_default"}) {
    INFO(dir);
    auto so = read_bytes(fixtures_dir() / "torch-built" / dir / "model.so");
    auto a = aoti::analyze_library(view_of(so));
    REQUIRE(a.ok());
    auto s = aoti::split_library(view_of(so), *a, true);
    REQUIRE(s.ok());
    std::vector<std::string> libtorch;
    for (const auto& n : a->needed)
      if (aoti::is_libtorch_needed(n)) libtorch.push_back(n);
    REQUIRE(libtorch.size() >= 2);
    CHECK(s->dropped_needed == libtorch);
    auto stored = elf::ElfFile::parse(view_of(s->stored, "stored"));
    REQUIRE(stored.ok());
    auto dyn_orig = elf::ElfFile::parse(view_of(so))->dynamic();
    auto dyn = stored->dynamic();
    REQUIRE(dyn.ok());
    CHECK(dyn->slots == dyn_orig->slots);
    CHECK(dyn->entries.size() == dyn_orig->entries.size() - libtorch.size());
  }
}

TEST_CASE("stripped rebuilt-bookworm embedded libraries load with dlopen", "[aoti][split][dlopen]") {
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm");
  for (const char* model : {"mlp", "cnn", "block"}) {
    INFO(model);
    auto so = read_bytes(fixtures_dir() / "rebuilt-bookworm" / fmt::format("cpu_{}_embedded", model) / "model.so");
    auto a = aoti::analyze_library(view_of(so));
    REQUIRE(a.ok());
    auto s = aoti::split_library(view_of(so), *a, true);
    REQUIRE(s.ok());
    REQUIRE(s->removed_size > 0);
    TempFile tmp(s->stored);
    void* h = dlopen(tmp.path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!h) FAIL(dlerror());
    CHECK(dlsym(h, "AOTInductorModelContainerCreateWithDevice") != nullptr);
    // The constants' addresses are still mapped, now zero-filled by ld.so.
    auto* start = static_cast<const uint8_t*>(dlsym(h, "_binary_constants_bin_start"));
    auto* end = static_cast<const uint8_t*>(dlsym(h, "_binary_constants_bin_end"));
    REQUIRE(start);
    REQUIRE(end);
    REQUIRE(uint64_t(end - start) == s->removed_size);
    CHECK(std::all_of(start, end, [](uint8_t b) { return b == 0; }));
    dlclose(h);
  }
}

TEST_CASE("restore_library streams in chunks and applies patches across chunk edges", "[aoti][restore]") {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> stored(3 * 1024 * 1024 + 123), removed(5 * 1024 * 1024 / 2 + 77);
  for (auto& b : stored) b = uint8_t(rng());
  for (auto& b : removed) b = uint8_t(rng());
  uint64_t removed_offset = 1024 * 1024 - 5;
  std::vector<uint8_t> expect(stored.begin(), stored.begin() + removed_offset);
  expect.insert(expect.end(), removed.begin(), removed.end());
  expect.insert(expect.end(), stored.begin() + removed_offset, stored.end());
  std::vector<Patch> patches;
  for (uint64_t at :
       {uint64_t(0), uint64_t(1024 * 1024 - 3), removed_offset + 1024 * 1024 - 1, uint64_t(expect.size() - 4)}) {
    Patch p{at, {}};
    for (int i = 0; i < 4 && at + i < expect.size(); ++i) {
      p.bytes.push_back(uint8_t(i + 1));
      expect[at + i] = uint8_t(i + 1);
    }
    patches.push_back(p);
  }
  std::vector<uint8_t> out;
  uint64_t calls = 0;
  auto st = aoti::restore_library(view_of(stored), view_of(removed), removed_offset, patches,
                                  [&](const uint8_t* p, uint64_t n) -> Status {
                                    ++calls;
                                    CHECK(n <= (1u << 20));
                                    out.insert(out.end(), p, p + n);
                                    return {};
                                  });
  REQUIRE(st.ok());
  CHECK(calls > 5);
  CHECK(out == expect);

  SECTION("a sink error stops the stream and is returned") {
    auto failing = aoti::restore_library(
        view_of(stored), view_of(removed), removed_offset, patches,
        [](const uint8_t*, uint64_t) -> Status { return make_error(Error::Kind::Io, "disk full"); });
    REQUIRE_FALSE(failing.ok());
    CHECK(failing.error().message == "disk full");
  }
}

TEST_CASE("restore_library rejects inconsistent inputs", "[aoti][restore]") {
  std::vector<uint8_t> stored(100), removed(10);
  auto sink = [](const uint8_t*, uint64_t) -> Status { return {}; };
  auto run = [&](uint64_t offset, std::vector<Patch> patches) {
    return aoti::restore_library(view_of(stored, "stored"), view_of(removed), offset, patches, sink);
  };
  CHECK(run(0, {}).ok());
  CHECK(run(100, {}).ok());
  auto past = run(101, {});
  REQUIRE_FALSE(past.ok());
  CHECK_THAT(past.error().message, Catch::Contains("past the end"));
  auto outside = run(0, {Patch{108, {1, 2, 3}}});
  REQUIRE_FALSE(outside.ok());
  CHECK_THAT(outside.error().message, Catch::Contains("outside the library"));
  auto overlap = run(0, {Patch{10, {1, 2, 3}}, Patch{11, {1}}});
  REQUIRE_FALSE(overlap.ok());
  CHECK_THAT(overlap.error().message, Catch::Contains("overlaps"));
  auto huge = run(0, {Patch{UINT64_MAX - 1, {1, 2, 3}}});
  REQUIRE_FALSE(huge.ok());
}

// Layouts no fixture has, made by pointing the split at other bytes: the refusals must be clear,
// and the one case that is handled (later PT_LOADs, cut a multiple of their alignment) must round
// trip exactly.
TEST_CASE("embedded split refuses layouts it cannot cut, handles aligned later segments", "[aoti][split][fixtures]") {
  auto path = fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded" / "model.so";
  MPK_REQUIRE_FIXTURE(path);
  auto so = read_bytes(path);
  auto real = aoti::analyze_library(view_of(so));
  REQUIRE(real.ok());
  auto elf = elf::ElfFile::parse(view_of(so));
  REQUIRE(elf.ok());

  SECTION("bytes after the constants in the same segment") {
    auto a = *real;
    a.weights_size -= 64;
    auto s = aoti::split_library(view_of(so), a, false);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().kind == Error::Kind::Unsupported);
    CHECK_THAT(s.error().message, Catch::Contains("follow the constants"));
  }
  // The read-only data segment before .data: later PT_LOADs follow it in the file.
  const elf::ProgramHeader* rodata = nullptr;
  for (const auto& p : elf->program_headers())
    if (p.type == PT_LOAD && p.index == 2) rodata = &p;
  REQUIRE(rodata);
  uint64_t seg_end = rodata->offset + rodata->filesz;

  SECTION("a later PT_LOAD whose alignment the cut would break") {
    auto a = *real;
    a.weights_offset = a.region.file_offset = seg_end - 64;
    a.weights_size = 64;
    auto s = aoti::split_library(view_of(so), a, false);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().kind == Error::Kind::Unsupported);
    CHECK_THAT(s.error().message, Catch::Contains("p_offset/p_vaddr alignment"));
  }
  SECTION("a later PT_LOAD and a cut that is a multiple of its alignment") {
    auto a = *real;
    a.weights_offset = a.region.file_offset = seg_end - 0x1000;
    a.weights_size = 0x1000;
    for (bool drop : {false, true}) {
      auto s = aoti::split_library(view_of(so), a, drop);
      if (!s.ok()) FAIL(s.error().message);
      auto stored = elf::ElfFile::parse(view_of(s->stored, "stored"));
      REQUIRE(stored.ok());
      for (const auto& p : stored->program_headers())
        if (p.type == PT_LOAD && p.align > 1) CHECK(p.offset % p.align == p.vaddr % p.align);
      ByteView removed(std::span<const uint8_t>(so.data() + s->removed_offset, s->removed_size));
      CHECK(restore_to_vector(*s, removed) == so);
    }
  }
}
