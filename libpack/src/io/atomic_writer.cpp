// AtomicWriter: an output written to a temp file beside its target and renamed into place, the temp file
// registered with the signal handlers (read_errors.cpp) so that no signal leaves it behind.
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
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

namespace mpspack {

using io::io_error;
using io::special_file_type;
using io::register_temp;
using io::unregister_temp;

namespace {

constexpr std::string_view kTempInfix = ".mpk-tmp-";

// The two marks of a temp file that only AtomicWriter gives a file: mode 0000 (until commit) and an flock held by
// its live writer. A temp file of a dead writer has its pid gone, the mode, this user as owner, and no lock.
bool is_abandoned_temp(const std::filesystem::path& path, pid_t writer) {
  if (::kill(writer, 0) == 0 || errno != ESRCH) return false;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 07777) != 0)
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

// This process's umask, read without changing it (Linux 4.7 and later list it in /proc/self/status); where that
// cannot be read, by setting it and back (a moment in which another thread's new file would get the wrong mode).
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8) & 0777);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

// The mode a new file in `dir` gets from open(..., 0666): the umask, or the folder's default ACL, as the kernel
// applies them. Learned from an unnamed file (O_TMPFILE), which no one else can see and which vanishes with its
// descriptor; where the file system has no unnamed files, 0666 less the umask.
mode_t new_file_mode(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  if (fd >= 0) {
    struct stat st {};
    const bool known = ::fstat(fd, &st) == 0;
    ::close(fd);
    if (known) return st.st_mode & 07777;
  }
  return 0666 & ~current_umask();
}

// The target may be replaced when it does not exist, is a regular file, or is a symbolic link (the rename
// replaces the link itself). A device, a FIFO or a socket is refused: replacing /dev/null with a regular
// file, or a FIFO someone reads, is never what `-o` meant.
Status check_replaceable(const std::filesystem::path& target) {
  struct stat st {};
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
    return make_error(Error::Kind::Io, "{}: output folder {} does not exist", target.string(), dir.string());
  MPK_CHECK(check_replaceable(target));
  remove_stale_temps(dir, target.filename().string());
  for (int attempt = 0; w.fd_ < 0; ++attempt) {
    w.temp_ = dir / fmt::format("{}{}{}-{}", target.filename().string(), kTempInfix, getpid(), random_token());
    // Registered before it exists: a signal handled by any thread the moment after open() still finds it.
    register_temp(w.temp_.string());
    // Born with mode 0000, the first mark is_abandoned_temp() looks for: a writer killed at any moment after this
    // leaves a file the next writer recognises (one made 0666 and marked after would be a user's file until then).
    w.fd_ = ::open(w.temp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0);
    if (w.fd_ < 0) {
      const int open_errno = errno;
      unregister_temp(w.temp_.string());  // not ours: the handler must not remove it
      errno = open_errno;
      if (errno != EEXIST || attempt == 100) return io_error(target.string(), "cannot create a temporary file");
    }
  }
  w.pending_ = true;
  // The second mark. The lock on a file only this process can yet have opened never waits.
  if (::flock(w.fd_, LOCK_EX | LOCK_NB) != 0) return io_error(target.string(), "cannot mark the temporary file");
  // The mode commit() gives: what any new file here would get.
  w.final_mode_ = new_file_mode(dir);
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
  // 2 MiB: a whole aligned 2 MiB in one write is one large page-cache folio (format/writer.cpp says why).
  constexpr uint64_t kMaxRun = 32 * kBlock;
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

Status write_file_atomically(const std::filesystem::path& target, const std::function<Status(AtomicWriter&)>& fill,
                             Durability durability) {
  MPK_TRY(auto writer, AtomicWriter::create(target, durability));
  MPK_CHECK(fill(writer));
  return writer.commit();
}

}  // namespace mpspack
