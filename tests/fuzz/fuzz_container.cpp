// fuzz_container: a container's bytes through open (header, checksum, FlatBuffers verifier, caps,
// structural rules), verify (hash every segment, check the padding) and what `inspect` reads (every
// manifest field, each stored library's ELF tables).
//
// The header checksum covers header and metadata, so almost every mutation of the metadata would be
// refused at the checksum and the FlatBuffers and structural checks behind it would never see
// fuzzed bytes. Each input is therefore tried twice: as given, and "repaired" — zero-extended to the
// file_size its header declares (at most 4 MiB) and with the checksum recomputed. The repaired form
// also lets a seed be just the header + metadata of a real container (a few KB), the data segments
// being zeros (then verify reports damaged segments, which is what it should do).
#include "fuzz_support.hpp"
#include "mpspack/aoti/library.hpp"
#include "mpspack/format/container.hpp"
#include "mpspack/format/header.hpp"
#include "mpspack/manifest.hpp"

#include <fmt/format.h>

#include <cstring>
#include <vector>

using namespace mpspack;

namespace {

constexpr uint64_t kMaxRepairedSize = 4ull << 20;

void inspect(const format::Container& c) {
  const auto& m = c.manifest();
  std::string out;  // what inspect prints, built the same way (names, numbers, kinds)
  out += fmt::format("{} {} {}\n", c.name(), m.producer, m.producer_version);
  for (const auto& s : m.sources) out += fmt::format("{} {} {} {} {}\n", s.name, s.size, s.sha256, s.kind, s.flavour);
  for (uint32_t i = 0; i < m.segments.size(); ++i) {
    const auto& s = m.segments[i];
    ByteView bytes = c.segment(i);  // checked at open: must lie inside the file
    if (bytes.size() != s.size) fuzz::property_failed("segment view size differs from the manifest");
    out += fmt::format("{} {} {} {} {:#x}\n", to_string(s.kind), s.name, s.offset, s.size, s.alignment);
  }
  for (const auto& l : m.libraries) {
    out += fmt::format("{} {} {} {} {}\n", l.name, l.device, l.machine, to_string(l.flavour), l.segment);
    // `inspect` of a library: its ELF tables, through the same analysis `build` uses.
    ByteView stored = c.segment(l.segment);
    auto a = aoti::analyze_library(stored);
    if (a.ok()) out += fmt::format("{} {} {}\n", a->machine, a->device, a->imports.size());
  }
  for (const auto& w : m.weights) {
    (void)c.segment(w.segment);
    for (const auto& k : w.constants)
      out += fmt::format("{} {} {} {} {}\n", k.name, dtype_name(k.dtype), k.shape.size(), k.offset, k.size);
  }
  for (const auto& e : m.examples) {
    for (const auto& t : e.inputs) (void)c.segment(t.segment);
    for (const auto& t : e.outputs) (void)c.segment(t.segment);
  }
}

void run(const uint8_t* data, size_t size) {
  fuzz::MemFile mem(data, size);
  auto file = MappedFile::from_fd(mem.release(), "fuzz.mpk");
  if (!file.ok()) return;
  auto c = format::Container::parse(std::move(*file));
  if (!c.ok()) {
    if (c.error().message.empty()) fuzz::property_failed("an error without a message");
    return;
  }
  auto report = format::verify(*c);
  if (report.segments.size() != c->manifest().segments.size()) fuzz::property_failed("verify skipped segments");
  inspect(*c);
}

// The input zero-extended to its declared file_size and with a correct checksum; false when the
// header is too short or its numbers do not allow it.
bool repair(const uint8_t* data, size_t size, std::vector<uint8_t>& out) {
  namespace f = format::field;
  if (size < f::end) return false;
  const uint32_t header_size = load_u32le(data + f::header_size);
  const uint64_t meta_offset = load_u64le(data + f::metadata_offset);
  const uint64_t meta_size = load_u64le(data + f::metadata_size);
  uint64_t file_size = load_u64le(data + f::file_size);
  if (file_size < size || file_size > kMaxRepairedSize) file_size = size;
  out.assign(data, data + size);
  out.resize(file_size, 0);
  if (header_size < f::end || header_size > file_size || !range_fits(meta_offset, meta_size, file_size))
    return out.size() != size;
  uint64_t sum =
      format::header_checksum(ByteView({out.data(), header_size}), ByteView({out.data() + meta_offset, meta_size}));
  store_u64le(out.data() + f::checksum, sum);
  return out.size() != size || std::memcmp(out.data(), data, size) != 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  run(data, size);
  std::vector<uint8_t> repaired;
  if (repair(data, size, repaired)) run(repaired.data(), repaired.size());
  return 0;
}
