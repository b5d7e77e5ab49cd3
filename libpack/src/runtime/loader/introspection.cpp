// What the loaded model says about itself: its inputs and outputs (describe, a load step), its live constants
// and its constant table (Model::constants, Model::constant_table).
#include "model_impl.hpp"

#include "runtime/shim/constant_memory.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <unordered_map>

namespace mpspack::runtime {

using Kind = Error::Kind;

namespace loader {

Status describe(Model::Impl& m) {
  if (m.api.num_inputs(m.handle, &m.n_in) != 0 || m.api.num_outputs(m.handle, &m.n_out) != 0)
    return m.error(Kind::Runtime, "the model did not report its number of inputs/outputs");
  for (const ExampleInfo& e : m.container->manifest().examples) {
    if (e.library != m.index) continue;
    m.in_sig = e.inputs;
    m.out_sig = e.outputs;
    break;
  }
  if (m.in_sig && m.in_sig->size() != m.n_in)
    return m.error(Kind::Corrupt,
                   fmt::format("the recorded example has {} inputs, the model takes {}", m.in_sig->size(), m.n_in));
  return {};
}

Result<std::vector<LiveConstant>> live_constants(const Model::Impl& m) {
  if (!m.api.extract_constants_map)
    return m.error(Kind::Unsupported, "does not export AOTInductorModelContainerExtractConstantsMap");
  // The C API takes a std::unordered_map<std::string, AtenTensorHandle>* (same libstdc++ ABI as the model).
  std::unordered_map<std::string, AtenTensorHandle> map;
  if (m.api.extract_constants_map(m.handle, &map, /*use_inactive=*/false) != 0)
    return m.error(Kind::Runtime, "AOTInductorModelContainerExtractConstantsMap failed (see above)");
  std::vector<LiveConstant> out;
  for (const auto& [name, h] : map) {
    LiveConstant c;
    c.name = name;
    int64_t ndim = 0, size = 0;
    int64_t *sizes = nullptr, *strides = nullptr;
    void* data = nullptr;
    if (aoti_torch_get_dtype(h, &c.dtype) != 0 || aoti_torch_get_dim(h, &ndim) != 0 ||
        aoti_torch_get_sizes(h, &sizes) != 0 || aoti_torch_get_strides(h, &strides) != 0 ||
        aoti_torch_get_storage_offset(h, &c.storage_offset) != 0 || aoti_torch_get_data_ptr(h, &data) != 0 ||
        aoti_torch_get_storage_size(h, &size) != 0)
      return m.error(Kind::Runtime, fmt::format("could not read constant '{}'", name));
    c.shape.assign(sizes, sizes + ndim);
    c.stride.assign(strides, strides + ndim);
    c.data = data;
    c.storage_bytes = uint64_t(size);
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

// AOTInductor's ConstantType: what a run may write is a buffer (2); parameters (1) and tensor constants (3) are
// read only. Folded constants (4) are left out: a run of the folding graph writes them.
constexpr int32_t kParameter = 1, kTensorConstant = 3;

void register_constant_memory(Model::Impl& m) {
  if (m.backend->device() != "cpu" || !m.api.extract_constants_map || !m.api.num_constants || !m.api.constant_name ||
      !m.api.constant_type)
    return;
  const auto live = live_constants(m);
  size_t n = 0;
  if (!live.ok() || m.api.num_constants(m.handle, &n) != 0) {
    spdlog::debug("{}: its constants are not described: no product keeps its weights packed", m.what());
    return;
  }
  std::unordered_map<std::string_view, const LiveConstant*> by_name;
  for (const LiveConstant& l : *live) by_name[l.name] = &l;
  std::vector<shim::ConstantRange> ranges;
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    const char* fqn = nullptr;
    int32_t type = 0;
    if (m.api.constant_name(m.handle, i, &name) != 0 || name == nullptr || m.api.constant_type(m.handle, i, &type) != 0)
      continue;
    if (type != kParameter && type != kTensorConstant) continue;
    if (m.api.constant_fqn && m.api.constant_fqn(m.handle, i, &fqn) != 0) fqn = nullptr;
    auto found = by_name.find(fqn ? fqn : name);
    if (found == by_name.end()) found = by_name.find(name);  // ExtractConstantsMap keys by FQN, some by name
    if (found == by_name.end()) continue;
    const LiveConstant& c = *found->second;
    const auto* storage = static_cast<const char*>(c.data) - c.storage_offset * int64_t(dtype_size(c.dtype));
    ranges.push_back({storage, size_t(c.storage_bytes)});
  }
  shim::add_constant_ranges(&m, std::move(ranges));
}

}  // namespace loader

Result<std::vector<LiveConstant>> Model::constants() const { return loader::live_constants(*impl_); }

Result<std::vector<ConstantInfo>> Model::constant_table() const {
  const Impl& m = *impl_;
  if (!m.api.num_constants || !m.api.constant_name || !m.api.constant_dtype || !m.api.constant_data_size ||
      !m.api.constant_from_folded)
    return m.error(Kind::Unsupported, "does not export the constant-info functions");
  MPK_TRY(auto live, constants());
  size_t n = 0;
  if (m.api.num_constants(m.handle, &n) != 0) return m.error(Kind::Runtime, "GetNumConstants failed");
  std::vector<ConstantInfo> table;
  uint64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    ConstantInfo c;
    const char* name = nullptr;
    const char* fqn = nullptr;
    size_t size = 0;
    if (m.api.constant_name(m.handle, i, &name) != 0 || !name || m.api.constant_dtype(m.handle, i, &c.dtype) != 0 ||
        m.api.constant_data_size(m.handle, i, &size) != 0 ||
        m.api.constant_from_folded(m.handle, i, &c.from_folded) != 0)
      return m.error(Kind::Runtime, fmt::format("the model did not describe constant {}", i));
    c.name = name;
    if (m.api.constant_fqn && m.api.constant_fqn(m.handle, i, &fqn) == 0 && fqn) c.fqn = fqn;
    if (m.api.constant_type) m.api.constant_type(m.handle, i, &c.type);
    c.size = size;
    c.offset = offset;
    if (!c.from_folded) offset += size;
    // ExtractConstantsMap keys by original FQN in AOTInductor; some libraries use the name.
    for (const LiveConstant& l : live)
      if (l.name == c.fqn || l.name == c.name) {
        c.shape = l.shape;
        c.stride = l.stride;
        c.storage_offset = l.storage_offset;
        break;
      }
    table.push_back(std::move(c));
  }
  return table;
}

}  // namespace mpspack::runtime
