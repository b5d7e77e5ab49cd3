// The loaded model's state (Model::Impl) and the loader's steps over it, one file per step:
//   checks.cpp            what cannot run here is refused before any of the library's code runs
//   segment_checks.cpp    the library's segments checked against their hashes; its weights' check beside the load
//   library_memory.cpp    the stored library into a memfd, dlopen'ed; its kernel files for Create
//   routes.cpp            its large allocations and its copies of its weights routed (large_blocks.hpp), an
//                         mmap-self library's mapping of its weights answered from the container (self_mapping.hpp)
//   embedded_weights.cpp  embedded weights back where the linker put them, one function per mechanism
//   weights_offer.cpp     the weights segment offered to the library as its block, mapped (WeightsOffer)
//   external_weights.cpp  an external blob after Create: in place, offered, copied; GPU copies deferred
//   introspection.cpp     what the model says about itself (describe, constants, constant_table)
//   model.cpp             Model::load as the list of these steps, run, prepare_inputs / run_prepared
#pragma once

#include "mpspack/runtime/model.hpp"

#include "aoti_api.hpp"
#include "runtime/backend/backend.hpp"
#include "runtime/shim/constant_memory.hpp"
#include "runtime/shim/cpu_block_cache.hpp"
#include "self_mapping.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace mpspack::runtime {

struct Model::Impl {
  const format::Container* container = nullptr;
  uint32_t index = 0;
  LibraryInfo lib;
  std::unique_ptr<Backend> backend;
  int memfd = -1;
  std::unique_ptr<loader::SelfMappedWeights> self_weights;  // mmap-self: its file's weights (self_mapping.hpp)
  bool self_mapped = false;    // ... offered mapped from the container to the library's routed mmap
  bool routed = false;         // the library's malloc and memcpy go through large_blocks.hpp
  bool copies_routed = false;  // its copies of its weights to the device go through the backend
  void* dl = nullptr;
  uintptr_t base = 0;  // where dl's vaddr 0 lies in memory (its link map's l_addr)
  AotiApi api;
  AOTInductorModelContainerHandle handle = nullptr;
  StagedWeights staged;                    // external weights on the device (GPU), freed after the model
  std::string cubin_dir;                   // the library's kernel files written out for Create, removed with the model
  std::vector<AtenTensorHandle> prepared;  // run_prepared()'s inputs
  bool captured = false;                   // run_prepared(graph = true) captured its graph
  // User-managed constant tensors (external blob in place): ours, deleted after the container.
  std::vector<AtenTensorHandle> weight_tensors;
  WeightsMode mode = WeightsMode::None;
  PhaseTimings t;
  std::thread populating;  // weights' page tables filled while the model runs (MPSPACK_POPULATE_WEIGHTS=background)
  struct WeightsCheck {
    Status status;
    double ms = 0;  // how long it ran
  };
  std::future<WeightsCheck> weights_check;  // the weights segment's hashes (LoadOptions::verify_weights), beside
                                            // the load
  Status weights_status;                    // its answer, once awaited: every later run's too
  size_t n_in = 0, n_out = 0;
  std::optional<std::vector<TensorInfo>> in_sig, out_sig;

  ~Impl() {
    if (weights_check.valid()) weights_check.wait();  // it reads the container
    if (populating.joinable()) populating.join();
    shim::remove_constant_ranges(this);  // before the memory of the constants is freed or unmapped
    for (AtenTensorHandle h : prepared) aoti_torch_delete_tensor_object(h);
    if (handle && api.destroy) api.destroy(handle);
    for (AtenTensorHandle h : weight_tensors) aoti_torch_delete_tensor_object(h);
    if (backend) (void)backend->synchronize();
    staged = {};
    remove_cubin_dir();
    if (dl) dlclose(dl);
    if (memfd >= 0) ::close(memfd);
    // The blocks its runs freed: another model loaded beside it only faults its own in again.
    shim::cpu_blocks::release_all();
  }

  void remove_cubin_dir() {
    if (cubin_dir.empty()) return;
    if (DIR* d = ::opendir(cubin_dir.c_str())) {
      while (struct dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
          ::unlink((cubin_dir + "/" + e->d_name).c_str());
      ::closedir(d);
    }
    ::rmdir(cubin_dir.c_str());
    cubin_dir.clear();
  }

  std::string what() const { return fmt::format("library '{}'", lib.name); }
  Error error(Error::Kind k, std::string message) const { return Error{k, fmt::format("{}: {}", what(), message)}; }
};

namespace loader {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// An Io error naming the library, the failed call and errno's text.
Error sys_error(std::string_view lib, std::string_view what);

// The manifest's segment of the library's weights (lib.weights >= 0).
const SegmentInfo& weights_segment(const Model::Impl& m);

// Whether the library has weights of at least Tuning::map_weights_min_bytes (and at least one byte): from there
// its weights are routed (mapped, uploaded by the backend) rather than left to its own copies.
bool weights_reach_threshold(const Model::Impl& m);

// Whether the weights segment may be offered to the library mapped from the container (CPU, file-backed, at
// least Tuning::map_weights_min_bytes, as aligned as the region).
bool may_map_weights(const Model::Impl& m);

// checks.cpp: the backend made, then the library refused when it cannot run here.
Status refuse(Model::Impl& m, const LoadOptions& o);

// segment_checks.cpp: the library's segments checked before they reach memory; its weights' check started.
Status check_library_segments(const Model::Impl& m);
// A weights segment of one hash chunk or less is checked at once (its error is the load's); a larger one on every
// core beside the load, awaited by the first run.
Status start_weights_check(Model::Impl& m, const LoadOptions& o);
// The weights' check awaited (its time into timings().verify_wait_ms): its answer.
Status await_weights_check(Model::Impl& m);

// library_memory.cpp
Status provide_sleef(Model::Impl& m);
Status provide_cxx_runtime(Model::Impl& m);
// private_shim: LoadOptions::bind_shim_privately (shim_binding.cpp around the dlopen).
Status library_to_memory(Model::Impl& m, bool private_shim);
Status write_cubins(Model::Impl& m);

// shim_binding.cpp: the library's aoti_torch_* imports made weak in its memfd copy before dlopen, then its GOT
// slots for them written with this process's shim.
Status weaken_shim_imports(Model::Impl& m, ByteView stored);
Status bind_shim_imports(Model::Impl& m, ByteView stored);

// routes.cpp
void route_allocations(Model::Impl& m);
void route_weight_copies(Model::Impl& m, const LoadOptions& o);
Status route_self_mapping(Model::Impl& m);
void route_openmp_teams(Model::Impl& m);

// embedded_weights.cpp
Status place_embedded(Model::Impl& m);

// external_weights.cpp
// Runs `load` (Create or UpdateConstantsFromBlob) with the library's copies from `mirror` (the weights segment's
// bytes as the library reads them; null: none to gather) gathered by the backend, then has the backend make them;
// whether it made any.
Result<bool> with_weight_copies_deferred(Model::Impl& m, const void* mirror, const std::function<Status()>& load);
Status load_external_blob(Model::Impl& m, const LoadOptions& o);

// introspection.cpp
Status describe(Model::Impl& m);
Result<std::vector<LiveConstant>> live_constants(const Model::Impl& m);
// A CPU model's parameters and tensor constants registered as constant memory (shim/constant_memory.hpp), for
// products to keep their weights in another layout across runs; withdrawn by ~Impl.
void register_constant_memory(Model::Impl& m);

}  // namespace loader
}  // namespace mpspack::runtime
