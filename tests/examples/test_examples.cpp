// The bundled tiny MLP (examples/tiny_mlp): its layout is AOTInductor's (symbols, .lrodata in the
// last PT_LOAD, 64-byte padded constants equal to what the generator wrote), its C API answers
// like a model library's, and it runs to the expected output on the shim this executable exports
// (the real mpspack_shim when it exists, else stub_shim.cpp).
#include "mpspack/file.hpp"
#include "spec.hpp"

#include "fixtures.hpp"

#include <catch2/catch.hpp>
#include <dlfcn.h>
#include <elf.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace tiny_mlp;

extern "C" {
struct AtenTensorOpaque;
using AtenTensorHandle = AtenTensorOpaque*;
int32_t aoti_torch_create_tensor_from_blob(void* data, int64_t ndim, const int64_t* sizes_ptr,
                                           const int64_t* strides_ptr, int64_t storage_offset, int32_t dtype,
                                           int32_t device_type, int32_t device_index, AtenTensorHandle* ret);
int32_t aoti_torch_delete_tensor_object(AtenTensorHandle tensor);
int32_t aoti_torch_get_data_ptr(AtenTensorHandle tensor, void** ret_data_ptr);
int32_t aoti_torch_get_sizes(AtenTensorHandle tensor, int64_t** ret_sizes);
}

namespace {

fs::path model_dir() { return mpspack::test::binary_dir() / "examples" / "tiny_mlp"; }
fs::path model_path() { return model_dir() / "model.so"; }
fs::path constants_path() { return mpspack::test::binary_dir() / "examples" / "tiny_mlp_gen" / "constants.bin"; }

std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

std::vector<float> read_f32(const fs::path& p) {
  auto b = read_bytes(p);
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), v.size() * 4);  // little-endian host
  return v;
}

using Handle = void*;
struct Api {
  void* lib = nullptr;
  int32_t (*create)(Handle*, size_t, const char*, const char*);
  int32_t (*destroy)(Handle);
  int32_t (*run)(Handle, AtenTensorHandle*, size_t, AtenTensorHandle*, size_t, void*, void*);
  int32_t (*num_constants)(Handle, size_t*);
  int32_t (*constant_name)(Handle, size_t, const char**);
  int32_t (*constant_fqn)(Handle, size_t, const char**);
  int32_t (*constant_dtype)(Handle, size_t, int32_t*);
  int32_t (*constant_type)(Handle, size_t, int32_t*);
  int32_t (*constant_size)(Handle, size_t, size_t*);
  int32_t (*constant_folded)(Handle, size_t, bool*);
  int32_t (*blob_size)(Handle, uint64_t*);
  int32_t (*num_inputs)(Handle, size_t*);
  int32_t (*num_outputs)(Handle, size_t*);
  int32_t (*update_from_blob)(Handle, const uint8_t*);
  struct Pair {
    const char* name;
    AtenTensorHandle handle;
  };
  int32_t (*update_pairs)(Handle, const Pair*, size_t, bool, bool);

  template <class F>
  void bind(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    INFO(name);
    REQUIRE(f != nullptr);
  }
  explicit Api(void* l) : lib(l) {
    bind(create, "AOTInductorModelContainerCreateWithDevice");
    bind(destroy, "AOTInductorModelContainerDelete");
    bind(run, "AOTInductorModelContainerRun");
    bind(num_constants, "AOTInductorModelContainerGetNumConstants");
    bind(constant_name, "AOTInductorModelContainerGetConstantName");
    bind(constant_fqn, "AOTInductorModelContainerGetConstantOriginalFQN");
    bind(constant_dtype, "AOTInductorModelContainerGetConstantDtype");
    bind(constant_type, "AOTInductorModelContainerGetConstantType");
    bind(constant_size, "AOTInductorModelContainerGetConstantDataSize");
    bind(constant_folded, "AOTInductorModelContainerGetConstantFromFolded");
    bind(blob_size, "AOTInductorModelContainerGetConstantsBlobSize");
    bind(num_inputs, "AOTInductorModelContainerGetNumInputs");
    bind(num_outputs, "AOTInductorModelContainerGetNumOutputs");
    bind(update_from_blob, "AOTInductorModelUpdateConstantsFromBlob");
    bind(update_pairs, "AOTInductorModelContainerUpdateUserManagedConstantBufferPairs");
    void* p = nullptr;
    bind(p, "AOTInductorModelContainerRunSingleThreaded");
    bind(p, "AOTInductorModelContainerGetInputName");
    bind(p, "AOTInductorModelContainerGetOutputName");
    bind(p, "AOTInductorModelContainerGetCallSpec");
  }
};

