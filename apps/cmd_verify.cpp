#include "cli.hpp"
#include "commands.hpp"

namespace mpspack::cli {
namespace {

struct VerifyArgs {
  std::string file;
  bool json = false;
};

int run_verify(const VerifyArgs& a) {
  auto unknown = unknown_input(a.file, "verify", kContainerInput);
  Result<format::Container> c = unknown ? Result<format::Container>(*unknown) : format::Container::open(a.file);
  if (!c.ok()) {
    // A container whose structure is damaged fails the check; one that cannot be read is an error.
    bool damaged = c.error().kind == Error::Kind::Corrupt;
    if (a.json) print_json(verify_failure_json(a.file, c.error().message));
    return fail(c.error(), damaged ? kCheckFailed : kError);
  }
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
  app.add_flag("--json", a->json, "Print the report as JSON");
  return [a] { return run_verify(*a); };
}

}  // namespace mpspack::cli
