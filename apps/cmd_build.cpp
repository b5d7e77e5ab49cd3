#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/pack/build.hpp"

#include <spdlog/spdlog.h>

namespace mpspack::cli {
namespace {

struct BuildArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> weights;
  std::string output;
  bool keep_libtorch = false;
  std::vector<std::string> example_inputs;
  std::vector<std::string> example_outputs;
  bool json = false;
  bool fsync = false;
};

std::string default_output(const std::string& first_input) {
  std::filesystem::path p(first_input);
  return (p.parent_path() / (p.stem().string() + ".mpk")).string();
}

int run_build(const BuildArgs& a) {
  for (const auto& i : a.inputs)
    if (auto unknown = unknown_input(i, "build", kLibraryInput | kPt2Input)) return fail(*unknown);
  pack::BuildOptions o;
  for (const auto& i : a.inputs) o.inputs.emplace_back(i);
  for (const auto& w : a.weights) o.weights.emplace_back(w);
  o.output = a.output.empty() ? default_output(a.inputs.front()) : a.output;
  o.drop_libtorch = !a.keep_libtorch;
  o.example_inputs = a.example_inputs;
  o.example_outputs = a.example_outputs;
  o.progress = progress_bar("build");
  o.durability = a.fsync ? Durability::disk : Durability::page_cache;
  auto manifest = pack::build(o);
  if (!manifest.ok()) return fail(manifest.error());
  uint64_t bytes = 0;
  for (const auto& s : manifest->segments) bytes += s.size;
  if (a.json) {
    print_json({{"schema_version", 1},
                {"output", o.output.string()},
                {"libraries", manifest->libraries.size()},
                {"segments", manifest->segments.size()},
                {"segment_bytes", bytes}});
  } else if (!globals().quiet) {
    std::printf("%s: %zu librar%s, %zu segments, %llu bytes of segments\n", printable(o.output.string()).c_str(),
                manifest->libraries.size(), manifest->libraries.size() == 1 ? "y" : "ies", manifest->segments.size(),
                static_cast<unsigned long long>(bytes));
  }
  return kOk;
}

}  // namespace

Action add_build(CLI::App& app) {
  auto a = std::make_shared<BuildArgs>();
  app.add_option("inputs", a->inputs, "Model libraries (.so) and/or .pt2 packages")->required();
  app.add_option("-o,--output", a->output, "Container to write (default: <first input stem>.mpk beside it)")
      ->check(non_empty());
  app.add_option("--weights", a->weights,
                 "External weights blob for the external-blob libraries, in input order "
                 "(default: <stem>_weights.blob beside each library)")
      ->check(non_empty());
  app.add_flag("--keep-libtorch", a->keep_libtorch,
               "Keep libtorch*.so in the stored libraries' NEEDED lists even when only the C shim is used");
  app.add_option("--example-input", a->example_inputs,
                 "Record a reference input FILE[:DTYPE:SHAPE] (.npy carries its own) for the first library, "
                 "once per model input in order; `run` with no --input uses them")
      ->check(non_empty());
  app.add_option("--example-output", a->example_outputs,
                 "Record the expected output FILE[:DTYPE:SHAPE] for the example inputs, once per model output")
      ->check(non_empty());
  app.add_flag("--json", a->json, "Print a JSON summary");
  app.add_flag("--fsync", a->fsync, kFsyncHelp);
  return [a] { return run_build(*a); };
}

}  // namespace mpspack::cli