void* open_model() {
  void* lib = dlopen(model_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
  return lib;
}

AtenTensorHandle f32_tensor(std::vector<float>& data, int64_t rows, int64_t cols) {
  const int64_t sizes[2] = {rows, cols}, strides[2] = {cols, 1};
  AtenTensorHandle h = nullptr;
  REQUIRE(aoti_torch_create_tensor_from_blob(data.data(), 2, sizes, strides, 0, 6, 0, 0, &h) == 0);
  return h;
}

AtenTensorHandle vector_tensor(std::vector<float>& data) {
  const int64_t sizes[1] = {int64_t(data.size())}, strides[1] = {1};
  AtenTensorHandle h = nullptr;
  REQUIRE(aoti_torch_create_tensor_from_blob(data.data(), 1, sizes, strides, 0, 6, 0, 0, &h) == 0);
  return h;
}

// Runs once on input0.bin; returns the [4,8] output.
std::vector<float> run_once(const Api& api, Handle c) {
  std::vector<float> x = read_f32(model_dir() / "input0.bin");
  REQUIRE(x.size() == size_t(kBatch * kIn));
  AtenTensorHandle in = f32_tensor(x, kBatch, kIn);
  AtenTensorHandle out = nullptr;
  REQUIRE(api.run(c, &in, 1, &out, 1, nullptr, nullptr) == 0);  // takes `in`
  REQUIRE(out != nullptr);
  int64_t* sizes = nullptr;
  REQUIRE(aoti_torch_get_sizes(out, &sizes) == 0);
  CHECK(sizes[0] == kBatch);
  CHECK(sizes[1] == kOut);
  void* p = nullptr;
  REQUIRE(aoti_torch_get_data_ptr(out, &p) == 0);
  std::vector<float> y(static_cast<float*>(p), static_cast<float*>(p) + kBatch * kOut);
  aoti_torch_delete_tensor_object(out);
  return y;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::fabs(got[i] - want[i]) <= 1e-5f + 1e-5f * std::fabs(want[i]));
  }
}

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

TEST_CASE("tiny_mlp: the build wrote the library, the example input and the expected output") {
  REQUIRE(fs::exists(model_path()));
  CHECK(fs::file_size(model_dir() / "input0.bin") == size_t(kBatch * kIn * 4));
  CHECK(fs::file_size(model_dir() / "expected0.bin") == size_t(kBatch * kOut * 4));
  CHECK(fs::file_size(constants_path()) == kBlobSize);
  CHECK(kBlobSize == 2048 + 128 + 1024 + 64);
}

TEST_CASE("tiny_mlp: the constants region is exported, 64-aligned and holds the generated blob") {
  void* lib = open_model();
  auto* start = static_cast<const uint8_t*>(dlsym(lib, "_binary_constants_bin_start"));
  auto* end = static_cast<const uint8_t*>(dlsym(lib, "_binary_constants_bin_end"));
  REQUIRE(start != nullptr);
  REQUIRE(end != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(start) % 64 == 0);
  REQUIRE(end - start == ptrdiff_t(kBlobSize));
  auto blob = read_bytes(constants_path());
  REQUIRE(blob.size() == kBlobSize);
  CHECK(std::memcmp(start, blob.data(), kBlobSize) == 0);
  // Padding is zeros: fc2.bias holds 8 floats in a 64-byte slot.
  for (uint64_t i = blob_offset(3) + 32; i < kBlobSize; ++i) CHECK(start[i] == 0);
  dlclose(lib);
}

