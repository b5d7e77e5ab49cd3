// run: the model once on the inputs; and its outputs written where the options say.
#include "steps.hpp"

#include <filesystem>

namespace mpspack::runtime::pipeline {

Status run_model(Context& ctx) {
  auto outputs = ctx.model->run(ctx.inputs);
  if (!outputs.ok()) return outputs.error().context(ctx.options.container);
  ctx.outputs.clear();
  for (size_t i = 0; i < outputs->size(); ++i) ctx.outputs.push_back(OutputCheck{i, std::move((*outputs)[i]), {}, {}});
  return {};
}

Status write_outputs(Context& ctx) {
  const std::string& dir = ctx.options.output_dir;
  if (dir.empty()) return {};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(Error::Kind::Io, "{}: cannot create the output folder: {}", dir, ec.message());
  for (auto& out : ctx.outputs) {
    // NumPy has no bfloat16, float8 or complex32 (their npy is ""): those are written raw (.bin), the rest as .npy.
    const DtypeInfo* info = find_dtype(out.tensor.dtype);
    const bool raw = info == nullptr || *info->npy == '\0';
    const auto path = std::filesystem::path(dir) / fmt::format("output{}.{}", out.index, raw ? "bin" : "npy");
    MPK_CHECK(write_tensor(path, out.tensor, raw));
    out.written = path.string();
  }
  return {};
}

}  // namespace mpspack::runtime::pipeline
