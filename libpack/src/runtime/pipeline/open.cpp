// The first steps: the container, and which of its libraries.
#include "steps.hpp"

#include <chrono>

namespace mpspack::runtime::pipeline {

Status open_container(Context& ctx) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto container = format::Container::open(ctx.options.container);
  if (!container.ok()) return container.error();
  ctx.open_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  ctx.container.emplace(std::move(container).value());
  if (ctx.options.check_opened) MPK_CHECK(ctx.options.check_opened(*ctx.container));
  return {};
}

Status pick_library(Context& ctx) {
  MPK_TRY(ctx.library_index, find_library(*ctx.container, ctx.options.library));
  const Manifest& m = ctx.container->manifest();
  ctx.library_name = m.libraries[ctx.library_index].name;
  for (const auto& e : m.examples) {
    if (e.library == ctx.library_index) {
      ctx.example = &e;
      break;
    }
  }
  return {};
}

}  // namespace mpspack::runtime::pipeline
