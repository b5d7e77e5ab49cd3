// Faults during build and unpack: nothing the user had is lost, nothing partial is left.
#include "cli_runner.hpp"
#include "fixtures.hpp"
#include "slow_build.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

fs::path mlp_so() { return fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_embedded" / "model.so"; }

// A tmpfs of `bytes` mounted at `dir` (root only); unmounted on destruction.
struct SmallFs {
  fs::path dir;
  bool mounted = false;
  SmallFs(fs::path d, uint64_t bytes, bool read_only = false) : dir(std::move(d)) {
    fs::create_directories(dir);
    std::string opts = "size=" + std::to_string(bytes);
    mounted = ::mount("tmpfs", dir.c_str(), "tmpfs", read_only ? MS_RDONLY : 0, opts.c_str()) == 0;
  }
  ~SmallFs() {
    if (mounted) ::umount(dir.c_str());
  }
};

}  // namespace

TEST_CASE("a full disk gives a clear error and leaves no partial output", "[cli][faults]") {
  MPK_REQUIRE_FIXTURE(mlp_so());
  TempDir tmp;
  SmallFs small(tmp / "small", 256 * 1024);  // the container needs about 500 KiB
  if (!small.mounted) {
    WARN("skipped: cannot mount a small tmpfs here (needs root): " << std::strerror(errno));
    return;
  }
  auto out = small.dir / "m.mpk";
  auto r = run_mpspack({"build", mlp_so().string(), "-o", out.string()});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err.find("m.mpk") != std::string::npos);
  CHECK(r.err.find("No space left on device") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(has_temp_file(small.dir));

  // unpack into the full file system fails the same way.
  REQUIRE(run_mpspack({"build", mlp_so().string(), "-o", (tmp / "ok.mpk").string()}).exit_code == 0);
  auto u = run_mpspack({"unpack", (tmp / "ok.mpk").string(), "-o", small.dir.string()});
  CHECK(u.exit_code == 2);
  CHECK(u.err.find("No space left on device") != std::string::npos);
  CHECK_FALSE(fs::exists(small.dir / "model.so"));
  CHECK_FALSE(has_temp_file(small.dir));
}

TEST_CASE("an output folder that is missing or read-only is refused cleanly", "[cli][faults]") {
  MPK_REQUIRE_FIXTURE(mlp_so());
  TempDir tmp;
  auto missing = run_mpspack({"build", mlp_so().string(), "-o", (tmp / "no" / "such" / "m.mpk").string()});
  CHECK(missing.exit_code == 2);
  REQUIRE(missing.err_lines().size() == 1);
  CHECK(missing.err.find("does not exist") != std::string::npos);

  SmallFs ro(tmp / "ro", 1 << 20, /*read_only=*/true);
  if (!ro.mounted) {
    WARN("skipped: cannot mount a read-only tmpfs here (needs root): " << std::strerror(errno));
    return;
  }
  auto r = run_mpspack({"build", mlp_so().string(), "-o", (ro.dir / "m.mpk").string()});
  CHECK(r.exit_code == 2);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err.find("Read-only file system") != std::string::npos);
}

TEST_CASE("kill -9 during build leaves the previous output untouched, and the next build cleans up", "[cli][faults]") {
  auto blob_so = blob_fixture_so();
  MPK_REQUIRE_FIXTURE(blob_so);
  TempDir tmp;
  // Reading and zero-checking a 3 GiB sparse blob keeps the build busy long enough to be killed mid-way.
  auto big = make_slow_build_input(tmp.path);
  auto out = tmp / "out.mpk";
  write_bytes(out, "previous contents");
  // Killed once the temp file exists (the build is under way).
  const auto r = interrupt_build(tmp.path, big, out, SIGKILL);
  REQUIRE(r.started);
  CHECK(WIFSIGNALED(r.status));
  CHECK(slurp(out) == "previous contents");
  CHECK(has_temp_file(tmp.path));  // a killed process cannot clean up after itself...

  // ...so the next build of the same output removes what the dead one left.
  auto small = run_mpspack({"build", blob_so.string(), "--weights",
                            (fixtures_dir() / "rebuilt-bookworm" / "cpu_mlp_blob" / "weights.blob").string(), "-o",
                            out.string()});
  INFO(small.err);
  REQUIRE(small.exit_code == 0);
  CHECK_FALSE(has_temp_file(tmp.path));
  CHECK(run_mpspack({"verify", out.string()}).exit_code == 0);
}

