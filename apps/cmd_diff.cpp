// diff: do two containers hold the same model? Exit 0 same, 1 different, 2 could not compare.
#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/pack/diff.hpp"

#include <set>

namespace mpspack::cli {
namespace {

struct DiffArgs {
  std::string a, b;
  bool json = false;
  pack::DiffOptions options;
};

// diff pairs libraries by name: with two of one name, the pairing (and so the answer) would depend on the
// order of the two containers on the command line.
Status unique_library_names(const format::Container& c) {
  std::set<std::string_view> seen;
  for (const auto& l : c.manifest().libraries)
    if (!seen.insert(l.name).second)
      return make_error(Error::Kind::Corrupt, "{}: two libraries named '{}': diff pairs libraries by name", c.name(),
                        l.name);
  return {};
}

nlohmann::json side_json(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

int run_diff(const DiffArgs& args) {
  // Open both (header, metadata, structure) before reading any constant's bytes.
  for (const std::string* file : {&args.a, &args.b})
    if (auto unknown = unknown_input(*file, "diff", kContainerInput)) return fail(*unknown);
  auto a = format::Container::open(args.a);
  if (!a.ok()) return fail(a.error());
  auto b = format::Container::open(args.b);
  if (!b.ok()) return fail(b.error());
  for (const auto* c : {&*a, &*b})
    if (auto s = unique_library_names(*c); !s.ok()) return fail(s.error());
  auto diffs = pack::diff(*a, *b, args.options);
  const char* compared = args.options.metadata_only ? "metadata" : "bytes";
  if (args.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : diffs) list.push_back({{"path", d.path}, {"a", side_json(d.a)}, {"b", side_json(d.b)}});
    print_json({{"schema_version", 1}, {"same", diffs.empty()}, {"compared", compared}, {"differences", list}});
  } else {
    if (args.options.metadata_only && !globals().quiet)
      std::printf("compared the metadata only: the recorded hashes, no segment bytes read\n");
    // One difference a line: "<path>: <a> -> <b>", "(absent)" for a side that lacks the object.
    for (const auto& d : diffs)
      std::printf("%s: %s -> %s\n", printable(d.path).c_str(), printable(d.a.value_or("(absent)")).c_str(),
                  printable(d.b.value_or("(absent)")).c_str());
    if (diffs.empty() && !globals().quiet)
      std::printf(args.options.metadata_only ? "same model, as far as the metadata says\n" : "same model\n");
  }
  return diffs.empty() ? kOk : kCheckFailed;
}

}  // namespace

Action add_diff(CLI::App& app) {
  auto a = std::make_shared<DiffArgs>();
  app.add_option("a", a->a, "First container (.mpk)")->required();
  app.add_option("b", a->b, "Second container (.mpk)")->required();
  app.add_flag("--json", a->json, "Print {schema_version, same, compared, differences[{path, a, b}]} as JSON");
  app.add_flag("--metadata-only", a->options.metadata_only,
               "Compare the hashes the metadata records instead of hashing the bytes (reads no segment; a damaged "
               "container can look the same)");
  return [a] { return run_diff(*a); };
}

}  // namespace mpspack::cli
