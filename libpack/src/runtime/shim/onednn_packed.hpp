// Weights kept packed in the layout a oneDNN primitive reads (part of the plugin module, onednn_api.hpp): a
// product's B or a convolution's weights that lie in constant memory (constant_memory.hpp; the shim decides and says
// so in the call), reordered at the first call of a plan and kept by their address and that plan, until the shim
// says their memory is going (mpspack_onednn_packed_v1). oneDNN's kernels read weights in blocks of their own
// layout, and copy weights given in any other into it at every call.
#pragma once

#include "onednn_module.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>

namespace mpspack::shim {

// The weights argument of a primitive: `data` as stored (`pack` false, or a reorder-free layout), or its packed copy
// in `packed`, made now or kept from an earlier call of the plan `plan`; `holder` keeps the copy alive for the call.
// `packed_now`, when given, is set when this call made the copy and kept it. Past 8 GiB of kept copies, a copy is made
// for the call alone.
dnnl::memory weights_memory(const void* plan, const dnnl::memory::desc& stored, const dnnl::memory::desc& packed,
                            const void* data, bool pack, bool* packed_now, std::shared_ptr<Buffer>& holder);

}  // namespace mpspack::shim
