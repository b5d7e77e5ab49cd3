// The model library's large allocations faulted in up front, and its large copies made, by several threads.
//
// AOTInductor's CPU Create mallocs one block for all embedded constants and memcpys them into it; faulting that
// fresh block in, 4 KiB per page fault during the copy, is most of Create (docs/PERFORMANCE.md, "Embedded
// weights"), and how mpspack brings the source bytes in cannot change it. So after dlopen the loader points the
// library's own GOT slots for malloc, free and realloc at the functions here (nothing else in the process is
// affected): a block of kLargeBlock bytes or more is mapped and faulted in by up to kLargeBlockThreads threads at
// once (MADV_POPULATE_WRITE) before the library sees it; every other call goes on to the C library's allocator. A
// block handed out here is freed only through these functions, as the library's free and realloc reach them.
// Create's memcpy into that block, single-threaded, is then most of what is left: the library's memcpy and
// __memcpy_chk slots are pointed here too, and a copy of kLargeBlock bytes or more is split over the same threads.
#pragma once

#include "mpspack/elf/elf_file.hpp"

#include <cstddef>
#include <cstdint>

namespace mpspack::runtime {

// Below glibc's largest mmap threshold (32 MiB) malloc may hand back heap memory that is already faulted in.
inline constexpr size_t kLargeBlock = size_t(32) << 20;
// 4 threads faulted 1 GiB in fastest on the 16-core device machine (more contend in the kernel's page
// allocator): bench/micro/copy_faults, docs/PERFORMANCE.md. Large copies use as many.
inline constexpr unsigned kLargeBlockThreads = 4;

// Points the GOT slots of `lib` (its bytes as loaded at `base`) for malloc, free, realloc, memcpy and
// __memcpy_chk at the routed_ functions below. Leaves the library as it is, and says why on the
// debug log, when it could hand a block to an allocator function not routed (it imports reallocarray or
// malloc_usable_size, or stores the address of free or realloc in its data) or a slot cannot be written. Returns
// whether the library's allocations are routed.
bool route_large_blocks(const elf::ElfFile& lib, uintptr_t base, const char* what);

// A block that already holds the bytes the library is about to copy into it: the weights segment mapped from the
// container (private, copy-on-write). While offered, the library's next malloc of exactly `size` bytes gets
// `block`, and its copies from [mirror, mirror + size) to the same offset in `block` are skipped, because the bytes
// are already there: AOTInductor's Create (embedded weights) and UpdateConstantsFromBlob (external blob) malloc one
// block for all constants and memcpy each one in at the offset it has in the source, so the model ends up with
// tensors over the container's pages and no copy made. A copy to any other place in the block is made as asked,
// from the untouched mirror, so a library that lays its block out differently still gets the right bytes. The
// block, once taken, is the library's: its free() unmaps it.
struct OfferedBlock {
  void* block = nullptr;
  const void* mirror = nullptr;
  size_t size = 0;
  void* mapping = nullptr;  // the mapping `block` lies in, unmapped by free()
  size_t mapped = 0;        // its length
};
void offer_block(const OfferedBlock& offer);
// Ends the offer. Returns whether the library took the block; if it did not, the caller still owns the mapping.
bool withdraw_offer();
size_t routed_bytes_not_copied();  // bytes of copies skipped because the block already held them
// Bytes the library copied out of an offer's mirror while it was offered, skipped copies not counted: a library
// that did not take the block but copied its weights elsewhere shows here.
size_t routed_bytes_copied_from_mirror();

// The functions the slots point at; public for the tests.
void* routed_malloc(size_t n);
void routed_free(void* p);
void* routed_realloc(void* p, size_t n);
void* routed_memcpy(void* dst, const void* src, size_t n);
void* routed_memcpy_chk(void* dst, const void* src, size_t n, size_t dst_size);  // for __memcpy_chk
size_t routed_blocks_live();  // large blocks handed out and not yet freed
size_t routed_copies_made();  // copies of kLargeBlock bytes or more made so far

}  // namespace mpspack::runtime
