// inspect reads only the header and metadata of a container (its time does not grow with the
// weights), the ELF tables of a raw model library, or a .pt2's zip directory, wrapper source and library
// (inspect_pt2.cpp), or a container in a registry (oci://REF: its metadata layer alone). It never loads or runs any
// of them.
#include "cli.hpp"
#include "commands.hpp"
#include "inspect_parts.hpp"
#include "mpspack/aoti/library.hpp"
#include "mpspack/file.hpp"
#include "mpspack/format/header.hpp"
#include "mpspack/runtime/model.hpp"
#include "mpspack/sign/signature.hpp"
#include "registry_options.hpp"

#include <cstring>
#include <map>

namespace mpspack::cli {
namespace {

using nlohmann::json;

struct InspectArgs {
  std::string file;
  bool json = false;
  RegistryArgs registry;  // for oci://REF
};

constexpr std::string_view kOciScheme = "oci://";

std::string hex(uint64_t v) { return fmt::format("{:#x}", v); }

std::string stored_version_needs_text(const format::Container& c, const LibraryInfo& l, bool library_bytes) {
  if (!library_bytes) return "(not known: only the metadata was fetched)";
  auto needs = stored_version_needs(c, l);
  return needs.ok() ? version_needs_text(*needs) : "(not known: " + printable(needs.error().message) + ")";
}

}  // namespace

std::string version_needs_text(const std::vector<elf::VersionNeed>& needs) {
  std::string out;
  for (const VersionFamily& f : kVersionFamilies) {
    const std::string v = elf::highest_version(needs, f.prefix);
    if (!v.empty()) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", printable(v), f.library);
  }
  return out.empty() ? "(none)" : out;
}

json library_json(const std::string& file, uint64_t size, const aoti::LibraryAnalysis& a) {
  json j;
  j["schema_version"] = 1;
  j["file"] = file;
  j["kind"] = "library";
  j["size"] = size;
  j["machine"] = a.machine;
  j["device"] = a.device;
  j["flavour"] = to_string(a.flavour);
  j["needed"] = a.needed;
  j["imports"] = a.imports;
  j["version_needs"] = version_needs_json(a.version_needs);
  j["constants_region"] = region_json(a.region);
  j["weights_offset"] = a.weights_offset;
  j["weights_size"] = a.weights_size;
  if (a.flavour == Flavour::ExternalBlob) j["recorded_blob_size"] = a.recorded_blob_size;
  return j;
}

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + printable(s);
  return out.empty() ? "(none)" : out;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += fmt::format("{}{}", i ? "," : "", shape[i]);
  return out + "]";
}

}  // namespace

void print_constants(const std::vector<ConstantInfo>& constants) {
  std::printf("  %-32s %-24s %-5s %-16s %12s %12s\n", "name", "fqn", "dtype", "shape", "offset", "bytes");
  for (const auto& k : constants)
    std::printf("  %-32s %-24s %-5s %-16s %12s %12llu%s\n", printable(k.name).c_str(), printable(k.fqn).c_str(),
                dtype_name(k.dtype).c_str(), shape_text(k.shape).c_str(), hex(k.offset).c_str(),
                (unsigned long long)k.size, k.offset % 64 ? "  (not 64-aligned)" : "");
  std::printf("  totals:");
  for (const auto& [name, t] : totals_by_dtype(constants))
    std::printf("  %s: %llu constants, %llu parameters, %llu bytes;", name.c_str(), (unsigned long long)t.count,
                (unsigned long long)t.parameters, (unsigned long long)t.bytes);
  std::printf("\n");
}

