// One function per subcommand: each registers its options on the CLI11 app and returns the
// action to run once parsing succeeded. The action returns the process exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace mpspack::cli {

using Action = std::function<int()>;

Action add_build(CLI::App& app);
Action add_inspect(CLI::App& app);
Action add_verify(CLI::App& app);
Action add_unpack(CLI::App& app);
Action add_diff(CLI::App& app);
Action add_run(CLI::App& app);
Action add_report(CLI::App& app);
Action add_push(CLI::App& app);
Action add_pull(CLI::App& app);
Action add_sign(CLI::App& app);

}  // namespace mpspack::cli
