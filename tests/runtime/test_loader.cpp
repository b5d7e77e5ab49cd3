// The loader's API (mpspack::runtime::Model) and tensor_io: weights by flavour, the proof that an
// external blob is used in place, timings, and the tensor file formats.
#include <catch2/catch.hpp>
#include <cli_runner.hpp>
#include <fixtures.hpp>

#include "mpspack/format/writer.hpp"
#include "mpspack/pack/build.hpp"
#include "mpspack/runtime/model.hpp"
#include "mpspack/tensor_io.hpp"

#include "runtime/loader/large_blocks.hpp"
#include "runtime/shim/parallel.hpp"
#include "runtime/loader/self_mapping.hpp"
#include "runtime/shim/constant_memory.hpp"
#include "runtime/tuning/tuning.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

using namespace mpspack;
using namespace mpspack::test;
namespace fs = std::filesystem;

namespace {

fs::path rebuilt(const char* name) { return fixtures_dir() / "rebuilt-bookworm" / name; }

format::Container build_container(const fs::path& dir, const fs::path& out) {
  pack::BuildOptions o;
  o.inputs = {dir / "model.so"};
  if (fs::exists(dir / "weights.blob")) o.weights = {dir / "weights.blob"};
  o.output = out;
  auto m = pack::build(o);
  INFO((m.ok() ? "" : m.error().message));
  REQUIRE(m.ok());
  auto c = format::Container::open(out);
  REQUIRE(c.ok());
  return std::move(c).value();
}

HostTensor raw(const fs::path& p, int32_t dt, std::vector<int64_t> shape) {
  TensorSpec s;
  s.path = p;
  s.dtype = dt;
  s.shape = std::move(shape);
  auto t = read_tensor(s);
  INFO((t.ok() ? "" : t.error().message));
  REQUIRE(t.ok());
  return std::move(t).value();
}

void require_matches(const HostTensor& got, const HostTensor& want) {
  auto c = compare_tensors(got, want, default_tolerance(want.dtype));
  INFO(c.problem << " mismatches " << c.mismatches << " max abs " << c.max_abs_error);
  REQUIRE(c.match);
}

bool inside(const void* p, uint64_t n, const MappedFile& f) {
  auto a = reinterpret_cast<uintptr_t>(p), lo = reinterpret_cast<uintptr_t>(f.data());
  return a >= lo && a + n <= lo + f.size();
}

// Whether every page of [p, p + n) is resident now (mincore).
bool resident(const void* p, size_t n) {
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((n + page - 1) / page);
  REQUIRE(::mincore(const_cast<void*>(p), n, in.data()) == 0);
  return std::all_of(in.begin(), in.end(), [](unsigned char v) { return (v & 1) != 0; });
}

// Where the byte at p comes from: the file a mapping of it names in /proc/self/maps and the offset in that file,
// or an empty path when it is anonymous memory.
struct Backing {
  std::string path;
  uint64_t offset = 0;
};

Backing backing_of(const void* p) {
  std::ifstream maps("/proc/self/maps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode;
    std::getline(in >> std::ws, path);
    const size_t dash = range.find('-');
    const uintptr_t lo = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (a < lo || a >= hi) continue;
    if (inode == "0") return {};
    return {path, std::stoull(offset, nullptr, 16) + (a - lo)};
  }
  return {};
}

}  // namespace

TEST_CASE("large blocks: routed_malloc faults big blocks in and tracks them, small ones go to the C library",
          "[loader][large_blocks]") {
  REQUIRE(runtime::routed_blocks_live() == 0);
  void* small = runtime::routed_malloc(runtime::kLargeBlock - 1);
  REQUIRE(small);
  CHECK(runtime::routed_blocks_live() == 0);

  const size_t n = runtime::kLargeBlock + 12345;  // not a whole number of pages
  auto* big = static_cast<uint8_t*>(runtime::routed_malloc(n));
  REQUIRE(big);
  CHECK(runtime::routed_blocks_live() == 1);
  CHECK(resident(big, n));  // before anything wrote to it
  CHECK(big[0] == 0);
  CHECK(big[n - 1] == 0);
  for (size_t i = 0; i < n; i += 4096) big[i] = uint8_t((i >> 12) | 1);

  // Grown: the bytes come along, the old block is gone, the new one is tracked instead.
  auto* grown = static_cast<uint8_t*>(runtime::routed_realloc(big, 2 * n));
  REQUIRE(grown);
  CHECK(runtime::routed_blocks_live() == 1);
  CHECK(resident(grown, 2 * n));
  bool same = true;
  for (size_t i = 0; i < n; i += 4096) same = same && grown[i] == uint8_t((i >> 12) | 1);
  CHECK(same);
  // Shrunk below the threshold: the C library's block from then on.
  auto* shrunk = static_cast<uint8_t*>(runtime::routed_realloc(grown, 4096));
  REQUIRE(shrunk);
  CHECK(runtime::routed_blocks_live() == 0);
  CHECK(shrunk[0] == 1);

  // The C library's blocks pass through realloc and free untouched.
  small = runtime::routed_realloc(small, runtime::kLargeBlock + 1);
  REQUIRE(small);
  CHECK(runtime::routed_blocks_live() == 0);
  runtime::routed_free(small);
  runtime::routed_free(shrunk);
  runtime::routed_free(nullptr);
  CHECK(runtime::routed_blocks_live() == 0);
}

