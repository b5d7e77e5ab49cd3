// The C API's models (mpspack.h, "model" and "bench"): load with `run`'s loader and checks, describe, run on
// caller-owned inputs, and benchmark with `run --bench`'s report.
#include "boundary.hpp"
#include "state.hpp"

#include "mpspack/dtype.hpp"
#include "mpspack/runtime/bench.hpp"
#include "mpspack/runtime/report_json.hpp"
#include "runtime/tuning/tuning.hpp"
#include "runtime/pipeline/threads.hpp"

#include <cstdlib>
#include <cstring>

namespace mpspack::capi {
namespace {

constexpr HandleKind kM = HandleKind::Model;
constexpr HandleKind kO = HandleKind::Outputs;

mpspack_load_options default_load_options() {
  mpspack_load_options o{};
  o.struct_size = sizeof o;
  o.verify_weights = 1;
  o.tf32_convolutions = 1;
  return o;
}

// The load options as the runtime's VerifyOptions (the pipeline's words for them, so that bench gets the same).
runtime::VerifyOptions verify_options(const std::string& path, const mpspack_load_options& o) {
  runtime::VerifyOptions v;
  v.container = path;
  v.library = o.library ? o.library : "";
  v.device = o.device ? o.device : "";
  v.load.verify_weights = o.verify_weights != 0;
  v.load.copy_weights = o.copy_weights != 0;
  v.tf32_convolutions = o.tf32_convolutions != 0;
  // A host may have opened this library RTLD_LOCAL (Python does), and may hold torch's aoti_torch_* in its global
  // scope: the model binds to this library's shim through the loader, not through that scope.
  v.load.bind_shim_privately = true;
  return v;
}

// load: library, device, process-wide settings, Model::load; as the pipeline's load step does.
mpspack_status load(std::shared_ptr<ContainerState> state, const mpspack_load_options& o, mpspack_model** out) {
  auto h = std::make_unique<mpspack_model>();
  h->options = verify_options(state->path, o);
  h->threads = o.threads;
  const format::Container& c = state->container;
  auto index = runtime::find_library(c, h->options.library);
  if (!index.ok()) return fail(index.error().context(state->path));
  const LibraryInfo& lib = c.manifest().libraries[*index];
  auto device = runtime::device_index(h->options, lib);
  if (!device.ok()) return fail(device.error());
  h->options.load.device_index = *device;
  if (o.threads > 0)
    if (auto t = runtime::pipeline::use_cpu_threads(o.threads); !t.ok()) return fail(t.error().context(state->path));
  if (!h->options.tf32_convolutions) turn_off_tf32_convolutions();  // process-wide (mpspack.h)
  auto model = runtime::Model::load(c, *index, h->options.load);
  if (!model.ok()) return fail(model.error().context(state->path));
  // The model uses the container (its mapping, the weights' check): whoever holds the model holds the container.
  h->model = std::shared_ptr<runtime::Model>(new runtime::Model(std::move(model).value()),
                                             [state](runtime::Model* m) { delete m; });
  h->container = std::move(state);
  h->device = h->model->device();
  h->library = lib.name;
  h->weights_mode = runtime::to_string(h->model->weights_mode());
  for (size_t i = 0; i < h->model->num_inputs(); ++i) h->input_names.push_back("input" + std::to_string(i));
  for (size_t i = 0; i < h->model->num_outputs(); ++i) h->output_names.push_back("output" + std::to_string(i));
  register_handle(h.get(), kM);
  *out = h.release();
  return MPSPACK_OK;
}

// A signature entry: the recorded example's dtype and shape when there is one.
void signature(const std::optional<std::vector<TensorInfo>>& sig, size_t index, const std::string& name,
               mpspack_tensor* out) {
  *out = mpspack_tensor{};
  out->dtype = -1;
  out->ndim = -1;
  out->name = name.c_str();
  if (sig && index < sig->size()) {
    out->dtype = (*sig)[index].dtype;
    out->ndim = int32_t((*sig)[index].shape.size());
    out->shape = (*sig)[index].shape.data();
  }
}

// The caller's inputs as the runtime's views; refused: NULL shapes, negative ndim, memory kinds not known.
mpspack_status input_views(const char* function, const mpspack_tensor* inputs, size_t n,
                           std::vector<runtime::InputView>& views) {
  if (n > 0 && !inputs) return bad_argument(function, "inputs", "NULL");
  for (size_t i = 0; i < n; ++i) {
    const mpspack_tensor& t = inputs[i];
    const std::string what = "inputs[" + std::to_string(i) + "]";
    if (t.ndim < 0 || (t.ndim > 0 && !t.shape)) return bad_argument(function, what, "no shape (ndim < 0 or NULL)");
    if (t.memory != MPSPACK_MEMORY_HOST && t.memory != MPSPACK_MEMORY_DEVICE)
      return bad_argument(function, what, "memory " + std::to_string(t.memory) + " is not MPSPACK_MEMORY_*");
    if (!find_dtype(t.dtype)) return bad_argument(function, what, "dtype " + std::to_string(t.dtype) + " is not known");
    views.push_back({t.dtype, std::span<const int64_t>(t.shape, size_t(t.ndim)), t.data, t.nbytes,
                     t.memory == MPSPACK_MEMORY_DEVICE});
  }
  return MPSPACK_OK;
}

mpspack_status run(mpspack_model* model, const char* function, const mpspack_tensor* inputs, size_t n_inputs,
                   std::vector<HostTensor>& results) {
  std::vector<runtime::InputView> views;
  if (auto s = input_views(function, inputs, n_inputs, views); s != MPSPACK_OK) return s;
  auto r = model->model->run_views(views);
  if (!r.ok()) return fail(r.error().context(model->container->path));
  results = std::move(r).value();
  return MPSPACK_OK;
}

void describe(const HostTensor& t, const std::string& name, mpspack_tensor* out) {
  out->dtype = t.dtype;
  out->ndim = int32_t(t.shape.size());
  out->shape = t.shape.data();
  out->data = const_cast<uint8_t*>(t.data.data());
  out->nbytes = t.data.size();
  out->memory = MPSPACK_MEMORY_HOST;
  out->name = name.c_str();
}

void describe_device(const mpspack_outputs& outs, size_t i, mpspack_tensor* out) {
  const runtime::DeviceOutput& o = outs.device[i];
  out->dtype = o.dtype;
  out->ndim = int32_t(o.shape.size());
  out->shape = o.shape.data();
  out->data = o.data;
  out->nbytes = o.nbytes;
  out->memory = outs.device_is_host ? MPSPACK_MEMORY_HOST : MPSPACK_MEMORY_DEVICE;
  out->name = outs.names[i].c_str();
}

// Each result into the caller's buffer of exactly its size; nothing is written unless every one fits.
mpspack_status copy_out(mpspack_model* model, const char* function, std::vector<HostTensor>& results,
                        mpspack_tensor* outputs) {
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string what = "outputs[" + std::to_string(i) + "]";
    if (!outputs[i].data && results[i].nbytes() > 0) return bad_argument(function, what, "data is NULL");
    if (outputs[i].nbytes != results[i].nbytes())
      return bad_argument(function, what,
                          std::to_string(outputs[i].nbytes) + " bytes given, the output " +
                              dtype_name(results[i].dtype) + " " + shape_string(results[i].shape) + " has " +
                              std::to_string(results[i].nbytes()));
  }
  model->last_shapes.clear();
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].nbytes() > 0) std::memcpy(outputs[i].data, results[i].data.data(), results[i].nbytes());
    model->last_shapes.push_back(results[i].shape);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    outputs[i].dtype = results[i].dtype;
    outputs[i].ndim = int32_t(results[i].shape.size());
    outputs[i].shape = model->last_shapes[i].data();
    outputs[i].memory = MPSPACK_MEMORY_HOST;
    outputs[i].name = model->output_names[i].c_str();
  }
  return MPSPACK_OK;
}

