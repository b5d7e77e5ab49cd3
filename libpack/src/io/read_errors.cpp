// Read errors on mapped inputs and signals that end the process: the handlers (install_read_error_handler,
// install_signal_cleanup) and the tables of mappings and temp files they read.
#include "mpspack/file.hpp"
#include "read_errors.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace mpspack {
namespace {

// --- Read errors on mapped inputs. A page of a mapped file that cannot be read (a disk I/O error,
// or the file truncated by another process while it is read) is not an error code: the kernel
// sends SIGBUS to whoever touches it. The handler installed by install_read_error_handler() finds
// the mapping the faulting address is in, removes the temp files of unfinished AtomicWriters, says
// which file could not be read and exits. The tables are fixed arrays so the handler can read them
// without allocating or locking (async-signal-safe); a slot is filled before its `used` flag is set.
// (unpack holds one finished temp file per output until all are written: kTempSlots bounds those cleaned up
// on a signal.)
constexpr size_t kMapSlots = 256, kTempSlots = 256, kNameMax = 512, kPathMax = 4096;
struct MapSlot {
  std::atomic<bool> used{false};
  const uint8_t* begin = nullptr;
  uint64_t size = 0;
  char name[kNameMax] = {};
};
struct TempSlot {
  std::atomic<bool> used{false};
  char path[kPathMax] = {};
};
MapSlot g_maps[kMapSlots];
TempSlot g_temps[kTempSlots];
std::mutex g_slots_mutex;
char g_prefix[64] = "";
int g_exit_code = 2;

void copy_cstr(char* dst, size_t cap, const std::string& src) {
  size_t n = std::min(src.size(), cap - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

}  // namespace

namespace io {

Error io_error(const std::string& name, std::string_view what) {
  return make_error(Error::Kind::Io, "{}: {}: {}", name, what, std::strerror(errno));
}

void register_mapping(const uint8_t* begin, uint64_t size, const std::string& name) {
  std::lock_guard lock(g_slots_mutex);
  for (auto& s : g_maps)
    if (!s.used.load(std::memory_order_relaxed)) {
      s.begin = begin;
      s.size = size;
      copy_cstr(s.name, kNameMax, name);
      s.used.store(true, std::memory_order_release);
      return;
    }
  // More than kMapSlots live mappings: this one is not named if it fails (the default SIGBUS).
}

void unregister_mapping(const uint8_t* begin) {
  std::lock_guard lock(g_slots_mutex);
  for (auto& s : g_maps)
    if (s.used.load(std::memory_order_relaxed) && s.begin == begin) {
      s.used.store(false, std::memory_order_release);
      return;
    }
}

void register_temp(const std::string& path) {
  if (path.size() >= kPathMax) return;
  std::lock_guard lock(g_slots_mutex);
  for (auto& t : g_temps)
    if (!t.used.load(std::memory_order_relaxed)) {
      copy_cstr(t.path, kPathMax, path);
      t.used.store(true, std::memory_order_release);
      return;
    }
}

void unregister_temp(const std::string& path) {
  std::lock_guard lock(g_slots_mutex);
  for (auto& t : g_temps)
    if (t.used.load(std::memory_order_relaxed) && path == t.path) {
      t.used.store(false, std::memory_order_release);
      return;
    }
}

// What a file that is neither a regular file nor a folder is, for messages.
const char* special_file_type(mode_t mode) {
  return S_ISFIFO(mode)   ? "a FIFO"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISSOCK(mode) ? "a socket"
         : S_ISLNK(mode)  ? "a symbolic link"
                          : "of an unknown type";
}

}  // namespace io

namespace {

using io::unregister_temp;

void write_stderr(const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= size_t(w);
  }
}

// The name with control characters and every byte past ASCII escaped (\xNN): text::printable keeps
// well-formed UTF-8, but it allocates, which a signal handler must not.
void write_stderr_escaped(const char* s) {
  static const char hex[] = "0123456789abcdef";
  for (; *s; ++s) {
    auto c = static_cast<unsigned char>(*s);
    if (c < 0x20 || c >= 0x7f) {
      char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
      write_stderr(e, 4);
    } else {
      write_stderr(reinterpret_cast<const char*>(&c), 1);
    }
  }
}

void remove_registered_temps() {
  for (auto& t : g_temps)
    if (t.used.load(std::memory_order_acquire)) ::unlink(t.path);
}

// SIGINT, SIGTERM, SIGHUP: the temp files go, then the process dies of the signal as it would have.
void on_terminating_signal(int sig) {
  remove_registered_temps();
  ::signal(sig, SIG_DFL);
  ::raise(sig);  // blocked while this handler runs; delivered, with the default action, when it returns
}

void on_sigbus(int, siginfo_t* info, void*) {
  const auto* addr = static_cast<const uint8_t*>(info->si_addr);
  const MapSlot* hit = nullptr;
  for (const auto& s : g_maps)
    if (s.used.load(std::memory_order_acquire) && addr >= s.begin && uint64_t(addr - s.begin) < s.size) {
      hit = &s;
      break;
    }
  if (!hit) {
    // Not a mapped input: die of SIGBUS as without the handler (the faulting access repeats).
    ::signal(SIGBUS, SIG_DFL);
    return;
  }
  // Several threads may read the same bad file (build hashes its inputs while it writes them): the
  // first reports and exits the process, the others wait for that.
  static std::atomic_flag reporting = ATOMIC_FLAG_INIT;
  if (reporting.test_and_set())
    for (;;) ::pause();
  remove_registered_temps();
  write_stderr(g_prefix, std::strlen(g_prefix));
  write_stderr_escaped(hit->name);
  static const char msg[] =
      ": read error: a page of the file could not be read (an I/O error, or the file was truncated "
      "while it was being read)\n";
  write_stderr(msg, sizeof msg - 1);
  ::_exit(g_exit_code);
}

}  // namespace

void install_read_error_handler(std::string_view prefix, int exit_code) {
  size_t n = std::min(prefix.size(), sizeof g_prefix - 1);
  std::memcpy(g_prefix, prefix.data(), n);
  g_prefix[n] = '\0';
  g_exit_code = exit_code;
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, nullptr);
}

void install_signal_cleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup: stays ignored
    struct sigaction sa {};
    sa.sa_handler = on_terminating_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace mpspack