TEST_CASE("large blocks: routed_memcpy copies every byte, in parts or not", "[loader][large_blocks]") {
  const size_t n = runtime::kLargeBlock + (size_t(3) << 20) + 4099;  // parts of 2 MiB multiples and a ragged end
  std::vector<uint8_t> src(n + 16), dst(n + 16, 0xee);
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 2654435761u >> 13);
  for (size_t size : {size_t(0), size_t(1), size_t(4096), runtime::kLargeBlock - 1, runtime::kLargeBlock, n}) {
    INFO("size " << size);
    std::fill(dst.begin(), dst.end(), 0xee);
    const size_t before = runtime::routed_copies_made();
    CHECK(runtime::routed_memcpy(dst.data() + 5, src.data() + 3, size) == dst.data() + 5);
    CHECK(runtime::routed_copies_made() - before == (size >= runtime::kLargeBlock ? 1u : 0u));
    CHECK(std::memcmp(dst.data() + 5, src.data() + 3, size) == 0);
    CHECK(std::all_of(dst.begin(), dst.begin() + 5, [](uint8_t v) { return v == 0xee; }));  // nothing around it
    CHECK(std::all_of(dst.begin() + 5 + long(size), dst.end(), [](uint8_t v) { return v == 0xee; }));
  }
}

TEST_CASE("large blocks: routed_memcpy_chk copies like routed_memcpy, and aborts on an overflow as glibc does",
          "[loader][large_blocks]") {
  const size_t n = runtime::kLargeBlock + 77;
  std::vector<uint8_t> src(n), dst(n, 0);
  for (size_t i = 0; i < n; ++i) src[i] = uint8_t(i * 7 + 1);
  const size_t before = runtime::routed_copies_made();
  CHECK(runtime::routed_memcpy_chk(dst.data(), src.data(), n, n) == dst.data());
  CHECK(runtime::routed_copies_made() - before == 1);
  CHECK(dst == src);
  CHECK(runtime::routed_memcpy_chk(dst.data(), src.data(), 100, 100) == dst.data());
  CHECK(runtime::routed_copies_made() - before == 1);

  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGABRT, SIG_DFL);  // not Catch's handler: it would report a failure from this process too
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, STDERR_FILENO);                                // glibc's "buffer overflow detected"
    runtime::routed_memcpy_chk(dst.data(), src.data(), n, n - 1);  // one byte too many
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
}

TEST_CASE("large blocks: a model library's malloc, realloc, memcpy and free reach the routed functions",
          "[loader][large_blocks]") {
  TempDir tmp;
  const fs::path so = binary_dir() / "tests" / "runtime" / "fake_models" / "large_block.so";
  REQUIRE(fs::exists(so));
  pack::BuildOptions o;
  o.inputs = {so};
  o.output = tmp / "m.mpk";
  auto built = pack::build(o);
  INFO((built.ok() ? "" : built.error().message));
  REQUIRE(built.ok());
  auto c = format::Container::open(o.output);
  REQUIRE(c.ok());

  const uint64_t weights = c->manifest().segments[c->manifest().weights.at(0).segment].size;
  struct Way {
    bool prefault, map;
  };
  for (Way way : {Way{true, true}, Way{true, false}, Way{false, false}}) {
    INFO("MPSPACK_LARGE_BLOCKS " << (way.prefault ? "prefault" : "libc") << ", weights mapped = " << way.map);
    REQUIRE(runtime::routed_blocks_live() == 0);
    runtime::LoadOptions lo;
    Tuning t;
    t.large_blocks = way.prefault;
    if (!way.map) t.map_weights_min_bytes = UINT64_MAX;
    const ScopedTuning tuned(t);
    const size_t copies = runtime::routed_copies_made(), skipped = runtime::routed_bytes_not_copied();
    {
      // Create mallocs a block of its 33 MiB of constants, memcpys them in, reallocs it 8 MiB larger and checks
      // the bytes, copies them in again with __memcpy_chk (it fails if a byte is wrong). Offered the weights
      // mapped, its malloc gets them and the first copy is skipped; the realloc moves them to a block of ours.
      auto m = runtime::Model::load(*c, 0, lo);
      INFO((m.ok() ? "" : m.error().message));
      REQUIRE(m.ok());
      CHECK(m->weights_mode() ==
            (way.map ? runtime::WeightsMode::EmbeddedMapped : runtime::WeightsMode::EmbeddedCopied));
      CHECK(runtime::routed_blocks_live() == (way.prefault ? 1u : 0u));
      CHECK(runtime::routed_copies_made() - copies == (way.prefault ? (way.map ? 1u : 2u) : 0u));
      CHECK(runtime::routed_bytes_not_copied() - skipped == (way.map ? weights : 0u));
    }
    // Delete freed it through the library's free: a routed block handed to the C library's free would abort.
    CHECK(runtime::routed_blocks_live() == 0);
  }
}

