// End to end: the rebuilt-bookworm AOTInductor CPU fixtures run on the shim and match torch eager.
#include "runtime/shim/provided.hpp"
#include "shim_test_util.hpp"

#include <fixtures.hpp>
#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

using namespace mpspack::test;

namespace {

using ContainerHandle = void*;
using CreateFn = int32_t (*)(ContainerHandle*, size_t, const char*, const char*);
using DeleteFn = int32_t (*)(ContainerHandle);
using RunFn = int32_t (*)(ContainerHandle, AtenTensorHandle*, size_t, AtenTensorHandle*, size_t, void*, void*);
using CountFn = int32_t (*)(ContainerHandle, size_t*);
using BlobFn = int32_t (*)(ContainerHandle, const uint8_t*);

std::vector<char> slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

int32_t dtype_code(const std::string& s) {
  if (s == "torch.float32") return aoti_torch_dtype_float32();
  if (s == "torch.int64") return aoti_torch_dtype_int64();
  if (s == "torch.float64") return aoti_torch_dtype_float64();
  if (s == "torch.int32") return aoti_torch_dtype_int32();
  FAIL("unexpected dtype " << s);
  return -1;
}

// A read-only mapping of a whole file.
struct Mapping {
  void* p = MAP_FAILED;
  size_t n = 0;
  explicit Mapping(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    n = static_cast<size_t>(st.st_size);
    p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    REQUIRE(p != MAP_FAILED);
  }
  ~Mapping() {
    if (p != MAP_FAILED) ::munmap(p, n);
  }
};

struct Model {
  void* lib = nullptr;
  CreateFn create;
  DeleteFn destroy;
  RunFn run;
  CountFn num_inputs, num_outputs;
  BlobFn update_from_blob;
  ContainerHandle h = nullptr;

  explicit Model(const std::filesystem::path& so) {
    lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    INFO("dlopen: " << (lib ? "" : dlerror()));
    REQUIRE(lib != nullptr);
    create = reinterpret_cast<CreateFn>(dlsym(lib, "AOTInductorModelContainerCreateWithDevice"));
    destroy = reinterpret_cast<DeleteFn>(dlsym(lib, "AOTInductorModelContainerDelete"));
    run = reinterpret_cast<RunFn>(dlsym(lib, "AOTInductorModelContainerRun"));
    num_inputs = reinterpret_cast<CountFn>(dlsym(lib, "AOTInductorModelContainerGetNumInputs"));
    num_outputs = reinterpret_cast<CountFn>(dlsym(lib, "AOTInductorModelContainerGetNumOutputs"));
    update_from_blob = reinterpret_cast<BlobFn>(dlsym(lib, "AOTInductorModelUpdateConstantsFromBlob"));
    REQUIRE((create && destroy && run && num_inputs && num_outputs && update_from_blob));
    mpspack::shim::pin_openmp_runtime();  // see provided.hpp: closing an OpenMP model must not unload libgomp
    REQUIRE(create(&h, 1, "cpu", nullptr) == 0);
  }
  ~Model() {
    if (h) destroy(h);
    if (lib) dlclose(lib);
  }
};

// Input tensors from inputN.bin, in the manifest's dtypes/shapes. The buffers must outlive the run.
std::vector<AtenTensorHandle> make_inputs(const nlohmann::json& c, const std::filesystem::path& dir,
                                          std::vector<std::vector<char>>& buffers) {
  std::vector<AtenTensorHandle> inputs;
  size_t i = 0;
  for (const auto& in : c.at("inputs")) {
    const auto shape = in.at("shape").get<std::vector<int64_t>>();
    const int32_t dt = dtype_code(in.at("dtype").get<std::string>());
    buffers.push_back(slurp(dir / ("input" + std::to_string(i++) + ".bin")));
    REQUIRE(buffers.back().size() == static_cast<size_t>(numel(shape)) * aoti_torch_dtype_element_size(dt));
    const auto strides = contiguous(shape);
    AtenTensorHandle t = nullptr;
    REQUIRE(aoti_torch_create_tensor_from_blob(buffers.back().data(), static_cast<int64_t>(shape.size()), shape.data(),
                                               strides.data(), 0, dt, aoti_torch_device_type_cpu(), 0, &t) == 0);
    inputs.push_back(t);
  }
  return inputs;
}

void run_case(const nlohmann::json& c, const std::filesystem::path& dir) {
  Model m(dir / "model.so");
  std::unique_ptr<Mapping> blob;
  if (std::filesystem::exists(dir / "weights.blob")) {
    blob = std::make_unique<Mapping>(dir / "weights.blob");
    REQUIRE(m.update_from_blob(m.h, static_cast<const uint8_t*>(blob->p)) == 0);
  }
  size_t n_in = 0, n_out = 0;
  REQUIRE(m.num_inputs(m.h, &n_in) == 0);
  REQUIRE(m.num_outputs(m.h, &n_out) == 0);
  REQUIRE(n_in == c.at("inputs").size());
  REQUIRE(n_out == c.at("outputs").size());

  for (int rep = 0; rep < 2; ++rep) {  // twice: the second run reuses the container's state
    std::vector<std::vector<char>> buffers;
    auto inputs = make_inputs(c, dir, buffers);
    std::vector<AtenTensorHandle> outputs(n_out, nullptr);
    // The model takes ownership of the input handles; the caller owns the outputs.
    REQUIRE(m.run(m.h, inputs.data(), n_in, outputs.data(), n_out, nullptr, nullptr) == 0);
    for (size_t o = 0; o < n_out; ++o) {
      Handle out(outputs[o]);
      const auto& spec = c.at("outputs")[o];
      REQUIRE(spec.at("dtype") == "torch.float32");
      CHECK(sizes_of(out.get()) == spec.at("shape").get<std::vector<int64_t>>());
      const auto expected = slurp(dir / ("expected" + std::to_string(o) + ".bin"));
      std::vector<double> want(expected.size() / 4);
      for (size_t i = 0; i < want.size(); ++i) {
        float f;
        std::memcpy(&f, expected.data() + 4 * i, 4);
        want[i] = f;
      }
      require_close(read_f32(out.get()), want, 1e-4, 1e-5);
    }
  }
}

nlohmann::json rebuilt_manifest() {
  return nlohmann::json::parse(std::ifstream(fixtures_dir() / "rebuilt-bookworm" / "manifest.json"));
}

}  // namespace

