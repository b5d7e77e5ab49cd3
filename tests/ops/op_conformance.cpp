// The op conformance runner: calls each shim function on the cases make_cases.py recorded from torch and compares
// the results (sizes, dtype, strides, values at the dtype's tolerance; or the distribution for random ops), and
// checks that torch's refusals are refusals here too, with a message naming the op.
//
//   op_conformance --cases DIR [--cases DIR ...] [--device cpu|cuda] [--only OP ...]
//   op_conformance --coverage --cases DIR [--cases DIR ...] [--awaiting FILE]   every provided function has cases
//                                                                              in DIRs, or awaits them in FILE
//
// Prints one line per function (and one per failing case); exits 1 when anything fails, 2 on bad usage.
#include "op_calls.hpp"
#include "runtime/shim/provided.hpp"

#include "mpspack/dtype.hpp"
#include "mpspack/half.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;
using namespace mpspack;
using namespace mpspack::test;

namespace {

// A result read back to the CPU: its metadata and its elements in logical order (complex: real, imaginary).
struct Read {
  int32_t dtype = -1;
  std::vector<int64_t> sizes, strides;
  std::vector<double> values;
  std::vector<std::vector<uint8_t>> raw;  // per element, for the types compared bit for bit
};

bool compared_raw(int32_t dt) {
  return dt == dtype::complex32 || dt == dtype::float8_e5m2 || dt == dtype::float8_e4m3fn ||
         dt == dtype::float8_e5m2fnuz || dt == dtype::float8_e4m3fnuz;
}

double element(const uint8_t* p, int32_t dt) {
  switch (dt) {
    case dtype::float32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case dtype::float64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case dtype::float16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return half_to_float(h);
    }
    case dtype::bfloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_to_float(h);
    }
    case dtype::int64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return double(v);
    }
    case dtype::int32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case dtype::int16: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case dtype::int8: return double(int8_t(p[0]));
    case dtype::uint8: return p[0];
    case dtype::uint16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case dtype::uint32: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case dtype::uint64: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return double(v);
    }
    case dtype::bool_: return p[0] != 0 ? 1 : 0;
  }
  return std::nan("");
}