TEST_CASE("tiny_mlp: the region is .lrodata, alone in the last PT_LOAD, read-only") {
  auto f = mpspack::MappedFile::open(model_path());
  REQUIRE(f.ok());
  const uint8_t* b = f->data();
  REQUIRE(f->size() > sizeof(Elf64_Ehdr));
  auto eh = load<Elf64_Ehdr>(b);
  REQUIRE(std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
  REQUIRE(eh.e_ident[EI_CLASS] == ELFCLASS64);
  REQUIRE(eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) <= f->size());
  REQUIRE(eh.e_phoff + uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr) <= f->size());
  auto shstr = load<Elf64_Shdr>(b + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr));
  Elf64_Shdr lrodata{};
  bool found = false;
  for (int i = 0; i < eh.e_shnum; ++i) {
    auto sh = load<Elf64_Shdr>(b + eh.e_shoff + i * sizeof(Elf64_Shdr));
    REQUIRE(shstr.sh_offset + sh.sh_name < f->size());
    const char* name = reinterpret_cast<const char*>(b + shstr.sh_offset + sh.sh_name);
    if (std::strcmp(name, ".lrodata") == 0) {
      lrodata = sh;
      found = true;
    }
  }
  REQUIRE(found);
  constexpr uint64_t kShfX86_64Large = 0x10000000;  // SHF_X86_64_LARGE, set by gas for .lrodata
  CHECK(lrodata.sh_flags == (SHF_ALLOC | kShfX86_64Large));
  CHECK(lrodata.sh_size >= kBlobSize);

  const Elf64_Phdr* last = nullptr;
  std::vector<Elf64_Phdr> loads;
  for (int i = 0; i < eh.e_phnum; ++i) {
    auto ph = load<Elf64_Phdr>(b + eh.e_phoff + i * sizeof(Elf64_Phdr));
    if (ph.p_type == PT_LOAD) loads.push_back(ph);
  }
  REQUIRE(loads.size() >= 2);
  last = &loads.back();
  for (const auto& ph : loads) CHECK(ph.p_vaddr <= last->p_vaddr);
  CHECK(last->p_flags == PF_R);
  CHECK(last->p_vaddr == lrodata.sh_addr);
  CHECK(last->p_offset == lrodata.sh_offset);
  CHECK(last->p_filesz == lrodata.sh_size);

  // And the symbols point inside it.
  void* lib = open_model();
  Dl_info info{};
  void* start = dlsym(lib, "_binary_constants_bin_start");
  REQUIRE(dladdr(start, &info) != 0);
  uint64_t vaddr = uint64_t(static_cast<uint8_t*>(start) - static_cast<uint8_t*>(info.dli_fbase));
  CHECK(vaddr % 64 == 0);
  CHECK(vaddr >= lrodata.sh_addr);
  CHECK(vaddr + kBlobSize <= lrodata.sh_addr + lrodata.sh_size);
  dlclose(lib);
}