namespace {

void print_container(const format::Container& c, bool library_bytes) {
  const auto& h = c.header();
  const auto& m = c.manifest();
  std::printf("%s: mpspack container v%u.%u, %llu bytes, %zu segments\n", printable(c.name()).c_str(), h.version_major,
              h.version_minor, (unsigned long long)h.file_size, m.segments.size());
  std::printf("  producer %s %s; metadata %s+%s; data %s+%s\n", printable(m.producer).c_str(),
              printable(m.producer_version).c_str(), hex(h.metadata_offset).c_str(), hex(h.metadata_size).c_str(),
              hex(h.data_offset).c_str(), hex(h.data_size).c_str());
  std::printf("\nsegments:\n  %3s  %-8s %12s %14s %7s  %-16s  %s\n", "#", "kind", "offset", "size", "align", "xxh3",
              "name");
  for (size_t i = 0; i < m.segments.size(); ++i) {
    const auto& s = m.segments[i];
    std::printf("  %3zu  %-8s %12s %14llu %7llu  %016llx  %s\n", i, to_string(s.kind), hex(s.offset).c_str(),
                (unsigned long long)s.size, (unsigned long long)s.alignment, (unsigned long long)s.xxh3,
                printable(s.name).c_str());
  }
  std::printf("\nlibraries:\n");
  for (const auto& l : m.libraries) {
    std::printf("  %s: %s %s, %s weights, %llu bytes as given\n", printable(l.name).c_str(),
                printable(l.device).c_str(), printable(l.machine).c_str(), to_string(l.flavour),
                (unsigned long long)l.original_size);
    std::printf("    needed: %s\n", join(l.needed).c_str());
    if (!l.dropped_needed.empty()) std::printf("    dropped from needed: %s\n", join(l.dropped_needed).c_str());
    std::printf("    imports (%zu): %s\n", l.imports.size(), join(l.imports).c_str());
    std::printf("    highest symbol versions needed: %s\n", stored_version_needs_text(c, l, library_bytes).c_str());
    auto missing = runtime::missing_shim_imports(l);
    if (!missing.empty())
      std::printf("    not provided by this mpspack's shim (%zu): %s\n", missing.size(), join(missing).c_str());
    if (l.region)
      std::printf("    constants were at %s %s..%s (%llu bytes)\n", printable(l.region->section).c_str(),
                  hex(l.region->start_vaddr).c_str(), hex(l.region->end_vaddr).c_str(),
                  (unsigned long long)(l.region->end_vaddr - l.region->start_vaddr));
    if (l.weights >= 0) std::printf("    weights: %d\n", l.weights);
    if (!l.cubins.empty()) std::printf("    cubins: %zu segments\n", l.cubins.size());
  }
  for (size_t w = 0; w < m.weights.size(); ++w) {
    const auto& wi = m.weights[w];
    const auto& seg = m.segments[wi.segment];
    std::printf("\nweights %zu: segment %u, %llu bytes at %s, %zu constants%s\n", w, wi.segment,
                (unsigned long long)seg.size, hex(seg.offset).c_str(), wi.constants.size(),
                wi.constants.empty() ? " (names not known: the input did not carry them)" : "");
    if (!wi.constants.empty()) print_constants(wi.constants);
  }
}

void print_examples(const Manifest& m) {
  auto list = [](const std::vector<TensorInfo>& ts) {
    std::string out;
    for (const auto& t : ts)
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", dtype_name(t.dtype), shape_text(t.shape));
    return out.empty() ? std::string("(none)") : out;
  };
  for (const auto& e : m.examples)
    std::printf("\nexample for library %u: inputs %s -> outputs %s (mpspack run checks against it)\n", e.library,
                list(e.inputs).c_str(), list(e.outputs).c_str());
}

}  // namespace

void print_library(const std::string& file, uint64_t size, const aoti::LibraryAnalysis& a) {
  std::printf("%s: AOTInductor model library, %llu bytes, %s, device %s, %s weights\n", printable(file).c_str(),
              (unsigned long long)size, printable(a.machine).c_str(), printable(a.device).c_str(),
              to_string(a.flavour));
  std::printf("  constants symbols in %s at %s..%s (file offset %s)\n", printable(a.region.section).c_str(),
              hex(a.region.start_vaddr).c_str(), hex(a.region.end_vaddr).c_str(), hex(a.region.file_offset).c_str());
  if (a.flavour == Flavour::ExternalBlob)
    std::printf("  weights in an external blob of %llu bytes\n", (unsigned long long)a.recorded_blob_size);
  else
    std::printf("  weights: %llu bytes at file offset %s\n", (unsigned long long)a.weights_size,
                hex(a.weights_offset).c_str());
  std::printf("  needed: %s\n  imports (%zu): %s\n", join(a.needed).c_str(), a.imports.size(), join(a.imports).c_str());
  std::printf("  highest symbol versions needed: %s\n", version_needs_text(a.version_needs).c_str());
}