TEST_CASE("loader: a CPU model's parameters are constant memory while it lives, its buffers never",
          "[loader][packed]") {
  // Products may keep a weight in constant memory packed in another layout (shim/constant_memory.hpp): a
  // parameter must be registered from load to unload, and a buffer (what a run may write) never.
  for (const char* name : {"cpu_block_blob", "cpu_mlp_embedded", "cpu_cnn_blob"}) {
    INFO(name);
    const auto dir = rebuilt(name);
    MPK_REQUIRE_FIXTURE(dir / "model.so");
    TempDir tmp;
    auto c = build_container(dir, tmp / "m.mpk");
    std::vector<const void*> registered;
    {
      auto m = runtime::Model::load(c, 0);
      INFO((m.ok() ? "" : m.error().message));
      REQUIRE(m.ok());
      auto table = m->constant_table();
      auto live = m->constants();
      REQUIRE(table.ok());
      REQUIRE(live.ok());
      for (const ConstantInfo& k : *table) {
        const auto l = std::find_if(live->begin(), live->end(), [&](const runtime::LiveConstant& l) {
          return l.name == k.fqn || l.name == k.name;
        });
        REQUIRE(l != live->end());
        INFO("constant " << k.name << ", type " << k.type);
        const bool read_only = k.type == 1 || k.type == 3;
        CHECK(shim::is_constant_memory(l->data, 1) == read_only);
        if (read_only) registered.push_back(l->data);
      }
    }
    CHECK_FALSE(registered.empty());
    for (const void* p : registered) CHECK_FALSE(shim::is_constant_memory(p, 1));  // withdrawn with the model
  }
}

TEST_CASE("loader: an embedded library gets its weights back before Create and runs", "[loader]") {
  const auto dir = rebuilt("cpu_cnn_embedded");
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  auto c = build_container(dir, tmp / "m.mpk");
  auto m = runtime::Model::load(c, 0);
  INFO((m.ok() ? "" : m.error().message));
  REQUIRE(m.ok());
  CHECK(m->weights_mode() == runtime::WeightsMode::EmbeddedCopied);
  CHECK(m->num_inputs() == 1);
  CHECK(m->num_outputs() == 1);
  std::vector<HostTensor> in = {raw(dir / "input0.bin", dtype::float32, {4, 3, 32, 32})};
  for (int rep = 0; rep < 2; ++rep) {  // the container's state survives a second run
    auto out = m->run(in);
    REQUIRE(out.ok());
    REQUIRE(out->size() == 1);
    require_matches((*out)[0], raw(dir / "expected0.bin", dtype::float32, {4, 10}));
  }
  const auto& t = m->timings();
  CHECK(t.library_ms > 0);
  CHECK(t.create_ms > 0);
  CHECK(t.first_run_ms > 0);
  // Create copied the constants out of the restored region: none point into the container.
  auto live = m->constants();
  REQUIRE(live.ok());
  REQUIRE(!live->empty());
  for (const auto& k : *live) CHECK_FALSE(inside(k.data, 1, c.file()));
}

namespace {
// The process's threads, by id.
std::set<long> thread_ids() {
  std::set<long> ids;
  for (const auto& e : fs::directory_iterator("/proc/self/task")) ids.insert(std::stol(e.path().filename().string()));
  return ids;
}
}  // namespace

TEST_CASE("loader: a model's OpenMP teams are followed: after its second run no thread starts or ends", "[loader]") {
  // Both fixtures were compiled on a 16-thread machine: their kernels ask for teams of 16. Where the shim's and
  // oneDNN's teams were one per core instead, libgomp ended and started threads around every call on a machine of
  // fewer cores (shim/parallel.hpp, model_parallel).
  struct Case {
    const char* name;
    int32_t in_dtype;
    std::vector<int64_t> in_shape, out_shape;
  };
  // The block first: its first products run on oneDNN before the model has opened any team, so this process has
  // not yet followed a team when oneDNN makes their primitives (onednn_module.hpp, team_size).
  for (const Case& k : {Case{"cpu_block_blob", dtype::int64, {2, 16}, {2, 16, 100}},
                        Case{"cpu_cnn_blob", dtype::float32, {4, 3, 32, 32}, {4, 10}}}) {
    INFO(k.name);
    const auto dir = rebuilt(k.name);
    MPK_REQUIRE_FIXTURE(dir / "model.so");
    TempDir tmp;
    auto c = build_container(dir, tmp / "m.mpk");
    auto m = runtime::Model::load(c, 0);
    INFO((m.ok() ? "" : m.error().message));
    REQUIRE(m.ok());
    const std::vector<HostTensor> in = {raw(dir / "input0.bin", k.in_dtype, k.in_shape)};
    const HostTensor want = raw(dir / "expected0.bin", dtype::float32, k.out_shape);
    auto first = m->run(in);
    REQUIRE(first.ok());
    require_matches((*first)[0], want);
    CHECK(shim::model_team() == 16);
    // The second run starts mpspack's pool where this machine has fewer cores than 16: the first run's products
    // ran on the OpenMP team, since the model had asked for none yet.
    REQUIRE(m->run(in).ok());
    const std::set<long> before = thread_ids();
    for (int rep = 0; rep < 5; ++rep) {
      auto out = m->run(in);
      REQUIRE(out.ok());
      require_matches((*out)[0], want);
    }
    CHECK(thread_ids() == before);
  }
}

