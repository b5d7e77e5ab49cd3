// The baselines of bench/load_compare.sh: an AOTInductor model library opened the way other hosts
// open it, with mpspack's own shim exported (so the only difference to `mpspack run --bench` is
// how the library and its weights reach memory). Prints the phase times as one JSON object.
//
//   direct_load MODEL.so INPUT.bin DTYPE SHAPE [--blob WEIGHTS.blob] [--tempfile]
//     default     dlopen(MODEL.so) where it lies (the embedded weights come in with the image)
//     --blob      external blob: map the blob, AOTInductorModelUpdateConstantsFromBlob (copies)
//     --tempfile  ExecuTorch's way: read the whole .so, write it to a temp file, dlopen that
// DTYPE: f32 or i64; SHAPE like 4x16.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
struct AtenTensorOpaque;
using AtenTensorHandle = AtenTensorOpaque*;
int32_t aoti_torch_empty_strided(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                                 int32_t device_type, int32_t device_index, AtenTensorHandle* ret);
int32_t aoti_torch_get_data_ptr(AtenTensorHandle t, void** ret);
int32_t aoti_torch_delete_tensor_object(AtenTensorHandle t);
}

namespace {

using Clock = std::chrono::steady_clock;
using Handle = void*;
using CreateFn = int32_t (*)(Handle*, size_t, const char*, const char*);
using RunFn = int32_t (*)(Handle, AtenTensorHandle*, size_t, AtenTensorHandle*, size_t, void*, void*);
using CountFn = int32_t (*)(Handle, size_t*);
using BlobFn = int32_t (*)(Handle, const uint8_t*);
using DeleteFn = int32_t (*)(Handle);

double boottime_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// Milliseconds from exec to now by /proc/self/stat starttime (as mpspack's bench report does).
double exec_to_now_ms() {
  std::ifstream f("/proc/self/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto close = s.rfind(')');
  std::istringstream rest(s.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {}
  return std::max(0.0, boottime_ms() - std::stod(field) * 1e3 / double(::sysconf(_SC_CLK_TCK)));
}

struct ProcessClock {
  Clock::time_point init = Clock::now();
  double exec_to_init_ms = exec_to_now_ms();
};
const ProcessClock g_clock;

double ms(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "direct_load: %s\n", what.c_str());
  std::exit(2);
}

std::vector<uint8_t> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("cannot open " + path);
  struct stat st {};
  ::fstat(fd, &st);
  std::vector<uint8_t> b(size_t(st.st_size));
  size_t done = 0;
  while (done < b.size()) {
    ssize_t n = ::read(fd, b.data() + done, b.size() - done);
    if (n <= 0) die("cannot read " + path);
    done += size_t(n);
  }
  ::close(fd);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) die("usage: direct_load MODEL.so INPUT.bin f32|i64 SHAPE [--blob WEIGHTS.blob] [--tempfile]");
  std::string so = argv[1], input = argv[2], dtype = argv[3], shape_s = argv[4], blob;
  bool tempfile = false;
  for (int i = 5; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--blob" && i + 1 < argc) blob = argv[++i];
    else if (a == "--tempfile") tempfile = true;
    else die("unknown argument " + a);
  }
  std::vector<int64_t> shape;
  for (std::istringstream ss(shape_s); std::getline(ss, shape_s, 'x');) shape.push_back(std::stoll(shape_s));
  const int32_t dt = dtype == "i64" ? 4 : 6;
  const size_t esize = dtype == "i64" ? 8 : 4;

