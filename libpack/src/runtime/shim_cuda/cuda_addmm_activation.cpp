// aten::_addmm_activation on cuda: the CPU shim's product on host copies (host_bridge.hpp) with torch's CUDA
// kernel's activation (linalg_util.hpp: tanh GELU, none when mat1 has no columns).
#include "aoti_shim_cuda.h"
#include "host_bridge.hpp"
#include "runtime/shim/linalg_util.hpp"

using namespace mpspack::shim;
using namespace mpspack::shim::cuda;

extern "C" AOTITorchError aoti_torch_cuda__addmm_activation(AtenTensorHandle self, AtenTensorHandle mat1,
                                                            AtenTensorHandle mat2, double beta, double alpha,
                                                            int32_t use_gelu, AtenTensorHandle* ret0) {
  return guarded(__func__, [&] {
    if (ret0 == nullptr) fail("_addmm_activation: ret0 is null");
    HostBridge b;
    const Tensor& s = deref(b.in(self), "self");
    const Tensor& a = deref(b.in(mat1), "mat1");
    const Tensor& m = deref(b.in(mat2), "mat2");
    *b.result(ret0) =
        linalg::addmm_activation(s, a, m, beta, alpha, use_gelu != 0, linalg::ActivationKernel::cuda).release();
    b.finish();
  });
}
