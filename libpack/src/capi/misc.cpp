// The C API's version, dtype table and build (mpspack.h, "status", "dtypes", "build").
#include "boundary.hpp"
#include "state.hpp"

#include "mpspack/dtype.hpp"
#include "mpspack/pack/build.hpp"
#include "mpspack/version.hpp"

#include <filesystem>

using namespace mpspack;
using namespace mpspack::capi;

namespace {

mpspack_build_options default_build_options() {
  mpspack_build_options o{};
  o.struct_size = sizeof o;
  return o;
}

// A list of `n` C strings, each non-NULL; `what` names it in the error.
mpspack_status read_list(const char* function, const char* what, const char* const* list, size_t n,
                         std::vector<std::string>& out) {
  if (n > 0 && !list) return bad_argument(function, what, "NULL");
  for (size_t i = 0; i < n; ++i) {
    if (!list[i]) return bad_argument(function, std::string(what) + "[" + std::to_string(i) + "]", "NULL");
    out.emplace_back(list[i]);
  }
  return MPSPACK_OK;
}

// For the first input or weights file that cannot be read (build's own error names it): NOT_FOUND or IO with its OS
// error, as fail_open(); else the error's status.
mpspack_status fail_build(const Error& e, const pack::BuildOptions& o) {
  for (const auto& files : {o.inputs, o.weights})
    for (const auto& p : files)
      if (os_error_of(p.string()) != 0) return fail_open(e, p.string());
  return fail(e);
}

}  // namespace

extern "C" {

mpspack_status mpspack_version(const char** version) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(version, fn, "version");
    static const std::string v = version_string();
    *version = v.c_str();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_api_version(int32_t* version) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(version, fn, "version");
    *version = MPSPACK_C_API_VERSION;
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_dtype_info(int32_t dtype, const char** name, const char** torch_name, uint32_t* itemsize,
                                  const char** numpy_descr) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    const DtypeInfo* d = find_dtype(dtype);
    if (!d) return bad_argument(fn, "dtype", std::to_string(dtype) + " is not a dtype mpspack knows");
    if (name) *name = d->name;
    if (torch_name) *torch_name = d->torch_name;
    if (itemsize) *itemsize = d->size;
    if (numpy_descr) *numpy_descr = d->npy;
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_build_options_init(mpspack_build_options* options) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    MPK_C_NOT_NULL(options, fn, "options");
    *options = default_build_options();
    return MPSPACK_OK;
  });
}

mpspack_status mpspack_build(const char* const* inputs, size_t n_inputs, const char* output,
                             const mpspack_build_options* options) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    mpspack_build_options b;
    if (auto s = read_options(fn, options, default_build_options(), b); s != MPSPACK_OK) return s;
    MPK_C_NOT_NULL(output, fn, "output");
    if (!*output) return bad_argument(fn, "output", "empty");
    if (n_inputs == 0) return bad_argument(fn, "inputs", "none given");
    std::vector<std::string> ins, weights;
    pack::BuildOptions o;
    if (auto s = read_list(fn, "inputs", inputs, n_inputs, ins); s != MPSPACK_OK) return s;
    if (auto s = read_list(fn, "weights", b.weights, b.n_weights, weights); s != MPSPACK_OK) return s;
    if (auto s = read_list(fn, "example_inputs", b.example_inputs, b.n_example_inputs, o.example_inputs);
        s != MPSPACK_OK)
      return s;
    if (auto s = read_list(fn, "example_outputs", b.example_outputs, b.n_example_outputs, o.example_outputs);
        s != MPSPACK_OK)
      return s;
    for (const auto& i : ins) o.inputs.emplace_back(i);
    for (const auto& w : weights) o.weights.emplace_back(w);
    o.output = output;
    o.drop_libtorch = b.keep_libtorch == 0;
    o.durability = b.fsync ? Durability::disk : Durability::page_cache;
    auto manifest = pack::build(o);
    if (!manifest.ok()) return fail_build(manifest.error(), o);
    return MPSPACK_OK;
  });
}

}  // extern "C"