namespace {

// The signature beside a container (FILE.sig), as its envelope says without checking it: null when there is none,
// else {file, key_ids, predicate_type} or {file, problem}. No key is read and nothing is hashed: verify --key checks.
json signature_json(const std::string& container) {
  const std::filesystem::path path = sign::default_signature_path(container);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nullptr;
  json j{{"file", path.string()}};
  auto file = MappedFile::open(path);
  if (!file.ok()) return j.update({{"problem", file.error().message}}), j;
  auto summary = sign::summarize(file->view().span(), path.string());
  if (!summary.ok()) return j.update({{"problem", summary.error().message}}), j;
  j["key_ids"] = summary->key_ids;
  j["predicate_type"] = summary->predicate_type;
  return j;
}

void print_signature(const json& sig) {
  if (sig.is_null()) {
    std::printf("\nsignature: none beside it\n");
  } else if (sig.contains("problem")) {
    std::printf("\nsignature: %s\n", printable(sig["problem"].get<std::string>()).c_str());
  } else {
    std::vector<std::string> ids;
    for (const auto& id : sig["key_ids"])
      ids.push_back(id.get<std::string>().empty() ? "(none)" : id.get<std::string>());
    std::printf("\nsignature: %s, by key id %s (not checked here: verify --key PUB.pem checks it)\n",
                printable(sig["file"].get<std::string>()).c_str(), join(ids).c_str());
  }
}

// `library_bytes`: the container's segments were read (not a registry's metadata alone). `local`: a file, whose
// signature beside it is shown.
int show_container(const format::Container& c, bool json, bool library_bytes, bool local = false) {
  const nlohmann::json sig = local ? signature_json(c.name()) : nlohmann::json();
  if (json) {
    auto j = container_json(c, library_bytes);
    // Only where there is one: the document stays the one the C API and the Python package give for the container.
    if (local && !sig.is_null()) j["signature"] = sig;
    print_json(j);
  } else {
    print_container(c, library_bytes);
    print_examples(c.manifest());
    if (local) print_signature(sig);
  }
  return kOk;
}

// oci://REF: the container's metadata layer, fetched alone from the registry.
int inspect_in_registry(const InspectArgs& a) {
  auto ref = registry::parse_reference(std::string_view(a.file).substr(kOciScheme.size()));
  if (!ref.ok()) return fail(ref.error());
  auto options = client_options(a.registry);
  if (!options.ok()) return fail(options.error());
  auto c = registry::inspect_remote(*ref, *options);
  if (!c.ok()) return fail(c.error());
  return show_container(*c, a.json, false);
}

int run_inspect(const InspectArgs& a) {
  if (a.file.starts_with(kOciScheme)) return inspect_in_registry(a);
  if (auto unknown = unknown_input(a.file, "inspect", kContainerInput | kLibraryInput | kPt2Input))
    return fail(*unknown);
  auto opened = MappedFile::open(a.file);
  if (!opened.ok()) return fail(opened.error());
  MappedFile file = std::move(opened).value();
  if (format::has_magic(file.view())) {
    auto c = format::Container::parse(std::move(file));
    if (!c.ok()) return fail(c.error());
    return show_container(*c, a.json, true, true);
  }
  if (file.size() >= 4 && std::memcmp(file.data(), "PK\x03\x04", 4) == 0) return inspect_pt2(a.file, a.json);
  auto analysis = aoti::analyze_library(file.view());
  if (!analysis.ok()) return fail(analysis.error());
  if (a.json) print_json(library_json(a.file, file.size(), *analysis));
  else print_library(a.file, file.size(), *analysis);
  return kOk;
}

}  // namespace

Action add_inspect(CLI::App& app) {
  auto a = std::make_shared<InspectArgs>();
  app.add_option("file", a->file,
                 "Container (.mpk), .pt2 package, model library (.so), or oci://REF: a container in a registry "
                 "(only its metadata layer is fetched)")
      ->required();
  app.add_flag("--json", a->json, "Print JSON (fields in docs/CLI.md)");
  add_registry_options(app, a->registry);
  return [a] { return run_inspect(*a); };
}

}  // namespace mpspack::cli