TEST_CASE("a read error on an input mid-build gives a clear error and leaves no partial output", "[cli][faults]") {
  // What this simulates: mpspack maps its inputs, so a page it cannot read is not an error code
  // but a SIGBUS, whether the cause is a failing disk (EIO) or another process truncating the file
  // while mpspack reads it. Truncating is the deterministic way to get exactly that signal without
  // a broken disk: build is reading a 3 GiB sparse blob when the blob is cut to 4 KiB under it.
  auto blob_so = blob_fixture_so();
  MPK_REQUIRE_FIXTURE(blob_so);
  TempDir tmp;
  auto big = make_slow_build_input(tmp.path);
  auto blob = tmp / "big_weights.blob";
  auto out = tmp / "out.mpk";
  write_bytes(out, "previous contents");
  auto err_path = tmp / "stderr.txt";
  pid_t pid = spawn_mpspack({"build", big.string(), "-o", out.string()}, err_path);
  // Once the temp file exists the inputs are mapped and being read: cut the blob under it.
  const bool started = wait_for_temp_file(tmp.path);
  if (started) fs::resize_file(blob, 4096);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(started);
  std::string err = slurp(err_path);
  INFO("stderr: " << err);
  REQUIRE(WIFEXITED(status));  // not killed by SIGBUS
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(err.rfind("mpspack: ", 0) == 0);
  CHECK(err.find("big_weights.blob") != std::string::npos);
  CHECK(err.find("read error") != std::string::npos);
  CHECK(slurp(out) == "previous contents");  // the previous output is untouched
  CHECK_FALSE(has_temp_file(tmp.path));      // and the handler removed the temp file
}

TEST_CASE("an input that cannot be opened for reading is refused with the reason", "[cli][faults]") {
  // EACCES on open: a file mode 000. Root reads such files anyway, so under root the build runs as
  // the unprivileged user "nobody" (uid 65534), for whom the folder is readable but the file not.
  MPK_REQUIRE_FIXTURE(mlp_so());
  TempDir tmp;
  fs::permissions(tmp.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  auto locked = tmp / "locked.so";
  fs::copy_file(mlp_so(), locked);
  fs::permissions(locked, fs::perms::none);
  auto out_dir = tmp / "out";
  fs::create_directories(out_dir);
  fs::permissions(out_dir, fs::perms::all);  // writable by "nobody" too: only the input can fail
  auto err_path = tmp / "stderr.txt";
  const bool root = ::geteuid() == 0;
  pid_t pid = fork();
  if (pid == 0) {
    int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    if (root && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(126);
    std::string bin = mpspack_binary(), b = "build", in = locked.string(), o = "-o", os = (out_dir / "m.mpk").string();
    char* argv[] = {bin.data(), b.data(), in.data(), o.data(), os.data(), nullptr};
    execv(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::string err = slurp(err_path);
  INFO("stderr: " << err);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 126) {
    WARN("skipped: cannot switch to uid 65534 to read as an unprivileged user");
    return;
  }
  if (WEXITSTATUS(status) == 127) {
    WARN("skipped: user 65534 cannot execute " << mpspack_binary() << " (a parent folder is not searchable)");
    return;
  }
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(err.find("locked.so") != std::string::npos);
  CHECK(err.find("Permission denied") != std::string::npos);
  CHECK_FALSE(fs::exists(out_dir / "m.mpk"));
}
