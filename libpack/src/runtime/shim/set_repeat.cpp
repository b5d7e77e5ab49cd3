// aten::set_.source_Tensor (self's handle takes source's storage, sizes, strides and offset: both then alias, on
// any device) and aten::repeat_interleave.Tensor (each index i repeated repeats[i] times, in repeats' dtype).
#include "aoti_shim.h"
#include "element.hpp"
#include "index_walk.hpp"
#include "tensor.hpp"
#include "view_helpers.hpp"

#include <string>
#include <type_traits>
#include <vector>

using namespace mpspack::shim;
using namespace mpspack::shim::typed;
using namespace mpspack::shim::viewops;

namespace {

TensorPtr repeat_interleave(const Tensor& repeats, const int64_t* output_size) {
  require_cpu(repeats, "repeat_interleave");
  if (repeats.dim() != 1) fail("repeat_interleave: repeat_interleave only accept 1D vector as repeat");
  if (repeats.dtype != mpspack::dtype::int64 && repeats.dtype != mpspack::dtype::int32)
    fail(std::string("repeat_interleave: \"repeat_interleave_cpu\" not implemented for '") + dtype_name(repeats.dtype) +
         "'");
  std::vector<int64_t> counts;
  const auto item = static_cast<int64_t>(repeats.itemsize());
  for (int64_t i = 0; i < repeats.sizes[0]; ++i) {
    const double c = load_as_double(repeats.data() + i * repeats.strides[0] * item, repeats.dtype);  // exact
    if (c < 0) fail("repeat_interleave: repeats can not be negative");
    counts.push_back(static_cast<int64_t>(c));
  }
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  if (output_size != nullptr && *output_size != total)
    fail("repeat_interleave: allocated size does not match required size");
  const int64_t n = total;
  TensorPtr out(new_contiguous(std::span<const int64_t>(&n, 1), repeats.dtype));
  visit_dtype(repeats.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = reinterpret_cast<T*>(out->data());
    for (std::size_t i = 0; i < counts.size(); ++i)
      for (int64_t k = 0; k < counts[i]; ++k) store(o++, static_cast<int64_t>(i));
  });
  return out;
}

}  // namespace

extern "C" {

AOTITorchError aoti_torch_cpu_repeat_interleave_Tensor(AtenTensorHandle repeats, int64_t* output_size,
                                                       AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    require_ret(ret0, "repeat_interleave");
    set_result(ret0, repeat_interleave(deref(repeats, "repeats"), output_size), "repeat_interleave");
  });
}

// Changes the handle only (no copy, no require_cpu): the CUDA twin forwards its tensors here as they are.
AOTITorchError aoti_torch_cpu_set__source_Tensor(AtenTensorHandle self, AtenTensorHandle source) {
  return guarded(__func__, [&] {
    Tensor& t = deref(self, "self");
    const Tensor& s = deref(source, "source");
    if (t.dtype != s.dtype)
      fail(std::string("set_: Could not set tensor of type ") + dtype_name(s.dtype) + " to a tensor of type " +
           dtype_name(t.dtype));
    if (&t == &s) return;
    t.storage = s.storage;
    t.storage_offset = s.storage_offset;
    t.sizes = s.sizes;
    t.strides = s.strides;
  });
}

}  // extern "C"
