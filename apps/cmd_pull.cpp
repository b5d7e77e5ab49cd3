// pull: a container from an OCI registry, rebuilt byte for byte and checked against the layers' digests.
#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/sign/keys.hpp"
#include "registry_options.hpp"

namespace mpspack::cli {
namespace {

struct PullArgs {
  std::string reference, output, library;
  std::string key;  // --key: the container must carry a signature by this public key
  RegistryArgs registry;
  bool json = false;
};

int run_pull(const PullArgs& a) {
  auto ref = registry::parse_reference(a.reference);
  if (!ref.ok()) return fail(ref.error());
  auto options = client_options(a.registry);
  if (!options.ok()) return fail(options.error());
  std::optional<sign::PublicKey> key;
  if (!a.key.empty()) {
    auto k = sign::PublicKey::load(a.key);
    if (!k.ok()) return fail(k.error());
    key = std::move(k).value();
  }
  auto report = a.library.empty()
                    ? registry::pull(*ref, a.output, *options, progress_bar("pull"), key ? &*key : nullptr)
                    : registry::pull_library(*ref, a.library, a.output, *options, progress_bar("pull"));
  if (!report.ok())
    return fail(report.error(), report.error().kind == Error::Kind::Corrupt && key ? kCheckFailed : kError);
  if (a.json) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : report->layers) layers.push_back(layer_json(l));
    print_json({{"schema_version", 1},
                {"reference", report->reference},
                {"output", a.output},
                {"manifest_digest", report->manifest_digest},
                {"file_size", report->file_size},
                {"bytes_fetched", report->bytes_fetched},
                {"layers", layers},
                {"signed_by", key ? nlohmann::json(report->signed_by) : nlohmann::json()}});
  } else if (!globals().quiet) {
    std::printf("%s: %zu layers, %llu bytes\n", printable(a.output).c_str(), report->layers.size(),
                (unsigned long long)report->file_size);
    if (key) std::printf("signature by key %s verified\n", report->signed_by.c_str());
  }
  return kOk;
}

}  // namespace

Action add_pull(CLI::App& app) {
  auto a = std::make_shared<PullArgs>();
  app.add_option("reference", a->reference, "host[:port]/repository[:tag|@sha256:...]")->required();
  app.add_option("-o,--output", a->output, "Container to write (replaced atomically)")->required()->check(non_empty());
  app.add_option("--library", a->library,
                 "Fetch only this library, its weights, cubins and examples, as a container of its own")
      ->check(non_empty());
  CLI::Option* key =
      app.add_option("--key", a->key,
                     "Refuse the container unless a signature attached to it verifies with this public key (PEM); "
                     "checked before the file is written into place")
          ->check(non_empty());
  app.get_option("--library")->excludes(key);  // a signature covers the whole container, not a part
  add_registry_options(app, a->registry);
  app.add_flag("--json", a->json,
               "Print {schema_version, reference, output, manifest_digest, file_size, bytes_fetched, "
               "layers[{digest, kind, offset, size, segment, name}]} as JSON");
  return [a] { return run_pull(*a); };
}

}  // namespace mpspack::cli
