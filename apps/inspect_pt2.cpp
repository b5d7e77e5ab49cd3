// `inspect model.pt2`: what a package from aoti_compile_and_package holds, read without running anything: the
// zip directory, each model's library (streamed out to a temp file and read as ELF, as `build` reads it), its
// wrapper metadata and the constants table its wrapper source declares.
#include "cli.hpp"
#include "inspect_parts.hpp"
#include "mpspack/pt2/package.hpp"
#include "mpspack/pt2/wrapper_constants.hpp"
#include "mpspack/runtime/model.hpp"

namespace mpspack::cli {
namespace {

using nlohmann::json;

// A wrapper source is a few MiB at most; a larger one is not what aoti_compile_and_package writes.
constexpr uint64_t kMaxWrapperSource = uint64_t(256) << 20;

struct ModelReport {
  const pt2::Pt2Model* model = nullptr;
  uint64_t library_size = 0;
  aoti::LibraryAnalysis library;
  uint64_t weights_size = 0;
  std::vector<ConstantInfo> constants;  // empty when the package carries no wrapper source
};

Result<ModelReport> read_model(const pt2::Pt2Package& pkg, const pt2::Pt2Model& m) {
  ModelReport r;
  r.model = &m;
  MPK_TRY(MappedFile so, pkg.extract(m.library_entry));
  r.library_size = so.size();
  auto analysis = aoti::analyze_library(so.view());
  if (!analysis.ok()) return analysis.error().context(pkg.name() + ": " + m.library_entry);
  r.library = std::move(analysis).value();
  if (const pt2::Pt2Entry* blob = pkg.find(m.weights_entry); blob && !m.weights_entry.empty())
    r.weights_size = blob->size;
  if (!m.wrapper_cpp_entry.empty()) {
    MPK_TRY(std::string source, pkg.read_text(m.wrapper_cpp_entry, kMaxWrapperSource));
    MPK_TRY(r.constants, pt2::parse_wrapper_constants(source, pkg.name() + ": " + m.wrapper_cpp_entry));
  }
  return r;
}

// What this mpspack's shim lacks of the library's imports (as `inspect` says of a container's libraries).
std::vector<std::string> missing_imports(const aoti::LibraryAnalysis& a) {
  LibraryInfo lib;
  lib.imports = a.imports;
  return runtime::missing_shim_imports(lib);
}

json model_json(const ModelReport& r) {
  const pt2::Pt2Model& m = *r.model;
  json library = library_json(m.library_entry, r.library_size, r.library);
  library["missing_shim_imports"] = missing_imports(r.library);
  return {{"name", m.name},
          {"device", m.device()},
          {"library", library},
          {"weights_entry", m.weights_entry.empty() ? json(nullptr) : json(m.weights_entry)},
          {"weights_size", r.weights_size},
          {"cubins", m.cubin_entries},
          {"metadata", m.metadata},
          {"constants", constants_json(r.constants)},
          {"totals_by_dtype", totals_json(r.constants)}};
}

void print_model(const ModelReport& r) {
  const pt2::Pt2Model& m = *r.model;
  std::printf("\nmodel '%s' (device %s):\n", printable(m.name).c_str(), printable(m.device()).c_str());
  print_library(m.library_entry, r.library_size, r.library);
  if (auto missing = missing_imports(r.library); !missing.empty()) {
    std::string names;
    for (const auto& s : missing) names += " " + printable(s);
    std::printf("  not provided by this mpspack's shim (%zu):%s\n", missing.size(), names.c_str());
  }
  if (!m.weights_entry.empty())
    std::printf("  weights blob %s: %llu bytes\n", printable(m.weights_entry).c_str(),
                (unsigned long long)r.weights_size);
  if (!m.cubin_entries.empty()) std::printf("  kernel files (.cubin): %zu\n", m.cubin_entries.size());
  if (m.wrapper_cpp_entry.empty()) {
    std::printf("  constants: not known (the package carries no wrapper source)\n");
    return;
  }
  std::printf("  constants (%zu, from %s):\n", r.constants.size(), printable(m.wrapper_cpp_entry).c_str());
  if (!r.constants.empty()) print_constants(r.constants);
}

}  // namespace

int inspect_pt2(const std::string& file, bool as_json) {
  auto pkg = pt2::Pt2Package::open(file);
  if (!pkg.ok()) return fail(pkg.error());
  std::vector<ModelReport> models;
  for (const pt2::Pt2Model& m : pkg->models()) {
    auto r = read_model(*pkg, m);
    if (!r.ok()) return fail(r.error());
    models.push_back(std::move(r).value());
  }
  if (as_json) {
    json j = {{"schema_version", 1}, {"file", file}, {"kind", "pt2"}, {"models", json::array()}};
    for (const ModelReport& r : models) j["models"].push_back(model_json(r));
    print_json(j);
    return kOk;
  }
  std::printf("%s: PyTorch .pt2 package, %zu model%s (mpspack build packs it)\n", printable(file).c_str(),
              models.size(), models.size() == 1 ? "" : "s");
  for (const ModelReport& r : models) print_model(r);
  return kOk;
}

}  // namespace mpspack::cli
