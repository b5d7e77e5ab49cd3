// The build command as a list of passes over one context (mold's style):
//   open inputs -> find weights and cubins -> split libraries -> lay out -> write (atomic rename).
#include "mpspack/pack/build.hpp"

#include "mpspack/format/hash.hpp"
#include "mpspack/aoti/library.hpp"
#include "mpspack/aoti/split.hpp"
#include "mpspack/file.hpp"
#include "mpspack/format/writer.hpp"
#include "mpspack/pt2/package.hpp"
#include "mpspack/pt2/wrapper_constants.hpp"
#include "mpspack/tensor_io.hpp"
#include "mpspack/version.hpp"

#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

namespace mpspack::pack {
namespace fs = std::filesystem;
namespace {

struct NamedFile {
  std::string name;  // stored name (file name, or entry base name)
  std::shared_ptr<MappedFile> file;
};

// One model library on its way into the container.
struct Input {
  std::string name;         // stored library name, unique in the container
  std::string source_name;  // what the user gave (path, or "pkg.pt2:entry")
  std::shared_ptr<MappedFile> so;
  size_t source = 0;  // its entry in Context::sources (whose SHA-256 is its original_sha256)
  aoti::LibraryAnalysis analysis;
  aoti::SplitLibrary split;
  std::optional<NamedFile> blob;  // external-blob weights
  std::vector<NamedFile> cubins;
  std::vector<ConstantInfo> constants;
};

struct Context {
  const BuildOptions& options;
  std::vector<Input> inputs;
  std::vector<SourceInfo> sources;                         // sha256 filled in by SourceHashes
  std::vector<std::shared_ptr<MappedFile>> source_files;   // their bytes, one per source
  std::vector<std::shared_ptr<pt2::Pt2Package>> packages;  // keep extracted entries' owners alive
  size_t next_weights_option = 0;
};

bool starts_with(ByteView v, std::string_view magic) {
  return v.size() >= magic.size() && std::memcmp(v.data(), magic.data(), magic.size()) == 0;
}

std::string unique_name(const Context& ctx, std::string base) {
  if (base.empty()) base = "model";
  std::string name = base;
  for (int i = 2;; ++i) {
    bool taken = std::any_of(ctx.inputs.begin(), ctx.inputs.end(), [&](const Input& in) { return in.name == name; });
    if (!taken) return name;
    name = fmt::format("{}_{}", base, i);
  }
}

// What the metadata records of an input's path: its file name only. The folder it lay in, and whether it was
// given as an absolute or a relative path, is not part of the model: the same files give the same container
// from any working folder, on any machine.
std::string recorded_name(const fs::path& path) { return path.filename().string(); }

// The permission bits of an open input (0755, 0644), which unpack restores. Set-id and sticky bits are left
// out: unpack must never create a set-user-ID file from what a container says.
uint32_t file_mode(const MappedFile& f) {
  struct stat st {};
  if (f.fd() < 0 || ::fstat(f.fd(), &st) != 0) return 0;
  return static_cast<uint32_t>(st.st_mode & 0777);
}

// A SHA-256 in hex is always 64 characters: the metadata's size is known before the hashes are.
const std::string kHashPending(64, '0');

// Records an input file; its SHA-256 is computed later, while the container is written (SourceHashes).
// Returns its index in ctx.sources. `mode` is 0 for what is no file of its own (a .pt2's entries).
size_t add_source(Context& ctx, std::string name, std::shared_ptr<MappedFile> f, std::string kind, uint32_t mode,
                  std::string flavour = {}) {
  ctx.sources.push_back(
      SourceInfo{std::move(name), f->size(), kHashPending, std::move(kind), std::move(flavour), mode});
  ctx.source_files.push_back(std::move(f));
  return ctx.sources.size() - 1;
}

// SHA-256 of every source, on threads of their own: they overlap the writing of the segments, which is the
// other half of build's time on large inputs (each input is hashed once: a library's hash is also its
// original_sha256). One SHA-256 cannot be split, so the sources are spread over up to one thread per core but
// one (the writer's), largest first; on 2 cores that is one thread for them all. Each worker publishes how far
// it has hashed, so that wait() can drop the page-table entries of the mapping behind it (see wait()).
class SourceHashes {
 public:
  explicit SourceHashes(const std::vector<std::shared_ptr<MappedFile>>& files)
      : files_(files), jobs_(files.size()), hex_(files.size()) {
    for (size_t i = 0; i < files.size(); ++i) order_.push_back(i);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return files[a]->size() > files[b]->size(); });
    const size_t cores = std::max(2u, std::thread::hardware_concurrency());
    const size_t workers = std::min(files.size(), cores - 1);
    for (size_t w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
  }
  SourceHashes(const SourceHashes&) = delete;
  SourceHashes& operator=(const SourceHashes&) = delete;
  // An early error: the workers stop at their next piece (they still read the inputs until then).
  ~SourceHashes() {
    stop_ = true;
    join();
  }

