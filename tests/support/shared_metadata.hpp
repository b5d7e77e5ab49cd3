// Metadata blocks whose FlatBuffers offsets share one string, patch and library table many times:
// the shape that makes a few kilobytes decode to gigabytes (docs/FORMAT.md, rule M4). Used by the
// bounds tests and by the fuzz seed generator.
#pragma once

#include "container_generated.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mpspack::test {

// A block whose `libraries` list holds `library_refs` references to one library table; that
// library's imports are `import_refs` references to one string of `string_bytes` bytes, and its
// restore list `patch_refs` references to one patch of `patch_bytes` bytes.
inline std::vector<uint8_t> shared_block(uint32_t library_refs, uint32_t import_refs, size_t string_bytes,
                                         uint32_t patch_refs = 0, size_t patch_bytes = 0) {
  namespace fb = mpspack::fb;
  using flatbuffers::Offset;
  flatbuffers::FlatBufferBuilder b;
  auto name = b.CreateString(std::string(string_bytes, 'i'));
  auto imports = b.CreateVector(std::vector<Offset<flatbuffers::String>>(import_refs, name));
  auto patch = fb::CreatePatch(b, 0, b.CreateVector(std::vector<uint8_t>(patch_bytes, 1)));
  auto restore = b.CreateVector(std::vector<Offset<fb::Patch>>(patch_refs, patch));
  fb::LibraryBuilder lb(b);
  lb.add_imports(imports);
  lb.add_restore(restore);
  auto library = lb.Finish();
  auto libraries = b.CreateVector(std::vector<Offset<fb::Library>>(library_refs, library));
  fb::MetadataBuilder mb(b);
  mb.add_libraries(libraries);
  fb::FinishMetadataBuffer(b, mb.Finish());
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

}  // namespace mpspack::test
