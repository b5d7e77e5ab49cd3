// The loader as a list of steps over one Impl (see mpspack/runtime/model.hpp):
//   refuse -> library into memory -> its large allocations routed -> resolve the C API -> weights before Create
//   -> Create -> weights after Create -> what the model says about itself.
#include "mpspack/runtime/model.hpp"

#include "aoti_api.hpp"
#include "blas.hpp"
#include "backend.hpp"
#include "import_slots.hpp"
#include "large_blocks.hpp"
#include "provided.hpp"
#include "shared_library.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14
#endif

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace mpspack::runtime {
namespace {

using Kind = Error::Kind;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Error sys_error(std::string_view lib, std::string_view what) {
  return make_error(Kind::Io, "library '{}': {}: {}", lib, what, std::strerror(errno));
}

}  // namespace

const char* to_string(EmbeddedWeights e) {
  switch (e) {
    case EmbeddedWeights::Memcpy: return "memcpy";
    case EmbeddedWeights::MemcpyWillneed: return "memcpy-willneed";
    case EmbeddedWeights::Pread: return "pread";
    case EmbeddedWeights::Mmap: return "mmap";
    case EmbeddedWeights::MmapPopulate: return "mmap-populate";
  }
  return "?";
}

const char* to_string(WeightsMode m) {
  switch (m) {
    case WeightsMode::None: return "none";
    case WeightsMode::BlobUploaded: return "external blob, uploaded to the GPU by mpspack (pinned pipeline)";
    case WeightsMode::EmbeddedUploaded: return "embedded, uploaded to the GPU by mpspack (pinned pipeline)";
    case WeightsMode::EmbeddedCopied: return "embedded (restored in memory, copied by Create)";
    case WeightsMode::EmbeddedMapped: return "embedded, mapped from the container (copy-on-write, no copy)";
    case WeightsMode::BlobMapped: return "external blob, mapped from the container (copy-on-write, no copy)";
    case WeightsMode::BlobInPlace: return "external blob, used in place from the container (no copy)";
    case WeightsMode::BlobCopied: return "external blob, copied into the model";
    case WeightsMode::MmapSelf: return "mmap-self (self-mapped file rebuilt in memory)";
  }
  return "?";
}

std::string_view host_machine() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

std::string_view cpu_blas_kernels() { return shim::openblas_kernels(); }

Result<uint32_t> find_library(const format::Container& c, std::string_view name_or_index) {
  const auto& libs = c.manifest().libraries;
  if (libs.empty()) return make_error(Kind::Invalid, "{}: the container holds no model library", c.name());
  auto names = [&] {
    std::string s;
    for (size_t i = 0; i < libs.size(); ++i) s += fmt::format("{}{} ({})", i ? ", " : "", i, libs[i].name);
    return s;
  };
  if (name_or_index.empty()) {
    if (libs.size() == 1) return 0u;
    return make_error(Kind::Invalid, "{}: holds {} libraries; choose one with --library NAME|INDEX: {}", c.name(),
                      libs.size(), names());
  }
  for (size_t i = 0; i < libs.size(); ++i)
    if (libs[i].name == name_or_index) return uint32_t(i);
  uint32_t index = 0;
  auto [p, ec] = std::from_chars(name_or_index.data(), name_or_index.data() + name_or_index.size(), index);
  if (ec == std::errc() && p == name_or_index.data() + name_or_index.size() && index < libs.size()) return index;
  return make_error(Kind::Invalid, "{}: no library '{}'; it holds {}", c.name(), name_or_index, names());
}

struct Model::Impl {
  const format::Container* container = nullptr;
  uint32_t index = 0;
  LibraryInfo lib;
  std::unique_ptr<Backend> backend;
  int memfd = -1;
  bool routed = false;  // the library's malloc and memcpy go through large_blocks.hpp
  bool copies_routed = false;  // its copies of its weights to the device go through the backend
  void* dl = nullptr;
  uintptr_t base = 0;  // where dl's vaddr 0 lies in memory (its link map's l_addr)
  AotiApi api;
  AOTInductorModelContainerHandle handle = nullptr;
  StagedWeights staged;          // external weights on the device (GPU), freed after the model
  std::string cubin_dir;         // the library's kernel files written out for Create, removed with the model
  std::vector<AtenTensorHandle> prepared;  // run_prepared()'s inputs
  bool captured = false;                   // run_prepared(graph = true) captured its graph
  // User-managed constant tensors (external blob in place): ours, deleted after the container.
  std::vector<AtenTensorHandle> weight_tensors;
  WeightsMode mode = WeightsMode::None;
  PhaseTimings t;
  size_t n_in = 0, n_out = 0;
  std::optional<std::vector<TensorInfo>> in_sig, out_sig;

  ~Impl() {
    for (AtenTensorHandle h : prepared) aoti_torch_delete_tensor_object(h);
    if (handle && api.destroy) api.destroy(handle);
    for (AtenTensorHandle h : weight_tensors) aoti_torch_delete_tensor_object(h);
    if (backend) (void)backend->synchronize();
    staged = {};
    remove_cubin_dir();
    if (dl) dlclose(dl);
    if (memfd >= 0) ::close(memfd);
  }

  void remove_cubin_dir() {
    if (cubin_dir.empty()) return;
    if (DIR* d = ::opendir(cubin_dir.c_str())) {
      while (struct dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
          ::unlink((cubin_dir + "/" + e->d_name).c_str());
      ::closedir(d);
    }
    ::rmdir(cubin_dir.c_str());
    cubin_dir.clear();
  }

  std::string what() const { return fmt::format("library '{}'", lib.name); }
  Error error(Kind k, std::string message) const { return Error{k, fmt::format("{}: {}", what(), message)}; }
};

namespace {

// --- step 1: refuse what cannot run here, before any of the library's code runs ------------------

// CUDA driver functions (cuModuleLoad, cuLaunchKernel: "cu" and a capital) come from libcuda.so.1, which
// the library names as NEEDED itself; everything else it imports mpspack must provide.
bool is_driver_import(std::string_view s) {
  return s.size() > 2 && s.starts_with("cu") && s[2] >= 'A' && s[2] <= 'Z';
}

Status refuse(Model::Impl& m, const LoadOptions& o) {
  const LibraryInfo& lib = m.lib;
  auto backend = make_backend(lib.device, o.device_index);
  if (!backend.ok()) {
    if (backend.error().kind == Kind::Unsupported)
      return m.error(Kind::Unsupported,
                     fmt::format("was built for {}; this mpspack runs {} models only (no {} backend built in)",
                                 lib.device, built_backends(), lib.device));
    return backend.error().context(m.what());
  }
  m.backend = std::move(backend).value();
  if (lib.machine != host_machine())
    return m.error(Kind::Unsupported, fmt::format("was built for {}; this machine is {}", lib.machine, host_machine()));
  std::vector<std::string> torch_needed;
  for (const auto& n : lib.needed)
    if (n.starts_with("libtorch")) torch_needed.push_back(n);
  if (!torch_needed.empty())
    return m.error(Kind::Unsupported,
                   fmt::format("still needs {} (the container was built with --keep-libtorch); mpspack runs "
                               "libraries on its own shim: rebuild the container without --keep-libtorch",
                               fmt::join(torch_needed, ", ")));
  std::vector<std::string> missing;
  for (const auto& s : lib.imports)
    if (!is_driver_import(s) && !shim::shim_provides(s)) missing.push_back(s);
  if (!missing.empty())
    return m.error(Kind::Unsupported,
                   fmt::format("imports {} function{} this mpspack's shim does not provide: {}", missing.size(),
                               missing.size() == 1 ? "" : "s", fmt::join(missing, ", ")));
  return {};
}

}  // namespace

std::vector<std::string> missing_shim_imports(const LibraryInfo& lib) {
  std::vector<std::string> missing;
  for (const auto& s : lib.imports) {
    bool shim_kind = s.starts_with("aoti_torch_") || s.starts_with("Sleef_");
    if (shim_kind && !shim::shim_provides(s)) missing.push_back(s);
  }
  return missing;
}

namespace {

// --- step 2: the stored library into a memfd, dlopen'ed from /proc/self/fd/N ---------------------

// The Sleef_* functions torch's vectorized CPU kernels import come from libsleef, opened here into the global
// scope the library binds to, rather than linked into mpspack, where every command paid ~1.3 ms to load it.
Status provide_sleef(Model::Impl& m) {
  const bool imports_sleef =
      std::any_of(m.lib.imports.begin(), m.lib.imports.end(), [](const std::string& s) { return s.starts_with("Sleef_"); });
  if (!imports_sleef) return {};
  auto sleef = open_shared_library(MPSPACK_SLEEF_SONAME, RTLD_GLOBAL);
  if (!sleef.ok()) return sleef.error().context(m.what());
  return {};
}

Status write_all(int fd, const uint8_t* p, uint64_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, std::min<uint64_t>(n, 1ull << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      return make_error(Kind::Io, "write to memfd: {}", std::strerror(errno));
    }
    p += w;
    n -= uint64_t(w);
  }
  return {};
}

// mmap-self: the library maps its own file (dladdr -> open -> mmap at file_size - appended). The
// file it finds is the memfd, so the memfd must hold what torch wrote: ELF image, padding,
// weights, magic. The stored library is that file with the weights cut out at removed_offset.
Status write_mmap_self(Model::Impl& m, ByteView stored) {
  const LibraryInfo& lib = m.lib;
  if (lib.weights < 0 || !lib.region)
    return m.error(Kind::Corrupt, "mmap-self library has no weights segment or constants region");
  ByteView weights = m.container->segment(m.container->manifest().weights[size_t(lib.weights)].segment);
  if (lib.removed_offset > stored.size() || weights.size() != lib.removed_size)
    return m.error(Kind::Corrupt, fmt::format("mmap-self weights ({:#x} bytes) do not fit removed range {:#x} + {:#x}",
                                              weights.size(), lib.removed_offset, lib.removed_size));
  // The two u64 at _binary_constants_bin_start: appended size (weights + magic), magic.
  MPK_TRY(uint64_t appended, stored.u64(lib.region->file_offset, "mmap-self weights size"));
  MPK_TRY(uint64_t magic, stored.u64(lib.region->file_offset + 8, "mmap-self magic"));
  const uint64_t total = stored.size() + weights.size();
  if (appended < 8 || appended > total || (total - appended) % 16384 != 0 || stored.size() < 8 ||
      load_u64le(stored.data() + stored.size() - 8) != magic)
    return m.error(Kind::Corrupt, "mmap-self layout does not rebuild: the weights would not start on a 16 KiB "
                                  "boundary or the magic does not match");
  MPK_CHECK(write_all(m.memfd, stored.data(), lib.removed_offset));
  MPK_CHECK(write_all(m.memfd, weights.data(), weights.size()));
  return write_all(m.memfd, stored.data() + lib.removed_offset, stored.size() - lib.removed_offset);
}

Status library_to_memory(Model::Impl& m) {
  ByteView stored = m.container->segment(m.lib.segment);
  m.memfd = ::memfd_create(m.lib.name.c_str(), MFD_CLOEXEC);
  if (m.memfd < 0) return sys_error(m.lib.name, "memfd_create");
  if (m.lib.flavour == Flavour::MmapSelf) {
    MPK_CHECK(write_mmap_self(m, stored));
  } else {
    auto s = write_all(m.memfd, stored.data(), stored.size());
    if (!s.ok()) return s.error().context(m.what());
  }
  // The dynamic loader matches an already loaded library by its name: a library loaded earlier
  // from "/proc/self/fd/N" (kept mapped, RTLD_NODELETE below) would be handed back for a new memfd
  // that got the same number. Move the memfd to a number no loaded library is named after.
  std::string path = fmt::format("/proc/self/fd/{}", m.memfd);
  for (int tries = 0;; ++tries) {
    void* loaded = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!loaded) break;
    ::dlclose(loaded);  // the reference RTLD_NOLOAD took
    const int moved = tries < 4096 ? ::fcntl(m.memfd, F_DUPFD_CLOEXEC, m.memfd + 1) : -1;
    if (moved < 0) return sys_error(m.lib.name, "no file descriptor number free of an earlier model library");
    ::close(m.memfd);
    m.memfd = moved;
    path = fmt::format("/proc/self/fd/{}", m.memfd);
  }
  // RTLD_NODELETE: dlclose must not unmap a model library. Its OpenMP parallel regions leave
  // libgomp's pooled threads holding state from the library's code, and unmapping it made later
  // loads in the same process crash now and then (seen in test_loader's in-place blob case, ~1 run
  // in 3). A process that loads a model keeps its code until it exits.
  m.dl = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!m.dl) {
    const char* why = ::dlerror();
    return m.error(Kind::Runtime, fmt::format("dlopen failed: {}", why ? why : "unknown reason"));
  }
  struct link_map* lm = nullptr;
  if (::dlinfo(m.dl, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
    return m.error(Kind::Runtime, "dlinfo(RTLD_DI_LINKMAP) failed");
  m.base = lm->l_addr;
  return {};
}

// --- step 2b: the library's large mallocs and copies on several threads (large_blocks.hpp) ---------

const SegmentInfo& weights_segment(const Model::Impl& m) {
  const auto& manifest = m.container->manifest();
  return manifest.segments[manifest.weights[size_t(m.lib.weights)].segment];
}

bool may_map_weights(const Model::Impl& m, const LoadOptions& o) {
  if (m.lib.weights < 0 || m.backend->device() != "cpu" || m.container->file().fd() < 0) return false;
  if (m.lib.flavour != Flavour::Embedded && m.lib.flavour != Flavour::ExternalBlob) return false;
  const SegmentInfo& seg = weights_segment(m);
  return seg.size > 0 && seg.size >= o.map_weights_min_bytes && seg.offset % 64 == 0;  // as aligned as the region
}

// Only for a library whose constants fill a large block: Create mallocs one block of their size. Below that,
// reading the library's relocations would cost more (~0.3 ms) than it could save. Also for a library whose weights
// may be offered as a mapped block (map_weights_min_bytes).
void route_allocations(Model::Impl& m, const LoadOptions& o) {
  if (!o.prefault_large_blocks || m.lib.weights < 0) return;
  if (weights_segment(m).size < kLargeBlock && !may_map_weights(m, o)) return;
  auto elf = elf::ElfFile::parse(m.container->segment(m.lib.segment));
  if (!elf.ok()) return;  // the container was built from it: cannot fail
  m.routed = route_large_blocks(*elf, m.base, m.what().c_str());
}

// The library's own copies of its weights to the device made by the backend (Backend::weight_copy_routes), for
// weights that come from the container's file and reach the mapping threshold.
void route_weight_copies(Model::Impl& m, const LoadOptions& o) {
  if (!o.prefault_large_blocks || o.copy_weights || m.lib.weights < 0 || m.container->file().fd() < 0) return;
  if (m.lib.flavour != Flavour::Embedded && m.lib.flavour != Flavour::ExternalBlob) return;
  if (weights_segment(m).size < std::max<uint64_t>(o.map_weights_min_bytes, 1)) return;
  const std::vector<ImportRoute> routes = m.backend->weight_copy_routes();
  if (routes.empty()) return;
  auto elf = elf::ElfFile::parse(m.container->segment(m.lib.segment));
  if (!elf.ok()) return;  // the container was built from it: cannot fail
  std::string why = route_imports(*elf, m.base, routes);
  if (!why.empty()) spdlog::debug("{}: its copies of its weights to the device left to it: {}", m.what(), why);
  m.copies_routed = why.empty();
}

// Runs `load` (Create or UpdateConstantsFromBlob) with the library's copies from `mirror` (the weights segment's
// bytes as the library reads them; null: none to gather) gathered by the backend, then has the backend make them;
// whether it made any.
template <class Load>
Result<bool> with_weight_copies_deferred(Model::Impl& m, const void* mirror, Load load) {
  if (!m.copies_routed || !mirror) {
    MPK_CHECK(load());
    return false;
  }
  const SegmentInfo& seg = weights_segment(m);
  m.backend->defer_weight_copies(mirror, seg.size, m.container->file().fd(), seg.offset);
  Status loaded = load();
  auto moved = m.backend->finish_weight_copies();
  if (!loaded.ok()) return loaded.error();
  if (!moved.ok()) return moved.error().context(m.what());
  m.t.upload_bytes = moved->bytes;
  m.t.upload_ms = moved->ms;
  return moved->bytes > 0;
}

// --- the weights block offered to Create or UpdateConstantsFromBlob (large_blocks.hpp, OfferedBlock) -----

// Maps the pages of `bytes` (the weights, mapped from the container) into this process now, in one call, rather
// than one fault per 64 KiB in the first run (bench/zero_copy.sh; docs/PERFORMANCE.md, "Weights without a copy").
// The pages are in the page cache (warm) or read on the way. A kernel before 5.14 lacks it: the first run faults.
void populate(std::span<const uint8_t> bytes) {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t lo = uint64_t(bytes.data()) / page * page;
  ::madvise(reinterpret_cast<void*>(lo), uint64_t(bytes.data()) + bytes.size() - lo, MADV_POPULATE_READ);
}

// While it lives, the weights segment mapped from the container (private: the model's writes stay its own) is
// offered as the library's block of `size` bytes mirroring `mirror`; finish() says whether the library took it.
class WeightsOffer {
 public:
  WeightsOffer(const Model::Impl& m, const LoadOptions& o, const void* mirror, uint64_t size)
      : populate_(o.populate_weights) {
    const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
    const uint64_t offset = weights_segment(m).offset, skip = offset % page;  // an embedded segment is placed
    mapped_ = align_up(skip + size, page);                                     // congruent to its region
    void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE, m.container->file().fd(),
                     off_t(offset - skip));
    if (p == MAP_FAILED) {
      spdlog::debug("{}: weights not mapped for the model ({}): copied", m.what(), std::strerror(errno));
      return;
    }
    mapping_ = p;
    offer_block({static_cast<uint8_t*>(p) + skip, mirror, size, mapping_, mapped_});
  }
  ~WeightsOffer() { finish(); }
  WeightsOffer(const WeightsOffer&) = delete;
  WeightsOffer& operator=(const WeightsOffer&) = delete;

  // Ends the offer; true when the library took the block (it is the library's now).
  bool finish() {
    if (!mapping_) return taken_;
    taken_ = withdraw_offer();
    if (!taken_) ::munmap(mapping_, mapped_);
    if (taken_ && populate_) populate({static_cast<const uint8_t*>(mapping_), mapped_});
    mapping_ = nullptr;
    return taken_;
  }

 private:
  const bool populate_;
  void* mapping_ = nullptr;
  uint64_t mapped_ = 0;
  bool taken_ = false;
};

// The block AOTInductor's load_constants mallocs: every non-folded constant's data_size rounded up to 64 bytes.
// Also what it reads from the source (the unrounded sizes), which must lie inside the weights.
struct ConstantsBlock {
  uint64_t block = 0, read = 0;
};

Result<ConstantsBlock> constants_block(const Model::Impl& m) {
  if (!m.api.num_constants || !m.api.constant_data_size || !m.api.constant_from_folded)
    return m.error(Kind::Unsupported, "lacks the constant-info functions");
  size_t n = 0;
  if (m.api.num_constants(m.handle, &n) != 0) return m.error(Kind::Runtime, "GetNumConstants failed");
  ConstantsBlock b;
  for (size_t i = 0; i < n; ++i) {
    size_t size = 0;
    bool folded = false;
    if (m.api.constant_data_size(m.handle, i, &size) != 0 || m.api.constant_from_folded(m.handle, i, &folded) != 0)
      return m.error(Kind::Runtime, fmt::format("the model did not describe constant {}", i));
    if (folded) continue;
    if (size > (uint64_t(1) << 60)) return m.error(Kind::Corrupt, fmt::format("constant {} claims {} bytes", i, size));
    b.read += size;
    b.block += align_up(uint64_t(size), 64);
  }
  return b;
}

// --- step 4: embedded weights go back where the linker put them -----------------------------------

struct PhdrQuery {
  ElfW(Addr) base = 0;
  uint64_t start = 0, end = 0;
  bool found = false;
  int prot = 0;
};

int find_load(struct dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<PhdrQuery*>(data);
  if (info->dlpi_addr != q->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || q->start < ph.p_vaddr || q->end > ph.p_vaddr + ph.p_memsz) continue;
    q->found = true;
    q->prot = ((ph.p_flags & PF_R) ? PROT_READ : 0) | ((ph.p_flags & PF_W) ? PROT_WRITE : 0) |
              ((ph.p_flags & PF_X) ? PROT_EXEC : 0);
    return 1;
  }
  return 0;
}