  // The hex digests, in the order of the files. Meanwhile the caller's thread, whose writing is done, drops
  // the mapping's page-table entries behind the workers (MADV_DONTNEED: the pages stay in the page cache, and
  // the mapping reads the same bytes if touched again): otherwise the exit's munmap of a 2 GiB input, with
  // half a million entries, came after the last hash, 0.05-0.15 s of build's time on the development VM.
  std::vector<std::string> wait() {
    std::vector<uint64_t> released(files_.size(), 0);
    while (true) {
      {
        std::lock_guard lock(mutex_);
        if (finished_ == files_.size()) break;
      }
      for (size_t i = 0; i < files_.size(); ++i) {
        const uint64_t behind = jobs_[i].done.load(std::memory_order_acquire) & ~(kPiece - 1);
        if (behind > released[i]) {
          ::madvise(const_cast<uint8_t*>(files_[i]->data()) + released[i], behind - released[i], MADV_DONTNEED);
          released[i] = behind;
        }
      }
      // Woken at once by the last file's end; in between, every 20 ms (about one piece hashed).
      std::unique_lock lock(mutex_);
      finished_all_.wait_for(lock, std::chrono::milliseconds(20), [&] { return finished_ == files_.size(); });
    }
    join();
    return hex_;
  }

 private:
  // Hashed and published a piece at a time; a whole number of 2 MiB pages, as the mapping starts page-aligned.
  static constexpr uint64_t kPiece = 32ull << 20;

  struct Job {
    std::atomic<uint64_t> done{0};  // bytes hashed so far
  };

  void work() {
    for (size_t k; (k = next_.fetch_add(1)) < order_.size();) {
      const size_t i = order_[k];
      const MappedFile& f = *files_[i];
      format::Sha256Stream sha;
      for (uint64_t off = 0; off < f.size() && !stop_; off += kPiece) {
        const uint64_t n = std::min(kPiece, f.size() - off);
        sha.update(f.data() + off, n);
        jobs_[i].done.store(off + n, std::memory_order_release);
      }
      hex_[i] = sha.hex_digest();
      std::lock_guard lock(mutex_);
      if (++finished_ == files_.size()) finished_all_.notify_one();
    }
  }

  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

