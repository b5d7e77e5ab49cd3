#include "mpspack/pack/unpack.hpp"

#include "mpspack/format/hash.hpp"
#include "mpspack/aoti/split.hpp"
#include "mpspack/file.hpp"

#include <map>

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

uint64_t unpack_limit(uint64_t container_size) { return 16 * container_size; }

namespace {

// One file unpack writes: its name in the output folder, what it is (for messages), its size, its bytes.
struct Output {
  std::string name;
  std::string what;
  uint64_t size = 0;
  std::function<Status(AtomicWriter&)> fill;
};

uint64_t restored_size(const format::Container& c, const LibraryInfo& l) {
  uint64_t size = c.segment(l.segment).size();
  if (l.removed_size > 0) size += c.segment(c.manifest().weights.at(l.weights).segment).size();
  return size;
}

// The library's original bytes, checked against original_sha256 as they stream out: a library that does not
// restore to the bytes that were packed is never written under its name.
Status write_library(const format::Container& c, uint32_t index, AtomicWriter& w,
                     const std::function<void(uint64_t)>& report) {
  format::Sha256Stream sha;
  MPK_CHECK(restore_library_bytes(c, index, [&](const uint8_t* p, uint64_t n) {
    sha.update(p, n);
    report(n);
    return w.write_sparse(p, n);
  }));
  const LibraryInfo& l = c.manifest().libraries[index];
  if (std::string got = sha.hex_digest(); got != l.original_sha256)
    return make_error(Error::Kind::Corrupt, "{}: library '{}' restores to bytes with SHA-256 {}, not the recorded {}",
                      c.name(), l.name, got, l.original_sha256);
  return {};
}

std::vector<Output> plan_outputs(const format::Container& c, const std::function<void(uint64_t)>& report) {
  const auto& m = c.manifest();
  std::vector<Output> out;
  for (uint32_t i = 0; i < m.libraries.size(); ++i) {
    const LibraryInfo& l = m.libraries[i];
    out.push_back({l.name + ".so", fmt::format("library {}", i), restored_size(c, l),
                   [&c, i, &report](AtomicWriter& w) { return write_library(c, i, w, report); }});
    if (l.flavour == Flavour::ExternalBlob && l.weights >= 0) {
      ByteView blob = c.segment(m.weights[l.weights].segment);
      out.push_back({l.name + "_weights.blob", fmt::format("the weights of library {}", i), blob.size(),
                     [blob](AtomicWriter& w) { return w.write_sparse(blob.data(), blob.size()); }});
    }
    for (uint32_t seg : l.cubins) {
      ByteView bytes = c.segment(seg);
      out.push_back({m.segments[seg].name, fmt::format("cubin segment {}", seg), bytes.size(),
                     [bytes](AtomicWriter& w) { return w.write(bytes.data(), bytes.size()); }});
    }
  }
  return out;
}

// Every name a plain file name, no two the same (one would silently replace the other), and the total within
// unpack_limit() of the container's size (shared segments must not turn a small file into a full disk).
Status check_outputs(const format::Container& c, const std::vector<Output>& outputs, const fs::path& dir) {
  std::map<std::string_view, const Output*> seen;
  uint64_t total = 0;
  for (const auto& o : outputs) {
    if (!is_safe_name(o.name))
      return make_error(Error::Kind::Corrupt, "refusing to write '{}': not a plain file name inside {}", o.name,
                        dir.string());
    if (auto [it, fresh] = seen.emplace(o.name, &o); !fresh)
      return make_error(Error::Kind::Corrupt, "{}: {} and {} would both be written as '{}': refusing to unpack",
                        c.name(), it->second->what, o.what, o.name);
    total += o.size;  // each size is at most the container's: no overflow below 2^64 / 2^16 outputs
  }
  const uint64_t limit = unpack_limit(c.file().size());
  if (total > limit)
    return make_error(Error::Kind::Corrupt,
                      "{}: unpack would write {} bytes, more than 16 times the container's {} bytes (weights "
                      "shared by many libraries?): refusing to unpack",
                      c.name(), total, c.file().size());
  return {};
}

}  // namespace

Result<std::vector<fs::path>> unpack(const format::Container& c, const fs::path& dir,
                                     const format::Progress& progress, Durability durability) {
  uint64_t total = 0, done = 0;
  const std::function<void(uint64_t)> report = [&](uint64_t n) {  // outlives the outputs that call it
    done += n;
    if (progress) progress(done, total);
  };
  const std::vector<Output> outputs = plan_outputs(c, report);
  MPK_CHECK(check_outputs(c, outputs, dir));
  for (const auto& l : c.manifest().libraries) total += l.original_size;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return make_error(Error::Kind::Io, "{}: cannot create the output folder: {}", dir.string(), ec.message());
  }
  // Every file is written and closed under a temp name first; only when all are complete are they renamed into
  // place. A failure on the way leaves nothing: the writers remove their temp files.
  std::vector<AtomicWriter> staged;
  for (const auto& o : outputs) {
    MPK_TRY(auto w, AtomicWriter::create(dir / o.name, durability));
    MPK_CHECK(o.fill(w));
    MPK_CHECK(w.finish());
    staged.push_back(std::move(w));
  }
  std::vector<fs::path> written;
  for (size_t i = 0; i < staged.size(); ++i) {
    MPK_CHECK(staged[i].publish());
    written.push_back(dir / outputs[i].name);
  }
  return written;
}

}  // namespace mpspack::pack
