#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/pack/unpack.hpp"

namespace mpspack::cli {
namespace {

struct UnpackArgs {
  std::string file;
  std::string dir;
  bool fsync = false;
  bool json = false;
};

int run_unpack(const UnpackArgs& a) {
  if (auto unknown = unknown_input(a.file, "unpack", kContainerInput)) return fail(*unknown);
  auto c = format::Container::open(a.file);
  if (!c.ok()) return fail(c.error());
  auto unpacked = pack::unpack(*c, a.dir, progress_bar("unpack"), a.fsync ? Durability::disk : Durability::page_cache);
  if (!unpacked.ok()) return fail(unpacked.error());
  const pack::Rebuild& r = unpacked->rebuild;
  if (a.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& p : unpacked->written) files.push_back(p.string());
    nlohmann::json rebuild = {{"args", r.args}, {"identical", r.identical}};
    if (!r.identical) rebuild["why_not"] = r.why_not;
    print_json({{"schema_version", 1}, {"file", a.file}, {"output", a.dir}, {"written", files}, {"rebuild", rebuild}});
  } else if (!globals().quiet) {
    for (const auto& p : unpacked->written) std::printf("%s\n", printable(p.string()).c_str());
  }
  return kOk;
}

}  // namespace

Action add_unpack(CLI::App& app) {
  auto a = std::make_shared<UnpackArgs>();
  app.add_option("file", a->file, "Container to unpack")->required();
  app.add_option("-o,--output", a->dir, "Folder to write into (created if missing)")->required()->check(non_empty());
  app.add_flag("--fsync", a->fsync, kFsyncHelp);
  app.add_flag("--json", a->json, "Print {schema_version, file, output, written[], rebuild} as JSON");
  return [a] { return run_unpack(*a); };
}

}  // namespace mpspack::cli
