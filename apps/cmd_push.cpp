// push: a container to an OCI registry, uploading only the layers the registry does not hold yet.
#include "cli.hpp"
#include "commands.hpp"
#include "registry_options.hpp"

namespace mpspack::cli {
namespace {

struct PushArgs {
  std::string file, reference;
  RegistryArgs registry;
  bool json = false;
};

int run_push(const PushArgs& a) {
  auto ref = registry::parse_reference(a.reference);
  if (!ref.ok()) return fail(ref.error());
  auto options = client_options(a.registry);
  if (!options.ok()) return fail(options.error());
  if (auto unknown = unknown_input(a.file, "push", kContainerInput)) return fail(*unknown);
  auto c = format::Container::open(a.file);
  if (!c.ok()) return fail(c.error());
  auto report = registry::push(*c, *ref, *options, progress_bar("push"));
  if (!report.ok()) return fail(report.error());
  if (a.json) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& t : report->layers) {
      auto j = layer_json(t.layer);
      j["sent"] = t.sent;
      layers.push_back(std::move(j));
    }
    print_json({{"schema_version", 1}, {"file", a.file}, {"reference", report->reference},
                {"manifest_digest", report->manifest_digest}, {"config_digest", report->config_digest},
                {"bytes_sent", report->bytes_sent}, {"bytes_resumed", report->bytes_resumed},
                {"bytes_skipped", report->bytes_skipped}, {"layers", layers}});
  } else if (!globals().quiet) {
    size_t sent = 0;
    for (const auto& t : report->layers) sent += t.sent;
    std::printf("%s@%s\n%zu of %zu layers sent (%llu bytes), %zu already there (%llu bytes)\n",
                printable(report->reference).c_str(), report->manifest_digest.c_str(), sent, report->layers.size(),
                (unsigned long long)report->bytes_sent, report->layers.size() - sent,
                (unsigned long long)report->bytes_skipped);
    if (report->bytes_resumed)
      std::printf("%llu bytes an interrupted earlier push had uploaded were resumed, not sent again\n",
                  (unsigned long long)report->bytes_resumed);
  }
  return kOk;
}

}  // namespace

Action add_push(CLI::App& app) {
  auto a = std::make_shared<PushArgs>();
  app.add_option("file", a->file, "Container to push (.mpk)")->required();
  app.add_option("reference", a->reference, "host[:port]/repository[:tag]")->required();
  add_registry_options(app, a->registry);
  app.add_flag("--json", a->json,
               "Print {schema_version, file, reference, manifest_digest, config_digest, bytes_sent, bytes_resumed, "
               "bytes_skipped, layers[{digest, kind, offset, size, segment, name, sent}]} as JSON");
  return [a] { return run_push(*a); };
}

}  // namespace mpspack::cli
