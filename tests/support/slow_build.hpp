// A build that runs long enough to be interrupted: a real external-blob library patched to record a 3 GiB
// blob, and that blob, sparse (it costs no disk), which build reads and zero-checks.
#pragma once

#include "cli_runner.hpp"
#include "fixtures.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

namespace mpspack::test {

inline std::filesystem::path blob_fixture_so() {
  return fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob" / "model.so";
}

// Writes DIR/big.so and DIR/big_weights.blob (3 GiB, sparse); returns big.so.
inline std::filesystem::path make_slow_build_input(const std::filesystem::path& dir) {
  std::string so = slurp(blob_fixture_so());
  auto probe = run_mpspack({"inspect", "--json", blob_fixture_so().string()});
  REQUIRE(probe.exit_code == 0);
  auto at = probe.out.find("\"file_offset\": ");
  REQUIRE(at != std::string::npos);
  uint64_t offset = std::stoull(probe.out.substr(at + 15));
  const uint64_t size = 3ull << 30;
  for (int i = 0; i < 8; ++i) so[offset + i] = static_cast<char>((size >> (8 * i)) & 0xff);
  write_bytes(dir / "big.so", so);
  write_bytes(dir / "big_weights.blob", "");
  std::filesystem::resize_file(dir / "big_weights.blob", size);
  return dir / "big.so";
}

inline bool has_temp_file(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".mpk-tmp-") != std::string::npos) return true;
  return false;
}

// Starts `mpspack args...` with stderr to `err_path`; returns its pid.
inline pid_t spawn_mpspack(std::vector<std::string> args, const std::filesystem::path& err_path) {
  args.insert(args.begin(), mpspack_binary());
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Waits (up to a minute: the inputs are hashed first) until a temp file appears in `dir`: the build is under way.
inline bool wait_for_temp_file(const std::filesystem::path& dir) {
  for (int i = 0; i < 6000; ++i) {
    if (has_temp_file(dir)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A build of the slow input `big` into `out`, sent `sig` once its temp file exists in `dir`: whether the temp file
// appeared (the build was under way) and the wait status it ended with.
struct InterruptedBuild {
  bool started = false;
  int status = 0;
};

inline InterruptedBuild interrupt_build(const std::filesystem::path& dir, const std::filesystem::path& big,
                                        const std::filesystem::path& out, int sig) {
  const pid_t pid = spawn_mpspack({"build", big.string(), "-o", out.string()}, dir / "stderr.txt");
  InterruptedBuild r;
  r.started = wait_for_temp_file(dir);
  ::kill(pid, sig);
  ::waitpid(pid, &r.status, 0);
  return r;
}

}  // namespace mpspack::test
