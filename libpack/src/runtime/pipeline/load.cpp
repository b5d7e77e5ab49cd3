// load: the library on the device the options name, with their load options.
#include "steps.hpp"
#include "runtime/tuning/tuning.hpp"

#include <charconv>
#include <cstdlib>
#include <string>

namespace mpspack::runtime {
namespace {

Error bad_device(const VerifyOptions& o) {
  return make_error(Error::Kind::Invalid, "{}: --device {}: expected cpu, cuda or cuda:N", o.container, o.device);
}

}  // namespace

// KIND[:N] against the library's device kind: an AOTInductor library is compiled for one kind of device, so the
// device can only pick which device of that kind.
Result<int32_t> device_index(const VerifyOptions& o, const LibraryInfo& lib) {
  if (o.device.empty()) return 0;
  const auto colon = o.device.find(':');
  const std::string kind = o.device.substr(0, colon);
  int32_t index = 0;
  if (colon != std::string::npos) {
    const std::string n = o.device.substr(colon + 1);
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
    if (n.empty() || ec != std::errc() || p != n.data() + n.size() || index < 0) return bad_device(o);
  }
  if (kind != "cpu" && kind != "cuda") return bad_device(o);
  if (kind != lib.device)
    return make_error(Error::Kind::Unsupported,
                      "{}: library '{}' was compiled for {}; it cannot run on --device {} (AOTInductor compiles a "
                      "library for one kind of device): use --device {} or leave --device out",
                      o.container, lib.name, lib.device, o.device, lib.device);
  if (kind == "cpu" && index != 0)
    return make_error(Error::Kind::Invalid, "{}: --device {}: the CPU has index 0 only", o.container, o.device);
  return index;
}

namespace pipeline {

Status load_model(Context& ctx) {
  const VerifyOptions& o = ctx.options;
  if (!o.tf32_convolutions) turn_off_tf32_convolutions();  // process-wide, as torch's flag
  LoadOptions lo = o.load;
  MPK_TRY(lo.device_index, device_index(o, ctx.container->manifest().libraries[ctx.library_index]));
  auto model = Model::load(*ctx.container, ctx.library_index, lo);
  if (!model.ok()) return model.error().context(o.container);
  model->mutable_timings().open_ms = ctx.open_ms;
  ctx.model.emplace(std::move(model).value());
  return {};
}

}  // namespace pipeline
}  // namespace mpspack::runtime
