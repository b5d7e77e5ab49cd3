// The loaded model (mpspack/runtime/model.hpp): Model::load as a list of named steps, each in its own file
// (model_impl.hpp lists them), then run, prepare_inputs and run_prepared.
#include "model_impl.hpp"

#include "large_blocks.hpp"
#include "weights_offer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>

namespace mpspack::runtime {

using Kind = Error::Kind;

const char* to_string(WeightsMode m) {
  switch (m) {
    case WeightsMode::None: return "none";
    case WeightsMode::BlobUploaded: return "external blob, uploaded to the GPU by mpspack (pinned pipeline)";
    case WeightsMode::EmbeddedUploaded: return "embedded, uploaded to the GPU by mpspack (pinned pipeline)";
    case WeightsMode::EmbeddedCopied: return "embedded (restored in memory, copied by Create)";
    case WeightsMode::EmbeddedMapped: return "embedded, mapped from the container (copy-on-write, no copy)";
    case WeightsMode::BlobMapped: return "external blob, mapped from the container (copy-on-write, no copy)";
    case WeightsMode::BlobInPlace: return "external blob, used in place from the container (no copy)";
    case WeightsMode::BlobCopied: return "external blob, copied into the model";
    case WeightsMode::MmapSelf: return "mmap-self (self-mapped file rebuilt in memory)";
    case WeightsMode::MmapSelfMapped: return "mmap-self, mapped from the container (copy-on-write, no copy)";
    case WeightsMode::MmapSelfCopied: return "mmap-self, mapped from the container, then copied by Create";
    case WeightsMode::MmapSelfUploaded: return "mmap-self, uploaded to the GPU by mpspack (pinned pipeline)";
  }
  return "?";
}

namespace loader {

Error sys_error(std::string_view lib, std::string_view what) {
  return make_error(Kind::Io, "library '{}': {}: {}", lib, what, std::strerror(errno));
}

namespace {

// Runs one step of the load, its time into `ms`.
template <class Step>
Status timed(double& ms, Step step) {
  const auto t0 = Clock::now();
  Status s = step();
  ms = ms_since(t0);
  return s;
}

// The stored library into memory, its large allocations and its copies of its weights routed, its C API resolved.
Status open_library(Model::Impl& m, const LoadOptions& o) {
  m.backend->expect_imports(m.lib.imports);
  if (!o.copy_weights && weights_reach_threshold(m)) {
    const SegmentInfo& seg = weights_segment(m);
    m.backend->expect_upload(seg.size, m.container->file().fd(), seg.offset);
  }
  MPK_CHECK(provide_sleef(m));
  MPK_CHECK(provide_cxx_runtime(m));
  MPK_CHECK(library_to_memory(m, o.bind_shim_privately));
  route_allocations(m);
  MPK_CHECK(route_self_mapping(m));
  route_weight_copies(m, o);
  route_openmp_teams(m);
  auto api = resolve_api(m.dl);
  if (!api.ok()) return api.error().context(m.what());
  m.api = *api;
  return {};
}

// Embedded weights go back into the library's constants region; an mmap-self library found them in its file.
Status weights_before_create(Model::Impl& m, const LoadOptions& o) {
  if (m.lib.flavour == Flavour::Embedded) MPK_CHECK(place_embedded(m));
  if (m.lib.flavour == Flavour::MmapSelf) m.mode = WeightsMode::MmapSelf;
  return {};
}

// An mmap-self library's weights mode after Create took its mapping: no copy when Create's block was the
// offered one, or when it copied nothing out of the mapping (it uses the mapping in place); otherwise copied,
// which is also what a library whose copies could not be watched is taken to have done.
WeightsMode mmap_self_mode(const std::optional<WeightsOffer>& offer, bool block_taken) {
  if (block_taken || (offer && offer->copied() == 0)) return WeightsMode::MmapSelfMapped;
  return WeightsMode::MmapSelfCopied;
}

// Create, with the library's kernel files written out for it, the block it mallocs for the weights it copies
// (embedded, mmap-self) offered mapped from the container, and its copies of them to the device deferred.
Status create(Model::Impl& m, const LoadOptions& options) {
  MPK_CHECK(write_cubins(m));
  const std::string device = m.backend->create_device();
  const size_t blocks_before = routed_blocks_live();
  // Where Create copies the weights from: an embedded library's constants region, or an mmap-self library's
  // mapping of its own file (AOTInductor's load_constants mallocs one block and copies every constant out of it).
  const void* region = m.lib.flavour == Flavour::Embedded && m.lib.region
                           ? reinterpret_cast<const void*>(m.base + m.lib.region->start_vaddr)
                       : m.self_mapped ? m.self_weights->mapping()
                                       : nullptr;
  std::optional<WeightsOffer> offer;
  if (region && m.routed && may_map_weights(m)) offer.emplace(m, region, weights_segment(m).size);
  MPK_TRY(const bool uploaded, with_weight_copies_deferred(m, region, [&]() -> Status {
            if (m.api.create(&m.handle, 1, device.c_str(), m.cubin_dir.empty() ? nullptr : m.cubin_dir.c_str()) != 0 ||
                !m.handle) {
              m.handle = nullptr;
              return m.error(Kind::Runtime, "AOTInductorModelContainerCreateWithDevice failed: the model reported an "
                                            "error (see above)");
            }
            return {};
          }));
  const bool block_taken = offer && offer->finish();  // the taken block's pages filled as options ask
  if (uploaded) m.mode = m.self_mapped ? WeightsMode::MmapSelfUploaded : WeightsMode::EmbeddedUploaded;
  else if (m.self_mapped && m.self_weights->taken()) m.mode = mmap_self_mode(offer, block_taken);
  else if (block_taken) m.mode = WeightsMode::EmbeddedMapped;
  if (m.mode == WeightsMode::MmapSelfMapped && !block_taken)  // the model reads the library's own mapping
    populate_weights(m, {m.self_weights->mapping(), weights_segment(m).size});
  if (offer && !block_taken && offer->copied() > 0)
    spdlog::info("{}: weights copied by Create: it did not allocate one block the size of its weights", m.what());
  if (routed_blocks_live() > blocks_before)
    spdlog::debug("{}: Create took {} block(s) faulted in up front", m.what(), routed_blocks_live() - blocks_before);
  return {};
}

// An external blob's weights go to the created model.
Status weights_after_create(Model::Impl& m, const LoadOptions& o) {
  if (m.lib.flavour == Flavour::ExternalBlob) MPK_CHECK(load_external_blob(m, o));
  return {};
}

}  // namespace
}  // namespace loader

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Result<Model> Model::load(const format::Container& container, uint32_t library_index, const LoadOptions& options) {
  using namespace loader;
  const auto& libs = container.manifest().libraries;
  if (library_index >= libs.size())
    return make_error(Kind::Invalid, "{}: no library {} (it holds {})", container.name(), library_index, libs.size());
  auto m = std::make_unique<Impl>();
  m->container = &container;
  m->index = library_index;
  m->lib = libs[library_index];
  // 1. The library's segments checked against their hashes, what cannot run here refused (device, machine,
  // libtorch, imports), before any of the library's code runs; the weights' hashes checked, small ones now, large
  // ones on every core beside the steps below and the first run, which awaits them.
  MPK_CHECK(timed(m->t.checks_ms, [&]() -> Status {
    MPK_CHECK(check_library_segments(*m));
    MPK_CHECK(refuse(*m, options));
    return start_weights_check(*m, options);
  }));
  // 2. The library into memory (memfd, dlopen), its allocations and weight copies routed, its C API resolved.
  MPK_CHECK(timed(m->t.library_ms, [&] { return open_library(*m, options); }));
  // 3. Weights before Create: embedded weights back where the linker put them.
  MPK_CHECK(timed(m->t.weights_ms, [&] { return weights_before_create(*m, options); }));
  // 4. Its kernel files written out, then Create (embedded weights offered mapped or copied to the device).
  MPK_CHECK(timed(m->t.create_ms, [&] { return create(*m, options); }));
  // 5. Weights after Create: an external blob in place, offered mapped, copied or uploaded.
  MPK_CHECK(timed(m->t.constants_ms, [&] { return weights_after_create(*m, options); }));
  // 6. What the model says about itself: its inputs, outputs and recorded signature; its read-only constants.
  MPK_CHECK(describe(*m));
  register_constant_memory(*m);
  spdlog::debug("{}: loaded ({}); {} inputs, {} outputs", m->what(), to_string(m->mode), m->n_in, m->n_out);
  return Model(std::move(m));
}

const LibraryInfo& Model::library() const { return impl_->lib; }
size_t Model::num_inputs() const { return impl_->n_in; }
size_t Model::num_outputs() const { return impl_->n_out; }
const std::optional<std::vector<TensorInfo>>& Model::input_signature() const { return impl_->in_sig; }
const std::optional<std::vector<TensorInfo>>& Model::output_signature() const { return impl_->out_sig; }
WeightsMode Model::weights_mode() const { return impl_->mode; }
const PhaseTimings& Model::timings() const { return impl_->t; }
PhaseTimings& Model::mutable_timings() { return impl_->t; }

namespace {

// What run() refuses in input i before anything reaches the model: a size that does not fit its dtype and shape,
// and (with a recorded example) another dtype or shape. Errors name the input.
Status check_input(const Model::Impl& m, size_t i, int32_t dtype, std::span<const int64_t> shape_span,
                   uint64_t nbytes) {
  const std::vector<int64_t> shape(shape_span.begin(), shape_span.end());
  auto need = tensor_bytes(dtype, shape);
  if (!need.ok()) return m.error(Kind::Invalid, fmt::format("input {}: {}", i, need.error().message));
  if (*need != nbytes)
    return m.error(Kind::Invalid, fmt::format("input {}: {} bytes given, {} {} needs {}", i, nbytes, dtype_name(dtype),
                                              shape_string(shape), *need));
  if (!m.in_sig) return {};
  const TensorInfo& want = (*m.in_sig)[i];
  if (dtype != want.dtype)
    return m.error(Kind::Invalid, fmt::format("input {}: dtype {} given, the model takes {} (recorded example)", i,
                                              dtype_name(dtype), dtype_name(want.dtype)));
  if (shape != want.shape)
    return m.error(Kind::Invalid, fmt::format("input {}: shape {} given, the model takes {} (recorded example)", i,
                                              shape_string(shape), shape_string(want.shape)));
  return {};
}

Status check_count(const Model::Impl& m, size_t given) {
  if (given == m.n_in) return {};
  return m.error(Kind::Invalid, fmt::format("takes {} input{}, {} given", m.n_in, m.n_in == 1 ? "" : "s", given));
}

}  // namespace

Status Model::check_inputs(std::span<const HostTensor> inputs) const {
  MPK_CHECK(check_count(*impl_, inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    MPK_CHECK(check_input(*impl_, i, inputs[i].dtype, inputs[i].shape, inputs[i].data.size()));
  return {};
}

Status Model::check_views(std::span<const InputView> inputs) const {
  MPK_CHECK(check_count(*impl_, inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputView& v = inputs[i];
    if (!v.data && v.nbytes > 0) return impl_->error(Kind::Invalid, fmt::format("input {}: no data (NULL)", i));
    MPK_CHECK(check_input(*impl_, i, v.dtype, v.shape, v.nbytes));
  }
  return {};
}

namespace {

// Runs the model on `in` (which it owns from here on, aoti-abi.md section 2): its output handles, ours to delete.
Result<std::vector<AtenTensorHandle>> run_raw(Model::Impl& m, std::vector<AtenTensorHandle>& in) {
  std::vector<AtenTensorHandle> out(m.n_out, nullptr);
  const int32_t rc = m.api.run(m.handle, in.data(), in.size(), out.data(), out.size(), m.backend->stream(), nullptr);
  if (rc == 0 && std::all_of(out.begin(), out.end(), [](AtenTensorHandle h) { return h != nullptr; })) return out;
  const auto missing = std::find(out.begin(), out.end(), nullptr) - out.begin();
  for (AtenTensorHandle h : out)
    if (h) aoti_torch_delete_tensor_object(h);
  if (rc != 0) return m.error(Kind::Runtime, "the model reported an error (see above)");
  return m.error(Kind::Runtime, fmt::format("the model returned no tensor for output {}", missing));
}

// Runs the model on `in` and reads its outputs back to the host.
Result<std::vector<HostTensor>> run_handles(Model::Impl& m, std::vector<AtenTensorHandle>& in,
                                            loader::Clock::time_point t0) {
  MPK_TRY(std::vector<AtenTensorHandle> out, run_raw(m, in));
  auto free_outputs = [&] {
    for (AtenTensorHandle& h : out)
      if (h) aoti_torch_delete_tensor_object(std::exchange(h, nullptr));
  };
  std::vector<HostTensor> results;
  for (size_t i = 0; i < out.size(); ++i) {
    auto host = m.backend->to_host(out[i]);
    if (!host.ok()) {
      free_outputs();
      return m.error(Kind::Runtime, fmt::format("output {}: {}", i, host.error().message));
    }
    results.push_back(std::move(host).value());
  }
  free_outputs();
  MPK_CHECK(loader::await_weights_check(m));
  if (m.t.first_run_ms < 0) m.t.first_run_ms = loader::ms_since(t0);
  return results;
}

// Output `h` as a dense DeviceOutput: itself when dense, else a dense copy made on the device (`h` deleted).
Result<DeviceOutput> dense_output(Model::Impl& m, AtenTensorHandle h) {
  int64_t dim = 0;
  int64_t *sizes = nullptr, *strides = nullptr;
  DeviceOutput o;
  if (aoti_torch_get_dim(h, &dim) || aoti_torch_get_sizes(h, &sizes) || aoti_torch_get_strides(h, &strides) ||
      aoti_torch_get_dtype(h, &o.dtype))
    return shim_error("reading an output's geometry");
  o.shape.assign(sizes, sizes + dim);
  if (std::vector<int64_t>(strides, strides + dim) != dense_strides(o.shape)) {
    MPK_TRY(AtenTensorHandle dense, m.backend->allocate(o.dtype, o.shape));
    const bool copied = aoti_torch_copy_(dense, h, 0) == AOTI_TORCH_SUCCESS;
    aoti_torch_delete_tensor_object(copied ? h : dense);
    if (!copied) return shim_error("aoti_torch_copy_ of a strided output");
    h = dense;
  }
  o.tensor = h;
  MPK_TRY(o.nbytes, tensor_bytes(o.dtype, o.shape));
  if (aoti_torch_get_data_ptr(h, &o.data)) return shim_error("aoti_torch_get_data_ptr");
  return o;
}

// A handle the model may own for input `v`: over the caller's memory where the device reads it in place (its own
// memory; host memory on the CPU, aligned for the dtype), else a device copy of it.
Result<AtenTensorHandle> input_handle(Model::Impl& m, const InputView& v) {
  const std::vector<int64_t> shape(v.shape.begin(), v.shape.end());
  const bool cpu = m.backend->shim_device_type() == aoti_torch_device_type_cpu();
  const uint32_t itemsize = std::max<uint32_t>(dtype_size(v.dtype), 1);
  if (v.on_device || (cpu && reinterpret_cast<uintptr_t>(v.data) % itemsize == 0))
    return m.backend->wrap(const_cast<void*>(v.data), v.dtype, shape, dense_strides(shape), 0);
  HostTensor t{v.dtype, shape, {}};
  const auto* bytes = static_cast<const uint8_t*>(v.data);
  t.data.assign(bytes, bytes + v.nbytes);
  return m.backend->to_device(t);
}

}  // namespace

Result<std::vector<HostTensor>> Model::run(std::span<const HostTensor> inputs) {
  Impl& m = *impl_;
  MPK_CHECK(check_inputs(inputs));
  const auto t0 = loader::Clock::now();
  std::vector<AtenTensorHandle> in;
  for (const HostTensor& t : inputs) {
    auto h = m.backend->to_device(t);
    if (!h.ok()) {
      for (AtenTensorHandle x : in) aoti_torch_delete_tensor_object(x);
      return h.error().context(m.what());
    }
    in.push_back(*h);
  }
  return run_handles(m, in, t0);
}

namespace {

// Handles the model may own for `inputs` (input_handle() each); none left over on failure.
Result<std::vector<AtenTensorHandle>> input_handles(Model::Impl& m, std::span<const InputView> inputs) {
  std::vector<AtenTensorHandle> in;
  for (const InputView& v : inputs) {
    auto h = input_handle(m, v);
    if (!h.ok()) {
      for (AtenTensorHandle x : in) aoti_torch_delete_tensor_object(x);
      return h.error().context(m.what());
    }
    in.push_back(*h);
  }
  return in;
}

}  // namespace

Result<std::vector<HostTensor>> Model::run_views(std::span<const InputView> inputs) {
  MPK_CHECK(check_views(inputs));
  const auto t0 = loader::Clock::now();
  MPK_TRY(std::vector<AtenTensorHandle> in, input_handles(*impl_, inputs));
  return run_handles(*impl_, in, t0);
}

Result<std::vector<DeviceOutput>> Model::run_views_on_device(std::span<const InputView> inputs) {
  Impl& m = *impl_;
  MPK_CHECK(check_views(inputs));
  const auto t0 = loader::Clock::now();
  MPK_TRY(std::vector<AtenTensorHandle> in, input_handles(m, inputs));
  MPK_TRY(std::vector<AtenTensorHandle> out, run_raw(m, in));
  std::vector<DeviceOutput> results;
  Status status;
  for (size_t i = 0; i < out.size(); ++i) {
    auto o = status.ok() ? dense_output(m, out[i]) : Result<DeviceOutput>(status.error());
    if (o.ok()) results.push_back(std::move(o).value());
    else aoti_torch_delete_tensor_object(out[i]);
    if (!o.ok() && status.ok()) status = m.error(Kind::Runtime, fmt::format("output {}: {}", i, o.error().message));
  }
  if (status.ok()) status = m.backend->synchronize();
  if (status.ok()) status = loader::await_weights_check(m);
  if (!status.ok()) {
    for (DeviceOutput& o : results) release_device_output(o);
    return status.error();
  }
  if (m.t.first_run_ms < 0) m.t.first_run_ms = loader::ms_since(t0);
  return results;
}

void release_device_output(DeviceOutput& output) {
  if (output.tensor) aoti_torch_delete_tensor_object(static_cast<AtenTensorHandle>(output.tensor));
  output.tensor = nullptr;
  output.data = nullptr;
}

Status Model::prepare_inputs(std::span<const HostTensor> inputs) {
  Impl& m = *impl_;
  MPK_CHECK(check_inputs(inputs));
  for (AtenTensorHandle h : m.prepared) aoti_torch_delete_tensor_object(h);
  m.prepared.clear();
  m.captured = false;  // a graph holds the old inputs' addresses
  for (const HostTensor& t : inputs) {
    auto h = m.backend->to_device(t);
    if (!h.ok()) return h.error().context(m.what());
    m.prepared.push_back(*h);
  }
  return {};
}

namespace {

// One Run on the prepared inputs (new handles on them: the model takes ownership of its inputs), outputs
// dropped where they are. Queues the device's work; does not wait for it.
Status queue_prepared_run(Model::Impl& m) {
  std::vector<AtenTensorHandle> in(m.n_in, nullptr);
  for (size_t i = 0; i < m.n_in; ++i)
    if (aoti_torch_new_tensor_handle(m.prepared[i], &in[i]) != 0) {
      for (AtenTensorHandle h : in)
        if (h) aoti_torch_delete_tensor_object(h);
      return m.error(Kind::Runtime, "could not make an input handle");
    }
  std::vector<AtenTensorHandle> out(m.n_out, nullptr);
  const int32_t rc = m.api.run(m.handle, in.data(), in.size(), out.data(), out.size(), m.backend->stream(), nullptr);
  for (AtenTensorHandle h : out)
    if (h) aoti_torch_delete_tensor_object(h);
  if (rc != 0) return m.error(Kind::Runtime, "the model reported an error (see above)");
  return {};
}

}  // namespace

Status Model::run_prepared(bool graph) {
  Impl& m = *impl_;
  if (m.prepared.size() != m.n_in) return m.error(Kind::Invalid, "run_prepared() before prepare_inputs()");
  MPK_CHECK(loader::await_weights_check(m));
  if (!graph) {
    Status queued = queue_prepared_run(m);
    Status synced = m.backend->synchronize();
    return queued.ok() ? synced : queued;
  }
  if (!m.captured) {
    if (auto s = m.backend->capture([&] { return queue_prepared_run(m); }); !s.ok()) return s.error().context(m.what());
    m.captured = true;
  }
  return m.backend->replay();
}

Result<DeviceFigures> Model::device_figures(uint64_t copy_bytes) const { return impl_->backend->figures(copy_bytes); }
std::string Model::device() const { return impl_->backend->create_device(); }

}  // namespace mpspack::runtime
