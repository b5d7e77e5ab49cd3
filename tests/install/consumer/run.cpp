// Loads a container's model through the installed runtime and runs it on the container's recorded example input,
// comparing each output with the recorded example output (runtime::verify, what `mpspack run` does).
#include <mpspack/runtime/verify.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  mpspack::runtime::VerifyOptions options;
  options.container = argv[1];
  mpspack::Result<mpspack::runtime::VerifyReport> report = mpspack::runtime::verify(options);
  if (!report.ok()) {
    std::fprintf(stderr, "consumer_run: %s\n", report.error().message.c_str());
    return 2;
  }
  std::printf("library %s weights %s\n", report->library.c_str(), mpspack::runtime::to_string(report->weights_mode));
  for (const auto& out : report->outputs)
    std::printf("output %zu %s\n", out.index,
                !out.reference                    ? "unchecked"
                : out.reference->comparison.match ? "matches"
                                                  : "differs");
  if (!report->checked() || !report->ok()) return 1;
  std::printf("verified\n");
  return 0;
}
