// The inputs and, before anything of the model runs, the expected files: every mistake in what the user named
// is reported before the (possibly slow) load.
#include "steps.hpp"

#include "mpspack/file.hpp"

#include <unistd.h>

#include <filesystem>

namespace mpspack::runtime::pipeline {
namespace {

// Reads the --input specs (a raw file without DTYPE:SHAPE takes the recorded example's).
Result<std::vector<HostTensor>> read_inputs(const Context& ctx) {
  const auto& specs = ctx.options.inputs;
  std::vector<HostTensor> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    MPK_TRY(TensorSpec spec, parse_tensor_spec(specs[i]));
    auto t = read_tensor(spec, recorded_hint(ctx.example ? &ctx.example->inputs : nullptr, i));
    if (!t.ok()) return t.error().context(fmt::format("--input {}", i));
    out.push_back(std::move(t).value());
  }
  return out;
}

}  // namespace

Result<HostTensor> from_segment(const format::Container& c, const TensorInfo& info) {
  MPK_CHECK(format::check_segments(c, std::span(&info.segment, 1), 1));  // a damaged example is never used
  ByteView b = c.segment(info.segment);
  return HostTensor{info.dtype, info.shape, std::vector<uint8_t>(b.data(), b.data() + b.size())};
}

std::optional<TensorHint> recorded_hint(const std::vector<TensorInfo>* infos, size_t i) {
  if (!infos || i >= infos->size()) return std::nullopt;
  return TensorHint{(*infos)[i].dtype, (*infos)[i].shape};
}

Status gather_inputs(Context& ctx, bool with_references) {
  if (ctx.options.seed) return generate_inputs(ctx);
  if (!ctx.options.inputs.empty()) {
    MPK_TRY(ctx.inputs, read_inputs(ctx));
    return {};
  }
  if (!ctx.example)
    return make_error(Error::Kind::Invalid,
                      "{}: no inputs: the container records no example for library '{}'; pass --input "
                      "FILE[:DTYPE:SHAPE]",
                      ctx.options.container, ctx.library_name);
  for (const auto& t : ctx.example->inputs) {
    MPK_TRY(HostTensor input, from_segment(*ctx.container, t));
    ctx.inputs.push_back(std::move(input));
  }
  if (!with_references) return {};
  for (const auto& t : ctx.example->outputs) {
    MPK_TRY(HostTensor expected, from_segment(*ctx.container, t));
    ctx.reference_names.push_back(fmt::format("the recorded example output{}", ctx.expected.size()));
    ctx.expected.push_back(std::move(expected));
  }
  return {};
}

Status check_expect_files(Context& ctx) {
  for (const auto& text : ctx.options.expects) {
    MPK_TRY(TensorSpec spec, parse_tensor_spec(text));
    std::error_code ec;
    if (!std::filesystem::exists(spec.path, ec))
      return make_error(Error::Kind::Io, "{}: no such file (--expect)", spec.path.string());
    auto fd = open_input_file(spec.path);  // a FIFO or a folder is refused now, before the model runs
    if (!fd.ok()) return fd.error().context("--expect");
    ::close(*fd);
    ctx.expect_specs.push_back(std::move(spec));
  }
  return {};
}

}  // namespace mpspack::runtime::pipeline
