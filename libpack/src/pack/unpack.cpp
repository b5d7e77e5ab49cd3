#include "mpspack/pack/unpack.hpp"

#include "mpspack/format/hash.hpp"
#include "mpspack/aoti/split.hpp"
#include "mpspack/file.hpp"
#include "mpspack/aoti/library.hpp"
#include "mpspack/tensor_io.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <list>
#include <optional>

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

constexpr uint32_t kLibraryMode = 0755;  // when the container records none (format 1.0, a .pt2's entries)
constexpr uint32_t kDataMode = 0644;

// One file unpack writes: its name in the output folder, what it is (for messages), its size, its bytes, its mode.
struct Output {
  std::string name;
  std::string what;
  uint64_t size = 0;
  std::function<Status(AtomicWriter&)> fill;
  uint32_t mode = kDataMode;
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

// Which source each file unpack writes came from, by the order build lists them (docs/FORMAT.md, "Sources"):
// the k-th source of a kind is the k-th file of that kind. A kind whose count does not match maps nothing, and
// nothing maps in a container built from a .pt2 (its libraries and blobs are entries, not files of their own).
struct SourceMap {
  std::vector<std::optional<size_t>> library;  // per library
  std::vector<std::optional<size_t>> blob;     // per library (external-blob ones)
  std::map<uint32_t, size_t> cubin;            // per cubin segment
  std::vector<std::optional<size_t>> tensor;   // per example tensor: each example's inputs, then outputs
  bool from_files = true;                      // no pt2 source
};

std::vector<const TensorInfo*> example_tensors(const Manifest& m) {
  std::vector<const TensorInfo*> out;
  for (const auto& e : m.examples) {
    for (const auto& t : e.inputs) out.push_back(&t);
    for (const auto& t : e.outputs) out.push_back(&t);
  }
  return out;
}

SourceMap map_sources(const Manifest& m) {
  SourceMap map;
  map.library.resize(m.libraries.size());
  map.blob.resize(m.libraries.size());
  std::map<std::string_view, std::vector<size_t>> by_kind;
  for (size_t i = 0; i < m.sources.size(); ++i) by_kind[m.sources[i].kind].push_back(i);
  if (by_kind.count("pt2")) {
    map.from_files = false;
    return map;
  }
  const auto& so = by_kind["so"];
  if (so.size() == m.libraries.size())
    for (size_t k = 0; k < so.size(); ++k)
      if (m.sources[so[k]].sha256 == m.libraries[k].original_sha256) map.library[k] = so[k];
  std::vector<uint32_t> blob_libs, cubin_segs;
  for (uint32_t i = 0; i < m.libraries.size(); ++i) {
    const LibraryInfo& l = m.libraries[i];
    if (l.flavour == Flavour::ExternalBlob && l.weights >= 0) blob_libs.push_back(i);
    cubin_segs.insert(cubin_segs.end(), l.cubins.begin(), l.cubins.end());
  }
  const auto& blobs = by_kind["blob"];
  if (blobs.size() == blob_libs.size())
    for (size_t k = 0; k < blobs.size(); ++k) map.blob[blob_libs[k]] = blobs[k];
  const auto& cubins = by_kind["cubin"];
  if (cubins.size() == cubin_segs.size())
    for (size_t k = 0; k < cubins.size(); ++k) map.cubin[cubin_segs[k]] = cubins[k];
  const auto& tensors = by_kind["tensor"];
  const size_t n_tensors = example_tensors(m).size();
  map.tensor.resize(n_tensors);
  if (tensors.size() == n_tensors)
    for (size_t k = 0; k < n_tensors; ++k) map.tensor[k] = tensors[k];
  return map;
}

std::string file_name_of(const SourceInfo& s) { return fs::path(s.name).filename().string(); }

// `s` as one word of a POSIX shell command: as it is when it has only characters no shell treats specially.
std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char ch) {
    return std::isalnum(ch) || (ch != 0 && std::strchr("._:/=+-,@%", ch) != nullptr);
  });
  if (plain) return s;
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out += "'\\''";
    else out += ch;
  }
  return out + "'";
}

// The files to write, and the rebuild command that takes them back to the container.
struct Plan {
  std::vector<Output> outputs;
  Rebuild rebuild;
  std::list<std::vector<uint8_t>> owned;  // bytes made here (.npy files, the script): a list, so they stay put
};

class Planner {
 public:
  Planner(const format::Container& c, const std::function<void(uint64_t)>& report)
      : c_(c), m_(c.manifest()), report_(report), map_(map_sources(m_)) {}

