// GOT slots of a loaded library pointed at functions of ours (import_slots.hpp).
#include "import_slots.hpp"

#include <elf.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace mpspack::runtime {
namespace {

bool is_slot_relocation(uint16_t machine, uint32_t type) {
  if (machine == EM_X86_64) return type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT;
  if (machine == EM_AARCH64) return type == R_AARCH64_GLOB_DAT || type == R_AARCH64_JUMP_SLOT;
  return false;
}

// Writes a GOT slot. ld.so made the whole pages of PT_GNU_RELRO read-only after relocating; a slot there is
// written through a moment of PROT_WRITE.
bool write_slot(const elf::ElfFile& lib, uintptr_t base, uint64_t vaddr, void* value) {
  const uintptr_t at = base + vaddr, page = uintptr_t(::sysconf(_SC_PAGESIZE));
  for (const elf::ProgramHeader& ph : lib.program_headers()) {
    if (ph.type != PT_GNU_RELRO) continue;
    const uintptr_t lo = (base + ph.vaddr) / page * page, hi = (base + ph.vaddr + ph.memsz) / page * page;
    if (at < lo || at + sizeof(void*) > hi) continue;
    void* slot_page = reinterpret_cast<void*>(at / page * page);
    if (::mprotect(slot_page, page, PROT_READ | PROT_WRITE) != 0) return false;
    __atomic_store_n(reinterpret_cast<void**>(at), value, __ATOMIC_RELEASE);
    return ::mprotect(slot_page, page, PROT_READ) == 0;
  }
  __atomic_store_n(reinterpret_cast<void**>(at), value, __ATOMIC_RELEASE);
  return true;
}

}  // namespace

std::string route_imports(const elf::ElfFile& lib, uintptr_t base, std::span<const ImportRoute> routes,
                          std::span<const std::string_view> refused, std::string_view required) {
  auto relocations = lib.dynamic_relocations();
  if (!relocations.ok()) return relocations.error().message;
  auto symbols = lib.dynamic_symbols();
  if (!symbols.ok()) return symbols.error().message;
  std::vector<std::vector<uint64_t>> slots(routes.size());  // vaddrs of the GOT slots naming each route's import
  bool required_seen = required.empty();
  for (const elf::Relocation& r : *relocations) {
    if (r.symbol == 0 || r.symbol > symbols->size()) continue;
    const std::string_view name = (*symbols)[r.symbol - 1].name;
    if (std::ranges::find(refused, name) != refused.end())
      return fmt::format("it imports {}, which would get a value of ours it cannot handle", name);
    auto route = std::ranges::find(routes, name, &ImportRoute::name);
    if (route == routes.end()) continue;
    if (!is_slot_relocation(lib.machine_code(), r.type)) {
      if (!route->every_reference) continue;
      return fmt::format("it stores the address of {} in its data (relocation type {})", name, r.type);
    }
    const elf::ProgramHeader* seg = lib.load_containing(r.offset, sizeof(void*));
    if (!seg || !(seg->flags & PF_W))
      return fmt::format("the slot of {} at {:#x} is in no writable segment", name, r.offset);
    slots[size_t(route - routes.begin())].push_back(r.offset);
    required_seen = required_seen || name == required;
  }
  if (!required_seen) return fmt::format("it does not import {}", required);
  for (size_t i = 0; i < routes.size(); ++i)
    for (uint64_t slot : slots[i])
      if (!write_slot(lib, base, slot, routes[i].function))
        return fmt::format("the slot of {} could not be written: {}", routes[i].name, std::strerror(errno));
  return {};
}

}  // namespace mpspack::runtime