TEST_CASE("loader: every way of putting embedded weights back gives the same outputs", "[loader]") {
  // Speed is compared in bench/ (docs/PERFORMANCE.md); here only that each mechanism is correct,
  // including the mapped ones (the weights segment is page-congruent with the region).
  for (const char* name : {"cpu_cnn_embedded", "cpu_mlp_embedded"}) {
    const auto dir = rebuilt(name);
    MPK_REQUIRE_FIXTURE(dir / "model.so");
    TempDir tmp;
    auto c = build_container(dir, tmp / "m.mpk");
    using E = EmbeddedWeights;
    for (E how : {E::Memcpy, E::Mmap}) {
      INFO(name << " " << to_string(how));
      Tuning t;
      t.embedded_weights = how;
      const ScopedTuning tuned(t);
      auto m = runtime::Model::load(c, 0);
      INFO((m.ok() ? "" : m.error().message));
      REQUIRE(m.ok());
      CHECK(m->weights_mode() == runtime::WeightsMode::EmbeddedCopied);
      const bool cnn = std::string(name) == "cpu_cnn_embedded";
      std::vector<HostTensor> in = {cnn ? raw(dir / "input0.bin", dtype::float32, {4, 3, 32, 32})
                                        : raw(dir / "input0.bin", dtype::float32, {8, 64})};
      auto out = m->run(in);
      REQUIRE(out.ok());
      require_matches((*out)[0], cnn ? raw(dir / "expected0.bin", dtype::float32, {4, 10})
                                     : raw(dir / "expected0.bin", dtype::float32, {8, 10}));
    }
  }
}

TEST_CASE("loader: an external blob with a constants table is used in place, copying no weights", "[loader]") {
  const auto dir = rebuilt("cpu_cnn_blob");
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  auto plain = build_container(dir, tmp / "plain.mpk");

  // Without a constants table (a plain .so input) the loader copies, and says so.
  std::vector<ConstantInfo> table;
  {
    auto m = runtime::Model::load(plain, 0);
    REQUIRE(m.ok());
    CHECK(m->weights_mode() == runtime::WeightsMode::BlobCopied);
    auto t = m->constant_table();
    INFO((t.ok() ? "" : t.error().message));
    REQUIRE(t.ok());
    table = std::move(t).value();
  }
  REQUIRE(!table.empty());
  for (const auto& k : table) CHECK(!k.shape.empty());  // conv weights are 4-D, not byte views

  // The same container with the table a .pt2's wrapper source would give (shapes, strides, offsets).
  Manifest man = plain.manifest();
  REQUIRE(man.weights.size() == 1);
  man.weights[0].constants = table;
  std::vector<format::PendingSegment> segs;
  for (size_t i = 0; i < man.segments.size(); ++i)
    segs.push_back({man.segments[i].kind, man.segments[i].name, plain.segment(uint32_t(i)), std::nullopt});
  REQUIRE(format::write_container(tmp / "table.mpk", man, segs).ok());
  auto with_table = format::Container::open(tmp / "table.mpk");
  REQUIRE(with_table.ok());

  auto m = runtime::Model::load(*with_table, 0);
  INFO((m.ok() ? "" : m.error().message));
  REQUIRE(m.ok());
  CHECK(m->weights_mode() == runtime::WeightsMode::BlobInPlace);
  // Every constant the model uses lies inside the container's mapping: nothing was copied.
  auto live = m->constants();
  REQUIRE(live.ok());
  REQUIRE(live->size() == table.size());
  const ByteView blob = with_table->segment(with_table->manifest().weights[0].segment);
  for (const auto& k : *live) {
    INFO(k.name);
    CHECK(inside(k.data, k.storage_bytes, with_table->file()));
    CHECK(static_cast<const uint8_t*>(k.data) >= blob.data());
    CHECK(static_cast<const uint8_t*>(k.data) < blob.data() + blob.size());
  }
  std::vector<HostTensor> in = {raw(dir / "input0.bin", dtype::float32, {4, 3, 32, 32})};
  auto out = m->run(in);
  REQUIRE(out.ok());
  require_matches((*out)[0], raw(dir / "expected0.bin", dtype::float32, {4, 10}));

  // --copy-weights still copies.
  runtime::LoadOptions copy;
  copy.copy_weights = true;
  auto mc = runtime::Model::load(*with_table, 0, copy);
  REQUIRE(mc.ok());
  CHECK(mc->weights_mode() == runtime::WeightsMode::BlobCopied);
  auto live_c = mc->constants();
  REQUIRE(live_c.ok());
  for (const auto& k : *live_c) CHECK_FALSE(inside(k.data, 1, with_table->file()));
  auto out_c = mc->run(in);
  REQUIRE(out_c.ok());
  require_matches((*out_c)[0], raw(dir / "expected0.bin", dtype::float32, {4, 10}));
}

TEST_CASE("loader: a constants table that disagrees with the model falls back to a copy", "[loader]") {
  const auto dir = rebuilt("cpu_mlp_blob");
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  auto plain = build_container(dir, tmp / "plain.mpk");
  std::vector<ConstantInfo> table;
  {
    auto m = runtime::Model::load(plain, 0);
    REQUIRE(m.ok());
    table = m->constant_table().value();
  }
  // No longer what the model says, yet a valid table: the storage still lies inside the segment
  // (rule W1) and the view inside the storage (W2), so the container is written and opens, and it
  // is the loader's comparison with the model that must catch the difference.
  table[0].size += 64;
  Manifest man = plain.manifest();
  man.weights[0].constants = table;
  std::vector<format::PendingSegment> segs;
  for (size_t i = 0; i < man.segments.size(); ++i)
    segs.push_back({man.segments[i].kind, man.segments[i].name, plain.segment(uint32_t(i)), std::nullopt});
  auto written = format::write_container(tmp / "bad.mpk", man, segs);
  INFO((written.ok() ? "" : written.error().message));
  REQUIRE(written.ok());
  auto c = format::Container::open(tmp / "bad.mpk");
  REQUIRE(c.ok());
  auto m = runtime::Model::load(*c, 0);
  REQUIRE(m.ok());
  CHECK(m->weights_mode() == runtime::WeightsMode::BlobCopied);
  auto out = m->run(std::vector<HostTensor>{raw(dir / "input0.bin", dtype::float32, {8, 64})});
  REQUIRE(out.ok());
  require_matches((*out)[0], raw(dir / "expected0.bin", dtype::float32, {8, 10}));
}

