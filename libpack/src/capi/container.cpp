// The C API's containers (mpspack.h, "container" and "verify"): open, describe, verify.
#include "boundary.hpp"
#include "state.hpp"

#include "mpspack/dtype.hpp"
#include "mpspack/json_report.hpp"
#include "mpspack/runtime/report_json.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace mpspack::capi {

const char* ContainerState::dtype_name(int32_t code) const {
  if (const DtypeInfo* d = find_dtype(code)) return d->name;
  auto it = unnamed_dtypes.find(code);
  return it == unnamed_dtypes.end() ? "" : it->second.c_str();
}

Result<std::shared_ptr<ContainerState>> open_state(const std::string& path) {
  auto c = format::Container::open(path);
  if (!c.ok()) return c.error();
  auto s = std::shared_ptr<ContainerState>(new ContainerState{std::move(c).value(), path, {}, {}});
  auto c_strings = [](const std::vector<std::string>& v) {
    std::vector<const char*> out;
    for (const auto& x : v) out.push_back(x.c_str());
    return out;
  };
  const Manifest& m = s->container.manifest();
  for (const LibraryInfo& l : m.libraries)
    s->libraries.push_back({c_strings(l.needed), c_strings(l.dropped_needed), c_strings(l.imports)});
  auto note = [&](int32_t code) {
    if (!find_dtype(code)) s->unnamed_dtypes.emplace(code, mpspack::dtype_name(code));
  };
  for (const WeightsInfo& w : m.weights)
    for (const ConstantInfo& k : w.constants) note(k.dtype);
  for (const ExampleInfo& e : m.examples) {
    for (const TensorInfo& t : e.inputs) note(t.dtype);
    for (const TensorInfo& t : e.outputs) note(t.dtype);
  }
  return s;
}

int os_error_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  if (::access(path.c_str(), R_OK) != 0) return errno;
  return 0;
}

mpspack_status fail_open(const Error& e, const std::string& path) {
  const int os_error = os_error_of(path);
  if (os_error == 0) return fail(e);
  return fail_errno(os_error == ENOENT ? MPSPACK_ERR_NOT_FOUND : MPSPACK_ERR_IO, e.message, os_error);
}

namespace {

constexpr HandleKind kC = HandleKind::Container;

const Manifest& manifest(const mpspack_container* c) { return c->state->container.manifest(); }

mpspack_status out_of_range(const char* function, const char* argument, size_t index, size_t count) {
  return bad_argument(function, argument,
                      std::to_string(index) + " is out of range (the container has " + std::to_string(count) + ")");
}

void fill_tensor(const ContainerState& s, const TensorInfo& t, mpspack_tensor* out) {
  const ByteView seg = s.container.segment(t.segment);
  *out = mpspack_tensor{};
  out->dtype = t.dtype;
  out->ndim = int32_t(t.shape.size());
  out->shape = t.shape.data();
  out->data = const_cast<uint8_t*>(seg.data());  // read-only mapping: mpspack.h says so
  out->nbytes = seg.size();
  out->memory = MPSPACK_MEMORY_HOST;
}

// The constant's block in the mapping, or NULL when it lies outside the weights segment.
const void* constant_data(const format::Container& c, uint32_t segment, const ConstantInfo& k) {
  const ByteView seg = c.segment(segment);
  if (k.size == 0 || k.offset > seg.size() || k.size > seg.size() - k.offset) return nullptr;
  return seg.data() + k.offset;
}

}  // namespace
}  // namespace mpspack::capi

using namespace mpspack;
using namespace mpspack::capi;

