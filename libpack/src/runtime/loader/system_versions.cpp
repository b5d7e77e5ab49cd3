// Which versioned symbols this system lacks for a library, found before dlopen (system_versions.hpp).
#include "system_versions.hpp"

#include "mpspack/file.hpp"

#include <gnu/libc-version.h>
#include <link.h>

#include <algorithm>
#include <filesystem>

namespace mpspack::runtime::loader {
namespace {

constexpr std::string_view kGlibc = "GLIBC_";

// The part of a version name before its numbers: "GLIBCXX_" of "GLIBCXX_3.4.30", "CXXABI_" of "CXXABI_1.3.9".
std::string_view version_prefix(std::string_view name) {
  const size_t underscore = name.rfind('_');
  return underscore == std::string_view::npos ? std::string_view{} : name.substr(0, underscore + 1);
}

// The path of each loaded object, by file name.
std::map<std::string, std::string> loaded_objects() {
  std::map<std::string, std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && *info->dlpi_name) {
          const std::string path = info->dlpi_name;
          static_cast<std::map<std::string, std::string>*>(data)->emplace(
              std::filesystem::path(path).filename().string(), path);
        }
        return 0;
      },
      &out);
  return out;
}

}  // namespace

Result<SystemVersions> this_system(const std::vector<elf::VersionNeed>& needs) {
  SystemVersions s;
  s.glibc = gnu_get_libc_version();
  std::map<std::string, std::string> loaded;
  bool listed = false;
  for (const elf::VersionNeed& n : needs) {
    // glibc's own libraries (libc.so.6, libm.so.6, ld-linux) are compared by glibc's version number.
    const bool all_glibc =
        std::all_of(n.versions.begin(), n.versions.end(), [](const std::string& v) { return v.starts_with(kGlibc); });
    if (all_glibc || s.libraries.contains(n.file)) continue;
    if (!listed) loaded = loaded_objects(), listed = true;
    auto it = loaded.find(n.file);
    if (it == loaded.end()) continue;
    MPK_TRY(MappedFile file, MappedFile::open(it->second));
    MPK_TRY(elf::ElfFile elf, elf::ElfFile::parse(file.view()));
    MPK_TRY(std::vector<std::string> defined, elf.version_definitions());
    s.libraries.emplace(n.file, SystemVersions::Library{it->second, std::move(defined)});
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