TEST_CASE("loader: on the CPU, embedded weights and a plain .so + blob are the container's pages, not a copy",
          "[loader]") {
  // The fixtures are real AOTInductor builds: Create (embedded) and UpdateConstantsFromBlob (blob) malloc one block
  // for their constants and copy each in; offered the weights segment mapped from the container, they copy nothing.
  struct Case {
    const char* name;
    int32_t in_dtype;
    std::vector<int64_t> in, out;
    runtime::WeightsMode mode;
  };
  using W = runtime::WeightsMode;
  for (const Case& k : {Case{"cpu_mlp_embedded", dtype::float32, {8, 64}, {8, 10}, W::EmbeddedMapped},
                        Case{"cpu_cnn_embedded", dtype::float32, {4, 3, 32, 32}, {4, 10}, W::EmbeddedMapped},
                        Case{"cpu_block_embedded", dtype::int64, {2, 16}, {2, 16, 100}, W::EmbeddedMapped},
                        Case{"cpu_mlp_blob", dtype::float32, {8, 64}, {8, 10}, W::BlobMapped},
                        Case{"cpu_cnn_blob", dtype::float32, {4, 3, 32, 32}, {4, 10}, W::BlobMapped},
                        Case{"cpu_block_blob", dtype::int64, {2, 16}, {2, 16, 100}, W::BlobMapped}}) {
    DYNAMIC_SECTION(k.name) {
      const auto dir = rebuilt(k.name);
      MPK_REQUIRE_FIXTURE(dir / "model.so");
      TempDir tmp;
      auto c = build_container(dir, tmp / "m.mpk");
      const SegmentInfo& seg = c.manifest().segments[c.manifest().weights.at(0).segment];
      Tuning t;
      t.map_weights_min_bytes = 0;  // the fixtures' weights are a few KiB
      const ScopedTuning tuned(t);
      const size_t skipped_before = runtime::routed_bytes_not_copied();
      auto m = runtime::Model::load(c, 0);
      INFO((m.ok() ? "" : m.error().message));
      REQUIRE(m.ok());
      CHECK(m->weights_mode() == k.mode);
      auto live = m->constants();
      REQUIRE(live.ok());
      REQUIRE(!live->empty());
      uint64_t bytes = 0;
      for (const auto& t : *live) {
        INFO(t.name);
        const Backing b = backing_of(t.data);
        CHECK(fs::path(b.path) == fs::canonical(tmp / "m.mpk"));
        CHECK(b.offset >= seg.offset);
        CHECK(b.offset + t.storage_bytes <= seg.offset + seg.size);
        bytes += t.storage_bytes;
      }
      CHECK(runtime::routed_bytes_not_copied() - skipped_before >= bytes);
      const HostTensor want = raw(dir / "expected0.bin", dtype::float32, k.out);
      for (int rep = 0; rep < 2; ++rep) {
        auto out = m->run(std::vector<HostTensor>{raw(dir / "input0.bin", k.in_dtype, k.in)});
        INFO((out.ok() ? "" : out.error().message));
        REQUIRE(out.ok());
        require_matches((*out)[0], want);
      }
    }
  }
  CHECK(runtime::routed_blocks_live() == 0);  // each model's Delete freed its mapped block
}

// The synthetic Linear model (bench/synthetic/make_linear.sh, 1 MiB of weights, no torch) in its mmap-self layout:
// a library that maps its own file's tail and copies its constants out of that mapping into one block, as
// AOTInductor's USE_MMAP_SELF CPU code does. No real mmap-self fixture loads here (torch-built/cpu_mlp_mmap runs on
// the device machine, tests/device/run_cases.sh).
fs::path synthetic_mmap_self(const TempDir& tmp) {
  const std::string cmd = fmt::format("bash '{}/bench/synthetic/make_linear.sh' '{}' 1 '{}' >/dev/null",
                                      MPSPACK_SOURCE_DIR, MPSPACK_BINARY_DIR, (tmp / "linear").string());
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  return tmp / "linear";
}