extern "C" {

mpspack_status mpspack_container_open(const char* path, mpspack_container** container) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(container, fn, "container");
    *container = nullptr;
    MPK_C_NOT_NULL(path, fn, "path");
    auto s = open_state(path);
    if (!s.ok()) return fail_open(s.error(), path);
    auto* h = new mpspack_container{std::move(s).value()};
    register_handle(h, kC);
    *container = h;
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_close(mpspack_container* container) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    if (!unregister_handle(container, kC)) return bad_handle(fn, "container", kC);
    delete container;
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_header(const mpspack_container* container, mpspack_header_info* header) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(header, fn, "header");
    const format::Header& h = container->state->container.header();
    *header = mpspack_header_info{h.version_major, h.version_minor, h.header_size, h.flags,     h.metadata_offset,
                                  h.metadata_size, h.data_offset,   h.data_size,   h.file_size, h.checksum};
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_info(const mpspack_container* container, const char** path, const char** producer,
                                      const char** producer_version) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    if (path) *path = container->state->path.c_str();
    if (producer) *producer = manifest(container).producer.c_str();
    if (producer_version) *producer_version = manifest(container).producer_version.c_str();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_bytes(const mpspack_container* container, const void** data, uint64_t* size) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    const MappedFile& f = container->state->container.file();
    if (data) *data = f.data();
    if (size) *size = f.size();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_counts(const mpspack_container* container, mpspack_counts* counts) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(counts, fn, "counts");
    const Manifest& m = manifest(container);
    *counts =
        mpspack_counts{m.sources.size(), m.segments.size(), m.libraries.size(), m.weights.size(), m.examples.size()};
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_segment(const mpspack_container* container, size_t index, mpspack_segment_info* info) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(info, fn, "info");
    const auto& segs = manifest(container).segments;
    if (index >= segs.size()) return out_of_range(fn, "segment index", index, segs.size());
    const SegmentInfo& s = segs[index];
    *info = mpspack_segment_info{int32_t(s.kind), to_string(s.kind),
                                 s.name.c_str(),  s.offset,
                                 s.size,          s.alignment,
                                 s.xxh3,          container->state->container.segment(uint32_t(index)).data()};
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_source(const mpspack_container* container, size_t index, mpspack_source_info* info) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(info, fn, "info");
    const auto& srcs = manifest(container).sources;
    if (index >= srcs.size()) return out_of_range(fn, "source index", index, srcs.size());
    const SourceInfo& s = srcs[index];
    *info = mpspack_source_info{s.name.c_str(), s.size, s.sha256.c_str(), s.kind.c_str(), s.flavour.c_str(), s.mode};
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_library(const mpspack_container* container, size_t index, mpspack_library_info* info) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(info, fn, "info");
    const auto& libs = manifest(container).libraries;
    if (index >= libs.size()) return out_of_range(fn, "library index", index, libs.size());
    const LibraryInfo& l = libs[index];
    const ContainerState::CLists& cl = container->state->libraries[index];
    *info = mpspack_library_info{};
    info->name = l.name.c_str();
    info->device = l.device.c_str();
    info->abi = l.abi.c_str();
    info->machine = l.machine.c_str();
    info->flavour = int32_t(l.flavour);
    info->flavour_name = to_string(l.flavour);
    info->segment = l.segment;
    info->weights = l.weights;
    info->cubins = l.cubins.data();
    info->n_cubins = l.cubins.size();
    info->needed = cl.needed.data();
    info->n_needed = cl.needed.size();
    info->dropped_needed = cl.dropped_needed.data();
    info->n_dropped_needed = cl.dropped_needed.size();
    info->imports = cl.imports.data();
    info->n_imports = cl.imports.size();
    info->original_size = l.original_size;
    info->original_sha256 = l.original_sha256.c_str();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_find_library(const mpspack_container* container, const char* name_or_index,
                                              size_t* index) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(index, fn, "index");
    auto i = runtime::find_library(container->state->container, name_or_index ? name_or_index : "");
    if (!i.ok()) return fail(i.error());
    *index = *i;
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_weights(const mpspack_container* container, size_t index, mpspack_weights_info* info) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(info, fn, "info");
    const auto& ws = manifest(container).weights;
    if (index >= ws.size()) return out_of_range(fn, "weights index", index, ws.size());
    *info = mpspack_weights_info{ws[index].segment, ws[index].constants.size()};
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_constant(const mpspack_container* container, size_t weights_index,
                                          size_t constant_index, mpspack_constant_info* info) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(info, fn, "info");
    const auto& ws = manifest(container).weights;
    if (weights_index >= ws.size()) return out_of_range(fn, "weights index", weights_index, ws.size());
    const WeightsInfo& w = ws[weights_index];
    if (constant_index >= w.constants.size())
      return out_of_range(fn, "constant index", constant_index, w.constants.size());
    const ConstantInfo& k = w.constants[constant_index];
    *info = mpspack_constant_info{};
    info->name = k.name.c_str();
    info->fqn = k.fqn.c_str();
    info->dtype = k.dtype;
    info->dtype_name = container->state->dtype_name(k.dtype);
    info->ndim = k.shape.size();
    info->shape = k.shape.data();
    info->stride = k.stride.size() == k.shape.size() ? k.stride.data() : nullptr;
    info->storage_offset = k.storage_offset;
    info->offset = k.offset;
    info->nbytes = k.size;
    info->type = k.type;
    info->from_folded = k.from_folded;
    info->data = constant_data(container->state->container, w.segment, k);
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_example(const mpspack_container* container, size_t index, mpspack_example_info* info) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(info, fn, "info");
    const auto& es = manifest(container).examples;
    if (index >= es.size()) return out_of_range(fn, "example index", index, es.size());
    *info = mpspack_example_info{es[index].library, es[index].inputs.size(), es[index].outputs.size()};
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_example_tensor(const mpspack_container* container, size_t index, int32_t is_output,
                                                size_t tensor_index, mpspack_tensor* tensor) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(container, kC, fn, "container");
    MPK_C_NOT_NULL(tensor, fn, "tensor");
    const auto& es = manifest(container).examples;
    if (index >= es.size()) return out_of_range(fn, "example index", index, es.size());
    const auto& ts = is_output ? es[index].outputs : es[index].inputs;
    if (tensor_index >= ts.size()) return out_of_range(fn, "tensor index", tensor_index, ts.size());
    fill_tensor(*container->state, ts[tensor_index], tensor);
    tensor->name = is_output ? "output" : "input";
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_manifest_json(const mpspack_container* container, char** json) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(json, fn, "json");
    *json = nullptr;
    MPK_C_LIVE(container, kC, fn, "container");
    if (!(*json = owned_string(json_text(runtime::container_json(container->state->container)))))
      return fail(MPSPACK_ERR_OUT_OF_MEMORY, std::string(fn) + ": out of memory");
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_container_verify(const mpspack_container* container, char** report_json) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    if (report_json) *report_json = nullptr;
    MPK_C_LIVE(container, kC, fn, "container");
    const format::Container& c = container->state->container;
    const format::VerifyReport report = format::verify(c);
    if (report_json && !(*report_json = owned_string(json_text(verify_json(c, report)))))
      return fail(MPSPACK_ERR_OUT_OF_MEMORY, std::string(fn) + ": out of memory");
    if (report.ok()) return MPSPACK_OK;
    return fail(report.unreadable ? MPSPACK_ERR_IO : MPSPACK_ERR_CHECK_FAILED, report.problems.front());
  });
}

mpspack_status mpspack_verify(const char* path, char** report_json) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    if (report_json) *report_json = nullptr;
    MPK_C_NOT_NULL(path, fn, "path");
    auto s = open_state(path);
    if (s.ok()) {
      mpspack_container h{std::move(s).value()};
      register_handle(&h, kC);
      const mpspack_status st = mpspack_container_verify(&h, report_json);
      unregister_handle(&h, kC);
      return st;
    }
    // A container whose structure is damaged fails the check; one that cannot be read is an error (`verify`).
    if (report_json) *report_json = owned_string(json_text(verify_failure_json(path, s.error().message)));
    if (s.error().kind == Error::Kind::Corrupt) return fail(MPSPACK_ERR_CHECK_FAILED, s.error().message);
    return fail_open(s.error(), path);
  });
}

}  // extern "C"
