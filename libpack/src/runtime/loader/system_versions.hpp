// The symbol versions a library needs (DT_VERNEED) against what this system provides: glibc by its version
// number, any other library (libstdc++.so.6, libgcc_s.so.1) by the versions the copy already loaded into this
// process defines (DT_VERDEF, read from its image in memory), which is the copy the dynamic loader would bind the
// model library to. Checked before
// dlopen, whose own message ("version `GLIBC_2.38' not found") does not say what to do.
#pragma once

#include "mpspack/elf/elf_file.hpp"
#include "mpspack/result.hpp"

#include <map>
#include <string>
#include <vector>

namespace mpspack::runtime::loader {

struct SystemVersions {
  std::string glibc;  // "2.36" (gnu_get_libc_version)
  struct Library {
    std::string path;                  // where the loaded copy came from
    std::vector<std::string> defined;  // its DT_VERDEF names
  };
  // Libraries the needs name that are loaded in this process, by the file name the needs use ("libstdc++.so.6").
  // One that is not loaded is not checked here: dlopen finds it or names it.
  std::map<std::string, Library> libraries;
};

// This system's glibc version and the loaded libraries among those `needs` names.
Result<SystemVersions> this_system(const std::vector<elf::VersionNeed>& needs);

// What of `needs` the system lacks, as the rest of a sentence about the library: "needs GLIBC_2.38 (this system has
// glibc 2.36): run it on a newer system or rebuild it against glibc 2.36"; "" when it lacks nothing. A file missing
// several versions is named by the highest.
std::string missing_versions(const std::vector<elf::VersionNeed>& needs, const SystemVersions& system);

}  // namespace mpspack::runtime::loader
