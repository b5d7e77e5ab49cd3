// MappedFile: an input file mapped read-only, registered with the SIGBUS handler (read_errors.cpp).
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

using io::io_error;
using io::special_file_type;

namespace {

Error not_a_regular_file(const std::string& name, mode_t mode) {
  if (S_ISDIR(mode)) return make_error(Error::Kind::Invalid, "{}: is a directory, not a file", name);
  return make_error(Error::Kind::Invalid, "{}: is {}, not a regular file", name, special_file_type(mode));
}

}  // namespace

Result<int> open_input_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return io_error(name, "cannot open");
  struct stat st {};
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
  struct stat st {};
  if (fstat(f.fd_, &st) != 0) return io_error(f.name_, "cannot stat");
  if (!S_ISREG(st.st_mode)) return not_a_regular_file(f.name_, st.st_mode);
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ == 0) return f;  // an empty map is not allowed; callers see size 0
  void* p = mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, f.fd_, 0);
  if (p == MAP_FAILED) return io_error(f.name_, "cannot map");
  f.data_ = static_cast<const uint8_t*>(p);
  io::register_mapping(f.data_, f.size_, f.name_);
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
    io::unregister_mapping(data_);
    munmap(const_cast<uint8_t*>(data_), size_);
  }
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  fd_ = -1;
}

}  // namespace mpspack