  Plan plan() {
    if (!map_.from_files)
      not_identical("it was built from a .pt2 package, and the files unpack writes are its entries");
    for (const auto& s : m_.sources) {
      if (s.name != file_name_of(s)) not_identical(fmt::format("source '{}' was recorded with its folder", s.name));
      if (s.mode == 0) not_identical(fmt::format("source '{}' has no recorded mode", s.name));
    }
    std::vector<std::string> inputs, weights, example_inputs, example_outputs;
    for (uint32_t i = 0; i < m_.libraries.size(); ++i) {
      const LibraryInfo& l = m_.libraries[i];
      Output o{{},
               fmt::format("library {}", i),
               restored_size(c_, l),
               [&c = c_, i, &report = report_](AtomicWriter& w) { return write_library(c, i, w, report); },
               kLibraryMode};
      inputs.push_back(place(std::move(o), map_.library[i], l.name + ".so", "library " + l.name));
      if (l.flavour == Flavour::ExternalBlob && l.weights >= 0) {
        ByteView blob = c_.segment(m_.weights[l.weights].segment);
        Output b{{}, fmt::format("the weights of library {}", i), blob.size(), [blob](AtomicWriter& w) {
                   return w.write_sparse(blob.data(), blob.size());
                 }};
        weights.push_back(place(std::move(b), map_.blob[i], l.name + "_weights.blob", "the weights of " + l.name));
      }
      for (uint32_t seg : l.cubins) {
        ByteView bytes = c_.segment(seg);
        Output o{{}, fmt::format("cubin segment {}", seg), bytes.size(), [bytes](AtomicWriter& w) {
                   return w.write(bytes.data(), bytes.size());
                 }};
        auto it = map_.cubin.find(seg);
        place(std::move(o), it == map_.cubin.end() ? std::nullopt : std::optional<size_t>(it->second),
              m_.segments[seg].name, "cubin " + m_.segments[seg].name);
      }
    }
    size_t k = 0;  // index into map_.tensor, in example_tensors' order
    for (const auto& e : m_.examples) {
      for (const auto& t : e.inputs) example_inputs.push_back(place_tensor(t, map_.tensor[k++]));
      for (const auto& t : e.outputs) example_outputs.push_back(place_tensor(t, map_.tensor[k++]));
    }
    if (m_.examples.size() > 1 || (m_.examples.size() == 1 && m_.examples[0].library != 0))
      not_identical("build records examples for the first library only");

    auto& args = plan_.rebuild.args;
    args = {"build"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    for (const auto& w : weights) args.insert(args.end(), {"--weights", w});
    for (const auto& e : example_inputs) args.insert(args.end(), {"--example-input", e});
    for (const auto& e : example_outputs) args.insert(args.end(), {"--example-output", e});
    if (keeps_libtorch()) args.push_back("--keep-libtorch");
    plan_.rebuild.identical = plan_.rebuild.why_not.empty();
    add_script();
    return std::move(plan_);
  }

 private:
  void not_identical(std::string why) {
    if (plan_.rebuild.why_not.empty()) plan_.rebuild.why_not = std::move(why);
  }

  bool taken(const std::string& name) const {
    return std::any_of(plan_.outputs.begin(), plan_.outputs.end(), [&](const Output& o) { return o.name == name; });
  }

  // Names `o` after its source when that is a plain file name not taken yet, else `fallback`; gives it the
  // source's mode. Returns the name.
  std::string place(Output o, std::optional<size_t> source, const std::string& fallback, const std::string& what) {
    o.name = fallback;
    if (source) {
      const SourceInfo& s = m_.sources[*source];
      const std::string name = file_name_of(s);
      if (s.mode != 0) o.mode = s.mode & 0777;
      if (s.size != o.size)
        not_identical(fmt::format("{} is {} bytes, its source '{}' {}", what, o.size, s.name, s.size));
      if (is_safe_name(name) && !taken(name)) o.name = name;
      else not_identical(fmt::format("{}'s file name '{}' is taken or not a plain name", what, name));
    } else {
      not_identical(fmt::format("no source is recorded for {}", what));
    }
    plan_.outputs.push_back(std::move(o));
    return plan_.outputs.back().name;
  }

  // Writes an example tensor as the file it was recorded from when its bytes can be made again (a raw file holds
  // exactly the tensor's bytes; a .npy file is what encode_npy writes, as NumPy does), else as
  // <segment name>.bin. Returns its spec for `build`.
  std::string place_tensor(const TensorInfo& t, std::optional<size_t> source) {
    ByteView bytes = c_.segment(t.segment);
    const std::string raw_spec_tail = ":" + dtype_name(t.dtype) + ":" + shape_string(t.shape);
    const std::string fallback = m_.segments[t.segment].name + ".bin";
    auto raw = [bytes](AtomicWriter& w) { return w.write(bytes.data(), bytes.size()); };
    if (source) {
      const SourceInfo& s = m_.sources[*source];
      const std::string name = file_name_of(s);
      // The same file given twice (an identity model's input and output): written once.
      if (auto it = tensor_sources_.find(name); it != tensor_sources_.end() && it->second == s.sha256)
        return name + tensor_specs_[name];
      Output o{{},
               fmt::format("example segment {}", t.segment),
               bytes.size(),
               raw,
               s.mode != 0 ? (s.mode & 0777) : kDataMode};
      std::string tail = raw_spec_tail;
      bool same = s.size == bytes.size() && format::sha256_hex(bytes.span()) == s.sha256;
      if (!same) {
        HostTensor h{t.dtype, t.shape, std::vector<uint8_t>(bytes.data(), bytes.data() + bytes.size())};
        auto npy = encode_npy(h);
        if (npy.ok() && npy->size() == s.size && format::sha256_hex(*npy) == s.sha256) {
          plan_.owned.push_back(std::move(npy).value());
          const auto& kept = plan_.owned.back();
          o.size = kept.size();
          o.fill = [&kept](AtomicWriter& w) { return w.write(kept.data(), kept.size()); };
          tail.clear();  // a .npy file says its own dtype and shape
          same = true;
        }
      }
      if (same && is_safe_name(name) && !taken(name)) {
        o.name = name;
        tensor_sources_[name] = s.sha256;
        tensor_specs_[name] = tail;
        plan_.outputs.push_back(std::move(o));
        return name + tail;
      }
      not_identical(fmt::format("example '{}' cannot be written back as the file it was recorded from", s.name));
    } else {
      not_identical(fmt::format("no source is recorded for example segment {}", t.segment));
    }
    plan_.outputs.push_back(Output{fallback, fmt::format("example segment {}", t.segment), bytes.size(), raw});
    return fallback + raw_spec_tail;
  }

  // build drops libtorch from NEEDED unless told to keep it: a container where nothing was dropped but a library
  // still needs libtorch was built with --keep-libtorch (or could drop nothing; the option then changes nothing).
  bool keeps_libtorch() const {
    bool needs = false;
    for (const auto& l : m_.libraries) {
      if (!l.dropped_needed.empty()) return false;
      for (const auto& n : l.needed) needs = needs || aoti::is_libtorch_needed(n);
    }
    return needs;
  }

  void add_script() {
    if (taken(kRebuildScript)) return;  // an input of that name wins; the command is still in the JSON output
    std::string text = "#!/bin/sh\n";
    text += fmt::format("# Builds {} again from the files mpspack unpack wrote beside this script.\n",
                        fs::path(c_.name()).filename().string());
    if (plan_.rebuild.identical)
      text += fmt::format("# The same bytes come back when built by mpspack {}.\n", m_.producer_version);
    else text += "# Not the same bytes: " + plan_.rebuild.why_not + ".\n";
    text += "# Extra arguments are passed on (-o FILE; a relative FILE is taken from this folder).\n";
    text += "cd \"$(dirname \"$0\")\" || exit 2\nexec \"${MPSPACK:-mpspack}\"";
    for (const auto& a : plan_.rebuild.args) text += " " + shell_quote(a);
    text += " \"$@\"\n";
    plan_.owned.emplace_back(text.begin(), text.end());
    const auto& kept = plan_.owned.back();
    plan_.outputs.push_back(Output{kRebuildScript, "the rebuild script", kept.size(),
                                   [&kept](AtomicWriter& w) { return w.write(kept.data(), kept.size()); }, 0755});
  }

  const format::Container& c_;
  const Manifest& m_;
  const std::function<void(uint64_t)>& report_;
  SourceMap map_;
  Plan plan_;
  std::map<std::string, std::string> tensor_sources_, tensor_specs_;
};

// Every name a plain file name, no two the same (one would silently replace the other), and the total within
// unpack_limit() of the container's size (shared segments must not turn a small file into a full disk).
Status check_outputs(const format::Container& c, const std::vector<Output>& outputs, const fs::path& dir) {
  // Two libraries of one name: no writer makes them, and a library written under its source's name would
  // hide that the names collide (a rebuild from such files could not name them apart either).
  std::map<std::string_view, uint32_t> libraries;
  for (uint32_t i = 0; i < c.manifest().libraries.size(); ++i)
    if (auto [it, fresh] = libraries.emplace(c.manifest().libraries[i].name, i); !fresh)
      return make_error(Error::Kind::Corrupt, "{}: library {} and library {} are both named '{}': refusing to unpack",
                        c.name(), it->second, i, it->first);
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

Result<Unpacked> unpack(const format::Container& c, const fs::path& dir, const format::Progress& progress,
                        Durability durability) {
  uint64_t total = 0, done = 0;
  const std::function<void(uint64_t)> report = [&](uint64_t n) {  // outlives the outputs that call it
    done += n;
    if (progress) progress(done, total);
  };
  const Plan plan = Planner(c, report).plan();
  const std::vector<Output>& outputs = plan.outputs;
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
    // The recorded bits exactly, umask or not: a build of the unpacked files records them again.
    w.set_mode(o.mode);
    MPK_CHECK(w.finish());
    staged.push_back(std::move(w));
  }
  Unpacked out;
  for (size_t i = 0; i < staged.size(); ++i) {
    MPK_CHECK(staged[i].publish());
    out.written.push_back(dir / outputs[i].name);
  }
  out.rebuild = plan.rebuild;
  return out;
}

}  // namespace mpspack::pack
