#include "mpspack/file.hpp"

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

Error io_error(const std::string& name, std::string_view what) {
  return make_error(Error::Kind::Io, "{}: {}: {}", name, what, std::strerror(errno));
}

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
  struct sigaction sa{};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, nullptr);
}

void install_signal_cleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old{};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup: stays ignored
    struct sigaction sa{};
    sa.sa_handler = on_terminating_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

namespace {

// What a file that is neither a regular file nor a folder is, for messages.
const char* special_file_type(mode_t mode) {
  return S_ISFIFO(mode)   ? "a FIFO"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISSOCK(mode) ? "a socket"
         : S_ISLNK(mode)  ? "a symbolic link"
                          : "of an unknown type";
}

Error not_a_regular_file(const std::string& name, mode_t mode) {
  if (S_ISDIR(mode)) return make_error(Error::Kind::Invalid, "{}: is a directory, not a file", name);
  return make_error(Error::Kind::Invalid, "{}: is {}, not a regular file", name, special_file_type(mode));
}

}  // namespace

Result<int> open_input_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return io_error(name, "cannot open");
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    auto e = io_error(name, "cannot stat");
    ::close(fd);
    return e;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return not_a_regular_file(name, st.st_mode);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    auto e = io_error(name, "cannot set the file blocking");
    ::close(fd);
    return e;
  }
  return fd;
}

Result<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  MPK_TRY(int fd, open_input_file(path));
  auto f = from_fd(fd, path.string());
  if (f.ok()) f->path_ = path;
  return f;
}

Result<MappedFile> MappedFile::from_fd(int fd, std::string name) {
  MappedFile f;
  f.name_ = std::move(name);
  f.fd_ = fd;
  struct stat st{};
  if (fstat(f.fd_, &st) != 0) return io_error(f.name_, "cannot stat");
  if (!S_ISREG(st.st_mode)) return not_a_regular_file(f.name_, st.st_mode);
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ == 0) return f;  // an empty map is not allowed; callers see size 0
  void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, f.fd_, 0);
  if (p == MAP_FAILED) return io_error(f.name_, "cannot map");
  f.data_ = static_cast<const uint8_t*>(p);
  register_mapping(f.data_, f.size_, f.name_);
  return f;
}

MappedFile::MappedFile(MappedFile&& o) noexcept { *this = std::move(o); }

MappedFile& MappedFile::operator=(MappedFile&& o) noexcept {
  if (this != &o) {
    this->~MappedFile();
    path_ = std::move(o.path_);
    name_ = std::move(o.name_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_) {
    unregister_mapping(data_);
    munmap(const_cast<uint8_t*>(data_), size_);
  }
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  fd_ = -1;
}

namespace {

constexpr std::string_view kTempInfix = ".mpk-tmp-";

// The two marks of a temp file that only AtomicWriter gives a file: mode 0000 (until commit) and an flock held by
// its live writer. A temp file of a dead writer has its pid gone, the mode, this user as owner, and no lock.
bool is_abandoned_temp(const std::filesystem::path& path, pid_t writer) {
  if (::kill(writer, 0) == 0 || errno != ESRCH) return false;
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 07777) != 0)
    return false;
  // Mode 0000 opens only for root; then the lock is checked as well (a writer in another pid namespace).
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno == EACCES;
  const bool unlocked = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return unlocked;
}

// A writer killed before commit (kill -9, power loss) leaves its temp file behind; the next writer of the same
// target removes those is_abandoned_temp() proves were left by a writer that died.
void remove_stale_temps(const std::filesystem::path& dir, const std::string& target_name) {
  const std::string prefix = target_name + std::string(kTempInfix);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* end = nullptr;
    long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || end == nullptr || *end != '-') continue;
    if (is_abandoned_temp(entry.path(), static_cast<pid_t>(pid))) std::filesystem::remove(entry.path(), ec);
  }
}

// The target may be replaced when it does not exist, is a regular file, or is a symbolic link (the rename
// replaces the link itself). A device, a FIFO or a socket is refused: replacing /dev/null with a regular
// file, or a FIFO someone reads, is never what `-o` meant.
Status check_replaceable(const std::filesystem::path& target) {
  struct stat st{};
  if (::lstat(target.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return io_error(target.string(), "cannot stat the output");
  }
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return {};
  if (S_ISDIR(st.st_mode)) return make_error(Error::Kind::Invalid, "{}: is a directory", target.string());
  return make_error(Error::Kind::Invalid, "{}: is {}, not a regular file: refusing to replace it with the output",
                    target.string(), special_file_type(st.st_mode));
}

std::string random_token() {
  static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  uint8_t bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    for (auto& b : bytes) b = static_cast<uint8_t>(std::rand());
  std::string token;
  for (uint8_t b : bytes) token += chars[b % (sizeof chars - 1)];
  return token;
}

}  // namespace

