// Step 1 of the load: what cannot run here is refused before any of the library's code runs; also which of a
// container's libraries a name or index chooses, and what the shim lacks for one (inspect).
#include "model_impl.hpp"

#include "runtime/shim/blas.hpp"
#include "runtime/shim/provided.hpp"
#include "system_versions.hpp"

#include "mpspack/elf/elf_file.hpp"

#include <charconv>

namespace mpspack::runtime {

using Kind = Error::Kind;

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

namespace loader {
namespace {

// CUDA driver functions (cuModuleLoad, cuLaunchKernel: "cu" and a capital) come from libcuda.so.1, which
// the library names as NEEDED itself; everything else it imports mpspack must provide.
bool is_driver_import(std::string_view s) { return s.size() > 2 && s.starts_with("cu") && s[2] >= 'A' && s[2] <= 'Z'; }

// The symbol versions the stored library needs (glibc, libstdc++, ...) against this system's, read from its ELF
// tables: dlopen would fail on them too, but with "version `GLIBC_2.38' not found" and nothing about what to do.
Status refuse_versions(const Model::Impl& m) {
  const ByteView stored = m.container->segment(m.lib.segment);
  MPK_TRY(elf::ElfFile elf, elf::ElfFile::parse(ByteView(stored.span(), m.lib.name)));
  MPK_TRY(std::vector<elf::VersionNeed> needs, elf.version_needs());
  MPK_TRY(SystemVersions system, this_system(needs));
  const std::string missing = missing_versions(needs, system);
  if (missing.empty()) return {};
  return Error{Kind::Unsupported, fmt::format("{} {}", m.what(), missing)};
}

}  // namespace

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
  MPK_CHECK(refuse_versions(m));
  std::vector<std::string> missing;
  for (const auto& s : lib.imports)
    if (!is_driver_import(s) && !shim::shim_provides(s)) missing.push_back(s);
  if (!missing.empty())
    return m.error(Kind::Unsupported,
                   fmt::format("imports {} function{} this mpspack's shim does not provide: {}", missing.size(),
                               missing.size() == 1 ? "" : "s", fmt::join(missing, ", ")));
  return {};
}

}  // namespace loader

std::vector<std::string> missing_shim_imports(const LibraryInfo& lib) {
  std::vector<std::string> missing;
  for (const auto& s : lib.imports) {
    bool shim_kind = s.starts_with("aoti_torch_") || s.starts_with("Sleef_");
    if (shim_kind && !shim::shim_provides(s)) missing.push_back(s);
  }
  return missing;
}

}  // namespace mpspack::runtime
