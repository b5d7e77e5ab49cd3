// The stored library into memory: a memfd holding its file (for mmap-self with a hole for its weights), dlopen'ed
// from /proc/self/fd/N; libsleef before it when it imports Sleef_*; its kernel files written out for Create.
#include "model_impl.hpp"

#include "mpspack/fd_io.hpp"
#include "mpspack/shared_library.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace mpspack::runtime::loader {
namespace {

using Kind = Error::Kind;

Status write_file(int fd, const uint8_t* p, uint64_t n) {
  if (!write_all(fd, p, n)) return make_error(Kind::Io, "write to memfd: {}", std::strerror(errno));
  return {};
}

// mmap-self: the library maps its own file (dladdr -> open -> mmap at file_size - appended). The
// file it finds is the memfd, so the memfd must read as what torch wrote: ELF image, padding,
// weights, magic. The stored library is that file with the weights cut out at removed_offset; they are
// left as a hole here, filled or mapped from the container before Create (routes.cpp, self_mapping.hpp).
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
  auto written = SelfMappedWeights::write(m.memfd, stored.span(), lib.removed_offset, weights.span());
  if (!written.ok()) return written.error().context(m.what());
  m.self_weights = std::move(*written);
  return {};
}

// Whether a loaded object has `path` as its name. The loader names its libraries by their memfd's path and
// nothing else, so this is the match dlopen would make by name; asked of the loaded objects' list rather than of
// dlopen(RTLD_NOLOAD), which opens and reads the path as well (about 15 us of a small library's load).
bool loaded_as(const std::string& path) {
  struct Query {
    const char* path;
    bool found = false;
  } q{path.c_str()};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        q->found = info->dlpi_name && std::strcmp(info->dlpi_name, q->path) == 0;
        return q->found ? 1 : 0;
      },
      &q);
  return q.found;
}

}  // namespace

// The Sleef_* functions torch's vectorized CPU kernels import come from libsleef, opened here into the global
// scope the library binds to, rather than linked into mpspack, where every command paid ~1.3 ms to load it.
Status provide_sleef(Model::Impl& m) {
  const bool imports_sleef = std::any_of(m.lib.imports.begin(), m.lib.imports.end(),
                                         [](const std::string& s) { return s.starts_with("Sleef_"); });
  if (!imports_sleef) return {};
  auto sleef = open_shared_library(MPSPACK_SLEEF_SONAME, RTLD_GLOBAL);
  if (!sleef.ok()) return sleef.error().context(m.what());
  return {};
}

// A torch-built library leaves the C++ runtime and libm to libtorch: it names libtorch among its needed libraries,
// not libstdc++ or libm, and libtorch brings them into the process's global scope. Its needed libtorch entries are
// dropped from the stored library, so its std:: and math imports bind only if these are in the global scope, where
// mpspack's own executable puts them. A process that opened mpspack's library with RTLD_LOCAL (the Python package
// does) keeps them out of it: they are promoted there (RTLD_NOLOAD: both came with mpspack, nothing new is opened).
Status provide_cxx_runtime(Model::Impl& m) {
  for (const char* soname : {"libstdc++.so.6", "libm.so.6"}) {
    auto promoted = open_shared_library(soname, RTLD_GLOBAL | RTLD_NOLOAD);
    if (!promoted.ok()) return promoted.error().context(m.what());
  }
  return {};
}

Status library_to_memory(Model::Impl& m, bool private_shim) {
  ByteView stored = m.container->segment(m.lib.segment);
  m.memfd = ::memfd_create(m.lib.name.c_str(), MFD_CLOEXEC);
  if (m.memfd < 0) return sys_error(m.lib.name, "memfd_create");
  // The dynamic loader matches an already loaded library by its name: a library loaded earlier
  // from "/proc/self/fd/N" (kept mapped, RTLD_NODELETE below) would be handed back for a new memfd
  // that got the same number. Move the memfd to a number no loaded library is named after.
  std::string path = fmt::format("/proc/self/fd/{}", m.memfd);
  for (int tries = 0;; ++tries) {
    if (!loaded_as(path)) break;
    const int moved = tries < 4096 ? ::fcntl(m.memfd, F_DUPFD_CLOEXEC, m.memfd + 1) : -1;
    if (moved < 0) return sys_error(m.lib.name, "no file descriptor number free of an earlier model library");
    ::close(m.memfd);
    m.memfd = moved;
    path = fmt::format("/proc/self/fd/{}", m.memfd);
  }
  if (m.lib.flavour == Flavour::MmapSelf) {
    MPK_CHECK(write_mmap_self(m, stored));
  } else {
    auto s = write_file(m.memfd, stored.data(), stored.size());
    if (!s.ok()) return s.error().context(m.what());
  }
  if (private_shim) MPK_CHECK(weaken_shim_imports(m, stored));
  // RTLD_NODELETE: dlclose must not unmap a model library. Its OpenMP parallel regions leave
  // libgomp's pooled threads holding state from the library's code, and unmapping it made later
  // loads in the same process crash now and then (seen in test_loader's in-place blob case, ~1 run
  // in 3). A process that loads a model keeps its code until it exits.
  // RTLD_NOW: every import bound here, so that one this process lacks is an error of the load, before any of the
  // library's code runs. RTLD_LAZY takes 65 us off a 350 KB fixture's 200 us dlopen, but Create and the first run
  // then bind the imports they call, 40 to 50 us of it back, and a missing one would stop the process mid-run.
  m.dl = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!m.dl) {
    const char* why = ::dlerror();
    return m.error(Kind::Runtime, fmt::format("dlopen failed: {}", why ? why : "unknown reason"));
  }
  struct link_map* lm = nullptr;
  if (::dlinfo(m.dl, RTLD_DI_LINKMAP, &lm) != 0 || !lm) return m.error(Kind::Runtime, "dlinfo(RTLD_DI_LINKMAP) failed");
  m.base = lm->l_addr;
  if (private_shim) MPK_CHECK(bind_shim_imports(m, stored));
  return {};
}

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
    Status s = write_file(fd, bytes.data(), bytes.size());
    ::close(fd);
    if (!s.ok()) return s.error().context(m.what());
  }
  return {};
}

}  // namespace mpspack::runtime::loader