mpspack_bench_options default_bench_options() {
  mpspack_bench_options o{};
  o.struct_size = sizeof o;
  o.warmup = 3;
  o.iterations = 20;
  o.repetitions = 1;
  return o;
}

std::vector<std::string> strings(const char* const* list, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.emplace_back(list[i] ? list[i] : "");
  return out;
}

// The bench options over the pipeline's, refusing what `run --bench` refuses (docs/CLI.md, "Option ranges").
mpspack_status bench_options(const char* function, const mpspack_bench_options& b, runtime::BenchOptions& o) {
  if (b.n_percentiles > 0 && !b.percentiles) return bad_argument(function, "percentiles", "NULL");
  if ((b.n_inputs > 0 && !b.inputs) || (b.n_expects > 0 && !b.expects))
    return bad_argument(function, b.n_inputs > 0 && !b.inputs ? "inputs" : "expects", "NULL");
  if (b.iterations < 1 || b.iterations > 1'000'000) return bad_argument(function, "iterations", "not in [1, 1000000]");
  if (b.warmup > 1'000'000) return bad_argument(function, "warmup", "not in [0, 1000000]");
  if (b.repetitions < 1 || b.repetitions > 1000) return bad_argument(function, "repetitions", "not in [1, 1000]");
  if (b.has_seed && b.n_inputs > 0) return bad_argument(function, "seed", "given with inputs (one or the other)");
  o.warmup = b.warmup;
  if (b.warmup_ms > 0) o.warmup_ms = b.warmup_ms;
  o.iterations = b.iterations;
  if (b.duration_s > 0) o.duration_s = b.duration_s;
  o.repetitions = b.repetitions;
  for (size_t i = 0; i < b.n_percentiles; ++i) {
    if (!(b.percentiles[i] > 0 && b.percentiles[i] < 100))
      return bad_argument(function, "percentiles[" + std::to_string(i) + "]", "not in (0, 100)");
    o.percentiles.push_back(b.percentiles[i]);
  }
  o.cold = b.cold != 0;
  o.include_transfers = b.include_transfers != 0;
  o.cuda_graph = b.cuda_graph != 0;
  if (o.cuda_graph && o.include_transfers) return bad_argument(function, "cuda_graph", "with include_transfers");
  o.model.inputs = strings(b.inputs, b.n_inputs);
  if (b.has_seed) o.model.seed = b.seed;
  o.model.expects = strings(b.expects, b.n_expects);
  return MPSPACK_OK;
}

