// A convolution on cuDNN's graph (backend) API, as torch runs its convolutions: one operation graph per shape,
// the engine configurations cuDNN's heuristics propose (CUDNN_HEUR_MODE_INSTANT, best first), and the first one
// that torch's filter allows and that builds an execution plan whose workspace fits. cudnn_conv_plan.cpp keeps
// one per shape for the process and falls back to the legacy API where cuDNN builds no plan.
#pragma once

#include "runtime/shim/conv_shape.hpp"
#include "cudnn_library.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace mpspack::shim::cuda {

// The byte alignments of the three buffers a plan is built for: the largest power of two up to 32 dividing each
// address, as torch computes them. cuDNN's heuristics rank engines by them, so the same shape at another
// alignment can get another engine (a TF32 one instead of a full-float32 one).
struct Alignments {
  int64_t x = 32, w = 32, y = 32;
};
int64_t alignment_of(const void* p);

class GraphPlan {
 public:
  ~GraphPlan();
  GraphPlan(const GraphPlan&) = delete;
  GraphPlan& operator=(const GraphPlan&) = delete;

  std::size_t workspace() const { return workspace_; }
  // Queues y <- conv(x, w) (or conv_transpose) on the handle's stream; throws ShimError on failure.
  void run(cudnnHandle_t h, const void* x, const void* w, void* y, void* workspace, const ConvShape& s) const;

 private:
  friend std::unique_ptr<GraphPlan> make_graph_plan(const ConvShape&, int32_t, int, cudnnHandle_t, Alignments);
  GraphPlan() = default;
  cudnnBackendDescriptor_t plan_ = nullptr;
  std::size_t workspace_ = 0;
};

// The plan for dense x, w and y in s's layout (s.channels_last) of one dtype, with TF32 as conv_tf32_allowed()
// says; null when cuDNN proposes no configuration that builds, or none whose workspace can be allocated on
// `device`.
std::unique_ptr<GraphPlan> make_graph_plan(const ConvShape& s, int32_t dtype, int device, cudnnHandle_t h,
                                           Alignments a);

}  // namespace mpspack::shim::cuda
