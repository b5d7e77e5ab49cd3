// Which versioned symbols this system lacks for a library, found before dlopen (system_versions.hpp).
#include "system_versions.hpp"

#include "mpspack/file.hpp"

#include <gnu/libc-version.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

namespace mpspack::runtime::loader {
namespace {

constexpr std::string_view kGlibc = "GLIBC_";

// The part of a version name before its numbers: "GLIBCXX_" of "GLIBCXX_3.4.30", "CXXABI_" of "CXXABI_1.3.9".
std::string_view version_prefix(std::string_view name) {
  const size_t underscore = name.rfind('_');
  return underscore == std::string_view::npos ? std::string_view{} : name.substr(0, underscore + 1);
}

// A loaded object's DT_VERDEF names, read from its image where ld.so mapped it, as ElfFile::version_definitions
// reads them from its file: opening and mapping libstdc++'s 2 MiB file again to read them costs about 75 us, a tenth
// of a small model's load. Every read is checked to lie in the file-backed part of one of its PT_LOADs; nullopt where
// one does not, or the table does not read as one (the caller then reads the file).
std::optional<std::vector<std::string>> image_definitions(const dl_phdr_info& info) {
  const uintptr_t base = info.dlpi_addr;
  auto readable = [&](uintptr_t at, uintptr_t n) {
    for (ElfW(Half) i = 0; i < info.dlpi_phnum; ++i) {
      const ElfW(Phdr)& p = info.dlpi_phdr[i];
      if (p.p_type != PT_LOAD || !(p.p_flags & PF_R)) continue;
      const uintptr_t lo = base + p.p_vaddr, hi = lo + p.p_filesz;
      if (at >= lo && at <= hi && n <= hi - at) return true;
    }
    return false;
  };
  // ld.so rewrites some of the dynamic table's addresses to run-time ones in place (DT_STRTAB on x86-64), not
  // others (DT_VERDEF): a value is taken as run-time where it lies in the image, else as a link-time vaddr.
  auto address = [&](uintptr_t value, uintptr_t n) -> uintptr_t {
    if (readable(value, n)) return value;
    return readable(base + value, n) ? base + value : 0;
  };
  const ElfW(Dyn)* dyn = nullptr;
  size_t dyn_count = 0;
  for (ElfW(Half) i = 0; i < info.dlpi_phnum; ++i)
    if (info.dlpi_phdr[i].p_type == PT_DYNAMIC) {
      dyn = reinterpret_cast<const ElfW(Dyn)*>(base + info.dlpi_phdr[i].p_vaddr);
      dyn_count = info.dlpi_phdr[i].p_memsz / sizeof(ElfW(Dyn));
    }
  if (!dyn || !readable(reinterpret_cast<uintptr_t>(dyn), dyn_count * sizeof(ElfW(Dyn)))) return std::nullopt;
  uintptr_t strtab = 0, strsz = 0, verdef = 0, verdefnum = 0;
  for (size_t i = 0; i < dyn_count && dyn[i].d_tag != DT_NULL; ++i) {
    if (dyn[i].d_tag == DT_STRTAB) strtab = dyn[i].d_un.d_ptr;
    if (dyn[i].d_tag == DT_STRSZ) strsz = dyn[i].d_un.d_val;
    if (dyn[i].d_tag == DT_VERDEF) verdef = dyn[i].d_un.d_ptr;
    if (dyn[i].d_tag == DT_VERDEFNUM) verdefnum = dyn[i].d_un.d_val;
  }
  std::vector<std::string> out;
  if (!verdef || verdefnum == 0) return out;
  const char* strings = reinterpret_cast<const char*>(address(strtab, strsz));
  uintptr_t at = address(verdef, sizeof(ElfW(Verdef)));
  if (!strings || strsz == 0 || !at) return std::nullopt;
  for (uintptr_t i = 0; i < verdefnum; ++i) {
    if (!readable(at, sizeof(ElfW(Verdef)))) return std::nullopt;
    ElfW(Verdef) d;
    std::memcpy(&d, reinterpret_cast<const void*>(at), sizeof d);
    // The first Verdaux names the version; later ones name its parents, defined by entries of their own.
    if (d.vd_cnt > 0 && !(d.vd_flags & VER_FLG_BASE)) {
      if (!readable(at + d.vd_aux, sizeof(ElfW(Verdaux)))) return std::nullopt;
      ElfW(Verdaux) a;
      std::memcpy(&a, reinterpret_cast<const void*>(at + d.vd_aux), sizeof a);
      if (a.vda_name >= strsz) return std::nullopt;
      const size_t len = ::strnlen(strings + a.vda_name, strsz - a.vda_name);
      if (len == strsz - a.vda_name) return std::nullopt;  // no NUL inside the table
      out.emplace_back(strings + a.vda_name, len);
    }
    if (d.vd_next == 0) break;
    at += d.vd_next;
  }
  return out;
}

struct LoadedObject {
  std::string path;
  std::optional<std::vector<std::string>> defined;  // read from its image; nullopt: from its file
};

// The first loaded object of each file name in `files`: its path, and its version names read from its image.
std::map<std::string, LoadedObject> loaded_objects(const std::set<std::string>& files) {
  struct Query {
    const std::set<std::string>& files;
    std::map<std::string, LoadedObject> found;
  } q{files, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto& q = *static_cast<Query*>(data);
        if (!info->dlpi_name || !*info->dlpi_name) return 0;
        const char* slash = std::strrchr(info->dlpi_name, '/');
        const std::string file = slash ? slash + 1 : info->dlpi_name;
        if (q.files.contains(file) && !q.found.contains(file))
          q.found.emplace(file, LoadedObject{info->dlpi_name, image_definitions(*info)});
        return 0;
      },
      &q);
  return std::move(q.found);
}

}  // namespace