mpspack_status bench(runtime::VerifyOptions model, uint32_t threads, const mpspack_bench_options* given,
                     char** report_json) {
  mpspack_bench_options b;
  if (auto s = read_options("mpspack_bench", given, default_bench_options(), b); s != MPSPACK_OK) return s;
  runtime::BenchOptions o;
  o.model = std::move(model);
  if (auto s = bench_options("mpspack_bench", b, o); s != MPSPACK_OK) return s;
  if (threads > 0) o.threads = threads;
  auto report = runtime::bench(o);
  if (!report.ok()) return fail_open(report.error(), o.model.container);
  if (!(*report_json = owned_string(json_text(runtime::bench_json(*report)))))
    return fail(MPSPACK_ERR_OUT_OF_MEMORY, "mpspack_bench: out of memory");
  if (auto v = runtime::verdict(*report); !v.ok()) return fail(MPSPACK_ERR_CHECK_FAILED, v.error().message);
  return MPSPACK_OK;
}

}  // namespace
}  // namespace mpspack::capi

using namespace mpspack;
using namespace mpspack::capi;

extern "C" {

mpspack_status mpspack_load_options_init(mpspack_load_options* options) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(options, fn, "options");
    *options = default_load_options();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_model_load(const mpspack_container* container, const mpspack_load_options* options,
                                  mpspack_model** model) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(model, fn, "model");
    *model = nullptr;
    MPK_C_LIVE(container, HandleKind::Container, fn, "container");
    mpspack_load_options o;
    if (auto s = read_options(fn, options, default_load_options(), o); s != MPSPACK_OK) return s;
    return load(container->state, o, model);
  });
}

mpspack_status mpspack_model_load_file(const char* path, const mpspack_load_options* options, mpspack_model** model) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(model, fn, "model");
    *model = nullptr;
    MPK_C_NOT_NULL(path, fn, "path");
    mpspack_load_options o;
    if (auto s = read_options(fn, options, default_load_options(), o); s != MPSPACK_OK) return s;
    auto state = open_state(path);
    if (!state.ok()) return fail_open(state.error(), path);
    return load(std::move(state).value(), o, model);
  });
}