  double tempfile_ms = 0, dlopen_ms = 0, blob_ms = 0, create_ms = 0, first_run_ms = 0;
  // 1. the library into the process
  auto t0 = Clock::now();
  std::string path = so;
  if (tempfile) {
    auto bytes = read_file(so);
    char tmpl[] = "/tmp/direct_load-XXXXXX.so";
    int fd = ::mkstemps(tmpl, 3);
    if (fd < 0) die("mkstemps");
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) die("write temp file");
      done += size_t(n);
    }
    ::close(fd);
    path = tmpl;
    tempfile_ms = ms(t0);
  }
  t0 = Clock::now();
  void* dl = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!dl) die(std::string("dlopen: ") + ::dlerror());
  if (tempfile) ::unlink(path.c_str());
  dlopen_ms = ms(t0);
  auto create = reinterpret_cast<CreateFn>(::dlsym(dl, "AOTInductorModelContainerCreateWithDevice"));
  auto run = reinterpret_cast<RunFn>(::dlsym(dl, "AOTInductorModelContainerRun"));
  auto n_out_fn = reinterpret_cast<CountFn>(::dlsym(dl, "AOTInductorModelContainerGetNumOutputs"));
  auto from_blob = reinterpret_cast<BlobFn>(::dlsym(dl, "AOTInductorModelUpdateConstantsFromBlob"));
  auto destroy = reinterpret_cast<DeleteFn>(::dlsym(dl, "AOTInductorModelContainerDelete"));
  if (!create || !run || !n_out_fn || !destroy) die("not an AOTInductor model library");

  // 2. Create, and an external blob's weights
  t0 = Clock::now();
  Handle h = nullptr;
  if (create(&h, 1, "cpu", nullptr) != 0) die("Create failed");
  create_ms = ms(t0);
  void* blob_map = nullptr;
  size_t blob_size = 0;
  if (!blob.empty()) {
    t0 = Clock::now();
    int fd = ::open(blob.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) die("cannot open " + blob);
    blob_size = size_t(st.st_size);
    blob_map = ::mmap(nullptr, blob_size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (blob_map == MAP_FAILED || !from_blob) die("cannot map the blob or no UpdateConstantsFromBlob");
    if (from_blob(h, static_cast<const uint8_t*>(blob_map)) != 0) die("UpdateConstantsFromBlob failed");
    blob_ms = ms(t0);
  }

  // 3. the first run (input read before the clock, as mpspack reads its inputs before loading)
  auto in_bytes = read_file(input);
  t0 = Clock::now();
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  AtenTensorHandle in = nullptr;
  if (aoti_torch_empty_strided(int64_t(shape.size()), shape.data(), strides.data(), dt, 0, 0, &in) != 0)
    die("empty_strided");
  void* p = nullptr;
  aoti_torch_get_data_ptr(in, &p);
  size_t numel = 1;
  for (int64_t s : shape) numel *= size_t(s);
  if (numel * esize != in_bytes.size()) die("input size does not match DTYPE:SHAPE");
  std::memcpy(p, in_bytes.data(), in_bytes.size());
  size_t n_out = 0;
  n_out_fn(h, &n_out);
  std::vector<AtenTensorHandle> outs(n_out, nullptr);
  if (run(h, &in, 1, outs.data(), outs.size(), nullptr, nullptr) != 0) die("Run failed");
  first_run_ms = ms(t0);
  const double ttfr = g_clock.exec_to_init_ms + ms(g_clock.init);
  for (auto o : outs)
    if (o) aoti_torch_delete_tensor_object(o);

  std::printf("{\"mode\": \"%s\", \"tempfile_ms\": %.3f, \"dlopen_ms\": %.3f, \"create_ms\": %.3f, \"blob_ms\": %.3f, "
              "\"first_run_ms\": %.3f, \"load_to_first_result_ms\": %.3f, \"time_to_first_result_ms\": %.3f}\n",
              tempfile ? "tempfile" : (blob.empty() ? "dlopen" : "dlopen+blob"), tempfile_ms, dlopen_ms, create_ms,
              blob_ms, first_run_ms, tempfile_ms + dlopen_ms + create_ms + blob_ms + first_run_ms, ttfr);
  destroy(h);
  if (blob_map) ::munmap(blob_map, blob_size);
  return 0;
}
