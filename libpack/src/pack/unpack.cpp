#include "mpspack/pack/unpack.hpp"

#include "mpspack/aoti/split.hpp"
#include "mpspack/file.hpp"

namespace mpspack::pack {
namespace fs = std::filesystem;

bool is_safe_name(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255) return false;
  for (unsigned char ch : name)
    if (ch < 0x20 || ch == 0x7f || ch == '/' || ch == '\\') return false;
  return true;
}

Status restore_library_bytes(const format::Container& c, uint32_t index,
                             const std::function<Status(const uint8_t*, uint64_t)>& sink) {
  const auto& m = c.manifest();
  const LibraryInfo& l = m.libraries.at(index);
  ByteView stored = c.segment(l.segment);
  ByteView removed;
  if (l.removed_size > 0) removed = c.segment(m.weights.at(l.weights).segment);
  return aoti::restore_library(stored, removed, l.removed_offset, l.restore, sink);
}

namespace {

Result<fs::path> write_one(const fs::path& dir, const std::string& name, Durability durability,
                           const std::function<Status(AtomicWriter&)>& fill) {
  if (!is_safe_name(name))
    return make_error(Error::Kind::Corrupt, "refusing to write '{}': not a plain file name inside {}", name,
                      dir.string());
  fs::path path = dir / name;
  MPK_CHECK(write_file_atomically(path, fill, durability));
  return path;
}

}  // namespace

Result<std::vector<fs::path>> unpack(const format::Container& c, const fs::path& dir,
                                     const format::Progress& progress, Durability durability) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return make_error(Error::Kind::Io, "{}: cannot create the output folder: {}", dir.string(), ec.message());
  }
  const auto& m = c.manifest();
  uint64_t total = 0, done = 0;
  for (const auto& l : m.libraries) total += l.original_size;
  auto report = [&](uint64_t n) {
    done += n;
    if (progress) progress(done, total);
  };
  std::vector<fs::path> written;
  for (uint32_t i = 0; i < m.libraries.size(); ++i) {
    const LibraryInfo& l = m.libraries[i];
    MPK_TRY(auto so, write_one(dir, l.name + ".so", durability, [&](AtomicWriter& w) {
      return restore_library_bytes(c, i, [&](const uint8_t* p, uint64_t n) {
        report(n);
        return w.write_sparse(p, n);
      });
    }));
    written.push_back(so);
    if (l.flavour == Flavour::ExternalBlob && l.weights >= 0) {
      ByteView blob = c.segment(m.weights[l.weights].segment);
      MPK_TRY(auto path, write_one(dir, l.name + "_weights.blob", durability,
                                   [&](AtomicWriter& w) { return w.write_sparse(blob.data(), blob.size()); }));
      written.push_back(path);
    }
    for (uint32_t seg : l.cubins) {
      ByteView bytes = c.segment(seg);
      MPK_TRY(auto path, write_one(dir, m.segments[seg].name, durability,
                                   [&](AtomicWriter& w) { return w.write(bytes.data(), bytes.size()); }));
      written.push_back(path);
    }
  }
  return written;
}

}  // namespace mpspack::pack
