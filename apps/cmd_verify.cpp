#include "cli.hpp"
#include "commands.hpp"
#include "mpspack/sign/signature.hpp"

namespace mpspack::cli {
namespace {

struct VerifyArgs {
  std::string file;
  std::string key, signature;  // --key, --signature
  bool json = false;
};

// verify --key: the signature and every signed range's SHA-256 (docs/SIGNING.md) instead of the XXH3 hashes; the
// padding is checked too, and open() already checked the header and the metadata.
int run_verify_signature(const VerifyArgs& a, const format::Container& c) {
  std::optional<std::filesystem::path> sig;
  if (!a.signature.empty()) sig = a.signature;
  auto v = sign::verify_files(c, a.key, sig, 0, progress_bar("verify"));
  const std::string sig_name = sig ? sig->string() : sign::default_signature_path(a.file).string();
  if (a.json) {
    nlohmann::json j{{"schema_version", 1}, {"file", a.file}, {"signature", sig_name}, {"ok", v.ok()}};
    if (v.ok()) j.update({{"key_id", v->key_id}, {"subjects", v->subjects}, {"bytes_hashed", v->bytes_hashed}});
    else j["problem"] = v.error().message;
    print_json(j);
  }
  if (!v.ok()) return fail(v.error(), v.error().kind == Error::Kind::Corrupt ? kCheckFailed : kError);
  if (!a.json && !globals().quiet)
    std::printf("%s: OK (signed by key %s; %zu signed ranges, %llu bytes hashed, padding zero)\n",
                printable(a.file).c_str(), v->key_id.c_str(), v->subjects, (unsigned long long)v->bytes_hashed);
  return kOk;
}

int run_verify(const VerifyArgs& a) {
  auto unknown = unknown_input(a.file, "verify", kContainerInput);
  Result<format::Container> c = unknown ? Result<format::Container>(*unknown) : format::Container::open(a.file);
  if (!c.ok()) {
    // A container whose structure is damaged fails the check; one that cannot be read is an error.
    bool damaged = c.error().kind == Error::Kind::Corrupt;
    if (a.json) print_json(verify_failure_json(a.file, c.error().message));
    return fail(c.error(), damaged ? kCheckFailed : kError);
  }
  if (!a.key.empty()) return run_verify_signature(a, *c);
  auto report = format::verify(*c, progress_bar("verify"));
  if (a.json) print_json(verify_json(*c, report));
  for (const auto& p : report.problems) std::fprintf(stderr, "mpspack: %s\n", printable(p).c_str());
  if (!report.ok()) return report.unreadable ? kError : kCheckFailed;  // as when open() cannot read it
  if (!a.json && !globals().quiet)
    std::printf("%s: OK (header checksum, %zu segments, %llu bytes hashed, padding zero)\n", printable(a.file).c_str(),
                report.segments.size(), static_cast<unsigned long long>(report.bytes_checked));
  return kOk;
}

}  // namespace

Action add_verify(CLI::App& app) {
  auto a = std::make_shared<VerifyArgs>();
  app.add_option("file", a->file, "Container to verify")->required();
  CLI::Option* key = app.add_option("--key", a->key,
                                     "Also check the container's signature with this public key (PEM), and every "
                                     "signed byte's SHA-256 instead of the XXH3 hashes")
                         ->check(non_empty());
  app.add_option("--signature", a->signature, "The signature file (default: FILE.sig beside the container)")
      ->check(non_empty())
      ->needs(key);
  app.add_flag("--json", a->json, "Print the report as JSON");
  return [a] { return run_verify(*a); };
}

}  // namespace mpspack::cli