  const std::vector<std::shared_ptr<MappedFile>>& files_;
  std::vector<Job> jobs_;
  std::vector<std::string> hex_;  // each written by one worker, read after join()
  std::vector<size_t> order_;     // the files, largest first
  std::atomic<size_t> next_{0};   // the next entry of order_ to take
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  size_t finished_ = 0;  // files hashed (under mutex_)
  std::condition_variable finished_all_;
  std::vector<std::thread> threads_;
};

// `source_name` names the input in messages (the path as given); `recorded` is what the metadata keeps.
Status add_library(Context& ctx, std::string name, std::string source_name, std::string recorded, uint32_t mode,
                   std::shared_ptr<MappedFile> so) {
  Input in;
  in.source_name = std::move(source_name);
  in.so = std::move(so);
  auto analysis = aoti::analyze_library(in.so->view());
  if (!analysis.ok()) return analysis.error();
  in.analysis = std::move(analysis).value();
  in.name = unique_name(ctx, std::move(name));
  in.source = add_source(ctx, std::move(recorded), in.so, "so", mode, to_string(in.analysis.flavour));
  ctx.inputs.push_back(std::move(in));
  return {};
}

// --- pass 1: open inputs -------------------------------------------------------------------

Status open_so(Context& ctx, const fs::path& path, std::shared_ptr<MappedFile> file) {
  const uint32_t mode = file_mode(*file);
  return add_library(ctx, path.stem().string(), path.string(), recorded_name(path), mode, std::move(file));
}

Status open_pt2(Context& ctx, const fs::path& path) {
  MPK_TRY(auto pkg, pt2::Pt2Package::open(path));
  auto shared = std::make_shared<pt2::Pt2Package>(std::move(pkg));
  ctx.packages.push_back(shared);
  MPK_TRY(auto whole, MappedFile::open(path));
  auto whole_file = std::make_shared<MappedFile>(std::move(whole));
  add_source(ctx, recorded_name(path), whole_file, "pt2", file_mode(*whole_file));
  for (const auto& model : shared->models()) {
    MPK_TRY(auto so, shared->extract(model.library_entry));
    std::string source = fmt::format("{}:{}", path.string(), model.library_entry);
    MPK_CHECK(add_library(ctx, model.name, source, fmt::format("{}:{}", recorded_name(path), model.library_entry), 0,
                          std::make_shared<MappedFile>(std::move(so))));
    Input& in = ctx.inputs.back();
    if (!model.weights_entry.empty()) {
      MPK_TRY(auto blob, shared->extract(model.weights_entry));
      in.blob =
          NamedFile{fs::path(model.weights_entry).filename().string(), std::make_shared<MappedFile>(std::move(blob))};
    }
    for (const auto& entry : model.cubin_entries) {
      MPK_TRY(auto cubin, shared->extract(entry));
      in.cubins.push_back(
          NamedFile{fs::path(entry).filename().string(), std::make_shared<MappedFile>(std::move(cubin))});
    }
    if (!model.wrapper_cpp_entry.empty()) {
      MPK_TRY(auto text, shared->read_text(model.wrapper_cpp_entry, 256ull << 20));
      auto constants = pt2::parse_wrapper_constants(text);
      if (!constants.ok()) return constants.error().context(source);
      in.constants = std::move(constants).value();
    }
  }
  return {};
}

Status open_inputs(Context& ctx) {
  if (ctx.options.inputs.empty())
    return make_error(Error::Kind::Invalid, "no input given: name a model library (.so) or a .pt2 package");
  for (const auto& path : ctx.options.inputs) {
    MPK_TRY(auto file, MappedFile::open(path));
    ByteView v = file.view();
    if (v.size() == 0) return make_error(Error::Kind::Invalid, "{}: empty file, not a model library", path.string());
    if (starts_with(v, "\x7f"
                       "ELF")) {
      MPK_CHECK(open_so(ctx, path, std::make_shared<MappedFile>(std::move(file))));
    } else if (starts_with(v, "PK\x03\x04")) {
      MPK_CHECK(open_pt2(ctx, path));
    } else {
      return make_error(Error::Kind::NotThisFormat, "{}: not a model library (ELF shared object) nor a .pt2 package",
                        path.string());
    }
  }
  return {};
}

// --- pass 2: external weights and cubins ---------------------------------------------------

Status find_blob(Context& ctx, Input& in) {
  if (in.analysis.flavour != Flavour::ExternalBlob) return {};
  if (!in.blob) {
    fs::path path;
    if (ctx.next_weights_option < ctx.options.weights.size()) {
      path = ctx.options.weights[ctx.next_weights_option++];
    } else {
      path = fs::path(in.source_name).parent_path() / (fs::path(in.source_name).stem().string() + "_weights.blob");
      std::error_code ec;
      if (!fs::exists(path, ec))
        return make_error(Error::Kind::Invalid,
                          "{}: library keeps its weights in an external blob; none found at {} (pass --weights FILE)",
                          in.source_name, path.string());
    }
    MPK_TRY(auto blob, MappedFile::open(path));
    in.blob = NamedFile{in.name + "_weights.blob", std::make_shared<MappedFile>(std::move(blob))};
    add_source(ctx, recorded_name(path), in.blob->file, "blob", file_mode(*in.blob->file));
  }
  if (in.blob->file->size() != in.analysis.recorded_blob_size)
    return make_error(Error::Kind::Invalid, "{}: weights blob is {} bytes but {} records {} bytes",
                      in.blob->file->name(), in.blob->file->size(), in.source_name, in.analysis.recorded_blob_size);
  return {};
}

// A CUDA library built without embedded kernels names its *.cubin files by absolute path; take
// every cubin beside it whose file name the library mentions.
Status find_cubins(Context& ctx, Input& in) {
  if (in.analysis.device != "cuda" || !in.cubins.empty()) return {};
  fs::path dir = fs::path(in.source_name).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  std::vector<fs::path> candidates;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".cubin") candidates.push_back(entry.path());
  std::sort(candidates.begin(), candidates.end());
  ByteView so = in.so->view();
  for (const auto& path : candidates) {
    std::string base = path.filename().string();
    auto* hit = memmem(so.data(), so.size(), base.data(), base.size());
    if (!hit) continue;
    MPK_TRY(auto cubin, MappedFile::open(path));
    auto shared = std::make_shared<MappedFile>(std::move(cubin));
    add_source(ctx, recorded_name(path), shared, "cubin", file_mode(*shared));
    in.cubins.push_back(NamedFile{base, shared});
  }
  return {};
}

