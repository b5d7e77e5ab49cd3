// The MPSPACK_* switches as read_tuning() reads them (runtime/tuning/tuning.hpp): defaults when unset, each way of
// turning one, values that are not a switch's own, and ScopedTuning's override. The table in docs/CLI.md against
// the code is docs/tools/tuning_table.py's test.
#include <catch2/catch.hpp>

#include "runtime/tuning/tuning.hpp"

#include <map>
#include <string>

using namespace mpspack;

namespace {

// The environment read_tuning() sees: g_env, for the duration of one read.
std::map<std::string, std::string> g_env;

const char* lookup(const char* name) {
  const auto found = g_env.find(name);
  return found == g_env.end() ? nullptr : found->second.c_str();
}

Tuning read(std::map<std::string, std::string> env) {
  g_env = std::move(env);
  Tuning t = read_tuning(lookup);
  g_env.clear();
  return t;
}

}  // namespace

TEST_CASE("tuning: unset switches give the measured defaults", "[tuning]") {
  const Tuning t = read({});
  CHECK(t.embedded_weights == EmbeddedWeights::Mmap);
  CHECK(t.large_blocks);
  CHECK(t.map_weights_min_bytes == uint64_t(1) << 20);
  CHECK(t.populate_weights == PopulateWeights::Off);
  CHECK(t.model_teams);
  CHECK(!t.cpu_prefault_threads);
  CHECK(t.cpu_conv.empty());
  CHECK(t.cpu_gemm.empty());
  CHECK(t.cpu_int4mm.empty());
  CHECK(t.cpu_pack_weights);
  CHECK(t.cpu_block_cache);
  CHECK(t.cpu_attention_pairs);
  CHECK(t.cpu_bmm_threads);
  CHECK(t.cpu_attention_rows == 0);
  CHECK(!t.profile_shim);
  CHECK(t.cublas.empty());
  CHECK(t.cudnn.empty());
  CHECK(t.cudnn_tf32);
  CHECK(t.attention_score_bytes == int64_t(256) << 20);
  CHECK(t.open_libraries_early);
  CHECK(t.upload_mode == "pread-thp");
  CHECK(t.upload_chunk_mib == 2);
  CHECK(t.upload_threads == 0);
  CHECK(t.upload_pin_early);
  CHECK(t.upload_read_ahead);
}

TEST_CASE("tuning: each switch is read from its variable", "[tuning]") {
  const Tuning t = read({{"MPSPACK_EMBEDDED_WEIGHTS", "memcpy"},
                         {"MPSPACK_LARGE_BLOCKS", "libc"},
                         {"MPSPACK_MAP_WEIGHTS_MIN_BYTES", "0"},
                         {"MPSPACK_POPULATE_WEIGHTS", "background"},
                         {"MPSPACK_MODEL_TEAMS", "0"},
                         {"MPSPACK_CPU_PREFAULT", "threads"},
                         {"MPSPACK_CPU_CONV", "im2col"},
                         {"MPSPACK_CPU_GEMM", "sgemm"},
                         {"MPSPACK_CPU_GEMV", "pool"},
                         {"MPSPACK_CPU_INT8MM", "panel"},
                         {"MPSPACK_CPU_INT4MM", "direct"},
                         {"MPSPACK_CPU_PACK_WEIGHTS", "off"},
                         {"MPSPACK_CPU_BLOCK_CACHE", "off"},
                         {"MPSPACK_CPU_ATTENTION", "widen"},
                         {"MPSPACK_CPU_BMM", "one"},
                         {"MPSPACK_CPU_ATTENTION_ROWS", "48"},
                         {"MPSPACK_PROFILE_SHIM", "1"},
                         {"MPSPACK_CUBLAS", "/x/libcublas.so"},
                         {"MPSPACK_CUDNN", "/x/libcudnn.so"},
                         {"MPSPACK_CUDNN_TF32", "0"},
                         {"MPSPACK_CUDA_ATTENTION", "blocked"},
                         {"MPSPACK_CUDA_GEMM", "plain"},
                         {"MPSPACK_ATTENTION_SCORE_BYTES", "4096"},
                         {"MPSPACK_OPEN_LIBRARIES_EARLY", "0"},
                         {"MPSPACK_UPLOAD_MODE", "register"},
                         {"MPSPACK_UPLOAD_CHUNK_MIB", "8"},
                         {"MPSPACK_UPLOAD_THREADS", "3"},
                         {"MPSPACK_UPLOAD_PIN_EARLY", "0"},
                         {"MPSPACK_UPLOAD_READ_AHEAD", "0"}});
  CHECK(t.embedded_weights == EmbeddedWeights::Memcpy);
  CHECK(!t.large_blocks);
  CHECK(t.map_weights_min_bytes == 0);
  CHECK(t.populate_weights == PopulateWeights::Background);
  CHECK(!t.model_teams);
  CHECK(t.cpu_prefault_threads);
  CHECK(t.cpu_conv == "im2col");
  CHECK(t.cpu_gemm == "sgemm");
  CHECK(t.cpu_gemv == "pool");
  CHECK(t.cpu_int8mm == "panel");
  CHECK(t.cpu_int4mm == "direct");
  CHECK(!t.cpu_pack_weights);
  CHECK(!t.cpu_block_cache);
  CHECK(!t.cpu_attention_pairs);
  CHECK(!t.cpu_bmm_threads);
  CHECK(t.cpu_attention_rows == 48);
  CHECK(t.profile_shim);
  CHECK(t.cublas == "/x/libcublas.so");
  CHECK(t.cudnn == "/x/libcudnn.so");
  CHECK(!t.cudnn_tf32);
  CHECK(t.cuda_attention == "blocked");
  CHECK(t.cuda_gemm == "plain");
  CHECK(t.attention_score_bytes == 4096);
  CHECK(!t.open_libraries_early);
  CHECK(t.upload_mode == "register");
  CHECK(t.upload_chunk_mib == 8);
  CHECK(t.upload_threads == 3);
  CHECK(!t.upload_pin_early);
  CHECK(!t.upload_read_ahead);
}

