// sign: a detached signature of a container (a DSSE envelope over an in-toto statement; docs/SIGNING.md), written
// atomically to FILE.sig or -o.
#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/file.hpp"
#include "mpspack/sign/signature.hpp"

namespace mpspack::cli {
namespace {

struct SignArgs {
  std::string file, key, output;
  bool json = false;
};

int run_sign(const SignArgs& a) {
  // The key first: a wrong or missing key file is reported before the container is read.
  auto key = sign::PrivateKey::load(a.key);
  if (!key.ok()) return fail(key.error());
  if (auto unknown = unknown_input(a.file, "sign", kContainerInput)) return fail(*unknown);
  auto c = format::Container::open(a.file);
  if (!c.ok()) return fail(c.error());
  auto envelope = sign::sign(*c, *key, 0, progress_bar("sign"));
  if (!envelope.ok()) return fail(envelope.error());
  const std::string out = a.output.empty() ? sign::default_signature_path(a.file).string() : a.output;
  Status written =
      write_file_atomically(out, [&](AtomicWriter& w) { return w.write(envelope->data(), envelope->size()); });
  if (!written.ok()) return fail(written.error());
  const auto& pub = key->public_key();
  if (a.json)
    print_json({{"schema_version", 1},
                {"file", a.file},
                {"signature", out},
                {"key_id", pub.key_id()},
                {"algorithm", sign::to_string(pub.algorithm())}});
  else if (!globals().quiet)
    std::printf("%s: signed with %s key %s\n", printable(out).c_str(), sign::to_string(pub.algorithm()),
                pub.key_id().c_str());
  return kOk;
}

}  // namespace

Action add_sign(CLI::App& app) {
  auto a = std::make_shared<SignArgs>();
  app.add_option("file", a->file, "Container to sign")->required();
  app.add_option("--key", a->key, "Private key, PEM (PKCS#8 Ed25519 or ECDSA P-256, as openssl genpkey writes it)")
      ->required()
      ->check(non_empty());
  app.add_option("-o,--output", a->output, "Signature file to write (default: FILE.sig; replaced atomically)")
      ->check(non_empty());
  app.add_flag("--json", a->json, "Print {schema_version, file, signature, key_id, algorithm} as JSON");
  return [a] { return run_sign(*a); };
}

}  // namespace mpspack::cli
