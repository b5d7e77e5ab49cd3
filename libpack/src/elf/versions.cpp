// Symbol versioning: the versions a file needs of each library (DT_VERNEED, .gnu.version_r) and the versions a
// library defines (DT_VERDEF, .gnu.version_d), read through the PT_LOADs as ld.so reads them. The entries form
// chains of relative offsets; every entry of a well-formed table has bytes of its own, so the number of entries
// read from one file is capped at its size over the entry size, whatever the counts and offsets say.
#include "mpspack/elf/elf_file.hpp"

#include <algorithm>
#include <charconv>

namespace mpspack::elf {
namespace {

using Kind = Error::Kind;

constexpr uint64_t kVerneedSize = sizeof(Elf64_Verneed);  // 16
constexpr uint64_t kVernauxSize = sizeof(Elf64_Vernaux);  // 16
constexpr uint64_t kVerdefSize = sizeof(Elf64_Verdef);    // 20
constexpr uint64_t kVerdauxSize = sizeof(Elf64_Verdaux);  // 8

const DynamicEntry* find(const DynamicTable& dyn, int64_t tag) {
  for (const DynamicEntry& e : dyn.entries)
    if (e.tag == tag) return &e;
  return nullptr;
}

// The next entry of a chain: `at` + `next`, without overflow.
Status advance(uint64_t& at, uint32_t next, const std::string& what, std::string_view table, uint64_t i) {
  if (!checked_add(at, next, at))
    return make_error(Kind::Corrupt, "{}: {} entry {} next offset {:#x} overflows", what, table, i, next);
  return {};
}

// Counts the entries read from one file against the most it can hold.
struct Budget {
  uint64_t left;
  Status take(const std::string& what, std::string_view table) {
    if (left == 0)
      return make_error(Kind::Corrupt, "{}: {} has more entries than the file has room for (a loop in its chain?)",
                        what, table);
    --left;
    return {};
  }
};

}  // namespace

std::vector<uint32_t> version_numbers(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return {};
  std::string_view rest = name.substr(prefix.size());
  std::vector<uint32_t> out;
  while (true) {
    uint32_t n = 0;
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
    if (ec != std::errc() || p == rest.data()) return {};
    out.push_back(n);
    rest.remove_prefix(size_t(p - rest.data()));
    if (rest.empty()) return out;
    if (rest.front() != '.') return {};
    rest.remove_prefix(1);
  }
}

bool version_less(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

std::string highest_version(const std::vector<VersionNeed>& needs, std::string_view prefix) {
  std::string best;
  std::vector<uint32_t> best_numbers;
  for (const VersionNeed& n : needs)
    for (const std::string& v : n.versions) {
      std::vector<uint32_t> numbers = version_numbers(v, prefix);
      if (numbers.empty() || (!best.empty() && !version_less(best_numbers, numbers))) continue;
      best = v;
      best_numbers = std::move(numbers);
    }
  return best;
}

Result<std::vector<VersionNeed>> ElfFile::version_needs() const {
  MPK_TRY(DynamicTable dyn, dynamic());
  std::vector<VersionNeed> out;
  const DynamicEntry* verneed = find(dyn, DT_VERNEED);
  const DynamicEntry* count = find(dyn, DT_VERNEEDNUM);
  if (!verneed || !count || count->value == 0) return out;
  MPK_TRY(ByteView strings, dynamic_strings(dyn));
  MPK_TRY(uint64_t at, vaddr_to_offset(verneed->value, kVerneedSize, "DT_VERNEED"));
  Budget budget{bytes_.size() / kVernauxSize};
  uint64_t total = 0;  // bytes of names copied, against kMaxNameListBytes
  auto add_name = [&](std::string& to, uint32_t offset, std::string_view field) -> Status {
    MPK_TRY(std::string_view name, strings.cstring(offset, field, strings.size()));
    total += name.size();
    if (total > kMaxNameListBytes)
      return make_error(Kind::Corrupt, "{}: the DT_VERNEED names total more than {} bytes", what(), kMaxNameListBytes);
    to = name;
    return {};
  };
  for (uint64_t i = 0; i < count->value; ++i) {
    MPK_CHECK(budget.take(what(), "DT_VERNEED"));
    MPK_TRY(ByteView entry, bytes_.slice(at, kVerneedSize, "DT_VERNEED entry"));
    const uint8_t* p = entry.data();
    const uint16_t aux_count = load_u16le(p + offsetof(Elf64_Verneed, vn_cnt));
    const uint32_t file = load_u32le(p + offsetof(Elf64_Verneed, vn_file));
    const uint32_t aux = load_u32le(p + offsetof(Elf64_Verneed, vn_aux));
    const uint32_t next = load_u32le(p + offsetof(Elf64_Verneed, vn_next));
    VersionNeed need;
    MPK_CHECK(add_name(need.file, file, "DT_VERNEED file name"));
    uint64_t aux_at = at;
    MPK_CHECK(advance(aux_at, aux, what(), "DT_VERNEED", i));
    for (uint16_t k = 0; k < aux_count; ++k) {
      MPK_CHECK(budget.take(what(), "DT_VERNEED"));
      MPK_TRY(ByteView a, bytes_.slice(aux_at, kVernauxSize, "DT_VERNEED version entry"));
      const uint32_t name = load_u32le(a.data() + offsetof(Elf64_Vernaux, vna_name));
      const uint32_t aux_next = load_u32le(a.data() + offsetof(Elf64_Vernaux, vna_next));
      MPK_CHECK(add_name(need.versions.emplace_back(), name, "DT_VERNEED version name"));
      if (aux_next == 0) break;
      MPK_CHECK(advance(aux_at, aux_next, what(), "DT_VERNEED version", k));
    }
    out.push_back(std::move(need));
    if (next == 0) break;
    MPK_CHECK(advance(at, next, what(), "DT_VERNEED", i));
  }
  return out;
}

Result<std::vector<std::string>> ElfFile::version_definitions() const {
  MPK_TRY(DynamicTable dyn, dynamic());
  std::vector<std::string> out;
  const DynamicEntry* verdef = find(dyn, DT_VERDEF);
  const DynamicEntry* count = find(dyn, DT_VERDEFNUM);
  if (!verdef || !count || count->value == 0) return out;
  MPK_TRY(ByteView strings, dynamic_strings(dyn));
  MPK_TRY(uint64_t at, vaddr_to_offset(verdef->value, kVerdefSize, "DT_VERDEF"));
  Budget budget{bytes_.size() / kVerdauxSize};
  uint64_t total = 0;
  for (uint64_t i = 0; i < count->value; ++i) {
    MPK_CHECK(budget.take(what(), "DT_VERDEF"));
    MPK_TRY(ByteView entry, bytes_.slice(at, kVerdefSize, "DT_VERDEF entry"));
    const uint8_t* p = entry.data();
    const uint16_t flags = load_u16le(p + offsetof(Elf64_Verdef, vd_flags));
    const uint16_t aux_count = load_u16le(p + offsetof(Elf64_Verdef, vd_cnt));
    const uint32_t aux = load_u32le(p + offsetof(Elf64_Verdef, vd_aux));
    const uint32_t next = load_u32le(p + offsetof(Elf64_Verdef, vd_next));
    // The first Verdaux names the version; later ones name its parents, defined by entries of their own.
    if (aux_count > 0 && !(flags & VER_FLG_BASE)) {
      uint64_t aux_at = at;
      MPK_CHECK(advance(aux_at, aux, what(), "DT_VERDEF", i));
      MPK_TRY(uint32_t name_offset, bytes_.u32(aux_at, "DT_VERDEF vda_name"));
      MPK_TRY(std::string_view name, strings.cstring(name_offset, "DT_VERDEF version name", strings.size()));
      total += name.size();
      if (total > kMaxNameListBytes)
        return make_error(Kind::Corrupt, "{}: the DT_VERDEF names total more than {} bytes", what(), kMaxNameListBytes);
      out.emplace_back(name);
    }
    if (next == 0) break;
    MPK_CHECK(advance(at, next, what(), "DT_VERDEF", i));
  }
  return out;
}

}  // namespace mpspack::elf