// Calls f(flat offset in elements) for every element in logical (row-major) order.
template <class F>
void walk(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, F&& f) {
  for (int64_t s : sizes)
    if (s == 0) return;
  std::vector<int64_t> idx(sizes.size(), 0);
  while (true) {
    int64_t off = 0;
    for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
    f(off);
    size_t d = sizes.size();
    while (d > 0) {
      --d;
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (sizes.empty()) return;
  }
}

void decode_elements(Read& r, const uint8_t* base) {
  const size_t isz = dtype_size(r.dtype);
  walk(r.sizes, r.strides, [&](int64_t off) {
    const uint8_t* p = base + off * int64_t(isz);
    if (compared_raw(r.dtype)) {
      r.raw.emplace_back(p, p + isz);
    } else if (r.dtype == dtype::complex64) {
      r.values.push_back(element(p, dtype::float32));
      r.values.push_back(element(p + 4, dtype::float32));
    } else if (r.dtype == dtype::complex128) {
      r.values.push_back(element(p, dtype::float64));
      r.values.push_back(element(p + 8, dtype::float64));
    } else {
      r.values.push_back(element(p, r.dtype));
    }
  });
}

Read read_expected(const json& t) {
  Read r;
  r.dtype = dtype_code(t.at("dtype").get<std::string>());
  r.sizes = t.at("sizes").get<std::vector<int64_t>>();
  r.strides = t.at("strides").get<std::vector<int64_t>>();
  if (t.contains("data")) {
    const auto bytes = decode_base64(t["data"].get<std::string>());
    decode_elements(r, bytes.data());
  }
  return r;
}

// The shim's tensor, copied to the CPU when it lives on a device.
std::optional<Read> read_actual(AtenTensorHandle h, std::string& problem) {
  Read r;
  int64_t* p = nullptr;
  int64_t dim = 0, offset = 0;
  int32_t device = 0;
  if (aoti_torch_get_dim(h, &dim) || aoti_torch_get_dtype(h, &r.dtype) || aoti_torch_get_device_type(h, &device) ||
      aoti_torch_get_storage_offset(h, &offset)) {
    problem = "the result handle cannot be read";
    return std::nullopt;
  }
  aoti_torch_get_sizes(h, &p);
  r.sizes.assign(p, p + dim);
  aoti_torch_get_strides(h, &p);
  r.strides.assign(p, p + dim);
  AtenTensorHandle host = h;
  if (device != 0) {
    if (aoti_torch_empty_strided(dim, r.sizes.data(), r.strides.data(), r.dtype, 0, 0, &host) ||
        aoti_torch_copy_(host, h, 0)) {
      problem = "the result cannot be copied to the CPU";
      return std::nullopt;
    }
  }
  void* data = nullptr;
  aoti_torch_get_data_ptr(host, &data);
  if (find_dtype(r.dtype) == nullptr) {
    problem = "the result has dtype code " + std::to_string(r.dtype) + ", unknown here";
  } else {
    decode_elements(r, static_cast<const uint8_t*>(data));
  }
  if (host != h) aoti_torch_delete_tensor_object(host);
  if (!problem.empty()) return std::nullopt;
  return r;
}

std::string dtype_name_or(int32_t code) {
  const DtypeInfo* d = find_dtype(code);
  return d ? d->torch_name : "dtype code " + std::to_string(code);
}

std::string join(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

struct Tolerance {
  double rtol, atol;
};

Tolerance default_tolerance(int32_t dt) {
  switch (dt) {
    case dtype::float32:
    case dtype::complex64: return {1.3e-6, 1e-5};
    case dtype::float64:
    case dtype::complex128: return {1e-7, 1e-7};
    case dtype::float16: return {1e-3, 1e-5};
    case dtype::bfloat16: return {1.6e-2, 1e-5};
  }
  return {0, 0};
}

std::string compare_moments(const Read& got, const json& want) {
  const double n = double(got.values.size());
  if (n < 2) return "";
  double mean = 0, var = 0;
  for (double v : got.values) mean += v;
  mean /= n;
  for (double v : got.values) var += (v - mean) * (v - mean);
  const double sd = std::sqrt(var / (n - 1));
  const double want_mean = want.at("mean").get<double>(), want_sd = want.at("std").get<double>();
  // Two independent samples of n: the difference of their means has a standard error of sqrt(2) sd / sqrt(n);
  // that of their standard deviations at most about 2 sd / sqrt(n) for the distributions these ops draw from
  // (the exponential's kurtosis of 9 is the largest). Six standard errors: a false alarm about once in 10^8.
  const double mean_tol = 6 * std::sqrt(2.0) * want_sd / std::sqrt(n) + 1e-12;
  const double sd_tol = 12 * want_sd / std::sqrt(n) + 1e-12;
  std::ostringstream o;
  if (std::abs(mean - want_mean) > mean_tol)
    o << "mean " << mean << " is not torch's " << want_mean << " (within " << mean_tol << ")";
  else if (std::abs(sd - want_sd) > sd_tol)
    o << "standard deviation " << sd << " is not torch's " << want_sd << " (within " << sd_tol << ")";
  return o.str();
}

std::string compare_permutation(const Read& got) {
  std::vector<double> v = got.values;
  std::sort(v.begin(), v.end());
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != double(i)) return "the values are not a permutation of 0.." + std::to_string(v.size() - 1);
  return "";
}

std::string compare_values(const Read& got, const Read& want, const json& c) {
  if (!got.raw.empty() || !want.raw.empty()) {
    for (size_t i = 0; i < want.raw.size(); ++i)
      if (got.raw[i] != want.raw[i]) return "element " + std::to_string(i) + " differs bit for bit";
    return "";
  }
  Tolerance tol = default_tolerance(want.dtype);
  if (c.contains("rtol")) tol.rtol = c["rtol"].get<double>();
  if (c.contains("atol")) tol.atol = c["atol"].get<double>();
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < want.values.size(); ++i) {
    const double g = got.values[i], w = want.values[i];
    bool ok;
    if (std::isnan(w) || std::isnan(g)) ok = std::isnan(w) && std::isnan(g);
    else if (std::isinf(w) || std::isinf(g)) ok = g == w;
    else ok = std::abs(g - w) <= tol.atol + tol.rtol * std::abs(w);
    if (!ok) {
      if (bad++ == 0) first = i;
      if (std::isfinite(g - w)) worst = std::max(worst, std::abs(g - w));
    }
  }
  if (bad == 0) return "";
  std::ostringstream o;
  o << bad << " of " << want.values.size() << " values differ; the first at element " << first << ": "
    << got.values[first] << " where torch gives " << want.values[first] << " (largest difference " << worst << ")";
  return o.str();
}

