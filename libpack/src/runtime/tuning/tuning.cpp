// The one place the MPSPACK_* environment switches are read (tuning.hpp). docs/tools/tuning_table.py reads this
// file for the names: each switch is spelled out here as its full "MPSPACK_..." string literal.
#include "runtime/tuning/tuning.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <utility>
#include <string_view>

namespace mpspack {
namespace {

using Lookup = const char* (*)(const char*);

// A value given and not empty, or nullptr.
const char* given(Lookup lookup, const char* name) {
  const char* v = lookup(name);
  return v != nullptr && *v != 0 ? v : nullptr;
}

// "0" turns a switch off; anything else, or nothing, leaves it on.
bool on_unless_zero(Lookup lookup, const char* name) {
  const char* v = lookup(name);
  return !(v != nullptr && std::string_view(v) == "0");
}

// A whole positive number, all of the value; otherwise `fallback` (strtoull alone takes "-4" as 2^64 - 4, " 4" as 4).
uint64_t positive_or(const char* v, uint64_t fallback) {
  if (v == nullptr || *v < '0' || *v > '9') return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return (end && *end == 0 && n > 0) ? n : fallback;
}

std::string text(Lookup lookup, const char* name) {
  const char* v = lookup(name);
  return v != nullptr ? v : "";
}

// The index of `v` among `names`, or of the default (its first) with a line on stderr when it is none of them.
template <class E>
E one_of(Lookup lookup, const char* name, std::initializer_list<std::pair<const char*, E>> names) {
  const char* v = given(lookup, name);
  if (v == nullptr) return names.begin()->second;
  std::string known;
  for (const auto& [spelled, value] : names) {
    if (std::string_view(v) == spelled) return value;
    known += known.empty() ? spelled : std::string(", ") + spelled;
  }
  std::fprintf(stderr, "mpspack: %s=%s is not one of %s; the default, %s, is used\n", name, v, known.c_str(),
               names.begin()->first);
  return names.begin()->second;
}

void read_loader(Lookup lookup, Tuning& t) {
  using E = EmbeddedWeights;
  t.embedded_weights = one_of<E>(lookup, "MPSPACK_EMBEDDED_WEIGHTS", {{"mmap", E::Mmap}, {"memcpy", E::Memcpy}});
  t.large_blocks = one_of<bool>(lookup, "MPSPACK_LARGE_BLOCKS", {{"prefault", true}, {"libc", false}});
  // 0 is a threshold of its own (every size): not positive_or's.
  if (const char* v = given(lookup, "MPSPACK_MAP_WEIGHTS_MIN_BYTES")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end && *end == 0 && *v != '-') t.map_weights_min_bytes = n;
    else
      std::fprintf(stderr,
                   "mpspack: MPSPACK_MAP_WEIGHTS_MIN_BYTES=%s is not a whole number of bytes; the "
                   "default, %llu, is used\n",
                   v, (unsigned long long)t.map_weights_min_bytes);
  }
  using P = PopulateWeights;
  t.populate_weights = one_of<P>(lookup, "MPSPACK_POPULATE_WEIGHTS",
                                 {{"off", P::Off}, {"on", P::AtLoad}, {"background", P::Background}});
  t.model_teams = on_unless_zero(lookup, "MPSPACK_MODEL_TEAMS");
  const char* prefault = lookup("MPSPACK_CPU_PREFAULT");
  t.cpu_prefault_threads = prefault != nullptr && std::string_view(prefault) == "threads";
}

void read_cpu_shim(Lookup lookup, Tuning& t) {
  t.cpu_conv = text(lookup, "MPSPACK_CPU_CONV");
  t.cpu_gemm = text(lookup, "MPSPACK_CPU_GEMM");
  t.cpu_gemv = text(lookup, "MPSPACK_CPU_GEMV");
  t.cpu_int8mm = text(lookup, "MPSPACK_CPU_INT8MM");
  t.cpu_int4mm = text(lookup, "MPSPACK_CPU_INT4MM");
  t.cpu_pack_weights = one_of<bool>(lookup, "MPSPACK_CPU_PACK_WEIGHTS", {{"on", true}, {"off", false}});
  t.cpu_block_cache = one_of<bool>(lookup, "MPSPACK_CPU_BLOCK_CACHE", {{"on", true}, {"off", false}});
  t.cpu_attention_pairs = one_of<bool>(lookup, "MPSPACK_CPU_ATTENTION", {{"pairs", true}, {"widen", false}});
  t.cpu_bmm_threads = one_of<bool>(lookup, "MPSPACK_CPU_BMM", {{"threads", true}, {"one", false}});
  t.cpu_attention_rows = positive_or(lookup("MPSPACK_CPU_ATTENTION_ROWS"), 0);
  const char* profile = given(lookup, "MPSPACK_PROFILE_SHIM");
  t.profile_shim = profile != nullptr && std::string_view(profile) != "0";
}

void read_cuda(Lookup lookup, Tuning& t) {
  if (const char* v = given(lookup, "MPSPACK_CUBLAS")) t.cublas = v;
  if (const char* v = given(lookup, "MPSPACK_CUDNN")) t.cudnn = v;
  t.cudnn_tf32 = on_unless_zero(lookup, "MPSPACK_CUDNN_TF32");
  t.cuda_attention = text(lookup, "MPSPACK_CUDA_ATTENTION");
  t.cuda_gemm = text(lookup, "MPSPACK_CUDA_GEMM");
  if (const char* v = lookup("MPSPACK_ATTENTION_SCORE_BYTES"); v && std::atoll(v) > 0) {
    t.attention_score_bytes = std::atoll(v);
  }
  t.open_libraries_early = on_unless_zero(lookup, "MPSPACK_OPEN_LIBRARIES_EARLY");
  if (const char* v = given(lookup, "MPSPACK_UPLOAD_MODE")) t.upload_mode = v;
  t.upload_chunk_mib = positive_or(lookup("MPSPACK_UPLOAD_CHUNK_MIB"), t.upload_chunk_mib);
  // Set to anything, it decides: a value that is not a count gives twelve readers, what keeps up with the bus.
  if (const char* v = lookup("MPSPACK_UPLOAD_THREADS")) t.upload_threads = positive_or(v, 12);
  t.upload_pin_early = on_unless_zero(lookup, "MPSPACK_UPLOAD_PIN_EARLY");
  t.upload_read_ahead = on_unless_zero(lookup, "MPSPACK_UPLOAD_READ_AHEAD");
}

const char* from_environment(const char* name) { return std::getenv(name); }

std::atomic<const Tuning*> g_scoped{nullptr};
std::atomic<bool> g_tf32_off{false};

}  // namespace

