// A consumer that logs through spdlog itself, with a sink mpspack does not use (a file): spdlog in its own default
// mode beside libmpspack.a's compiled part of it. Opens the container and logs what it holds to the given file.
#include <mpspack/mpspack.hpp>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  auto log = spdlog::basic_logger_mt("consumer", argv[2], /*truncate=*/true);
  auto c = mpspack::format::Container::open(argv[1]);
  if (!c.ok()) {
    log->error("{}", c.error().message);
    return 1;
  }
  log->info("{} libraries", c->manifest().libraries.size());
  log->flush();
  return 0;
}
