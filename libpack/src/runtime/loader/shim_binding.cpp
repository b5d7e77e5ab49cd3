// The library's aoti_torch_* imports bound to this process's mpspack shim by the loader itself
// (LoadOptions::bind_shim_privately), not by the dynamic linker through the global scope. Two steps around dlopen:
//   before -> in the memfd copy, those undefined symbols made weak: dlopen then neither fails when no global
//             definition exists (the shim is in a shared library opened RTLD_LOCAL, as a Python host opens the C
//             API's) nor needs one; and the library's constructors (DT_INIT, DT_INIT_ARRAY) taken out of its
//             dynamic table, so that dlopen does not run them: AOTInductor's static initializers call
//             aoti_torch_dtype_float32() and the like through the very slots that hold nothing yet (a jump to
//             address 0 where the shim is not global) or another shim's function (libtorch's, or any library's in
//             the global scope);
//   after  -> every GOT slot naming one of them written with the shim's function (import_slots.hpp; the backend's
//             own routes of its weight copies come after, and win), whatever
//             dlopen bound it to: nothing, or another aoti_torch_* in the global scope (libtorch's, in a process
//             that imported torch); then the constructors run, in ld.so's order, with what ld.so hands them.
// A library that stores the address of one of them outside its GOT (a data relocation) is refused: that reference
// would stay unbound.
#include "model_impl.hpp"

#include "import_slots.hpp"
#include "mpspack/bytes.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <vector>