TEST_CASE("loader: an mmap-self library's mapping of its weights and Create's block are the container's pages",
          "[loader][mmap_self]") {
  TempDir tmp;
  const fs::path dir = synthetic_mmap_self(tmp);
  auto c = format::Container::open(dir / "mmap.mpk");
  REQUIRE(c.ok());
  REQUIRE(c->manifest().libraries.at(0).flavour == Flavour::MmapSelf);
  const SegmentInfo& seg = c->manifest().segments[c->manifest().weights.at(0).segment];
  const HostTensor in = raw(dir / "input0.bin", dtype::float32, {1, 1024});
  const HostTensor want = raw(dir / "expected0.bin", dtype::float32, {1, 256});
  using W = runtime::WeightsMode;
  // Mapped from the container at 1 MiB (page tables filled by the first run, before load() returns, or on a
  // thread beside the run); below the threshold the weights are written into the library's file.
  using P = PopulateWeights;
  struct Way {
    uint64_t threshold;
    W mode;
    P populate;
  };
  for (const Way& way :
       {Way{uint64_t(1) << 20, W::MmapSelfMapped, P::Off}, Way{uint64_t(1) << 20, W::MmapSelfMapped, P::AtLoad},
        Way{uint64_t(1) << 20, W::MmapSelfMapped, P::Background}, Way{uint64_t(1) << 40, W::MmapSelf, P::Off}}) {
    const W mode = way.mode;
    DYNAMIC_SECTION(runtime::to_string(mode) << (way.populate == P::Background ? ", populated beside the run"
                                                 : way.populate == P::AtLoad   ? ", populated at load"
                                                                               : "")) {
      Tuning t;
      t.map_weights_min_bytes = way.threshold;
      t.populate_weights = way.populate;
      const ScopedTuning tuned(t);
      auto m = runtime::Model::load(*c, 0);
      INFO((m.ok() ? "" : m.error().message));
      REQUIRE(m.ok());
      CHECK(m->weights_mode() == mode);
      auto live = m->constants();
      REQUIRE(live.ok());
      REQUIRE(live->size() == 2);
      // Mapped: the block Create copies into is the offered one, the container's pages, so every byte is the
      // container's (the last part page allowed for). Not mapped: Create's copy, in anonymous memory of its own
      // (copied from its own file, rebuilt in the memfd).
      const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
      uint64_t total = 0, from_container = 0;
      for (const auto& t : *live) {
        INFO(t.name);
        const Backing b = backing_of(t.data);
        total += t.storage_bytes;
        if (mode == W::MmapSelf) {
          CHECK(b.path.empty());
        } else if (!b.path.empty()) {
          CHECK(fs::path(b.path) == fs::canonical(dir / "mmap.mpk"));
          CHECK(b.offset >= seg.offset);
          CHECK(b.offset + t.storage_bytes <= seg.offset + seg.size);
          from_container += t.storage_bytes;
        }
      }
      if (mode == W::MmapSelfMapped) CHECK(from_container + page >= total);
      for (int rep = 0; rep < 2; ++rep) {
        auto out = m->run(std::vector<HostTensor>{in});
        INFO((out.ok() ? "" : out.error().message));
        REQUIRE(out.ok());
        require_matches((*out)[0], want);
      }
    }
  }
}

TEST_CASE("self mapping: the library's own request gets the offered pages once, any other view fills the hole",
          "[loader][mmap_self]") {
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  std::vector<uint8_t> stored(2 * page + 8, 0x45), weights(3 * page + 100), file_bytes(weights.size());
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = uint8_t(i * 13 + 5);
  for (size_t i = 0; i < 8; ++i) stored[2 * page + i] = uint8_t(0xa0 + i);  // the tail: the magic
  TempDir tmp;
  {  // the weights segment as a file, as the container holds it
    std::ofstream f(tmp / "segment", std::ios::binary);
    f.write(reinterpret_cast<const char*>(weights.data()), std::streamsize(weights.size()));
  }
  const int seg_fd = ::open((tmp / "segment").c_str(), O_RDONLY | O_CLOEXEC);
  const int memfd = ::memfd_create("self", MFD_CLOEXEC);
  REQUIRE(seg_fd >= 0);
  REQUIRE(memfd >= 0);
  const uint64_t hole = 2 * page, length = weights.size() + 8;
  auto w = runtime::loader::SelfMappedWeights::write(memfd, stored, hole, weights);
  REQUIRE(w.ok());
  CHECK(::lseek(memfd, 0, SEEK_END) == off_t(stored.size() + weights.size()));
  REQUIRE(::pread(memfd, file_bytes.data(), file_bytes.size(), off_t(hole)) == ssize_t(file_bytes.size()));
  CHECK(std::all_of(file_bytes.begin(), file_bytes.end(), [](uint8_t b) { return b == 0; }));  // a hole so far
  REQUIRE((*w)->offer_mapping(seg_fd, 0).ok());
  using runtime::loader::routed_self_mmap;
  const int again = ::open(fmt::format("/proc/self/fd/{}", memfd).c_str(), O_RDONLY | O_CLOEXEC);  // as dladdr's path
  REQUIRE(again >= 0);
  void* p = routed_self_mmap(nullptr, length, PROT_READ, MAP_PRIVATE, again, off_t(hole));
  REQUIRE(p == (*w)->mapping());
  CHECK((*w)->taken());
  CHECK(std::memcmp(p, weights.data(), weights.size()) == 0);
  CHECK(std::memcmp(static_cast<uint8_t*>(p) + weights.size(), stored.data() + hole, 8) == 0);
  CHECK(backing_of(p).path == fs::canonical(tmp / "segment").string());
  // Asked again (or in any other way), it is the file: the hole is filled first.
  void* q = routed_self_mmap(nullptr, length, PROT_READ, MAP_PRIVATE, again, off_t(hole));
  REQUIRE(q != MAP_FAILED);
  CHECK(q != p);
  CHECK(std::memcmp(q, weights.data(), weights.size()) == 0);
  CHECK(std::memcmp(static_cast<uint8_t*>(q) + weights.size(), stored.data() + hole, 8) == 0);
  ::munmap(q, length);
  ::munmap(p, length);  // taken: the library's to release
  ::close(again);
  ::close(memfd);
  ::close(seg_fd);
}