TEST_CASE("rebuilt-bookworm CPU fixtures run on the shim and match torch eager", "[shim][e2e]") {
  const auto root = fixtures_dir() / "rebuilt-bookworm";
  MPK_REQUIRE_FIXTURE(root / "manifest.json");
  const auto manifest = rebuilt_manifest();
  size_t ran = 0;
  for (const auto& c : manifest.at("cases")) {
    const std::string name = c.at("dir").get<std::string>();
    SECTION(name) {
      const auto dir = root / name;
      MPK_REQUIRE_FIXTURE(dir / "model.so");
      run_case(c, dir);
      ++ran;
    }
  }
  CHECK(ran <= 1);
}

// torch-built libraries need glibc >= 2.38 (Ubuntu 24.04); they run on the device machine. The fixture root can be
// moved with MPSPACK_FIXTURES_DIR (the device machine gets a copy at another path).
TEST_CASE("torch-built CPU fixtures without libtorch run on the shim", "[shim][e2e]") {
  const char* env = std::getenv("MPSPACK_FIXTURES_DIR");
  const auto root = (env && *env ? std::filesystem::path(env) : fixtures_dir()) / "torch-built";
  MPK_REQUIRE_FIXTURE(root / "manifest.json");
  const auto manifest = nlohmann::json::parse(std::ifstream(root / "manifest.json"));
  for (const auto& c : manifest.at("cases")) {
    const std::string name = c.at("dir").get<std::string>();
    if (c.value("device", "") != "cpu") continue;
    const auto needed = c.value("needed", std::vector<std::string>{});
    if (std::find(needed.begin(), needed.end(), "libtorch.so") != needed.end()) continue;  // brings torch's own shim
    SECTION(name) {
      const auto dir = root / name;
      MPK_REQUIRE_FIXTURE(dir / "model.so");
      void* probe = dlopen((dir / "model.so").c_str(), RTLD_LAZY | RTLD_LOCAL);
      if (probe == nullptr) {
        WARN("skipped: " << name << " does not load here: " << dlerror());
        return;
      }
      dlclose(probe);
      run_case(c, dir);
    }
  }
}

TEST_CASE("a failed model check (out-of-range token id) fails the Run, not the process", "[shim][e2e]") {
  const auto dir = fixtures_dir() / "rebuilt-bookworm" / "cpu_block_embedded";
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  Model m(dir / "model.so");
  std::vector<int64_t> ids(2 * 16, 3);
  ids[5] = 100000;  // the vocabulary has 100 entries
  const int64_t sz[] = {2, 16}, st[] = {16, 1};
  AtenTensorHandle in = nullptr;
  REQUIRE(aoti_torch_create_tensor_from_blob(ids.data(), 2, sz, st, 0, aoti_torch_dtype_int64(), 0, 0, &in) == 0);
  AtenTensorHandle out = nullptr;
  CHECK(m.run(m.h, &in, 1, &out, 1, nullptr, nullptr) != 0);
  if (out) aoti_torch_delete_tensor_object(out);
}

TEST_CASE("pin_openmp_runtime keeps libgomp loaded after the OpenMP model that brought it is closed", "[shim][e2e]") {
  const auto so = fixtures_dir() / "rebuilt-bookworm" / "cpu_cnn_embedded" / "model.so";
  MPK_REQUIRE_FIXTURE(so);
  void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(lib != nullptr);
  CHECK(mpspack::shim::pin_openmp_runtime());
  dlclose(lib);
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  CHECK(gomp != nullptr);
  if (gomp) dlclose(gomp);
}