// One expected result against the shim's; "" when they agree.
std::string compare(AtenTensorHandle h, const json& expected, const json& c) {
  if (expected.is_null()) return "";        // torch returned an undefined tensor: nothing to compare
  if (expected.contains("int")) return "";  // compared by the caller
  if (h == nullptr) return "no tensor was returned";
  std::string problem;
  auto got = read_actual(h, problem);
  if (!got) return problem;
  const json& t = expected.at("tensor");
  const Read want = read_expected(t);
  if (got->dtype != want.dtype)
    return "dtype " + dtype_name_or(got->dtype) + " where torch gives " + dtype_name_or(want.dtype);
  if (got->sizes != want.sizes) return "sizes " + join(got->sizes) + " where torch gives " + join(want.sizes);
  const bool empty = std::find(want.sizes.begin(), want.sizes.end(), 0) != want.sizes.end();
  if (c.value("strides", true) && !empty) {  // an empty tensor's strides address nothing
    for (size_t d = 0; d < want.sizes.size(); ++d)
      if (want.sizes[d] > 1 && got->strides[d] != want.strides[d])
        return "strides " + join(got->strides) + " where torch gives " + join(want.strides);
  }
  const std::string check = c.value("check", "values");
  if (check == "moments") return compare_moments(*got, t.at("moments"));
  if (check == "permutation") return compare_permutation(*got);
  if (check == "shape") return "";
  return compare_values(*got, want, c);
}

// The function's short name as torch's messages and ours name it ("topk" of aoti_torch_cpu_topk).
std::string op_word(const std::string& op) {
  std::string w = op;
  if (w.rfind("aten_", 0) == 0) w = w.substr(5);
  while (!w.empty() && w.front() == '_') w.erase(w.begin());
  return w;
}

struct Outcome {
  int cases = 0, failed = 0;
};

std::string run_case(const OpCall& call, const std::string& op, const json& c, int32_t device, bool offset) {
  CallArgs args(c.at("args"), device, offset);
  AOTITorchError rc;
  try {
    rc = call(args);
  } catch (const std::exception& e) { return std::string("the case cannot be set up: ") + e.what(); }
  const std::string message(mpspack::shim::last_error());
  if (c.contains("error")) {
    if (rc == AOTI_TORCH_SUCCESS) return "succeeded where torch refuses: " + c["error"].get<std::string>();
    // The op's name in the message, so a user sees which fallback refused (the shim prefixes the C function's).
    const std::string word = op_word(op);
    if (message.find(word) == std::string::npos) return "the message '" + message + "' does not name " + word;
    return "";
  }
  if (rc != AOTI_TORCH_SUCCESS) return "failed: " + message;
  const json& results = c.at("results");
  for (size_t k = 0; k < results.size(); ++k) {
    if (results[k].is_object() && results[k].contains("int")) {
      if (args.result_i64(k) != results[k]["int"].get<int64_t>())
        return "result " + std::to_string(k) + " is " + std::to_string(args.result_i64(k)) + " where torch gives " +
               results[k]["int"].dump();
      continue;
    }
    const std::string p = compare(args.result(k), results[k], c);
    if (!p.empty()) return "result " + std::to_string(k) + ": " + p;
  }
  const json mutated = c.value("mutated", json::object());
  for (const auto& [pos, expected] : mutated.items()) {
    const std::string p = compare(args.arg_tensor(std::stoul(pos)), expected, c);
    if (!p.empty()) return "argument " + pos + " after the call: " + p;
  }
  return "";
}