TEST_CASE("large blocks: an offered block is taken by a malloc of its size only, and skips only copies it holds",
          "[loader][large_blocks]") {
  std::vector<uint8_t> mirror(1 << 16);
  for (size_t i = 0; i < mirror.size(); ++i) mirror[i] = uint8_t(i * 7 + 1);
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  auto* block =
      static_cast<uint8_t*>(::mmap(nullptr, mirror.size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(block != MAP_FAILED);
  std::memcpy(block, mirror.data(), mirror.size());
  runtime::offer_block({block, mirror.data(), mirror.size(), block, mirror.size()});
  void* other = runtime::routed_malloc(mirror.size() - 64);  // not its size: the C library's
  CHECK(other != block);
  runtime::routed_free(other);
  REQUIRE(runtime::routed_malloc(mirror.size()) == block);
  void* second = runtime::routed_malloc(mirror.size());  // taken once: this one is the C library's
  CHECK(second != block);
  runtime::routed_free(second);
  const size_t skipped = runtime::routed_bytes_not_copied();
  const size_t copied = runtime::routed_bytes_copied_from_mirror();
  runtime::routed_memcpy(block + 128, mirror.data() + 128, 256);  // same offset: already there
  CHECK(runtime::routed_bytes_not_copied() - skipped == 256);
  CHECK(runtime::routed_bytes_copied_from_mirror() == copied);
  // Another offset is copied as asked, from the mirror, and counted as a copy out of it.
  runtime::routed_memcpy(block + page, mirror.data(), 64);
  CHECK(std::memcmp(block + page, mirror.data(), 64) == 0);
  CHECK(runtime::routed_bytes_not_copied() - skipped == 256);
  CHECK(runtime::routed_bytes_copied_from_mirror() - copied == 64);
  std::vector<uint8_t> elsewhere(64);  // a copy that does not read the mirror is not counted
  runtime::routed_memcpy(block + page, elsewhere.data(), elsewhere.size());
  CHECK(runtime::routed_bytes_copied_from_mirror() - copied == 64);
  CHECK(runtime::withdraw_offer());
  // After the offer ends, copies into the block are ordinary copies again, and not counted.
  runtime::routed_memcpy(block + 128, mirror.data() + 128, 256);
  CHECK(runtime::routed_bytes_not_copied() - skipped == 256);
  CHECK(runtime::routed_bytes_copied_from_mirror() - copied == 64);
  REQUIRE(runtime::routed_blocks_live() == 1);
  runtime::routed_free(block);  // the library's free unmaps it
  CHECK(runtime::routed_blocks_live() == 0);
  CHECK_FALSE(runtime::withdraw_offer());  // nothing offered, nothing taken
}

TEST_CASE("loader: inputs are checked before the model runs", "[loader]") {
  const auto dir = rebuilt("cpu_mlp_embedded");
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  auto c = build_container(dir, tmp / "m.mpk");
  auto m = runtime::Model::load(c, 0);
  REQUIRE(m.ok());
  HostTensor x = raw(dir / "input0.bin", dtype::float32, {8, 64});
  auto none = m->run({});
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("takes 1 input, 0 given") != std::string::npos);
  HostTensor bad = x;
  bad.data.resize(10);
  auto r = m->run(std::vector<HostTensor>{bad});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("input 0: 10 bytes given, f32 8x64 needs 2048") != std::string::npos);
}

TEST_CASE("loader: find_library by name and index", "[loader]") {
  const auto dir = rebuilt("cpu_mlp_embedded");
  MPK_REQUIRE_FIXTURE(dir / "model.so");
  TempDir tmp;
  auto c = build_container(dir, tmp / "m.mpk");
  CHECK(runtime::find_library(c, "").value() == 0);
  CHECK(runtime::find_library(c, "model").value() == 0);
  CHECK(runtime::find_library(c, "0").value() == 0);
  CHECK_FALSE(runtime::find_library(c, "1").ok());
  CHECK_FALSE(runtime::find_library(c, "x").ok());
}

// --- tensor_io ----------------------------------------------------------------------------------

TEST_CASE("tensor specs: FILE[:DTYPE:SHAPE], parsed from the right", "[tensor_io]") {
  auto a = parse_tensor_spec("x.bin:f32:4x96");
  REQUIRE(a.ok());
  CHECK(a->path == "x.bin");
  CHECK(*a->dtype == dtype::float32);
  CHECK(*a->shape == std::vector<int64_t>{4, 96});
  auto b = parse_tensor_spec("dir:with:colons/x.bin:i64:2x16");
  REQUIRE(b.ok());
  CHECK(b->path == "dir:with:colons/x.bin");
  CHECK(*b->dtype == dtype::int64);
  auto s = parse_tensor_spec("x.bin:bool:scalar");
  REQUIRE(s.ok());
  CHECK(s->shape->empty());
  auto plain = parse_tensor_spec("x.npy");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->dtype.has_value());
  auto bad_dtype = parse_tensor_spec("x.bin:f33:4x4");
  REQUIRE_FALSE(bad_dtype.ok());
  CHECK(bad_dtype.error().message.find("unknown dtype 'f33'") != std::string::npos);
  auto bad_shape = parse_tensor_spec("x.bin:f32:4xx4");
  REQUIRE_FALSE(bad_shape.ok());
  CHECK(bad_shape.error().message.find("not like 4x96") != std::string::npos);
  for (const char* n : {"f32", "f16", "bf16", "f64", "i64", "i32", "i16", "i8", "u8", "bool"})
    CHECK(parse_dtype(n).has_value());
}

