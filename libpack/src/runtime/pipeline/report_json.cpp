// `run --json` and `run --bench --json` (mpspack/runtime/report_json.hpp).
#include "mpspack/runtime/report_json.hpp"

#include "mpspack/manifest.hpp"

#include <fmt/format.h>

#include <cmath>

namespace mpspack::runtime {

using nlohmann::json;

std::string percentile_key(double p) { return fmt::format("p{}", p); }

namespace {

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// The load phases, by the names both reports give them.
json phases_json(const PhaseTimings& t) {
  return {{"open_ms", t.open_ms},
          {"checks_ms", t.checks_ms},
          {"library_ms", t.library_ms},
          {"weights_ms", t.weights_ms},
          {"create_ms", t.create_ms},
          {"constants_ms", t.constants_ms},
          {"first_run_ms", t.first_run_ms},
          {"verify_ms", t.verify_ms < 0 ? json(nullptr) : json(t.verify_ms)},
          {"verify_wait_ms", t.verify_wait_ms}};
}

json comparison_json(const OutputReference& ref) {
  const Comparison& c = ref.comparison;
  json o = {{"reference", ref.name},
            {"match", c.match},
            {"rtol", ref.tolerance.rtol},
            {"atol", ref.tolerance.atol},
            {"mismatches", c.mismatches},
            {"max_abs_error", finite_or_null(c.max_abs_error)},
            {"max_rel_error", finite_or_null(c.max_rel_error)}};
  if (!c.problem.empty()) o["problem"] = c.problem;
  if (c.first_mismatch) {
    o["first_mismatch"] = {{"index", c.first_mismatch_index},
                           {"flat", *c.first_mismatch},
                           {"got", finite_or_null(c.first_got)},
                           {"expected", finite_or_null(c.first_want)}};
  }
  return o;
}

json output_json(const OutputCheck& o) {
  json j = {{"index", o.index}, {"dtype", dtype_name(o.tensor.dtype)}, {"shape", o.tensor.shape}};
  if (!o.written.empty()) j["written"] = o.written;
  if (o.reference) j.update(comparison_json(*o.reference));
  return j;
}

json latency_json(const LatencyStats& l) {
  return {{"min", l.min}, {"mean", l.mean}, {"p50", l.p50},      {"p90", l.p90},
          {"p99", l.p99}, {"max", l.max},   {"stddev", l.stddev}};
}

// The extra percentiles asked for, by key: each one's mean over the repetitions, or its spread (stddev).
json percentiles_json(const BenchReport& r, const LatencyStats& l) {
  json j = json::object();
  for (size_t i = 0; i < r.percentiles.size() && i < l.percentiles.size(); ++i)
    j[percentile_key(r.percentiles[i])] = l.percentiles[i];
  return j;
}

// Each repetition's latency statistics, in order: the figures `mpspack report --baseline` tests for noise.
json repetitions_json(const BenchReport& r) {
  json a = json::array();
  for (const LatencyStats& l : r.repetition_latency) {
    json j = latency_json(l);
    j["percentiles"] = percentiles_json(r, l);
    a.push_back(std::move(j));
  }
  return a;
}

json machine_json(const MachineInfo& m) {
  return {{"cpu", m.cpu},       {"cores", m.cores}, {"os", m.os},
          {"kernel", m.kernel}, {"arch", m.arch},   {"blas_kernels", m.blas_kernels}};
}

json cold_cache_json(const ColdCache& c) {
  return {{"attempted", true},
          {"ok", c.ok},
          {"resident_fraction_after", c.resident_fraction_after ? json(*c.resident_fraction_after) : json(nullptr)}};
}

json device_json(const DeviceReport& d) {
  const DeviceFigures& f = d.figures;
  json j = {{"name", f.name},
            {"memory_total_bytes", f.memory_total},
            {"memory_used_bytes", f.memory_used},
            {"pool_peak_bytes", f.pool_peak},
            {"h2d_copy_bytes", d.h2d_copy_bytes},
            {"h2d_pinned_gbps", f.h2d_pinned_gbps},
            {"h2d_pageable_gbps", f.h2d_pageable_gbps}};
  if (const auto& u = d.weights_upload) {
    j["weights_upload"] = {
        {"bytes", u->bytes}, {"ms", u->ms}, {"gbps", u->gbps}, {"of_pinned_copy", u->of_pinned_copy}};
  }
  return j;
}

}  // namespace

json load_json(const PhaseTimings& t) {
  json j = phases_json(t);
  j["load_total_ms"] = load_total_ms(t);
  j["load_to_first_result_ms"] = load_total_ms(t) + t.first_run_ms;
  return j;
}

json bench_json(const BenchReport& r, const std::string& export_times) {
  json j = {{"schema_version", kBenchSchemaVersion},
            {"container", r.container},
            {"library", r.library},
            {"backend", r.backend},
            {"include_transfers", r.include_transfers},
            {"cuda_graph", r.cuda_graph},
            {"cudnn_tf32", r.cudnn_tf32},
            {"weights_mode", to_string(r.weights_mode)},
            {"embedded_weights", r.embedded_weights},
            {"large_blocks", r.large_blocks},
            {"populate_weights", r.populate_weights},
            {"cold", r.cold},
            {"inputs", r.inputs},
            {"seed", r.seed ? json(*r.seed) : json(nullptr)},
            {"threads", r.threads.count},
            {"threads_source", r.threads.source},
            {"cpus_allowed", r.threads.cpus_allowed},
            {"load_ms", load_json(r.timings)},
            {"time_to_first_result_ms", r.time_to_first_result_ms},
            {"checked", r.checked},
            {"ok", r.ok},
            {"repetitions", r.repetitions},
            {"warmup_runs", r.warmup_runs},
            {"iterations", r.times_ms.size()},
            {"total_ms", r.total_ms},
            {"latency_ms", latency_json(r.latency)},
            {"latency_ms_stddev", latency_json(r.latency_stddev)},
            {"latency_ms_repetitions", repetitions_json(r)},
            {"percentiles_ms", percentiles_json(r, r.latency)},
            {"percentiles_ms_stddev", percentiles_json(r, r.latency_stddev)},
            {"throughput_per_s", r.throughput_per_s},
            {"peak_rss_bytes", r.peak_rss_bytes},
            {"machine", machine_json(r.machine)},
            {"container_sha256", r.container_sha256},
            {"mpspack_version", r.mpspack_version}};
  if (r.cold_cache) j["cold_cache"] = cold_cache_json(*r.cold_cache);
  if (r.device) j["device"] = device_json(*r.device);
  if (!export_times.empty()) j["export_times"] = export_times;
  return j;
}

json run_json(const VerifyReport& r) {
  json outputs = json::array();
  for (const auto& o : r.outputs) outputs.push_back(output_json(o));
  return {{"schema_version", 1},
          {"container", r.container},
          {"library", r.library},
          {"weights", to_string(r.weights_mode)},
          {"inputs", r.inputs},
          {"seed", r.seed ? json(*r.seed) : json(nullptr)},
          {"checked", r.checked()},
          {"ok", r.ok()},
          {"outputs", std::move(outputs)},
          {"timings", phases_json(r.timings)}};
}

// --- inspect

namespace {

uint64_t numel(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= d < 0 ? 0 : uint64_t(d);
  return n;
}

// `library_bytes` false: from a registry, where only the metadata is fetched; null there.
json stored_version_needs_json(const format::Container& c, const LibraryInfo& l, bool library_bytes) {
  if (!library_bytes) return nullptr;
  auto needs = stored_version_needs(c, l);
  return needs.ok() ? version_needs_json(*needs) : json(nullptr);
}

}  // namespace

std::map<std::string, DtypeTotals> totals_by_dtype(const std::vector<ConstantInfo>& constants) {
  std::map<std::string, DtypeTotals> t;
  for (const auto& c : constants) {
    auto& x = t[dtype_name(c.dtype)];
    x.count++;
    x.parameters += numel(c.shape);
    x.bytes += c.size;
  }
  return t;
}

json region_json(const ConstantsRegion& r) {
  return {{"section", r.section},         {"start_vaddr", r.start_vaddr},
          {"end_vaddr", r.end_vaddr},     {"size", r.end_vaddr - r.start_vaddr},
          {"file_offset", r.file_offset}, {"writable", r.writable}};
}

json constants_json(const std::vector<ConstantInfo>& constants) {
  json cj = json::array();
  for (const auto& k : constants)
    cj.push_back({{"name", k.name},
                  {"fqn", k.fqn},
                  {"dtype", dtype_name(k.dtype)},
                  {"shape", k.shape},
                  {"stride", k.stride},
                  {"storage_offset", k.storage_offset},
                  {"offset", k.offset},
                  {"size", k.size},
                  {"type", k.type},
                  {"from_folded", k.from_folded},
                  {"aligned_64", k.offset % 64 == 0}});
  return cj;
}

json totals_json(const std::vector<ConstantInfo>& constants) {
  json tj = json::object();
  for (const auto& [name, t] : totals_by_dtype(constants))
    tj[name] = {{"count", t.count}, {"parameters", t.parameters}, {"bytes", t.bytes}};
  return tj;
}

Result<std::vector<elf::VersionNeed>> stored_version_needs(const format::Container& c, const LibraryInfo& l) {
  MPK_TRY(elf::ElfFile elf, elf::ElfFile::parse(ByteView(c.segment(l.segment).span(), l.name)));
  return elf.version_needs();
}

json version_needs_json(const std::vector<elf::VersionNeed>& needs) {
  json highest = json::object();
  for (const VersionFamily& f : kVersionFamilies) {
    const std::string v = elf::highest_version(needs, f.prefix);
    highest[f.key] = v.empty() ? json(nullptr) : json(v);
  }
  json files = json::array();
  for (const auto& n : needs) files.push_back({{"file", n.file}, {"versions", n.versions}});
  return {{"highest", highest}, {"files", files}};
}

namespace {

json library_json(const format::Container& c, const LibraryInfo& l, bool library_bytes) {
  return {{"name", l.name},
          {"device", l.device},
          {"abi", l.abi},
          {"machine", l.machine},
          {"flavour", to_string(l.flavour)},
          {"segment", l.segment},
          {"needed", l.needed},
          {"dropped_needed", l.dropped_needed},
          {"imports", l.imports},
          {"weights", l.weights < 0 ? json(nullptr) : json(l.weights)},
          {"cubins", l.cubins},
          {"original_size", l.original_size},
          {"original_sha256", l.original_sha256},
          {"constants_region", l.region ? region_json(*l.region) : json(nullptr)},
          {"missing_shim_imports", missing_shim_imports(l)},
          {"version_needs", stored_version_needs_json(c, l, library_bytes)}};
}

json weights_json(const WeightsInfo& w, const SegmentInfo& seg) {
  return {{"segment", w.segment},
          {"size", seg.size},
          {"offset", seg.offset},
          {"alignment", seg.alignment},
          {"constants", constants_json(w.constants)},
          {"totals_by_dtype", totals_json(w.constants)}};
}

json example_json(const ExampleInfo& e) {
  auto tensors = [](const std::vector<TensorInfo>& ts) {
    json a = json::array();
    for (const auto& t : ts) a.push_back({{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"segment", t.segment}});
    return a;
  };
  return {{"library", e.library}, {"inputs", tensors(e.inputs)}, {"outputs", tensors(e.outputs)}};
}

}  // namespace

json container_json(const format::Container& c, bool library_bytes) {
  const auto& h = c.header();
  const auto& m = c.manifest();
  json j;
  j["schema_version"] = 1;
  j["file"] = c.name();
  j["kind"] = "container";
  j["format"] = {{"major", h.version_major}, {"minor", h.version_minor}};
  j["header"] = {{"header_size", h.header_size},
                 {"metadata_offset", h.metadata_offset},
                 {"metadata_size", h.metadata_size},
                 {"data_offset", h.data_offset},
                 {"data_size", h.data_size},
                 {"file_size", h.file_size},
                 {"checksum", fmt::format("{:016x}", h.checksum)}};
  j["producer"] = {{"name", m.producer}, {"version", m.producer_version}};
  j["sources"] = json::array();
  for (const auto& s : m.sources)
    j["sources"].push_back({{"name", s.name},
                            {"size", s.size},
                            {"sha256", s.sha256},
                            {"kind", s.kind},
                            {"flavour", s.flavour},
                            {"mode", s.mode}});
  j["segments"] = json::array();
  for (size_t i = 0; i < m.segments.size(); ++i) {
    const auto& s = m.segments[i];
    j["segments"].push_back({{"index", i},
                             {"kind", to_string(s.kind)},
                             {"name", s.name},
                             {"offset", s.offset},
                             {"size", s.size},
                             {"alignment", s.alignment},
                             {"xxh3", fmt::format("{:016x}", s.xxh3)}});
  }
  j["libraries"] = json::array();
  for (const auto& l : m.libraries) j["libraries"].push_back(library_json(c, l, library_bytes));
  j["weights"] = json::array();
  for (const auto& w : m.weights) j["weights"].push_back(weights_json(w, m.segments[w.segment]));
  j["examples"] = json::array();
  for (const auto& e : m.examples) j["examples"].push_back(example_json(e));
  return j;
}

}  // namespace mpspack::runtime
