// diff: do two containers hold the same model? Exit 0 same, 1 different, 2 could not compare.
#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/pack/diff.hpp"

namespace mpspack::cli {
namespace {

struct DiffArgs {
  std::string a, b;
  bool json = false;
};

nlohmann::json side_json(const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

int run_diff(const DiffArgs& args) {
  // Open both (header, metadata, structure) before reading any constant's bytes.
  auto a = format::Container::open(args.a);
  if (!a.ok()) return fail(a.error());
  auto b = format::Container::open(args.b);
  if (!b.ok()) return fail(b.error());
  auto diffs = pack::diff(*a, *b);
  if (args.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : diffs) list.push_back({{"path", d.path}, {"a", side_json(d.a)}, {"b", side_json(d.b)}});
    print_json({{"schema_version", 1}, {"same", diffs.empty()}, {"differences", list}});
  } else {
    // One difference a line: "<path>: <a> -> <b>", "(absent)" for a side that lacks the object.
    for (const auto& d : diffs)
      std::printf("%s: %s -> %s\n", printable(d.path).c_str(), printable(d.a.value_or("(absent)")).c_str(),
                  printable(d.b.value_or("(absent)")).c_str());
    if (diffs.empty() && !globals().quiet) std::printf("same model\n");
  }
  return diffs.empty() ? kOk : kCheckFailed;
}

}  // namespace

Action add_diff(CLI::App& app) {
  auto a = std::make_shared<DiffArgs>();
  app.add_option("a", a->a, "First container (.mpk)")->required();
  app.add_option("b", a->b, "Second container (.mpk)")->required();
  app.add_flag("--json", a->json, "Print {schema_version, same, differences[{path, a, b}]} as JSON");
  return [a] { return run_diff(*a); };
}

}  // namespace mpspack::cli
