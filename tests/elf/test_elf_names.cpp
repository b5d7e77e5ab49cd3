// Names are views into the file, never copies: a library whose every section header and symbol
// points at one long name costs the reader nothing per header. Copies made a 3.9 MB .so take
// 5.9 GB to inspect.
#include "mpspack/elf/elf_file.hpp"

#include <catch2/catch.hpp>
#include <long_names_elf.hpp>

#include <cstring>
#include <vector>

using namespace mpspack;
using namespace mpspack::test;

TEST_CASE("elf: section and symbol names all pointing at one long name are not copied", "[elf][hostile]") {
  const auto bytes = one_long_name();
  auto elf = elf::ElfFile::parse(ByteView(bytes, "long_names.so"));
  INFO((elf.ok() ? "" : elf.error().message));
  REQUIRE(elf.ok());
  const char* name = reinterpret_cast<const char*>(bytes.data() + sizeof(Elf64_Ehdr) + 1);
  REQUIRE(elf->sections().size() == kSections);
  for (const auto& s : elf->sections()) {
    if (s.index == 0) continue;
    REQUIRE(s.name.size() == kNameBytes);
    REQUIRE(s.name.data() == name);  // the file's bytes, not a copy
  }
  auto symbols = elf->dynamic_symbols();
  REQUIRE(symbols.ok());
  REQUIRE(symbols->size() == kSymbols);
  for (const auto& s : *symbols) REQUIRE(s.name.data() == name);
}
