// analyze_library on every fixture: flavour, device, region, imports. Expected values come from
// manifest.json and from the external-blob build of the same model, never typed in.
#include "elf_test_support.hpp"

#include <mpspack/aoti/library.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>

using namespace mpspack;
using namespace mpspack::test;

namespace {

nlohmann::json manifest(const char* set) {
  std::ifstream in(fixtures_dir() / set / "manifest.json");
  return nlohmann::json::parse(in);
}

uint64_t nm_value(const nlohmann::json& syms, std::string_view name) {
  for (const auto& line : syms) {
    std::string s = line;
    auto space = s.find(' ');
    if (space != std::string::npos && s.substr(space + 1) == name) return std::stoull(s.substr(0, space), nullptr, 16);
  }
  FAIL("symbol " << name << " not in manifest");
  return 0;
}

Flavour expected_flavour(const std::string& flavor) {
  if (flavor == "blob") return Flavour::ExternalBlob;
  if (flavor == "mmap") return Flavour::MmapSelf;
  return Flavour::Embedded;  // "default", "nolt"
}

// The weights bytes analyze_library located, as a vector.
std::vector<uint8_t> weights_of(const std::vector<uint8_t>& so, const aoti::LibraryAnalysis& a) {
  return std::vector<uint8_t>(so.begin() + a.weights_offset, so.begin() + a.weights_offset + a.weights_size);
}

}  // namespace

TEST_CASE("torch-built libraries: flavour, device, region, needed, imports", "[aoti][fixtures]") {
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "torch-built" / "manifest.json");
  auto m = manifest("torch-built");
  for (const auto& c : m["cases"]) {
    std::string dir = c["dir"];
    INFO(dir);
    auto folder = fixtures_dir() / "torch-built" / dir;
    auto so = read_bytes(folder / "model.so");
    auto a = aoti::analyze_library(view_of(so));
    REQUIRE(a.ok());
    CHECK(a->machine == "x86_64");
    CHECK(a->device == c["device"].get<std::string>());
    CHECK(a->flavour == expected_flavour(c["flavor"]));
    CHECK(a->needed == c["needed"].get<std::vector<std::string>>());
    CHECK(a->region.start_vaddr == nm_value(c["syms"], "_binary_constants_bin_start"));
    CHECK(a->region.end_vaddr == nm_value(c["syms"], "_binary_constants_bin_end"));
    CHECK(a->region.section == ".lrodata");
    CHECK_FALSE(a->region.writable);

    // imports: exactly the manifest's shim imports, plus CUDA API functions for CUDA builds.
    REQUIRE(std::is_sorted(a->imports.begin(), a->imports.end()));
    auto shim = c["shim_imports"].get<std::vector<std::string>>();
    for (const auto& s : shim) CHECK(std::binary_search(a->imports.begin(), a->imports.end(), s));
    for (const auto& s : a->imports) {
      bool in_shim = std::find(shim.begin(), shim.end(), s) != shim.end();
      bool cuda = s.rfind("cu", 0) == 0;
      CHECK((in_shim || (cuda && a->device == "cuda")));
    }

    // The same model's external blob is the reference for the weights bytes.
    std::string device = c["device"];
    auto blob = read_bytes(fixtures_dir() / "torch-built" / (device + "_mlp_blob") / "weights.blob");
    REQUIRE_FALSE(blob.empty());
    switch (a->flavour) {
      case Flavour::ExternalBlob:
        CHECK(a->recorded_blob_size == blob.size());
        CHECK(a->weights_size == 0);
        break;
      case Flavour::Embedded:
        CHECK(a->weights_offset == a->region.file_offset);
        CHECK(weights_of(so, *a) == blob);
        break;
      case Flavour::MmapSelf:
        CHECK(a->weights_offset % aoti::kMmapSelfAlignment == 0);
        CHECK(a->weights_offset + a->weights_size + 8 == so.size());
        CHECK(weights_of(so, *a) == blob);
        break;
    }
  }
}

TEST_CASE("rebuilt-bookworm libraries: embedded bytes equal the blob build's weights.blob", "[aoti][fixtures]") {
  MPK_REQUIRE_FIXTURE(fixtures_dir() / "rebuilt-bookworm" / "manifest.json");
  for (const char* model : {"mlp", "cnn", "block"}) {
    INFO(model);
    auto dir = fixtures_dir() / "rebuilt-bookworm";
    auto embedded_so = read_bytes(dir / fmt::format("cpu_{}_embedded", model) / "model.so");
    auto blob_so = read_bytes(dir / fmt::format("cpu_{}_blob", model) / "model.so");
    auto blob = read_bytes(dir / fmt::format("cpu_{}_blob", model) / "weights.blob");

    auto e = aoti::analyze_library(view_of(embedded_so));
    REQUIRE(e.ok());
    CHECK(e->flavour == Flavour::Embedded);
    CHECK(e->device == "cpu");
    CHECK(e->region.section == ".lrodata");
    CHECK(e->region.end_vaddr - e->region.start_vaddr == blob.size());
    CHECK(weights_of(embedded_so, *e) == blob);
    // link_libtorch=False: no torch library among the NEEDED entries.
    for (const auto& n : e->needed) CHECK_FALSE(aoti::is_libtorch_needed(n));

    auto b = aoti::analyze_library(view_of(blob_so));
    REQUIRE(b.ok());
    CHECK(b->flavour == Flavour::ExternalBlob);
    CHECK(b->recorded_blob_size == blob.size());
    CHECK(b->weights_size == 0);
    // The same generated code imports the same shim.
    CHECK(b->imports == e->imports);
    CHECK(std::all_of(e->imports.begin(), e->imports.end(), [](const std::string& s) {
      return s.rfind("aoti_torch_", 0) == 0 || s.rfind("Sleef_", 0) == 0;
    }));
  }
}

TEST_CASE("import and torch-symbol classification", "[aoti]") {
  CHECK(aoti::is_host_import("aoti_torch_cpu_addmm_out"));
  CHECK(aoti::is_host_import("Sleef_expf16_u10"));
  CHECK(aoti::is_host_import("cudaMalloc"));
  CHECK(aoti::is_host_import("cuLaunchKernel"));
  CHECK_FALSE(aoti::is_host_import("cuserid"));
  CHECK_FALSE(aoti::is_host_import("malloc"));

  CHECK(aoti::is_torch_cxx_symbol("_ZN5torch3jit4loadEv"));
  CHECK(aoti::is_torch_cxx_symbol("_ZNK3c1010TensorImpl5sizesEv"));
  CHECK(aoti::is_torch_cxx_symbol("_ZN2at6native5emptyEv"));
  CHECK(aoti::is_torch_cxx_symbol("_ZTVN3c1011StorageImplE"));
  CHECK_FALSE(aoti::is_torch_cxx_symbol("_ZNSt10filesystem7__cxx114path14_M_split_cmptsEv"));
  CHECK_FALSE(aoti::is_torch_cxx_symbol("_ZN12atomic_thing3fooEv"));
  CHECK_FALSE(aoti::is_torch_cxx_symbol("aoti_torch_clone"));

  CHECK(aoti::is_libtorch_needed("libtorch.so"));
  CHECK(aoti::is_libtorch_needed("libtorch_cpu.so"));
  CHECK(aoti::is_libtorch_needed("libtorch_cuda.so"));
  CHECK_FALSE(aoti::is_libtorch_needed("libc.so.6"));
  CHECK_FALSE(aoti::is_libtorch_needed("libcuda.so.1"));
}