// --- the output is none of the inputs ------------------------------------------------------

bool same_inode(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// `-o` naming an input (`build in.so -o in.so`, a link to it, an example tensor) would replace the input with
// the container: refused before anything is written.
Status refuse_output_over_input(const Context& ctx) {
  struct stat out {};
  if (::stat(ctx.options.output.c_str(), &out) != 0) return {};  // not there yet: nothing to lose
  auto refuse = [&](const std::string& input) {
    return make_error(Error::Kind::Invalid, "{}: the output is the input {}: refusing to replace it",
                      ctx.options.output.string(), input);
  };
  for (const auto& f : ctx.source_files) {
    struct stat in {};
    if (::fstat(f->fd(), &in) == 0 && same_inode(in, out)) return refuse(f->name());
  }
  for (const auto* texts : {&ctx.options.example_inputs, &ctx.options.example_outputs})
    for (const auto& text : *texts) {
      auto spec = parse_tensor_spec(text);
      struct stat in {};
      if (spec.ok() && ::stat(spec->path.c_str(), &in) == 0 && same_inode(in, out)) return refuse(spec->path.string());
    }
  return {};
}

// --- pass 3: split ---------------------------------------------------------------------------

Status split_libraries(Context& ctx) {
  for (auto& in : ctx.inputs) {
    auto split = aoti::split_library(in.so->view(), in.analysis, ctx.options.drop_libtorch);
    if (!split.ok()) return split.error().context(in.source_name);
    in.split = std::move(split).value();
  }
  return {};
}

// --- pass 4: lay out -------------------------------------------------------------------------

ByteView weights_bytes(const Input& in) {
  if (in.blob) return in.blob->file->view();
  return ByteView(in.so->view().span().subspan(in.split.removed_offset, in.split.removed_size), in.source_name);
}

bool same_bytes(ByteView a, ByteView b) {
  return a.size() == b.size() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

struct Plan {
  Manifest manifest;
  std::vector<format::PendingSegment> segments;
};

uint32_t add_segment(Plan& plan, SegmentKind kind, std::string name, ByteView bytes,
                     std::optional<uint64_t> anchor = {}) {
  plan.segments.push_back(format::PendingSegment{kind, std::move(name), bytes, anchor});
  return static_cast<uint32_t>(plan.segments.size() - 1);
}

// Adds (or reuses, when the same bytes are already there) the weights of `in`.
int32_t add_weights(Plan& plan, const Input& in) {
  bool has_weights = in.blob || in.split.removed_size > 0;
  if (!has_weights) return -1;
  ByteView bytes = weights_bytes(in);
  for (size_t w = 0; w < plan.manifest.weights.size(); ++w) {
    const auto& seg = plan.segments[plan.manifest.weights[w].segment];
    if (same_bytes(seg.bytes, bytes)) {
      if (plan.manifest.weights[w].constants.empty()) plan.manifest.weights[w].constants = in.constants;
      return static_cast<int32_t>(w);
    }
  }
  std::optional<uint64_t> anchor;
  if (in.analysis.flavour == Flavour::Embedded) anchor = in.analysis.region.start_vaddr;
  std::string name = in.blob ? in.blob->name : in.name + "_weights.blob";
  uint32_t seg = add_segment(plan, SegmentKind::Weights, name, bytes, anchor);
  plan.manifest.weights.push_back(WeightsInfo{seg, in.constants});
  return static_cast<int32_t>(plan.manifest.weights.size() - 1);
}

LibraryInfo describe(const Input& in) {
  LibraryInfo l;
  l.name = in.name;
  l.device = in.analysis.device;
  l.machine = in.analysis.machine;
  l.flavour = in.analysis.flavour;
  l.needed = in.analysis.needed;
  std::erase_if(l.needed, [&](const std::string& n) {
    return std::find(in.split.dropped_needed.begin(), in.split.dropped_needed.end(), n) !=
           in.split.dropped_needed.end();
  });
  l.dropped_needed = in.split.dropped_needed;
  l.imports = in.analysis.imports;
  l.region = in.analysis.region;
  l.original_size = in.so->size();
  l.original_sha256 = kHashPending;  // filled in with its source's hash when written
  l.removed_offset = in.split.removed_offset;
  l.removed_size = in.split.removed_size;
  l.restore = in.split.restore;
  return l;
}

Plan lay_out(const Context& ctx) {
  Plan plan;
  plan.manifest.producer_version = version_string();
  plan.manifest.sources = ctx.sources;
  for (const auto& in : ctx.inputs) {
    LibraryInfo l = describe(in);
    l.segment = add_segment(plan, SegmentKind::Library, in.name + ".so", ByteView(in.split.stored, in.name + ".so"));
    l.weights = add_weights(plan, in);
    for (const auto& c : in.cubins) l.cubins.push_back(add_segment(plan, SegmentKind::Cubin, c.name, c.file->view()));
    plan.manifest.libraries.push_back(std::move(l));
  }
  return plan;
}

// --- pass 5: examples (reference tensors for `run`) ------------------------------------------

Result<TensorInfo> add_example_tensor(Plan& plan, std::vector<HostTensor>& keep, const std::string& text,
                                      const std::string& segment_name) {
  MPK_TRY(TensorSpec spec, parse_tensor_spec(text));
  MPK_TRY(HostTensor t, read_tensor(spec));
  MPK_TRY(auto file, MappedFile::open(spec.path));
  plan.manifest.sources.push_back(SourceInfo{recorded_name(spec.path),
                                             file.size(),
                                             format::sha256_hex({file.data(), file.size()}),
                                             "tensor",
                                             {},
                                             file_mode(file)});
  keep.push_back(std::move(t));  // reserved by the caller: the bytes stay put
  const HostTensor& kept = keep.back();
  uint32_t seg = add_segment(plan, SegmentKind::Example, segment_name,
                             ByteView({kept.data.data(), kept.data.size()}, spec.path.string()));
  return TensorInfo{kept.dtype, kept.shape, seg};
}

Status add_examples(const BuildOptions& o, Plan& plan, std::vector<HostTensor>& keep) {
  if (o.example_inputs.empty() && o.example_outputs.empty()) return {};
  if (o.example_inputs.empty())
    return make_error(Error::Kind::Invalid, "--example-output given without --example-input");
  keep.reserve(o.example_inputs.size() + o.example_outputs.size());
  ExampleInfo e;
  e.library = 0;
  for (size_t i = 0; i < o.example_inputs.size(); ++i) {
    MPK_TRY(TensorInfo t, add_example_tensor(plan, keep, o.example_inputs[i], fmt::format("input{}", i)));
    e.inputs.push_back(std::move(t));
  }
  for (size_t i = 0; i < o.example_outputs.size(); ++i) {
    MPK_TRY(TensorInfo t, add_example_tensor(plan, keep, o.example_outputs[i], fmt::format("output{}", i)));
    e.outputs.push_back(std::move(t));
  }
  plan.manifest.examples.push_back(std::move(e));
  return {};
}

}  // namespace

Result<Manifest> build(const BuildOptions& options) {
  Context ctx{options, {}, {}, {}, {}, 0};
  MPK_CHECK(open_inputs(ctx));
  for (auto& in : ctx.inputs) {
    MPK_CHECK(find_blob(ctx, in));
    MPK_CHECK(find_cubins(ctx, in));
  }
  if (ctx.next_weights_option < options.weights.size())
    return make_error(Error::Kind::Invalid, "{}: no external-blob library left to take these weights",
                      options.weights[ctx.next_weights_option].string());
  MPK_CHECK(refuse_output_over_input(ctx));
  MPK_CHECK(split_libraries(ctx));
  Plan plan = lay_out(ctx);
  std::vector<HostTensor> example_tensors;
  MPK_CHECK(add_examples(options, plan, example_tensors));
  // From here on the layout is fixed; only bytes move.
  spdlog::debug("writing {} segments to {}", plan.segments.size(), options.output.string());
  SourceHashes hashes(ctx.source_files);
  auto fill_hashes = [&](Manifest& m) -> Status {
    std::vector<std::string> h = hashes.wait();
    for (size_t i = 0; i < h.size(); ++i) m.sources[i].sha256 = h[i];  // ctx's sources come first
    for (size_t i = 0; i < ctx.inputs.size(); ++i) m.libraries[i].original_sha256 = h[ctx.inputs[i].source];
    return {};
  };
  return format::write_container(options.output, std::move(plan.manifest), plan.segments, options.progress, fill_hashes,
                                 options.durability);
}

}  // namespace mpspack::pack