mpspack_status mpspack_model_close(mpspack_model* model) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    if (!unregister_handle(model, kM)) return bad_handle(fn, "model", kM);
    delete model;
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_model_io_count(const mpspack_model* model, size_t* n_inputs, size_t* n_outputs) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(model, kM, fn, "model");
    if (n_inputs) *n_inputs = model->model->num_inputs();
    if (n_outputs) *n_outputs = model->model->num_outputs();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_model_input(const mpspack_model* model, size_t index, mpspack_tensor* info) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(model, kM, fn, "model");
    MPK_C_NOT_NULL(info, fn, "info");
    if (index >= model->input_names.size())
      return bad_argument(fn, "index",
                          std::to_string(index) + " is out of range (the model takes " +
                              std::to_string(model->input_names.size()) + " inputs)");
    signature(model->model->input_signature(), index, model->input_names[index], info);
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_model_output(const mpspack_model* model, size_t index, mpspack_tensor* info) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(model, kM, fn, "model");
    MPK_C_NOT_NULL(info, fn, "info");
    if (index >= model->output_names.size())
      return bad_argument(fn, "index",
                          std::to_string(index) + " is out of range (the model returns " +
                              std::to_string(model->output_names.size()) + " outputs)");
    signature(model->model->output_signature(), index, model->output_names[index], info);
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_model_info(const mpspack_model* model, const char** device, const char** library,
                                  const char** weights_mode) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(model, kM, fn, "model");
    if (device) *device = model->device.c_str();
    if (library) *library = model->library.c_str();
    if (weights_mode) *weights_mode = model->weights_mode.c_str();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_model_run(mpspack_model* model, const mpspack_tensor* inputs, size_t n_inputs,
                                 mpspack_outputs** outputs) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(outputs, fn, "outputs");
    *outputs = nullptr;
    MPK_C_LIVE(model, kM, fn, "model");
    auto out = std::make_unique<mpspack_outputs>();
    if (auto s = run(model, fn, inputs, n_inputs, out->tensors); s != MPSPACK_OK) return s;
    out->names = model->output_names;
    register_handle(out.get(), kO);
    *outputs = out.release();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_model_run_device(mpspack_model* model, const mpspack_tensor* inputs, size_t n_inputs,
                                        mpspack_outputs** outputs) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(outputs, fn, "outputs");
    *outputs = nullptr;
    MPK_C_LIVE(model, kM, fn, "model");
    std::vector<runtime::InputView> views;
    if (auto s = input_views(fn, inputs, n_inputs, views); s != MPSPACK_OK) return s;
    auto r = model->model->run_views_on_device(views);
    if (!r.ok()) return fail(r.error().context(model->container->path));
    auto out = std::make_unique<mpspack_outputs>();
    out->device = std::move(r).value();
    out->keep = model->model;
    out->names = model->output_names;
    out->device_is_host = model->device == "cpu";
    register_handle(out.get(), kO);
    *outputs = out.release();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_model_run_into(mpspack_model* model, const mpspack_tensor* inputs, size_t n_inputs,
                                      mpspack_tensor* outputs, size_t n_outputs) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(model, kM, fn, "model");
    if (n_outputs != model->output_names.size())
      return bad_argument(
          fn, "n_outputs",
          std::to_string(n_outputs) + " given, the model returns " + std::to_string(model->output_names.size()));
    if (n_outputs > 0 && !outputs) return bad_argument(fn, "outputs", "NULL");
    std::vector<HostTensor> results;
    if (auto s = run(model, fn, inputs, n_inputs, results); s != MPSPACK_OK) return s;
    return copy_out(model, fn, results, outputs);
  });
}

mpspack_status mpspack_outputs_count(const mpspack_outputs* outputs, size_t* count) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(outputs, kO, fn, "outputs");
    MPK_C_NOT_NULL(count, fn, "count");
    *count = outputs->keep ? outputs->device.size() : outputs->tensors.size();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_outputs_get(const mpspack_outputs* outputs, size_t index, mpspack_tensor* tensor) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_LIVE(outputs, kO, fn, "outputs");
    MPK_C_NOT_NULL(tensor, fn, "tensor");
    const size_t n = outputs->keep ? outputs->device.size() : outputs->tensors.size();
    if (index >= n)
      return bad_argument(fn, "index", std::to_string(index) + " is out of range (" + std::to_string(n) + " outputs)");
    *tensor = mpspack_tensor{};
    if (outputs->keep) describe_device(*outputs, index, tensor);
    else describe(outputs->tensors[index], outputs->names[index], tensor);
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_outputs_free(mpspack_outputs* outputs) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    if (!unregister_handle(outputs, kO)) return bad_handle(fn, "outputs", kO);
    delete outputs;
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_bench_options_init(mpspack_bench_options* options) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(options, fn, "options");
    *options = default_bench_options();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_bench(const char* path, const mpspack_load_options* load, const mpspack_bench_options* b,
                             char** report_json) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(report_json, fn, "report_json");
    *report_json = nullptr;
    MPK_C_NOT_NULL(path, fn, "path");
    mpspack_load_options o;
    if (auto s = read_options(fn, load, default_load_options(), o); s != MPSPACK_OK) return s;
    return bench(verify_options(path, o), o.threads, b, report_json);
  });
}

mpspack_status mpspack_model_bench(const mpspack_model* model, const mpspack_bench_options* b, char** report_json) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(report_json, fn, "report_json");
    *report_json = nullptr;
    MPK_C_LIVE(model, kM, fn, "model");
    runtime::VerifyOptions v = model->options;
    v.device = model->device;
    return bench(std::move(v), model->threads, b, report_json);
  });
}

}  // extern "C"
