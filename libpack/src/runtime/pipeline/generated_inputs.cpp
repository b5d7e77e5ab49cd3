// Inputs generated from a seed (VerifyOptions::seed): the recorded example's dtypes and shapes, new values.
#include "steps.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace mpspack::runtime::pipeline {
namespace {

struct Range {
  double lo = -1, hi = 1;
};

// The smallest and largest of the recorded values, the range the generated ones are drawn from: integer inputs
// are often indices, which a value out of the model's range would make it read out of bounds. [-1, 1] when there
// are no finite values to go by.
Range recorded_range(const HostTensor& example) {
  bool any = false;
  Range r{0, 0};
  for (uint64_t i = 0; i < example.numel(); ++i) {
    const double v = element_as_double(example, i);
    if (!std::isfinite(v)) continue;
    r.lo = any ? std::min(r.lo, v) : v;
    r.hi = any ? std::max(r.hi, v) : v;
    any = true;
  }
  return any ? r : Range{};
}

bool is_floating(int32_t dt) {
  const DtypeInfo* info = find_dtype(dt);
  return info && info->floating;
}

// u in [0, 1) to a value uniform in [lo, hi] (floating dtypes) or over the integers lo..hi.
double draw(double u, const Range& r, bool floating) {
  if (floating) return r.lo + u * (r.hi - r.lo);
  const double lo = std::floor(r.lo), hi = std::floor(r.hi);
  return std::min(hi, lo + std::floor(u * (hi - lo + 1)));
}

// Values from the engine's raw bits, so that they are the same with every standard library
// (std::uniform_*_distribution are not specified bit for bit).
HostTensor generated_like(const HostTensor& example, std::mt19937_64& engine) {
  HostTensor t{example.dtype, example.shape, std::vector<uint8_t>(example.data.size())};
  const Range r = recorded_range(example);
  const bool floating = is_floating(example.dtype);
  for (uint64_t i = 0; i < t.numel(); ++i) set_element(t, i, draw(double(engine() >> 11) * 0x1.0p-53, r, floating));
  return t;
}

}  // namespace

Status generate_inputs(Context& ctx) {
  const VerifyOptions& o = ctx.options;
  if (!o.inputs.empty())
    return make_error(Error::Kind::Invalid, "{}: --seed and --input both give the inputs; choose one", o.container);
  if (!ctx.example)
    return make_error(Error::Kind::Invalid,
                      "{}: --seed: the container records no example for library '{}', so the inputs' dtypes and "
                      "shapes are unknown; pass --input FILE[:DTYPE:SHAPE]",
                      o.container, ctx.library_name);
  std::mt19937_64 engine(*o.seed);
  for (const auto& info : ctx.example->inputs) {
    MPK_TRY(HostTensor recorded, from_segment(*ctx.container, info));
    ctx.inputs.push_back(generated_like(recorded, engine));
  }
  return {};
}

std::string inputs_source(const VerifyOptions& o) {
  if (!o.inputs.empty()) return "files";
  return o.seed ? "seed" : "example";
}

}  // namespace mpspack::runtime::pipeline
