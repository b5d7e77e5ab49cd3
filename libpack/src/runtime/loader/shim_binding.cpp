// The library's aoti_torch_* imports bound to this process's mpspack shim by the loader itself
// (LoadOptions::bind_shim_privately), not by the dynamic linker through the global scope. Two steps around dlopen:
//   before -> in the memfd copy, those undefined symbols made weak: dlopen then neither fails when no global
//             definition exists (the shim is in a shared library opened RTLD_LOCAL, as a Python host opens the C
//             API's) nor needs one;
//   after  -> every GOT slot naming one of them written with the shim's function (import_slots.hpp; the backend's
//             own routes of its weight copies come after, and win), whatever
//             dlopen bound it to: nothing, or another aoti_torch_* in the global scope (libtorch's, in a process
//             that imported torch).
// A library that stores the address of one of them outside its GOT (a data relocation) is refused: that reference
// would stay unbound.
#include "model_impl.hpp"

#include "import_slots.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cctype>
#include <cerrno>
#include <cstring>

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
    if (::pwrite(m.memfd, &info, 1, off_t(at)) != 1) return sys_error(m.lib.name, "making its shim imports weak");
  }
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
  return {};
}

}  // namespace mpspack::runtime::loader
