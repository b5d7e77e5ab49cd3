// Files in and out. Inputs are mapped read-only (a multi-GB blob is never copied into memory);
// outputs are written to a temp file beside the target and renamed into place, so a kill, a full disk
// or an error never leaves a partial file under the final name.
#pragma once

#include "mpspack/bytes.hpp"
#include "mpspack/result.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace mpspack {

class MappedFile {
 public:
  // Maps `path` read-only. Refuses directories and non-regular files with a clear error.
  static Result<MappedFile> open(const std::filesystem::path& path);
  // Maps an already open file descriptor (takes ownership), e.g. an entry extracted from a zip
  // into an anonymous temp file. `name` is what messages call it.
  static Result<MappedFile> from_fd(int fd, std::string name);

  MappedFile() = default;
  MappedFile(MappedFile&&) noexcept;
  MappedFile& operator=(MappedFile&&) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  ByteView view() const { return ByteView({data_, size_}, name_); }
  uint64_t size() const { return size_; }
  const uint8_t* data() const { return data_; }
  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }
  // The file name used in messages (the path as the user gave it).
  const std::string& name() const { return name_; }

 private:
  std::filesystem::path path_;
  std::string name_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  int fd_ = -1;
};

// When commit() returns, the bytes are either in the page cache (what cp, tar and objcopy do: the
// rename is atomic for every reader, but a power loss can still leave the file empty or torn) or on
// the disk (fsync before the rename and of the folder after it; as slow as the disk writes).
enum class Durability { page_cache, disk };

// Writes a file atomically: bytes go to "<target>.mpk-tmp-<pid>-XXXXXX" in the same folder (a
// later writer of the same target removes those left by processes that died); commit() renames
// it over the target, after an fsync with Durability::disk. Destroying an uncommitted writer
// removes the temp file.
class AtomicWriter {
 public:
  static Result<AtomicWriter> create(const std::filesystem::path& target,
                                     Durability durability = Durability::page_cache);

  AtomicWriter() = default;
  AtomicWriter(AtomicWriter&&) noexcept;
  AtomicWriter& operator=(AtomicWriter&&) noexcept;
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;
  ~AtomicWriter();

  Status write(const void* data, uint64_t size);
  // Writes `count` zero bytes as a hole (seek past them): padding and all-zero blocks cost no disk.
  Status write_zeros(uint64_t count);
  // Like write(), but blocks of zeros become holes, so sparse inputs stay sparse.
  Status write_sparse(const void* data, uint64_t size);
  // Overwrites bytes already written (used to fill in the header last).
  Status pwrite(uint64_t offset, const void* data, uint64_t size);
  uint64_t position() const { return position_; }
  Status commit();

 private:
  void discard();
  std::filesystem::path target_;
  std::filesystem::path temp_;
  Durability durability_ = Durability::page_cache;
  int fd_ = -1;
  uint64_t position_ = 0;
};

// Makes a read error on a mapped input (SIGBUS: a disk I/O error, or the file truncated by another
// process while it is read) a clean exit instead of a crash: the temp files of unfinished
// AtomicWriters are removed, "<prefix><file name>: read error: ..." goes to stderr, and the process
// exits with `exit_code`. A SIGBUS outside every MappedFile keeps its default action. For programs
// (mpspack calls it in main); a library should not install signal handlers behind its host's back.
void install_read_error_handler(std::string_view prefix, int exit_code);

// Creates a writer for `target`, lets `fill` write, then commits; on any error nothing is left behind.
Status write_file_atomically(const std::filesystem::path& target,
                             const std::function<Status(AtomicWriter&)>& fill,
                             Durability durability = Durability::page_cache);

}  // namespace mpspack
