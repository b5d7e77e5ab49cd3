// `mpspack verify FILE`: the container's checksums, bounds, segment hashes and padding (format::verify), as text,
// JSON, and with --junit as one JUnit test case.
#include "cli.hpp"
#include "commands.hpp"
#include "junit.hpp"
#include "mpspack/sign/signature.hpp"

#include <chrono>

namespace mpspack::cli {
namespace {

struct VerifyArgs {
  std::string file;
  std::string key, signature;  // --key, --signature
  bool json = false;
  std::string junit;
};

// The JUnit case of one verify: passed, failed (damage: exit 1) or errored (unreadable: exit 2), with every
// problem found.
JunitSuite verify_suite(const VerifyArgs& a, double seconds, int code, const std::vector<std::string>& problems) {
  JunitCase c{printable(a.file), "mpspack.verify", seconds};
  if (code != kOk) {
    c.outcome = code == kCheckFailed ? JunitCase::Outcome::failure : JunitCase::Outcome::error;
    c.type = code == kCheckFailed ? "damaged" : "unreadable";
    c.message = problems.empty() ? std::string("verify failed") : problems.front();
    for (const auto& p : problems) c.details += p + "\n";
  }
  return {"mpspack verify", {c}, {}};
}

// verify --key: the signature and every signed range's SHA-256 (docs/SIGNING.md) instead of the XXH3 hashes; the
// padding is checked too, and open() already checked the header and the metadata.
int run_verify_signature(const VerifyArgs& a, const format::Container& c, std::vector<std::string>& problems) {
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
  if (!v.ok()) {
    problems.push_back(v.error().message);
    return fail(v.error(), v.error().kind == Error::Kind::Corrupt ? kCheckFailed : kError);
  }
  if (!a.json && !globals().quiet)
    std::printf("%s: OK (signed by key %s; %zu signed ranges, %llu bytes hashed, padding zero)\n",
                printable(a.file).c_str(), v->key_id.c_str(), v->subjects, (unsigned long long)v->bytes_hashed);
  return kOk;
}

int run_verify(const VerifyArgs& a) {
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](int code, const std::vector<std::string>& problems) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return finish_with_junit(a.junit, verify_suite(a, s, code, problems), code);
  };
  auto unknown = unknown_input(a.file, "verify", kContainerInput);
  Result<format::Container> c = unknown ? Result<format::Container>(*unknown) : format::Container::open(a.file);
  if (!c.ok()) {
    // A container whose structure is damaged fails the check; one that cannot be read is an error.
    bool damaged = c.error().kind == Error::Kind::Corrupt;
    if (a.json) print_json(verify_failure_json(a.file, c.error().message));
    return finish(fail(c.error(), damaged ? kCheckFailed : kError), {c.error().message});
  }
  if (!a.key.empty()) {
    std::vector<std::string> problems;
    const int code = run_verify_signature(a, *c, problems);
    return finish(code, problems);
  }
  auto report = format::verify(*c, progress_bar("verify"));
  if (a.json) print_json(verify_json(*c, report));
  for (const auto& p : report.problems) std::fprintf(stderr, "mpspack: %s\n", printable(p).c_str());
  if (!report.ok())
    return finish(report.unreadable ? kError : kCheckFailed, report.problems);  // as when open() cannot read it
  if (!a.json && !globals().quiet)
    std::printf("%s: OK (header checksum, %zu segments, %llu bytes hashed, padding zero)\n", printable(a.file).c_str(),
                report.segments.size(), static_cast<unsigned long long>(report.bytes_checked));
  return finish(kOk, {});
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
  app.add_option("--junit", a->junit, "Also write the result as JUnit XML to FILE (one test case)")->check(non_empty());
  return [a] { return run_verify(*a); };
}

}  // namespace mpspack::cli