std::string function_for(const json& doc, const std::string& device) {
  std::string f = doc.at("function").get<std::string>();
  if (auto p = f.find("{device}"); p != std::string::npos) f.replace(p, 8, device);
  return f;
}

struct Options {
  std::vector<fs::path> case_dirs;
  std::string device = "cpu";
  std::set<std::string> only;
  bool coverage = false;
  fs::path awaiting;  // --awaiting: functions whose torch 2.11 cases are not recorded yet
};

std::vector<json> load_docs(const Options& o) {
  std::vector<json> docs;
  for (const auto& dir : o.case_dirs) {
    if (!fs::is_directory(dir)) throw std::runtime_error(dir.string() + ": no such folder of cases");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json" && e.path().filename() != "index.json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f);
      json doc = json::parse(in);
      doc["source"] = f.string();
      docs.push_back(std::move(doc));
    }
  }
  return docs;
}

// Sets ATEN_CPU_CAPABILITY to `value` (when not empty) for the scope, and puts back what was there.
struct CapabilityScope {
  std::optional<std::string> before;
  bool set = false;
  explicit CapabilityScope(const std::string& value) {
    if (value.empty()) return;
    if (const char* v = std::getenv("ATEN_CPU_CAPABILITY")) before = v;
    set = ::setenv("ATEN_CPU_CAPABILITY", value.c_str(), 1) == 0;
  }
  ~CapabilityScope() {
    if (!set) return;
    if (before) ::setenv("ATEN_CPU_CAPABILITY", before->c_str(), 1);
    else ::unsetenv("ATEN_CPU_CAPABILITY");
  }
  CapabilityScope(const CapabilityScope&) = delete;
  CapabilityScope& operator=(const CapabilityScope&) = delete;
};

int run(const Options& o) {
  const int32_t device = o.device == "cuda" ? 1 : 0;
  set_op_device(device);
  int failed_ops = 0, total = 0;
  for (const json& doc : load_docs(o)) {
    const std::string op = doc.at("op").get<std::string>();
    if (!o.only.empty() && !o.only.count(op)) continue;
    const auto devices = doc.value("devices", std::vector<std::string>{"cpu", "cuda"});
    if (std::find(devices.begin(), devices.end(), o.device) == devices.end()) continue;
    const std::string fn = function_for(doc, o.device);
    const auto& calls = op_calls();
    auto it = calls.find(function_for(doc, "cpu"));  // adapters are named by the CPU function; SHIM picks the device's
    if (it == calls.end()) {
      std::printf("FAIL %s: no adapter calls it (add one to tests/ops/calls_*.cpp) [%s]\n", fn.c_str(),
                  doc["source"].get<std::string>().c_str());
      ++failed_ops;
      continue;
    }
    // The CPU the recording ran on, for the ops whose inputs torch packed in a layout of that CPU's (the shim reads
    // ATEN_CPU_CAPABILITY as torch does).
    const CapabilityScope capability(doc.value("cpu_capability", std::string()));
    Outcome out;
    int index = 0;
    for (const json& c : doc.at("cases")) {
      ++out.cases;
      // Every other case of the generator's list runs at a storage offset; a recording that left cases out (a
      // GPU's) says which each one is.
      const bool offset = c.value("offset", index % 2 == 1);
      ++index;
      const std::string p = run_case(it->second, op, c, device, offset);
      if (!p.empty()) {
        ++out.failed;
        std::printf("FAIL %s, case '%s': %s\n", fn.c_str(), c.value("name", "?").c_str(), p.c_str());
      }
    }
    total += out.cases;
    if (out.failed) ++failed_ops;
    std::printf("%s %s: %d cases (torch %s)\n", out.failed ? "FAIL" : "ok  ", fn.c_str(), out.cases,
                doc.value("torch", "?").c_str());
  }
  std::printf("%d cases; %d functions failed\n", total, failed_ops);
  return failed_ops == 0 ? 0 : 1;
}

