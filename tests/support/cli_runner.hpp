// Runs the mpspack executable the way a user or a CI script does, capturing exit code and output.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace mpspack::test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  // stderr split into lines (without the newline).
  std::vector<std::string> err_lines() const {
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
};

inline std::string mpspack_binary() {
  if (const char* p = std::getenv("MPSPACK_BIN")) return p;
  return (std::filesystem::path(MPSPACK_BINARY_DIR) / "bin" / "mpspack").string();
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Exit code run_mpspack gives a command it killed because it ran past its time limit.
inline constexpr int kTimedOut = -2;

// Waits for `pid` up to `timeout_s` seconds (0: no limit); past it, kills it and returns kTimedOut.
inline int wait_for_exit(pid_t pid, int timeout_s) {
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 10) {
    pid_t r = waitpid(pid, &status, timeout_s > 0 ? WNOHANG : 0);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return -1;
    if (waited_ms >= timeout_s * 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return kTimedOut;
    }
    usleep(10 * 1000);
  }
}

// Runs `argv` (argv[0] a path) with stdin closed and stdout/stderr captured (not a terminal: no progress), in
// `cwd` when one is given. With a `timeout_s`, a command still running after that many seconds is killed and
// gets exit code kTimedOut.
inline CliResult run_program(std::vector<std::string> argv_s, const std::filesystem::path& cwd = {},
                             int timeout_s = 0) {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() / ("mpspack-cli-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path out = dir / ("out" + std::to_string(counter));
  fs::path err = dir / ("err" + std::to_string(counter++));
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  pid_t pid;
  CliResult r;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0) r.exit_code = wait_for_exit(pid, timeout_s);
  posix_spawn_file_actions_destroy(&fa);
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

// Runs `mpspack args...` like run_program.
inline CliResult run_mpspack(const std::vector<std::string>& args, int timeout_s = 0) {
  std::vector<std::string> argv = {mpspack_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(std::move(argv), {}, timeout_s);
}

// Runs `mpspack args...` in the folder `cwd` (relative paths in `args` are taken from there).
inline CliResult run_mpspack_in(const std::filesystem::path& cwd, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {mpspack_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(std::move(argv), cwd);
}

// A fresh empty folder for one test, removed when the object goes away.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    char tmpl[] = "/tmp/mpspack-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path operator/(const std::string& name) const { return path / name; }
  // Names of everything in the folder (to prove nothing stray was left).
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path)) names.push_back(e.path().filename().string());
    return names;
  }
};

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace mpspack::test