namespace mpspack::runtime::loader {
namespace {

using Kind = Error::Kind;

// The shim's functions, and the CUDA runtime's (cudaMalloc, ...), which the shim's CUDA part brings as a dependency
// of the binary holding it: found through that binary rather than the global scope too.
bool is_shim_name(std::string_view name) {
  return name.starts_with("aoti_torch_") || (name.size() > 4 && name.starts_with("cuda") && std::isupper(name[4]));
}

// The binary holding this code (the C API's shared library, or the executable), for dlsym of the shim's functions
// in it rather than in the global scope.
void* own_handle() {
  static void* handle = [] {
    static const int anchor = 0;
    Dl_info info{};
    struct link_map* map = nullptr;
    if (::dladdr1(&anchor, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) && map && map->l_name &&
        map->l_name[0] != '\0')
      return ::dlopen(map->l_name, RTLD_NOW | RTLD_NOLOAD);
    return ::dlopen(nullptr, RTLD_NOW);
  }();
  return handle;
}

// What ld.so hands every constructor, (argc, argv, envp), kept for the model libraries' constructors run by hand:
// ld.so calls each .init_array entry of every loaded object with them, this function's included.
int g_argc = 0;
char** g_argv = nullptr;
char** g_envp = nullptr;
void keep_constructor_arguments(int argc, char** argv, char** envp) {
  g_argc = argc;
  g_argv = argv;
  g_envp = envp;
}
[[gnu::used,
  gnu::section(".init_array")]] void (*keep_constructor_arguments_entry)(int, char**,
                                                                         char**) = keep_constructor_arguments;

bool is_constructor_tag(int64_t tag) { return tag == DT_INIT || tag == DT_INIT_ARRAY || tag == DT_INIT_ARRAYSZ; }

// Where a stored offset lies in the memfd: an mmap-self library's file has its weights back in the hole at
// removed_offset (library_memory.cpp).
uint64_t memfd_offset(const Model::Impl& m, uint64_t stored_offset) {
  const bool hole = m.lib.flavour == Flavour::MmapSelf && stored_offset >= m.lib.removed_offset;
  return hole ? stored_offset + m.lib.removed_size : stored_offset;
}

const elf::Section* dynsym_section(const elf::ElfFile& elf) {
  for (const elf::Section& s : elf.sections())
    if (s.type == SHT_DYNSYM) return &s;
  return nullptr;
}

}  // namespace

Status weaken_shim_imports(Model::Impl& m, ByteView stored) {
  MPK_TRY(elf::ElfFile elf, elf::ElfFile::parse(stored));
  MPK_TRY(auto symbols, elf.dynamic_symbols());
  const elf::Section* table = dynsym_section(elf);
  if (!table) return m.error(Kind::Unsupported, "it has no .dynsym section to bind its shim imports through");
  for (size_t i = 0; i < symbols.size(); ++i) {
    const elf::Symbol& s = symbols[i];
    if (s.defined() || s.binding != STB_GLOBAL || !is_shim_name(s.name)) continue;
    // dynamic_symbols() leaves out the null symbol 0: entry i is symbol i + 1.
    const uint64_t at = table->offset + (i + 1) * table->entsize + offsetof(Elf64_Sym, st_info);
    const uint8_t info = uint8_t(ELF64_ST_INFO(STB_WEAK, s.type));
    if (::pwrite(m.memfd, &info, 1, off_t(memfd_offset(m, at))) != 1)
      return sys_error(m.lib.name, "making its shim imports weak");
  }
  // The dynamic table rewritten in place without the constructor entries; the DT_NULLs after them fill its end.
  MPK_TRY(elf::DynamicTable dyn, elf.dynamic());
  std::vector<uint8_t> rewritten((dyn.entries.size() + 1) * elf::kDynSize, 0);
  size_t kept = 0;
  for (const elf::DynamicEntry& e : dyn.entries) {
    if (is_constructor_tag(e.tag)) continue;
    store_u64le(rewritten.data() + kept * elf::kDynSize + offsetof(Elf64_Dyn, d_tag), uint64_t(e.tag));
    store_u64le(rewritten.data() + kept * elf::kDynSize + offsetof(Elf64_Dyn, d_un), e.value);
    ++kept;
  }
  if (kept == dyn.entries.size()) return {};
  const off_t at = off_t(memfd_offset(m, dyn.file_offset));
  if (::pwrite(m.memfd, rewritten.data(), rewritten.size(), at) != ssize_t(rewritten.size()))
    return sys_error(m.lib.name, "taking its constructors out of its dynamic table");
  return {};
}

Status bind_shim_imports(Model::Impl& m, ByteView stored) {
  MPK_TRY(elf::ElfFile elf, elf::ElfFile::parse(stored));
  std::vector<ImportRoute> routes;
  void* self = own_handle();
  for (const std::string& name : m.lib.imports) {
    if (!is_shim_name(name)) continue;
    void* f = self ? ::dlsym(self, name.c_str()) : nullptr;
    if (!f) return m.error(Kind::Unsupported, fmt::format("this mpspack's shim does not provide {}", name));
    routes.push_back({name, f, true});
  }
  const std::string why = route_imports(elf, m.base, routes);
  if (!why.empty()) return m.error(Kind::Unsupported, "its shim imports cannot be bound to mpspack's shim: " + why);
  // The constructors weaken_shim_imports kept from dlopen, now that their calls reach the shim: DT_INIT, then the
  // DT_INIT_ARRAY entries in order (ld.so relocated them in memory).
  MPK_TRY(elf::DynamicTable dyn, elf.dynamic());
  using Constructor = void (*)(int, char**, char**);
  uint64_t init = 0, array = 0, array_size = 0;
  for (const elf::DynamicEntry& e : dyn.entries) {
    if (e.tag == DT_INIT) init = e.value;
    if (e.tag == DT_INIT_ARRAY) array = e.value;
    if (e.tag == DT_INIT_ARRAYSZ) array_size = e.value;
  }
  if (array_size && (!array || !elf.load_containing(array, array_size)))
    return m.error(Kind::Corrupt,
                   fmt::format("its DT_INIT_ARRAY ({:#x} + {:#x}) lies in no loaded segment", array, array_size));
  if (init) reinterpret_cast<Constructor>(m.base + init)(g_argc, g_argv, g_envp);
  for (uint64_t i = 0; i < array_size / sizeof(void*); ++i) {
    Constructor f = nullptr;
    std::memcpy(&f, reinterpret_cast<const void*>(m.base + array + i * sizeof(void*)), sizeof f);
    f(g_argc, g_argv, g_envp);
  }
  return {};
}

}  // namespace mpspack::runtime::loader
