// The folder of the file that holds mpspack's code in this process: the executable (bin/mpspack) or the C API's
// shared library (lib/libmpspack_c.so.0), found from the address of a function of ours. The plugins sit at
// <that folder>/../lib/mpspack in the build and the install tree alike, so both find them the same way; a program
// that loaded the shared library (Python, say) lives elsewhere, so /proc/self/exe would name the wrong place.
#pragma once

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

namespace mpspack::shim {

// "<folder>/" of that file, or an error message starting with "(" (no path).
inline std::string code_folder() {
  Dl_info info{};
  struct link_map* map = nullptr;
  static const int anchor = 0;  // an object of this file: its address lies in the binary holding this code
  std::string path;
  if (::dladdr1(&anchor, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) && map && map->l_name &&
      map->l_name[0] == '/') {
    path = map->l_name;  // a shared library, by the path it was opened from
  } else {               // the executable itself: its link map has no name
    char exe[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) return std::string("(no path: cannot read /proc/self/exe: ") + std::strerror(errno) + ")";
    path.assign(exe, size_t(n));
  }
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real)) path = real;
  return path.substr(0, path.find_last_of('/') + 1);
}

}  // namespace mpspack::shim