// Whether `name` is one of the device's op functions (aoti_torch_cpu_* or aoti_torch_cuda_*, and the
// device-generic aoti_torch_aten_*), not a guard, stream or allocator entry of the CUDA shim.
bool is_op_function(std::string_view name, const std::string& device) {
  static const std::set<std::string_view> kNotOps = {"aoti_torch_cuda_caching_allocator_raw_alloc",
                                                     "aoti_torch_cuda_caching_allocator_raw_delete",
                                                     "aoti_torch_cuda_guard_set_index"};
  const std::string prefix = "aoti_torch_" + device + "_";
  return (name.rfind(prefix, 0) == 0 || name.rfind("aoti_torch_aten_", 0) == 0) && !kNotOps.count(name);
}

// The functions whose cases torch 2.11 has not recorded yet (--awaiting FILE: {"function": {"test": "a test file,
// from the repository root", "why": "..."}}), each covered meanwhile by a test that names it. An entry must be
// true: its function provided, still without cases (a recording that adds them makes the entry an error, to be
// removed), and its test file there, naming the function.
std::map<std::string, std::string> awaiting_cases(const fs::path& file, int& errors) {
  std::map<std::string, std::string> out;
  if (file.empty()) return out;
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot be read");
  const json doc = json::parse(in);
  const fs::path root = file.parent_path() / ".." / "..";  // the file sits in tests/ops/
  for (const auto& [fn, entry] : doc.items()) {
    const std::string test = entry.at("test").get<std::string>();
    std::ifstream t(root / test);
    std::stringstream text;
    text << t.rdbuf();
    if (!t || text.str().find(fn) == std::string::npos) {
      std::printf("%s: %s awaits cases, but its test %s does not name it\n", file.string().c_str(), fn.c_str(),
                  test.c_str());
      ++errors;
    }
    out[fn] = test;
  }
  return out;
}

// Every op function of the runner's device the shim provides has a case file in the folders, or awaits one.
int coverage(const Options& o) {
  std::set<std::string> covered;
  for (const json& doc : load_docs(o)) {
    const auto devices = doc.value("devices", std::vector<std::string>{"cpu", "cuda"});
    if (std::find(devices.begin(), devices.end(), o.device) != devices.end() && !doc.at("cases").empty())
      covered.insert(function_for(doc, o.device));
  }
  int missing = 0, errors = 0;
  std::map<std::string, std::string> awaiting = awaiting_cases(o.awaiting, errors);
  for (std::string_view name : mpspack::shim::mpspack_shim_provided_symbols()) {
    const auto it = awaiting.find(std::string(name));
    const bool awaits = it != awaiting.end();
    if (awaits) awaiting.erase(it);
    if (!is_op_function(name, o.device)) continue;
    if (covered.count(std::string(name))) {
      if (awaits) {
        std::printf("%s has cases now: remove it from %s\n", std::string(name).c_str(), o.awaiting.string().c_str());
        ++errors;
      }
      continue;
    }
    if (awaits) {
      std::printf("awaits cases from torch 2.11, tested meanwhile: %.*s\n", int(name.size()), name.data());
      continue;
    }
    std::printf("no cases: %.*s\n", int(name.size()), name.data());
    ++missing;
  }
  for (const auto& [fn, test] : awaiting) {
    std::printf("%s awaits cases, but the shim does not provide it\n", fn.c_str());
    ++errors;
  }
  std::printf("%d provided op functions have no conformance cases\n", missing);
  return missing == 0 && errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) o.case_dirs.emplace_back(argv[++i]);
    else if (a == "--device" && i + 1 < argc) o.device = argv[++i];
    else if (a == "--only" && i + 1 < argc) o.only.insert(argv[++i]);
    else if (a == "--coverage") o.coverage = true;
    else if (a == "--awaiting" && i + 1 < argc) o.awaiting = argv[++i];
    else {
      std::fprintf(stderr, "op_conformance: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (o.case_dirs.empty() || (o.device != "cpu" && o.device != "cuda")) {
    std::fprintf(stderr, "usage: op_conformance --cases DIR [--cases DIR ...] [--device cpu|cuda] [--only OP] "
                         "[--coverage [--awaiting FILE]]\n");
    return 2;
  }
  try {
    return o.coverage ? coverage(o) : run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "op_conformance: %s\n", e.what());
    return 2;
  }
}