const char* to_string(EmbeddedWeights e) {
  switch (e) {
    case EmbeddedWeights::Mmap: return "mmap";
    case EmbeddedWeights::Memcpy: return "memcpy";
  }
  return "?";
}

const char* to_string(PopulateWeights p) {
  switch (p) {
    case PopulateWeights::Off: return "off";
    case PopulateWeights::AtLoad: return "on";
    case PopulateWeights::Background: return "background";
  }
  return "?";
}

Tuning read_tuning(Lookup lookup) {
  Tuning t;
  read_loader(lookup, t);
  read_cpu_shim(lookup, t);
  read_cuda(lookup, t);
  return t;
}

const Tuning& tuning() {
  if (const Tuning* scoped = g_scoped.load(std::memory_order_acquire)) return *scoped;
  static const Tuning from_start = read_tuning(from_environment);
  return from_start;
}

ScopedTuning::ScopedTuning(const Tuning& values) : values_(values), previous_(g_scoped.load()) {
  g_scoped.store(&values_, std::memory_order_release);
}

ScopedTuning::~ScopedTuning() { g_scoped.store(previous_, std::memory_order_release); }

bool tf32_convolutions() { return tuning().cudnn_tf32 && !g_tf32_off.load(std::memory_order_relaxed); }

void turn_off_tf32_convolutions() { g_tf32_off.store(true, std::memory_order_relaxed); }

}  // namespace mpspack
