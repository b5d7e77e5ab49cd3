// fuzz_pt2: bytes as a `.pt2` package (zip, via libzip) through Pt2Package::open (entry list, caps,
// root, models, metadata JSON), then what `build` reads from it: each model's wrapper `.cpp` parsed
// for its constant table, the small entries extracted (streamed, size and CRC checked).
// The package API takes a path: the bytes sit in a memfd, opened as /proc/self/fd/N (nothing on
// disk; extract() writes to an anonymous O_TMPFILE file that vanishes when closed).
#include "fuzz_support.hpp"
#include "mpspack/pt2/package.hpp"
#include "mpspack/pt2/wrapper_constants.hpp"

using namespace mpspack;

namespace {

constexpr uint64_t kMaxExtract = 1ull << 20;  // bigger entries are not streamed out (time, not safety)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::MemFile mem(data, size);
  auto pkg = pt2::Pt2Package::open(mem.path());
  if (!pkg.ok()) return 0;
  for (const auto& m : pkg->models()) {
    (void)m.device();
    if (!m.wrapper_cpp_entry.empty()) {
      auto text = pkg->read_text(m.wrapper_cpp_entry, 4ull << 20);
      if (text.ok()) {
        auto constants = pt2::parse_wrapper_constants(*text, m.wrapper_cpp_entry);
        if (constants.ok()) (void)pt2::wrapper_blob_size(*constants);
      }
    }
    for (const std::string* e : {&m.library_entry, &m.weights_entry, &m.metadata_entry}) {
      const auto* entry = e->empty() ? nullptr : pkg->find(*e);
      if (!entry || entry->size > kMaxExtract) continue;
      auto f = pkg->extract(*e);
      if (f.ok() && f->size() != entry->size) fuzz::property_failed("extract() gave a size other than declared");
    }
  }
  return 0;
}
