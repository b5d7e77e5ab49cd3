// push: a container to an OCI registry, uploading only the layers the registry does not hold yet.
#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/sign/signature.hpp"
#include "registry_options.hpp"

namespace mpspack::cli {
namespace {

struct PushArgs {
  std::string file, reference;
  std::string sign_key;  // --sign: attach a signature made with this private key
  RegistryArgs registry;
  bool json = false;
};

// The --json report of a push; signature_digest is null when nothing was signed.
void print_push_json(const PushArgs& a, const registry::PushReport& report, const nlohmann::json& signature_digest) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& t : report.layers) {
    auto j = layer_json(t.layer);
    j["sent"] = t.sent;
    layers.push_back(std::move(j));
  }
  print_json({{"schema_version", 1},
              {"file", a.file},
              {"reference", report.reference},
              {"manifest_digest", report.manifest_digest},
              {"config_digest", report.config_digest},
              {"bytes_sent", report.bytes_sent},
              {"bytes_resumed", report.bytes_resumed},
              {"bytes_skipped", report.bytes_skipped},
              {"layers", layers},
              {"signature_digest", signature_digest}});
}

int run_push(const PushArgs& a) {
  auto ref = registry::parse_reference(a.reference);
  if (!ref.ok()) return fail(ref.error());
  auto options = client_options(a.registry);
  if (!options.ok()) return fail(options.error());
  if (auto unknown = unknown_input(a.file, "push", kContainerInput)) return fail(*unknown);
  // The key is read and the signature made before anything goes up: a bad key or a damaged container pushes nothing.
  std::optional<sign::PrivateKey> key;
  if (!a.sign_key.empty()) {
    auto k = sign::PrivateKey::load(a.sign_key);
    if (!k.ok()) return fail(k.error());
    key = std::move(k).value();
  }
  auto c = format::Container::open(a.file);
  if (!c.ok()) return fail(c.error());
  std::string envelope;
  if (key) {
    auto e = sign::sign(*c, *key, 0, progress_bar("sign"));
    if (!e.ok()) return fail(e.error());
    envelope = std::move(e).value();
  }
  auto report = registry::push(*c, *ref, *options, progress_bar("push"));
  if (!report.ok()) return fail(report.error());
  std::string signature_digest;
  if (key) {
    auto attached = registry::push_signature(*ref, report->manifest_digest, report->manifest_size, envelope, *options);
    if (!attached.ok()) return fail(attached.error());
    signature_digest = *attached;
  }
  if (a.json) {
    print_push_json(a, *report, key ? nlohmann::json(signature_digest) : nlohmann::json());
  } else if (!globals().quiet) {
    size_t sent = 0;
    for (const auto& t : report->layers) sent += t.sent;
    std::printf("%s@%s\n%zu of %zu layers sent (%llu bytes), %zu already there (%llu bytes)\n",
                printable(report->reference).c_str(), report->manifest_digest.c_str(), sent, report->layers.size(),
                (unsigned long long)report->bytes_sent, report->layers.size() - sent,
                (unsigned long long)report->bytes_skipped);
    if (key)
      std::printf("signature %s attached (key %s)\n", signature_digest.c_str(), key->public_key().key_id().c_str());
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
  app.add_option("--sign", a->sign_key,
                 "Sign the container with this private key (PEM) and attach the signature as an OCI referrer")
      ->check(non_empty());
  app.add_flag("--json", a->json,
               "Print {schema_version, file, reference, manifest_digest, config_digest, bytes_sent, bytes_resumed, "
               "bytes_skipped, layers[{digest, kind, offset, size, segment, name, sent}], signature_digest} as JSON");
  return [a] { return run_push(*a); };
}

}  // namespace mpspack::cli