Status place_embedded(Model::Impl& m, const LoadOptions& o) {
  const LibraryInfo& lib = m.lib;
  if (lib.weights < 0) return {};  // no constants
  if (!lib.region) return m.error(Kind::Corrupt, "embedded weights but no constants region recorded");
  ByteView weights = m.container->segment(m.container->manifest().weights[size_t(lib.weights)].segment);
  const uint64_t start = lib.region->start_vaddr, end = lib.region->end_vaddr;
  if (end - start != weights.size())
    return m.error(Kind::Corrupt, fmt::format("constants region {:#x}..{:#x} does not match the weights segment "
                                              "({:#x} bytes)", start, end, weights.size()));
  PhdrQuery q{m.base, start, end};
  ::dl_iterate_phdr(find_load, &q);
  if (!q.found)
    return m.error(Kind::Corrupt, fmt::format("constants region {:#x}..{:#x} is in no loaded segment", start, end));
  auto* dst = reinterpret_cast<uint8_t*>(m.base + start);
  if (void* sym = ::dlsym(m.dl, "_binary_constants_bin_start"); sym && sym != dst)
    return m.error(Kind::Corrupt, "_binary_constants_bin_start is not at base + region.start_vaddr");
  if (weights.size() == 0) return {};
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t lo = uint64_t(dst) / page * page;
  const uint64_t hi = align_up(uint64_t(dst) + weights.size(), page);
  const SegmentInfo& seg = weights_segment(m);
  const int fd = m.container->file().fd();
  EmbeddedWeights how = o.embedded;
  // Mapping needs the container's file and the segment congruent to the region modulo the page
  // size (the writer places it so, docs/FORMAT.md); otherwise the copy.
  const bool mappable = fd >= 0 && (uint64_t(dst) - seg.offset) % page == 0;
  if ((how == EmbeddedWeights::Mmap || how == EmbeddedWeights::MmapPopulate) && !mappable) how = EmbeddedWeights::Memcpy;
  if (how == EmbeddedWeights::Pread && fd < 0) how = EmbeddedWeights::Memcpy;
  if (::mprotect(reinterpret_cast<void*>(lo), hi - lo, q.prot | PROT_WRITE) != 0)
    return sys_error(lib.name, "mprotect of the constants region");
  switch (how) {
    case EmbeddedWeights::Memcpy:
      std::memcpy(dst, weights.data(), weights.size());
      break;
    case EmbeddedWeights::MemcpyWillneed:
      ::madvise(const_cast<uint8_t*>(weights.data() - (uint64_t(weights.data()) % page)),
                weights.size() + uint64_t(weights.data()) % page, MADV_WILLNEED);
      std::memcpy(dst, weights.data(), weights.size());
      break;
    case EmbeddedWeights::Pread: {
      uint64_t done = 0;
      while (done < weights.size()) {
        ssize_t n = ::pread(fd, dst + done, std::min<uint64_t>(weights.size() - done, 1ull << 30),
                            off_t(seg.offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return sys_error(lib.name, "pread of the weights segment");
        done += uint64_t(n);
      }
      break;
    }
    case EmbeddedWeights::Mmap:
    case EmbeddedWeights::MmapPopulate: {
      // Whole pages mapped over the region (private, read-only: the model never sees the file
      // change under it unless someone rewrites the container in place); the partial first and
      // last pages copied, so the library's own bytes around the region stay as they were.
      const uint64_t a = align_up(uint64_t(dst), page);
      const uint64_t b = (uint64_t(dst) + weights.size()) / page * page;
      if (b <= a) {
        std::memcpy(dst, weights.data(), weights.size());
        break;
      }
      std::memcpy(dst, weights.data(), a - uint64_t(dst));
      const uint64_t tail = uint64_t(dst) + weights.size() - b;
      std::memcpy(reinterpret_cast<void*>(b), weights.data() + (b - uint64_t(dst)), tail);
      const int flags = MAP_PRIVATE | MAP_FIXED | (how == EmbeddedWeights::MmapPopulate ? MAP_POPULATE : 0);
      if (::mmap(reinterpret_cast<void*>(a), b - a, q.prot, flags, fd, off_t(seg.offset + (a - uint64_t(dst)))) ==
          MAP_FAILED)
        return sys_error(lib.name, "mmap of the weights segment over the constants region");
      break;
    }
  }
  if (::mprotect(reinterpret_cast<void*>(lo), hi - lo, q.prot) != 0)
    return sys_error(lib.name, "mprotect back of the constants region");
  m.mode = WeightsMode::EmbeddedCopied;
  return {};
}

// --- step 6: an external blob after Create --------------------------------------------------------

// Why the container's constants table cannot be used in place, or "" when it can.
std::string in_place_obstacle(Model::Impl& m, const WeightsInfo& w, ByteView blob) {
  if (m.lib.region && m.lib.region->writable && m.backend->device() == "cpu")
    return "the model may write to its constants (writable section), and the container is mapped read-only";
  if (w.constants.empty())
    return "the container has no constants table (shapes and strides are not available through the C API; "
           "a .pt2 input records them)";
  if (!m.api.num_constants || !m.api.constant_name || !m.api.constant_dtype || !m.api.constant_data_size ||
      !m.api.constant_from_folded || !m.api.update_user_managed_pairs)
    return "the library lacks the constant-info functions";
  size_t n = 0;
  if (m.api.num_constants(m.handle, &n) != 0 || n != w.constants.size())
    return fmt::format("the model has {} constants, the container's table {}", n, w.constants.size());
  uint64_t running = 0;
  for (size_t i = 0; i < n; ++i) {
    const ConstantInfo& c = w.constants[i];
    const char* name = nullptr;
    int32_t dt = -1;
    size_t size = 0;
    bool folded = false;
    if (m.api.constant_name(m.handle, i, &name) != 0 || m.api.constant_dtype(m.handle, i, &dt) != 0 ||
        m.api.constant_data_size(m.handle, i, &size) != 0 || m.api.constant_from_folded(m.handle, i, &folded) != 0)
      return fmt::format("the model did not describe constant {}", i);
    if (!name || c.name != name || c.dtype != dt || c.size != size || c.from_folded != folded)
      return fmt::format("constant {} differs between the model ({}) and the container's table ({})", i,
                         name ? name : "?", c.name);
    if (folded) continue;
    if (c.offset != running) return fmt::format("constant {} is at offset {:#x}, expected {:#x}", i, c.offset, running);
    // Its view (shape, strides, storage offset) reaches only inside its storage: checked when the
    // container was opened (docs/FORMAT.md, rule W2).
    running += size;
  }
  if (running > blob.size()) return fmt::format("constants need {:#x} bytes, the blob has {:#x}", running, blob.size());
  return {};
}

Status blob_in_place(Model::Impl& m, const LoadOptions& o, const WeightsInfo& w, ByteView blob) {
  const SegmentInfo& seg = m.container->manifest().segments[w.segment];
  MPK_TRY(m.staged, m.backend->stage_weights(blob, m.container->file().fd(), seg.offset));
  if (m.staged.owner) {
    m.t.upload_bytes = m.staged.bytes;
    m.t.upload_ms = m.staged.ms;
  }
  std::vector<AOTInductorConstantMapEntry> pairs;
  for (const ConstantInfo& c : w.constants) {
    if (c.from_folded) continue;
    void* data = m.staged.base + c.offset;  // the CPU shim never writes through it
    auto t = m.backend->wrap(data, c.dtype, c.shape, c.stride, c.storage_offset);
    if (!t.ok()) return t.error().context(m.what());
    m.weight_tensors.push_back(*t);
    pairs.push_back({c.name.c_str(), *t});
  }
  if (m.api.update_user_managed_pairs(m.handle, pairs.data(), pairs.size(), /*use_inactive=*/false,
                                      /*validate_full_update=*/true) != 0)
    return m.error(Kind::Runtime, "AOTInductorModelContainerUpdateUserManagedConstantBufferPairs failed (see above)");
  m.mode = m.staged.owner ? WeightsMode::BlobUploaded : WeightsMode::BlobInPlace;
  if (!m.staged.owner && o.populate_weights) populate(blob.span());
  return {};
}

Status load_external_blob(Model::Impl& m, const LoadOptions& o) {
  if (m.lib.weights < 0) return m.error(Kind::Corrupt, "external-blob library without a weights segment");
  const WeightsInfo& w = m.container->manifest().weights[size_t(m.lib.weights)];
  ByteView blob = m.container->segment(w.segment);
  std::string obstacle = o.copy_weights ? "" : in_place_obstacle(m, w, blob);
  if (!o.copy_weights && obstacle.empty()) return blob_in_place(m, o, w, blob);
  if (!m.api.update_constants_from_blob)
    return m.error(Kind::Unsupported, "does not export AOTInductorModelUpdateConstantsFromBlob");
  // UpdateConstantsFromBlob reads the sum of the constants' sizes from the pointer it is given: never past the
  // segment.
  std::optional<ConstantsBlock> block;
  if (auto b = constants_block(m); b.ok()) {
    if (b->read > blob.size())
      return m.error(Kind::Corrupt, fmt::format("its constants need {:#x} bytes, the weights segment holds {:#x}",
                                                b->read, blob.size()));
    block = *b;
  }
  std::optional<WeightsOffer> offer;
  if (!o.copy_weights && block && m.routed && may_map_weights(m, o)) offer.emplace(m, o, blob.data(), block->block);
  if (!o.copy_weights && !offer && !m.copies_routed)
    spdlog::info("{}: weights copied into the model: {}", m.what(), obstacle);
  MPK_TRY(const bool uploaded, with_weight_copies_deferred(m, blob.data(), [&]() -> Status {
    if (m.api.update_constants_from_blob(m.handle, blob.data()) != 0)
      return m.error(Kind::Runtime, "AOTInductorModelUpdateConstantsFromBlob failed (see above)");
    return {};
  }));
  if (uploaded) {
    m.mode = WeightsMode::BlobUploaded;
    return {};
  }
  const bool mapped = offer && offer->finish();
  if (offer && !mapped)
    spdlog::info("{}: weights copied into the model: it did not allocate one block of {:#x} bytes for them",
                 m.what(), block->block);
  m.mode = mapped ? WeightsMode::BlobMapped : WeightsMode::BlobCopied;
  return {};
}

// --- step 7: what the model says about itself ------------------------------------------------------

// A CUDA library built without embedded kernels loads its *.cubin files at run time from the folder Create's
// cubin_dir names: write the stored ones to a private temporary folder for the model's lifetime.
Status write_cubins(Model::Impl& m) {
  if (m.lib.cubins.empty()) return {};
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = fmt::format("{}/mpspack-cubins-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (::mkdtemp(dir.data()) == nullptr) return sys_error(m.lib.name, "creating a folder for its kernel files");
  m.cubin_dir = dir;
  for (uint32_t seg : m.lib.cubins) {
    const std::string& name = m.container->manifest().segments[seg].name;
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      return m.error(Kind::Corrupt, fmt::format("kernel file name '{}' is not a plain file name", name));
    ByteView bytes = m.container->segment(seg);
    const std::string path = dir + "/" + name;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return sys_error(m.lib.name, "writing a kernel file");
    Status s = write_all(fd, bytes.data(), bytes.size());
    ::close(fd);
    if (!s.ok()) return s.error().context(m.what());
  }
  return {};
}

Status describe(Model::Impl& m) {
  if (m.api.num_inputs(m.handle, &m.n_in) != 0 || m.api.num_outputs(m.handle, &m.n_out) != 0)
    return m.error(Kind::Runtime, "the model did not report its number of inputs/outputs");
  for (const ExampleInfo& e : m.container->manifest().examples) {
    if (e.library != m.index) continue;
    m.in_sig = e.inputs;
    m.out_sig = e.outputs;
    break;
  }
  if (m.in_sig && m.in_sig->size() != m.n_in)
    return m.error(Kind::Corrupt, fmt::format("the recorded example has {} inputs, the model takes {}",
                                              m.in_sig->size(), m.n_in));
  return {};
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Result<Model> Model::load(const format::Container& container, uint32_t library_index, const LoadOptions& options) {
  const auto& libs = container.manifest().libraries;
  if (library_index >= libs.size())
    return make_error(Kind::Invalid, "{}: no library {} (it holds {})", container.name(), library_index, libs.size());
  auto m = std::make_unique<Impl>();
  m->container = &container;
  m->index = library_index;
  m->lib = libs[library_index];

  auto t0 = Clock::now();
  MPK_CHECK(refuse(*m, options));
  m->t.checks_ms = ms_since(t0);

  t0 = Clock::now();
  MPK_CHECK(provide_sleef(*m));
  MPK_CHECK(library_to_memory(*m));
  route_allocations(*m, options);
  route_weight_copies(*m, options);
  auto api = resolve_api(m->dl);
  if (!api.ok()) return api.error().context(m->what());
  m->api = *api;
  m->t.library_ms = ms_since(t0);

  t0 = Clock::now();
  if (m->lib.flavour == Flavour::Embedded) MPK_CHECK(place_embedded(*m, options));
  if (m->lib.flavour == Flavour::MmapSelf) m->mode = WeightsMode::MmapSelf;
  m->t.weights_ms = ms_since(t0);

  t0 = Clock::now();
  MPK_CHECK(write_cubins(*m));
  const std::string device = m->backend->create_device();
  const size_t blocks_before = routed_blocks_live();
  // Embedded weights: Create's block for them (the size of the region it copies from) offered mapped.
  std::optional<WeightsOffer> offer;
  if (m->lib.flavour == Flavour::Embedded && m->mode == WeightsMode::EmbeddedCopied && m->routed &&
      may_map_weights(*m, options))
    offer.emplace(*m, options, reinterpret_cast<const void*>(m->base + m->lib.region->start_vaddr),
                  weights_segment(*m).size);
  const void* region = m->lib.flavour == Flavour::Embedded && m->lib.region
                           ? reinterpret_cast<const void*>(m->base + m->lib.region->start_vaddr) : nullptr;
  MPK_TRY(const bool uploaded, with_weight_copies_deferred(*m, region, [&]() -> Status {
    if (m->api.create(&m->handle, 1, device.c_str(), m->cubin_dir.empty() ? nullptr : m->cubin_dir.c_str()) != 0 ||
        !m->handle) {
      m->handle = nullptr;
      return m->error(Kind::Runtime, "AOTInductorModelContainerCreateWithDevice failed: the model reported an "
                                     "error (see above)");
    }
    return {};
  }));
  if (uploaded) m->mode = WeightsMode::EmbeddedUploaded;
  if (offer && offer->finish()) m->mode = WeightsMode::EmbeddedMapped;
  else if (offer) spdlog::info("{}: weights copied by Create: it did not allocate one block the size of its "
                               "constants region", m->what());
  m->t.create_ms = ms_since(t0);
  if (routed_blocks_live() > blocks_before)
    spdlog::debug("{}: Create took {} block(s) faulted in up front", m->what(), routed_blocks_live() - blocks_before);

  t0 = Clock::now();
  if (m->lib.flavour == Flavour::ExternalBlob) MPK_CHECK(load_external_blob(*m, options));
  m->t.constants_ms = ms_since(t0);

  MPK_CHECK(describe(*m));
  spdlog::debug("{}: loaded ({}); {} inputs, {} outputs", m->what(), to_string(m->mode), m->n_in, m->n_out);
  return Model(std::move(m));
}

const LibraryInfo& Model::library() const { return impl_->lib; }
size_t Model::num_inputs() const { return impl_->n_in; }
size_t Model::num_outputs() const { return impl_->n_out; }
const std::optional<std::vector<TensorInfo>>& Model::input_signature() const { return impl_->in_sig; }
const std::optional<std::vector<TensorInfo>>& Model::output_signature() const { return impl_->out_sig; }
WeightsMode Model::weights_mode() const { return impl_->mode; }
const PhaseTimings& Model::timings() const { return impl_->t; }
PhaseTimings& Model::mutable_timings() { return impl_->t; }

Status Model::check_inputs(std::span<const HostTensor> inputs) const {
  const Impl& m = *impl_;
  if (inputs.size() != m.n_in)
    return m.error(Kind::Invalid, fmt::format("takes {} input{}, {} given", m.n_in, m.n_in == 1 ? "" : "s",
                                              inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const HostTensor& t = inputs[i];
    auto need = tensor_bytes(t.dtype, t.shape);
    if (!need.ok()) return m.error(Kind::Invalid, fmt::format("input {}: {}", i, need.error().message));
    if (*need != t.data.size())
      return m.error(Kind::Invalid, fmt::format("input {}: {} bytes given, {} {} needs {}", i, t.data.size(),
                                                dtype_name(t.dtype), shape_string(t.shape), *need));
    if (!m.in_sig) continue;
    const TensorInfo& want = (*m.in_sig)[i];
    if (t.dtype != want.dtype)
      return m.error(Kind::Invalid, fmt::format("input {}: dtype {} given, the model takes {} (recorded example)", i,
                                                dtype_name(t.dtype), dtype_name(want.dtype)));
    if (t.shape != want.shape)
      return m.error(Kind::Invalid, fmt::format("input {}: shape {} given, the model takes {} (recorded example)", i,
                                                shape_string(t.shape), shape_string(want.shape)));
  }
  return {};
}

Result<std::vector<HostTensor>> Model::run(std::span<const HostTensor> inputs) {
  Impl& m = *impl_;
  MPK_CHECK(check_inputs(inputs));
  const auto t0 = Clock::now();
  std::vector<AtenTensorHandle> in;
  for (const HostTensor& t : inputs) {
    auto h = m.backend->to_device(t);
    if (!h.ok()) {
      for (AtenTensorHandle x : in) aoti_torch_delete_tensor_object(x);
      return h.error().context(m.what());
    }
    in.push_back(*h);
  }
  std::vector<AtenTensorHandle> out(m.n_out, nullptr);
  // The model owns the input handles from here on (aoti-abi.md section 2); the outputs are ours.
  const int32_t rc = m.api.run(m.handle, in.data(), in.size(), out.data(), out.size(), m.backend->stream(), nullptr);
  auto free_outputs = [&] {
    for (AtenTensorHandle& h : out)
      if (h) aoti_torch_delete_tensor_object(std::exchange(h, nullptr));
  };
  if (rc != 0) {
    free_outputs();
    return m.error(Kind::Runtime, "the model reported an error (see above)");
  }
  std::vector<HostTensor> results;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i]) {
      free_outputs();
      return m.error(Kind::Runtime, fmt::format("the model returned no tensor for output {}", i));
    }
    auto host = m.backend->to_host(out[i]);
    if (!host.ok()) {
      free_outputs();
      return m.error(Kind::Runtime, fmt::format("output {}: {}", i, host.error().message));
    }
    results.push_back(std::move(host).value());
  }
  free_outputs();
  if (m.t.first_run_ms < 0) m.t.first_run_ms = ms_since(t0);
  return results;
}

Status Model::prepare_inputs(std::span<const HostTensor> inputs) {
  Impl& m = *impl_;
  MPK_CHECK(check_inputs(inputs));
  for (AtenTensorHandle h : m.prepared) aoti_torch_delete_tensor_object(h);
  m.prepared.clear();
  m.captured = false;  // a graph holds the old inputs' addresses
  for (const HostTensor& t : inputs) {
    auto h = m.backend->to_device(t);
    if (!h.ok()) return h.error().context(m.what());
    m.prepared.push_back(*h);
  }
  return {};
}

namespace {

// One Run on the prepared inputs (new handles on them: the model takes ownership of its inputs), outputs
// dropped where they are. Queues the device's work; does not wait for it.
Status queue_prepared_run(Model::Impl& m) {
  std::vector<AtenTensorHandle> in(m.n_in, nullptr);
  for (size_t i = 0; i < m.n_in; ++i)
    if (aoti_torch_new_tensor_handle(m.prepared[i], &in[i]) != 0) {
      for (AtenTensorHandle h : in)
        if (h) aoti_torch_delete_tensor_object(h);
      return m.error(Kind::Runtime, "could not make an input handle");
    }
  std::vector<AtenTensorHandle> out(m.n_out, nullptr);
  const int32_t rc = m.api.run(m.handle, in.data(), in.size(), out.data(), out.size(), m.backend->stream(), nullptr);
  for (AtenTensorHandle h : out)
    if (h) aoti_torch_delete_tensor_object(h);
  if (rc != 0) return m.error(Kind::Runtime, "the model reported an error (see above)");
  return {};
}

}  // namespace

Status Model::run_prepared(bool graph) {
  Impl& m = *impl_;
  if (m.prepared.size() != m.n_in) return m.error(Kind::Invalid, "run_prepared() before prepare_inputs()");
  if (!graph) {
    Status queued = queue_prepared_run(m);
    Status synced = m.backend->synchronize();
    return queued.ok() ? synced : queued;
  }
  if (!m.captured) {
    if (auto s = m.backend->capture([&] { return queue_prepared_run(m); }); !s.ok()) return s.error().context(m.what());
    m.captured = true;
  }
  return m.backend->replay();
}

Result<DeviceFigures> Model::device_figures(uint64_t copy_bytes) const { return impl_->backend->figures(copy_bytes); }
std::string Model::device() const { return impl_->backend->create_device(); }

Result<std::vector<LiveConstant>> Model::constants() const {
  const Impl& m = *impl_;
  if (!m.api.extract_constants_map)
    return m.error(Kind::Unsupported, "does not export AOTInductorModelContainerExtractConstantsMap");
  // The C API takes a std::unordered_map<std::string, AtenTensorHandle>* (same libstdc++ ABI as the model).
  std::unordered_map<std::string, AtenTensorHandle> map;
  if (m.api.extract_constants_map(m.handle, &map, /*use_inactive=*/false) != 0)
    return m.error(Kind::Runtime, "AOTInductorModelContainerExtractConstantsMap failed (see above)");
  std::vector<LiveConstant> out;
  for (const auto& [name, h] : map) {
    LiveConstant c;
    c.name = name;
    int64_t ndim = 0, size = 0;
    int64_t *sizes = nullptr, *strides = nullptr;
    void* data = nullptr;
    if (aoti_torch_get_dtype(h, &c.dtype) != 0 || aoti_torch_get_dim(h, &ndim) != 0 ||
        aoti_torch_get_sizes(h, &sizes) != 0 || aoti_torch_get_strides(h, &strides) != 0 ||
        aoti_torch_get_storage_offset(h, &c.storage_offset) != 0 || aoti_torch_get_data_ptr(h, &data) != 0 ||
        aoti_torch_get_storage_size(h, &size) != 0)
      return m.error(Kind::Runtime, fmt::format("could not read constant '{}'", name));
    c.shape.assign(sizes, sizes + ndim);
    c.stride.assign(strides, strides + ndim);
    c.data = data;
    c.storage_bytes = uint64_t(size);
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Result<std::vector<ConstantInfo>> Model::constant_table() const {
  const Impl& m = *impl_;
  if (!m.api.num_constants || !m.api.constant_name || !m.api.constant_dtype || !m.api.constant_data_size ||
      !m.api.constant_from_folded)
    return m.error(Kind::Unsupported, "does not export the constant-info functions");
  MPK_TRY(auto live, constants());
  size_t n = 0;
  if (m.api.num_constants(m.handle, &n) != 0) return m.error(Kind::Runtime, "GetNumConstants failed");
  std::vector<ConstantInfo> table;
  uint64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    ConstantInfo c;
    const char* name = nullptr;
    const char* fqn = nullptr;
    size_t size = 0;
    if (m.api.constant_name(m.handle, i, &name) != 0 || !name || m.api.constant_dtype(m.handle, i, &c.dtype) != 0 ||
        m.api.constant_data_size(m.handle, i, &size) != 0 ||
        m.api.constant_from_folded(m.handle, i, &c.from_folded) != 0)
      return m.error(Kind::Runtime, fmt::format("the model did not describe constant {}", i));
    c.name = name;
    if (m.api.constant_fqn && m.api.constant_fqn(m.handle, i, &fqn) == 0 && fqn) c.fqn = fqn;
    if (m.api.constant_type) m.api.constant_type(m.handle, i, &c.type);
    c.size = size;
    c.offset = offset;
    if (!c.from_folded) offset += size;
    // ExtractConstantsMap keys by original FQN in AOTInductor; some libraries use the name.
    for (const LiveConstant& l : live)
      if (l.name == c.fqn || l.name == c.name) {
        c.shape = l.shape;
        c.stride = l.stride;
        c.storage_offset = l.storage_offset;
        break;
      }
    table.push_back(std::move(c));
  }
  return table;
}

}  // namespace mpspack::runtime
