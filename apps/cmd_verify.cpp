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
    if (a.json)
      print_json({{"schema_version", 1}, {"file", a.file}, {"ok", false}, {"problems", {c.error().message}}});
    return fail(c.error(), damaged ? kCheckFailed : kError);
  }
  auto report = format::verify(*c, progress_bar("verify"));
  if (a.json) {
    nlohmann::json segs = nlohmann::json::array();
    for (const auto& s : report.segments) {
      const auto& info = c->manifest().segments[s.index];
      segs.push_back({{"index", s.index}, {"name", info.name}, {"ok", s.ok},
                      {"xxh3", fmt::format("{:016x}", info.xxh3)},
                      {"computed_xxh3", fmt::format("{:016x}", s.computed_xxh3)}});
    }
    print_json({{"schema_version", 1}, {"file", a.file}, {"ok", report.ok()}, {"header_checksum", true},
                {"bytes_checked", report.bytes_checked}, {"segments", segs}, {"problems", report.problems}});
  }
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
