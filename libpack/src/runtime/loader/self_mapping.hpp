// An mmap-self library's weights from the container's pages, not rebuilt into its file.
//
// An mmap-self library (aoti-abi.md section 1; torch picks it above 2 GB of weights) opens its own file at Create,
// maps the last weights_size + 8 bytes and checks the magic in the last 8. Its file is the loader's memfd, so the
// memfd must read as torch wrote it, and writing gigabytes of weights into it is a copy. Instead the memfd holds the
// ELF image and the tail with a hole where the weights go, and the library's mmap (its GOT slot, import_slots.hpp)
// reaches routed_self_mmap: the mapping the library asks for (its own file, that offset, that length, private) is
// answered with the weights segment mapped from the container (copy-on-write; the last part page and the tail
// copied). Any other mapping of its file first fills the hole with the weights, as does a library whose mmap cannot
// be routed, so the library always reads the bytes torch wrote. On a GPU the library then copies each constant from
// that mapping to the device, which the backend's upload pipeline makes from the file instead (routes.cpp).
#pragma once

#include "mpspack/result.hpp"

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>

namespace mpspack::runtime::loader {

class SelfMappedWeights {
 public:
  // Writes the library's file into `memfd`: stored[0, hole) then the weights' place left as a hole of
  // weights.size() bytes, then stored[hole, end). `weights` must outlive this object.
  static Result<std::unique_ptr<SelfMappedWeights>> write(int memfd, std::span<const uint8_t> stored, uint64_t hole,
                                                          std::span<const uint8_t> weights);
  ~SelfMappedWeights();
  SelfMappedWeights(const SelfMappedWeights&) = delete;
  SelfMappedWeights& operator=(const SelfMappedWeights&) = delete;

  // Writes the weights into the hole (once): the memfd then holds the file as torch wrote it.
  Status fill_hole();
  // Maps the segment (at `file_offset` of `fd`, page-aligned) where the library will look for it and offers that
  // mapping to the library's next mmap of its own file's weights; routed_self_mmap hands it out.
  Status offer_mapping(int fd, uint64_t file_offset);
  // The offered mapping (the weights at offset 0), or null before offer_mapping.
  const uint8_t* mapping() const { return mapping_; }
  // Whether the library took the offered mapping (then it is the library's: its munmap may release it).
  bool taken() const;

 private:
  SelfMappedWeights() = default;
  friend void* routed_self_mmap(void*, size_t, int, int, int, off_t);
  void* hand_out(void* addr, size_t length, int prot, int flags, off_t offset);

  int memfd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t hole_ = 0;                 // the weights' offset in the library's file
  std::span<const uint8_t> weights_;  // the container's bytes for the hole
  std::span<const uint8_t> tail_;     // what follows the weights in the file (the magic)
  bool filled_ = false;
  uint8_t* mapping_ = nullptr;
  size_t mapped_ = 0;  // mapping_'s length, whole pages
  bool taken_ = false;
};

// The function the library's mmap (and mmap64) slots point at; public for the tests.
void* routed_self_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset);

}  // namespace mpspack::runtime::loader
