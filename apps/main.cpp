// mpspack: package AOTInductor model libraries into one container, look inside, verify, unpack.
#include "cli.hpp"
#include "commands.hpp"
#include "completion.hpp"
#include "mpspack/file.hpp"
#include "mpspack/version.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>

using namespace mpspack::cli;

namespace {

void set_up_logging() {
  // Logs go to stderr so stdout stays clean for --json.
  auto logger = spdlog::stderr_color_mt("mpspack");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%l] %v");
  auto level = spdlog::level::from_str(globals().log_level);
  if (globals().quiet && level < spdlog::level::err) level = spdlog::level::err;
  spdlog::set_level(level);
}

// CLI11's usage errors as one line, like every other error: "mpspack: <what> (see --help)". They quote what was
// typed ("not in {...}", "were not expected"), so the line is escaped as every other message is.
std::string usage_error_line(const CLI::App*, const CLI::Error& e) {
  std::string what = e.what();
  std::replace(what.begin(), what.end(), '\n', ' ');
  return "mpspack: " + printable(what) + " (see --help)\n";
}

// The app and the flags that apply to every subcommand.
void add_globals(CLI::App& app) {
  app.name("mpspack");  // help and the man page say "Usage: mpspack ...", not the path it was started by
  app.formatter(help_formatter());
  app.failure_message(usage_error_line);  // subcommands take it over when added
  app.set_version_flag("--version", "mpspack " + mpspack::version_string());
  app.require_subcommand(1);
  auto& g = mutable_globals();
  app.add_flag("-q,--quiet", g.quiet, "No progress and no log lines below error")->configurable(false);
  app.add_option("--log-level", g.log_level, "trace, debug, info, warn (default), error, critical, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
}

// Every subcommand, with the action that runs it when it is the one parsed.
std::map<CLI::App*, Action> add_subcommands(CLI::App& app) {
  std::map<CLI::App*, Action> actions;
  auto add = [&](const char* name, const char* help, Action (*add_fn)(CLI::App&)) {
    CLI::App* sub = app.add_subcommand(name, help);
    sub->fallthrough();  // global flags may come after the subcommand too
    actions[sub] = add_fn(*sub);
  };
  add("build", "Pack model libraries (.so) or .pt2 packages into one container", add_build);
  add("inspect", "Show what a container, a .pt2 package or a raw model.so holds, without running anything",
      add_inspect);
  add("verify", "Check a container's checksums, bounds, segment hashes and padding", add_verify);
  add("unpack", "Write the original libraries (and blobs, cubins) back out of a container", add_unpack);
  add("diff", "Compare two containers: libraries, weights, metadata (exit 0 same, 1 different)", add_diff);
  add("run", "Run a container's model library on the CPU or a CUDA GPU and check its outputs", add_run);
  add("report", "Saved run --bench reports (json, jsonl) side by side in one table; with --baseline, a regression gate",
      add_report);
  add("sign", "Write a detached signature of a container (DSSE envelope over an in-toto statement)", add_sign);
  add("push", "Upload a container to an OCI registry (only the layers it lacks)", add_push);
  add("pull", "Download a container from an OCI registry, checked against its digests", add_pull);
  return actions;
}

// The exit status when parsing ends the program (help, version, a usage error); nullopt to go on.
std::optional<int> parse_args(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) { return app.exit(e); } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) { return app.exit(e); } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kError;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mpspack: package, inspect, verify and unpack AOTInductor model libraries"};
  add_globals(app);
  std::map<CLI::App*, Action> actions = add_subcommands(app);

  // The completion script is made from the definitions above (share/CMakeLists.txt installs it).
  bool completion = false;
  app.add_flag("--bash-completion", completion, "Print the bash completion script")->group(kHiddenGroup);
  app.require_subcommand(0, 1);

  if (auto status = parse_args(app, argc, argv)) return *status;
  if (completion) {
    std::fputs(bash_completion(app).c_str(), stdout);
    return kOk;
  }
  if (app.get_subcommands().empty()) {
    std::fputs(usage_error_line(&app, CLI::RequiredError("A subcommand")).c_str(), stderr);
    return kError;
  }
  set_up_logging();
  // A mapped input that cannot be read (I/O error, truncated while read) ends in a one-line error
  // and no temp file, not a "Bus error" crash (tests/cli/test_faults.cpp).
  mpspack::install_read_error_handler("mpspack: ", kError);
  // Ctrl-C, kill or a closed terminal during build or unpack leaves no temp file beside the output.
  mpspack::install_signal_cleanup();
  for (auto& [sub, action] : actions)
    if (sub->parsed()) return action();
  return kError;
}