TEST_CASE(".npy: write and read back every dtype, refuse Fortran order and big-endian", "[tensor_io]") {
  TempDir tmp;
  for (int32_t dt : {dtype::float32, dtype::float16, dtype::float64, dtype::int64, dtype::int32, dtype::int16,
                     dtype::int8, dtype::uint8, dtype::bool_}) {
    HostTensor t{dt, {2, 3}, std::vector<uint8_t>(6 * dtype_size(dt))};
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = uint8_t(dt == dtype::bool_ ? i % 2 : i * 7);
    const auto p = tmp / ("t" + std::to_string(dt) + ".npy");
    REQUIRE(write_tensor(p, t).ok());
    const std::string bytes = slurp(p);
    CHECK((bytes.find('\n') + 1) % 64 == 0);  // data 64-aligned, as NumPy writes it
    TensorSpec s;
    s.path = p;
    auto back = read_tensor(s);
    REQUIRE(back.ok());
    CHECK(back->dtype == dt);
    CHECK(back->shape == t.shape);
    CHECK(back->data == t.data);
  }
  HostTensor one{dtype::float32, {5}, std::vector<uint8_t>(20)};
  auto enc = encode_npy(one);
  REQUIRE(enc.ok());
  CHECK(std::string(enc->begin(), enc->end()).find("'shape': (5,)") != std::string::npos);
  CHECK_FALSE(encode_npy(HostTensor{dtype::bfloat16, {1}, {0, 0}}).ok());

  auto npy = [](std::string header, size_t data) {
    header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string b = std::string("\x93NUMPY\x01\x00", 8);
    b += char(header.size() & 0xff);
    b += char(header.size() >> 8);
    return b + header + std::string(data, '\0');
  };
  auto parse = [](const std::string& b) {
    return parse_npy(ByteView({reinterpret_cast<const uint8_t*>(b.data()), b.size()}, "t.npy"));
  };
  auto f = parse(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24));
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().message.find("Fortran") != std::string::npos);
  auto be = parse(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24));
  REQUIRE_FALSE(be.ok());
  CHECK(be.error().message.find("big-endian") != std::string::npos);
  auto short_data = parse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20));
  REQUIRE_FALSE(short_data.ok());
  CHECK(short_data.error().message.find("file holds 20") != std::string::npos);
  auto timedelta = parse(npy("{'descr': '<m8', 'fortran_order': False, 'shape': (2,), }", 16));
  REQUIRE_FALSE(timedelta.ok());
  CHECK(timedelta.error().message.find("not supported") != std::string::npos);
  // v2 header (u32 length).
  std::string h = "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }";
  h.append((64 - (12 + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string v2 = std::string("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) v2 += char((h.size() >> (8 * i)) & 0xff);
  v2 += h + std::string(8, '\x01');
  auto ok2 = parse(v2);
  REQUIRE(ok2.ok());
  CHECK(ok2->dtype == dtype::int64);
}

TEST_CASE("compare: tolerances by dtype, NaN equals NaN, first mismatch reported", "[tensor_io]") {
  auto f32 = [](std::vector<float> v, std::vector<int64_t> shape) {
    HostTensor t{dtype::float32, std::move(shape), std::vector<uint8_t>(v.size() * 4)};
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
  };
  auto want = f32({1.0f, NAN, INFINITY, 0.0f, 100.0f, 2.0f}, {2, 3});
  auto got = f32({1.00005f, NAN, INFINITY, 5e-6f, 100.009f, 2.0f}, {2, 3});
  auto c = compare_tensors(got, want, default_tolerance(dtype::float32));
  CHECK(c.match);
  got = f32({1.0f, NAN, INFINITY, 0.0f, 100.0f, 2.5f}, {2, 3});
  c = compare_tensors(got, want, default_tolerance(dtype::float32));
  CHECK_FALSE(c.match);
  CHECK(c.mismatches == 1);
  CHECK(*c.first_mismatch == 5);
  CHECK(c.first_mismatch_index == std::vector<int64_t>{1, 2});
  CHECK(c.max_abs_error == Approx(0.5));
  CHECK(c.max_rel_error == Approx(0.25));
  got = f32({1.0f, 0.0f, INFINITY, 0.0f, 100.0f, 2.0f}, {2, 3});  // NaN expected, 0 given
  CHECK_FALSE(compare_tensors(got, want, default_tolerance(dtype::float32)).match);
  CHECK_FALSE(compare_tensors(f32({1}, {1}), f32({1}, {1, 1}), {}).problem.empty());

  HostTensor i1{dtype::int64, {2}, std::vector<uint8_t>(16)}, i2 = i1;
  i2.data[8] = 1;
  CHECK(compare_tensors(i1, i1, default_tolerance(dtype::int64)).match);
  CHECK_FALSE(compare_tensors(i1, i2, default_tolerance(dtype::int64)).match);
  CHECK(default_tolerance(dtype::float16).rtol == 1e-2);
  CHECK(default_tolerance(dtype::bfloat16).atol == 1e-3);
  CHECK(default_tolerance(dtype::float64).rtol == 1e-7);
  CHECK(default_tolerance(dtype::bool_).rtol == 0);
}