Result<SystemVersions> this_system(const std::vector<elf::VersionNeed>& needs) {
  SystemVersions s;
  s.glibc = gnu_get_libc_version();
  std::set<std::string> files;
  for (const elf::VersionNeed& n : needs) {
    // glibc's own libraries (libc.so.6, libm.so.6, ld-linux) are compared by glibc's version number.
    const bool all_glibc =
        std::all_of(n.versions.begin(), n.versions.end(), [](const std::string& v) { return v.starts_with(kGlibc); });
    if (!all_glibc) files.insert(n.file);
  }
  if (files.empty()) return s;
  for (auto& [file, object] : loaded_objects(files)) {
    if (!object.defined) {
      MPK_TRY(MappedFile mapped, MappedFile::open(object.path));
      MPK_TRY(elf::ElfFile elf, elf::ElfFile::parse(mapped.view()));
      MPK_TRY(object.defined, elf.version_definitions());
    }
    s.libraries.emplace(file, SystemVersions::Library{object.path, std::move(*object.defined)});
  }
  return s;
}

std::string missing_versions(const std::vector<elf::VersionNeed>& needs, const SystemVersions& system) {
  const std::vector<uint32_t> glibc = elf::version_numbers(std::string(kGlibc) + system.glibc, kGlibc);
  // The highest GLIBC_x.y above the system's, over every file.
  std::string glibc_missing;
  std::vector<uint32_t> glibc_missing_numbers;
  for (const elf::VersionNeed& n : needs)
    for (const std::string& v : n.versions) {
      std::vector<uint32_t> numbers = elf::version_numbers(v, kGlibc);
      if (numbers.empty() || glibc.empty() || !elf::version_less(glibc, numbers)) continue;
      if (!glibc_missing.empty() && !elf::version_less(glibc_missing_numbers, numbers)) continue;
      glibc_missing = v;
      glibc_missing_numbers = std::move(numbers);
    }
  if (!glibc_missing.empty())
    return fmt::format("needs {} (this system has glibc {}): run it on a newer system or rebuild it against glibc {}",
                       glibc_missing, system.glibc, system.glibc);

  for (const elf::VersionNeed& n : needs) {
    auto lib = system.libraries.find(n.file);
    if (lib == system.libraries.end()) continue;
    const auto& defined = lib->second.defined;
    std::string missing;
    for (const std::string& v : n.versions) {
      if (v.starts_with(kGlibc) || std::find(defined.begin(), defined.end(), v) != defined.end()) continue;
      const std::string_view prefix = version_prefix(v);
      std::vector<uint32_t> numbers = elf::version_numbers(v, prefix);
      if (missing.empty() || (!numbers.empty() && version_prefix(missing) == prefix &&
                              elf::version_less(elf::version_numbers(missing, prefix), numbers)))
        missing = v;
    }
    if (missing.empty()) continue;
    const std::string_view prefix = version_prefix(missing);
    std::string newest = elf::highest_version({elf::VersionNeed{n.file, defined}}, prefix);
    return fmt::format("needs {} of {} ({} here {}): run it on a newer system or rebuild it against this system's {}",
                       missing, n.file, lib->second.path,
                       newest.empty() ? fmt::format("defines no {} version", prefix) : "has up to " + newest, n.file);
  }
  return {};
}

}  // namespace mpspack::runtime::loader
