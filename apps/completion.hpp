// The bash completion script, generated from the command line's own definitions (subcommands, options, the values
// an option takes), so that it cannot drift from --help. `mpspack --bash-completion` prints it; the build installs
// its output (share/CMakeLists.txt).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace mpspack::cli {

std::string bash_completion(const CLI::App& app);

}  // namespace mpspack::cli
