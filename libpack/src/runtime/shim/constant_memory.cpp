// The registry of constant memory (constant_memory.hpp): a few hundred ranges a model, looked up at each product
// oneDNN runs, under a shared lock.
#include "constant_memory.hpp"

#include "onednn_plugin.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>

namespace mpspack::shim {
namespace {

struct Registry {
  std::shared_mutex mutex;
  std::map<const void*, std::vector<ConstantRange>> by_owner;
  std::vector<ConstantRange> sorted;  // every owner's ranges by address, for lookups
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: products may run while statics are torn down
  return *r;
}

void resort(Registry& r) {
  r.sorted.clear();
  for (const auto& [owner, ranges] : r.by_owner) r.sorted.insert(r.sorted.end(), ranges.begin(), ranges.end());
  std::sort(r.sorted.begin(), r.sorted.end(),
            [](const ConstantRange& a, const ConstantRange& b) { return std::less<const void*>()(a.data, b.data); });
}

}  // namespace

void add_constant_ranges(const void* owner, std::vector<ConstantRange> ranges) {
  std::erase_if(ranges, [](const ConstantRange& c) { return c.data == nullptr || c.bytes == 0; });
  Registry& r = registry();
  std::lock_guard writing(r.mutex);
  r.by_owner[owner] = std::move(ranges);
  resort(r);
}

void remove_constant_ranges(const void* owner) {
  Registry& r = registry();
  std::vector<ConstantRange> gone;
  {
    std::lock_guard writing(r.mutex);
    const auto found = r.by_owner.find(owner);
    if (found == r.by_owner.end()) return;
    gone = std::move(found->second);
    r.by_owner.erase(found);
    resort(r);
  }
  for (const ConstantRange& c : gone) onednn_forget_packed(c.data, c.bytes);
}

bool is_constant_memory(const void* p, std::size_t bytes) {
  Registry& r = registry();
  std::shared_lock reading(r.mutex);
  const auto address = reinterpret_cast<uintptr_t>(p);
  // The last range starting at or before p.
  auto after = std::upper_bound(r.sorted.begin(), r.sorted.end(), address, [](uintptr_t a, const ConstantRange& c) {
    return a < reinterpret_cast<uintptr_t>(c.data);
  });
  if (after == r.sorted.begin()) return false;
  const ConstantRange& c = *std::prev(after);
  const auto start = reinterpret_cast<uintptr_t>(c.data);
  return address - start <= c.bytes && bytes <= c.bytes - (address - start);
}

}  // namespace mpspack::shim