TEST_CASE("tiny_mlp: the C API describes four 64-byte padded f32 parameters") {
  void* lib = open_model();
  Api api(lib);
  Handle c = nullptr;
  REQUIRE(api.create(&c, 1, "cpu", nullptr) == 0);
  size_t n = 0;
  REQUIRE(api.num_constants(c, &n) == 0);
  REQUIRE(n == 4);
  const char* names[] = {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"};
  const char* fqns[] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
  const size_t sizes[] = {2048, 128, 1024, 64};
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const char* s = nullptr;
    REQUIRE(api.constant_name(c, i, &s) == 0);
    CHECK(std::string(s) == names[i]);
    REQUIRE(api.constant_fqn(c, i, &s) == 0);
    CHECK(std::string(s) == fqns[i]);
    int32_t v = -1;
    REQUIRE(api.constant_dtype(c, i, &v) == 0);
    CHECK(v == 6);
    REQUIRE(api.constant_type(c, i, &v) == 0);
    CHECK(v == 1);
    size_t ds = 0;
    REQUIRE(api.constant_size(c, i, &ds) == 0);
    CHECK(ds == sizes[i]);
    CHECK(ds % 64 == 0);
    sum += ds;
    bool folded = true;
    REQUIRE(api.constant_folded(c, i, &folded) == 0);
    CHECK_FALSE(folded);
  }
  const char* s = nullptr;
  CHECK(api.constant_name(c, 4, &s) != 0);
  uint64_t blob = 0;
  REQUIRE(api.blob_size(c, &blob) == 0);
  CHECK(blob == sum);
  CHECK(sum == kBlobSize);
  size_t io = 0;
  REQUIRE(api.num_inputs(c, &io) == 0);
  CHECK(io == 1);
  REQUIRE(api.num_outputs(c, &io) == 0);
  CHECK(io == 1);
  REQUIRE(api.destroy(c) == 0);

  Handle cuda = nullptr;
  CHECK(api.create(&cuda, 1, "cuda", nullptr) != 0);
  dlclose(lib);
}

TEST_CASE("tiny_mlp: runs to expected0.bin on the exported shim") {
  INFO("shim: " << MPSPACK_TEST_SHIM);
  void* lib = open_model();
  Api api(lib);
  Handle c = nullptr;
  REQUIRE(api.create(&c, 1, "cpu", nullptr) == 0);
  std::vector<float> want = read_f32(model_dir() / "expected0.bin");
  check_close(run_once(api, c), want);
  check_close(run_once(api, c), want);  // constants survive a run

  SECTION("UpdateConstantsFromBlob copies a blob laid out like the region") {
    std::vector<uint8_t> zeros(kBlobSize, 0);
    REQUIRE(api.update_from_blob(c, zeros.data()) == 0);
    check_close(run_once(api, c), std::vector<float>(want.size(), 0.0f));
    auto blob = read_bytes(constants_path());
    REQUIRE(api.update_from_blob(c, blob.data()) == 0);
    check_close(run_once(api, c), want);
  }
  SECTION("user-managed constants are used as given") {
    std::vector<float> ones(kOut, 1.0f);
    AtenTensorHandle bias = vector_tensor(ones);
    Api::Pair pair{"fc2_bias", bias};
    CHECK(api.update_pairs(c, &pair, 1, false, /*validate_full_update=*/true) != 0);
    REQUIRE(api.update_pairs(c, &pair, 1, false, false) == 0);
    std::vector<float> shifted = want;
    for (int64_t n = 0; n < kBatch; ++n)
      for (int64_t o = 0; o < kOut; ++o) shifted[n * kOut + o] += 1.0f - weight_value(kConstants[3], o);
    check_close(run_once(api, c), shifted);
    REQUIRE(api.destroy(c) == 0);
    c = nullptr;
    aoti_torch_delete_tensor_object(bias);
  }
  if (c) REQUIRE(api.destroy(c) == 0);
  dlclose(lib);
}

TEST_CASE("tiny_mlp: Run refuses a wrongly shaped input and still takes ownership of it") {
  void* lib = open_model();
  Api api(lib);
  Handle c = nullptr;
  REQUIRE(api.create(&c, 1, "cpu", nullptr) == 0);
  std::vector<float> x(kBatch * kOut, 0.5f);
  AtenTensorHandle in = f32_tensor(x, kBatch, kOut);
  AtenTensorHandle out = nullptr;
  CHECK(api.run(c, &in, 1, &out, 1, nullptr, nullptr) != 0);
  CHECK(out == nullptr);
  REQUIRE(api.destroy(c) == 0);
  dlclose(lib);
}