TEST_CASE("tuning: a value that is not a switch's own keeps its default", "[tuning]") {
  const Tuning t = read({{"MPSPACK_EMBEDDED_WEIGHTS", "bogus"},
                         {"MPSPACK_LARGE_BLOCKS", "off"},
                         {"MPSPACK_MAP_WEIGHTS_MIN_BYTES", "-1"},
                         {"MPSPACK_POPULATE_WEIGHTS", "1"},
                         {"MPSPACK_PROFILE_SHIM", "0"},
                         {"MPSPACK_CUDNN_TF32", "1"},
                         {"MPSPACK_ATTENTION_SCORE_BYTES", "-5"},
                         {"MPSPACK_UPLOAD_MODE", ""},
                         {"MPSPACK_UPLOAD_CHUNK_MIB", "2x"},
                         {"MPSPACK_UPLOAD_THREADS", "many"},
                         {"MPSPACK_CUBLAS", ""},
                         {"MPSPACK_CPU_ATTENTION", "off"},
                         {"MPSPACK_CPU_BMM", "1"},
                         {"MPSPACK_CPU_ATTENTION_ROWS", "-4"}});
  CHECK(t.embedded_weights == EmbeddedWeights::Mmap);
  CHECK(t.large_blocks);
  CHECK(t.map_weights_min_bytes == uint64_t(1) << 20);
  CHECK(t.populate_weights == PopulateWeights::Off);
  CHECK(!t.profile_shim);
  CHECK(t.cudnn_tf32);
  CHECK(t.attention_score_bytes == int64_t(256) << 20);
  CHECK(t.upload_mode == "pread-thp");
  CHECK(t.upload_chunk_mib == 2);
  CHECK(t.upload_threads == 12);  // set, it decides; not a count: the twelve that keep up with the bus
  CHECK(t.cublas.empty());
  CHECK(t.cpu_attention_pairs);
  CHECK(t.cpu_bmm_threads);
  CHECK(t.cpu_attention_rows == 0);
}

TEST_CASE("tuning: a ScopedTuning is in force while it lives, and the one before it after", "[tuning]") {
  const uint64_t before = tuning().map_weights_min_bytes;
  {
    Tuning outer = tuning();
    outer.map_weights_min_bytes = 7;
    const ScopedTuning a(outer);
    CHECK(tuning().map_weights_min_bytes == 7);
    {
      Tuning inner = tuning();
      inner.map_weights_min_bytes = 9;
      const ScopedTuning b(inner);
      CHECK(tuning().map_weights_min_bytes == 9);
    }
    CHECK(tuning().map_weights_min_bytes == 7);
  }
  CHECK(tuning().map_weights_min_bytes == before);
}

TEST_CASE("tuning: names print as the switches spell them", "[tuning]") {
  CHECK(std::string(to_string(EmbeddedWeights::Mmap)) == "mmap");
  CHECK(std::string(to_string(EmbeddedWeights::Memcpy)) == "memcpy");
  CHECK(std::string(to_string(PopulateWeights::AtLoad)) == "on");
  CHECK(std::string(to_string(PopulateWeights::Background)) == "background");
}