Result<AtomicWriter> AtomicWriter::create(const std::filesystem::path& target, Durability durability) {
  AtomicWriter w;
  w.target_ = target;
  w.durability_ = durability;
  std::filesystem::path dir = target.parent_path().empty() ? "." : target.parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return make_error(Error::Kind::Io, "{}: output folder {} does not exist", target.string(),
                      dir.string());
  MPK_CHECK(check_replaceable(target));
  remove_stale_temps(dir, target.filename().string());
  for (int attempt = 0; w.fd_ < 0; ++attempt) {
    w.temp_ = dir / fmt::format("{}{}{}-{}", target.filename().string(), kTempInfix, getpid(), random_token());
    // Registered before it exists: a signal handled by any thread the moment after open() still finds it.
    register_temp(w.temp_.string());
    // 0666 as any new file: the kernel applies the umask (and a default ACL), which is the mode commit() gives.
    w.fd_ = ::open(w.temp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (w.fd_ < 0) {
      const int open_errno = errno;
      unregister_temp(w.temp_.string());  // not ours: the handler must not remove it
      errno = open_errno;
      if (errno != EEXIST || attempt == 100) return io_error(target.string(), "cannot create a temporary file");
    }
  }
  w.pending_ = true;
  struct stat st{};
  if (::fstat(w.fd_, &st) != 0) return io_error(target.string(), "cannot stat the temporary file");
  w.final_mode_ = st.st_mode & 07777;
  // The marks is_abandoned_temp() looks for. The lock on a file only this process can yet have opened never waits.
  if (::fchmod(w.fd_, 0) != 0 || ::flock(w.fd_, LOCK_EX | LOCK_NB) != 0)
    return io_error(target.string(), "cannot mark the temporary file");
  return w;
}

AtomicWriter::AtomicWriter(AtomicWriter&& o) noexcept { *this = std::move(o); }

AtomicWriter& AtomicWriter::operator=(AtomicWriter&& o) noexcept {
  if (this != &o) {
    discard();
    target_ = std::move(o.target_);
    temp_ = std::move(o.temp_);
    durability_ = o.durability_;
    final_mode_ = o.final_mode_;
    fd_ = std::exchange(o.fd_, -1);
    pending_ = std::exchange(o.pending_, false);
    position_ = o.position_;
  }
  return *this;
}

AtomicWriter::~AtomicWriter() { discard(); }

void AtomicWriter::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pending_) {
    ::unlink(temp_.c_str());
    unregister_temp(temp_.string());
    pending_ = false;
  }
}

Status AtomicWriter::write(const void* data, uint64_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    size_t chunk = std::min<uint64_t>(size, 1u << 30);
    ssize_t n = ::write(fd_, p, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(target_.string(), "write failed");
    }
    p += n;
    size -= static_cast<uint64_t>(n);
    position_ += static_cast<uint64_t>(n);
  }
  return {};
}

Status AtomicWriter::write_zeros(uint64_t count) {
  if (count == 0) return {};
  if (::lseek(fd_, static_cast<off_t>(position_ + count), SEEK_SET) < 0)
    return io_error(target_.string(), "seek failed");
  position_ += count;
  return {};
}

namespace {
bool all_zero(const uint8_t* p, uint64_t n) {
  // Compare 8 bytes at a time; memcpy keeps it free of alignment assumptions.
  uint64_t i = 0, acc = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc |= w;
    if (acc) return false;
  }
  for (; i < n; ++i) acc |= p[i];
  return acc == 0;
}
}  // namespace

Status AtomicWriter::write_sparse(const void* data, uint64_t size) {
  constexpr uint64_t kBlock = 1 << 16;
  // Runs of non-zero blocks go out in one write() each (64 KiB writes cost a system call per block), up to
  // 256 KiB: the kernel then copies bytes the zero check has just brought into the cache.
  constexpr uint64_t kMaxRun = 4 * kBlock;
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t pending = 0;  // offset of the first byte not yet written
  for (uint64_t off = 0; off < size; off += kBlock) {
    const uint64_t n = std::min(size - off, kBlock);
    const bool zero = all_zero(p + off, n);
    const uint64_t end = zero ? off : off + n;  // the non-zero bytes end before a zero block, else after it
    if (!zero && end - pending < kMaxRun) continue;
    MPK_CHECK(write(p + pending, end - pending));
    if (zero) MPK_CHECK(write_zeros(n));
    pending = off + n;
  }
  return write(p + pending, size - pending);
}

Status AtomicWriter::pwrite(uint64_t offset, const void* data, uint64_t size) {
  if (::pwrite(fd_, data, size, static_cast<off_t>(offset)) != static_cast<ssize_t>(size))
    return io_error(target_.string(), "write failed");
  return {};
}

Status AtomicWriter::finish() {
  // Trailing holes need the size set explicitly.
  if (::ftruncate(fd_, static_cast<off_t>(position_)) != 0)
    return io_error(target_.string(), "cannot set the file size");
  if (::fchmod(fd_, static_cast<mode_t>(final_mode_)) != 0)
    return io_error(target_.string(), "cannot set the file mode");
  if (durability_ == Durability::disk && fsync(fd_) != 0) return io_error(target_.string(), "fsync failed");
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return io_error(target_.string(), "close failed");
  return {};
}

Status AtomicWriter::publish() {
  if (::rename(temp_.c_str(), target_.c_str()) != 0)
    return io_error(target_.string(), "cannot rename the temporary file into place");
  unregister_temp(temp_.string());
  pending_ = false;
  if (durability_ != Durability::disk) return {};
  std::filesystem::path dir = target_.parent_path().empty() ? "." : target_.parent_path();
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    ::close(dfd);
  }
  return {};
}

Status AtomicWriter::commit() {
  MPK_CHECK(finish());
  return publish();
}

Status write_file_atomically(const std::filesystem::path& target,
                             const std::function<Status(AtomicWriter&)>& fill, Durability durability) {
  MPK_TRY(auto writer, AtomicWriter::create(target, durability));
  MPK_CHECK(fill(writer));
  return writer.commit();
}

}  // namespace mpspack
