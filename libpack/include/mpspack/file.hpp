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

// Opens an input for reading, read-only and close-on-exec. The open does not block (a FIFO with no writer, or a
// device, would hang it) and anything but a regular file is refused with one line naming the file and what it
// is; the descriptor returned blocks again, like any other. Every input mpspack reads is opened here.
Result<int> open_input_file(const std::filesystem::path& path);

class MappedFile {
 public:
  // Maps `path` read-only (opened with open_input_file).
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

// Writes a file atomically: bytes go to "<target>.mpk-tmp-<pid>-<random>" in the same folder; commit() gives it
// the mode a new file gets (0666 less the umask) and renames it over the target, after an fsync with
// Durability::disk. Destroying an uncommitted writer removes the temp file; so does SIGINT, SIGTERM or SIGHUP
// where the program called install_signal_cleanup(). The target, when it exists, must be a regular file (or a
// symbolic link, which is replaced, never followed). Until commit the temp file has mode 0000 and its writer
// holds an flock on it: a later writer of the same target removes only temp files that carry both marks of a
// writer that died (its pid gone, mode 0000, owned by this user, not locked), never a user's file that
// merely has such a name.
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
  // The temp file's descriptor (read-write), for a caller that checks the bytes written before commit (pull --key
  // maps them); -1 once finished.
  int fd() const { return fd_; }
  // finish() then publish(). On an error the temp file is removed (when the writer is destroyed).
  Status commit();
  // The two halves of commit(), for a set of files that appear together or not at all (unpack): finish() sets
  // the size and the mode, syncs with Durability::disk and closes the temp file (no descriptor stays open);
  // publish() renames it over the target. A finished writer destroyed unpublished removes its temp file.
  Status finish();
  Status publish();
  // The mode finish() gives the file instead of a new file's default (unpack restores recorded permission bits).
  void set_mode(unsigned mode) { final_mode_ = mode; }

 private:
  void discard();
  std::filesystem::path target_;
  std::filesystem::path temp_;
  Durability durability_ = Durability::page_cache;
  unsigned final_mode_ = 0644;  // what a new file in its folder gets (umask, default ACL), read at create()
  int fd_ = -1;
  bool pending_ = false;  // the temp file exists and is this writer's to remove
  uint64_t position_ = 0;
};

// Makes a read error on a mapped input (SIGBUS: a disk I/O error, or the file truncated by another
// process while it is read) a clean exit instead of a crash: the temp files of unfinished
// AtomicWriters are removed, "<prefix><file name>: read error: ..." goes to stderr, and the process
// exits with `exit_code`. A SIGBUS outside every MappedFile keeps its default action. For programs
// (mpspack calls it in main); a library should not install signal handlers behind its host's back.
void install_read_error_handler(std::string_view prefix, int exit_code);

// Makes SIGINT, SIGTERM and SIGHUP remove the temp files of unfinished AtomicWriters before the process dies
// of the signal as it would have (the default action, re-raised). For programs, like the handler above.
void install_signal_cleanup();

// Creates a writer for `target`, lets `fill` write, then commits; on any error nothing is left behind.
Status write_file_atomically(const std::filesystem::path& target, const std::function<Status(AtomicWriter&)>& fill,
                             Durability durability = Durability::page_cache);

}  // namespace mpspack
