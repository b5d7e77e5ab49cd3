// The shim's fallback ops against plain reference loops.
#include "runtime/shim/constant_memory.hpp"
#include "runtime/shim/onednn_plugin.hpp"
#include "runtime/shim/parallel.hpp"
#include "runtime/shim/provided.hpp"
#include "runtime/tuning/tuning.hpp"
#include "shim_test_util.hpp"

#include <cli_runner.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <cmath>
#include <limits>

using namespace mpspack::test;

namespace {

const int32_t f32 = aoti_torch_dtype_float32();

// A float32 tensor with the given sizes/strides over its own buffer, filled from `values` in logical order.
struct Strided {
  std::vector<float> buf;
  std::vector<int64_t> sizes, strides;
  Handle h;
  Strided(std::vector<int64_t> sz, std::vector<int64_t> st, const std::vector<float>& values, int64_t offset = 0)
      : sizes(std::move(sz)), strides(std::move(st)) {
    int64_t extent = offset + 1;
    for (size_t d = 0; d < sizes.size(); ++d) extent += (sizes[d] - 1) * strides[d];
    buf.assign(static_cast<size_t>(extent), std::numeric_limits<float>::quiet_NaN());
    std::vector<int64_t> idx(sizes.size(), 0);
    for (size_t e = 0; e < values.size(); ++e) {
      int64_t off = offset;
      for (size_t d = 0; d < sizes.size(); ++d) off += idx[d] * strides[d];
      buf[off] = values[e];
      for (size_t d = sizes.size(); d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
    h = from_blob(buf.data(), sizes, strides, f32, offset);
  }
};

std::vector<double> ref_mm(const std::vector<float>& a, const std::vector<float>& b, int64_t M, int64_t K, int64_t N) {
  std::vector<double> c(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) c[i * N + j] += double(a[i * K + k]) * double(b[k * N + j]);
  return c;
}

// Strides for a [r, c] matrix in one of four layouts.
std::vector<int64_t> layout(int kind, int64_t r, int64_t c) {
  switch (kind) {
    case 0: return {c, 1};       // row-major
    case 1: return {1, r};       // column-major (a transposed view)
    case 2: return {2 * c, 2};   // every other element: BLAS cannot take it
    default: return {c + 3, 1};  // row-major with padding rows
  }
}

}  // namespace

TEST_CASE("addmm_out: beta*self + alpha*mat1@mat2 for every operand layout", "[shim][ops]") {
  // 1-row and 1-column products take BLAS's matrix-vector path; the rest its GEMM.
  const auto [M, K, N] = GENERATE(table<int64_t, int64_t, int64_t>({{5, 7, 3}, {1, 7, 3}, {5, 7, 1}, {1, 7, 1}}));
  INFO("M " << M << " K " << K << " N " << N);
  const auto a = random_floats(M * K, 1), b = random_floats(K * N, 2), bias = random_floats(N, 3);
  const auto mm = ref_mm(a, b, M, K, N);
  const double beta = 0.5, alpha = 2.0;
  std::vector<double> want(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) want[i * N + j] = beta * bias[j] + alpha * mm[i * N + j];
  for (int la = 0; la < 4; ++la)
    for (int lb = 0; lb < 4; ++lb)
      for (int lo = 0; lo < 4; ++lo) {
        INFO("layouts mat1 " << la << " mat2 " << lb << " out " << lo);
        Strided A({M, K}, layout(la, M, K), a), B({K, N}, layout(lb, K, N), b);
        Strided O({M, N}, layout(lo, M, N), std::vector<float>(M * N, 123.f));
        Strided S({N}, {1}, bias);
        REQUIRE(aoti_torch_cpu_addmm_out(O.h.get(), S.h.get(), A.h.get(), B.h.get(), beta, alpha) == 0);
        require_close(read_f32(O.h.get()), want);
      }
}

TEST_CASE("addmm_out: a batch-1 Linear large enough for the GEMV split over threads", "[shim][ops]") {
  // x[1,K] @ W^T[K,N] + bias with W stored [N,K] by rows, as AOTInductor calls it for nn.Linear. K*N is past
  // the split's threshold (16 MiB of float32, blas.hpp); N is not a multiple of 16, so the last block is ragged,
  // and K not of 16, so are the kernel's vector tails. beta 0 over a NaN output checks that the output's old
  // value is ignored.
  const int64_t K = 4099, N = 1027;
  const auto x = random_floats(K, 11), w = random_floats(N * K, 12), bias = random_floats(N, 13);
  std::vector<double> want(N), mm(N);
  for (int64_t j = 0; j < N; ++j) {
    double d = 0;
    for (int64_t k = 0; k < K; ++k) d += double(x[k]) * double(w[j * K + k]);
    mm[j] = d;
    want[j] = double(bias[j]) + d;
  }
  Strided X({1, K}, {K, 1}, x), S({N}, {1}, bias);
  std::vector<float> wbuf(w);  // W^T as a transposed view of W's rows
  Handle WT = from_blob(wbuf.data(), {K, N}, {1, K}, f32);
  auto check = [&] {
    Handle out = empty({1, N}, {N, 1}, f32);
    REQUIRE(aoti_torch_cpu_addmm_out(out.get(), S.h.get(), X.h.get(), WT.get(), 1.0, 1.0) == 0);
    // float32 sums of 4099 products: absolute error of order sqrt(K) * eps * |terms|, hence atol 1e-3.
    require_close(read_f32(out.get()), want, 1e-4, 1e-3);
    Strided nan_out({1, N}, {N, 1}, std::vector<float>(N, std::numeric_limits<float>::quiet_NaN()));
    REQUIRE(aoti_torch_cpu_addmm_out(nan_out.h.get(), nan_out.h.get(), X.h.get(), WT.get(), 0.0, 1.0) == 0);
    require_close(read_f32(nan_out.h.get()), mm, 1e-4, 1e-3);
  };
  // On mpspack's own pool, then on the OpenMP team a model brings (libgomp, as torch's CPU kernels link it).
  const bool gomp_already_loaded = mpspack::shim::threads_on_openmp();
  if (gomp_already_loaded) WARN("skipped the own-pool half: libgomp was already loaded in this process");
  else check();
  REQUIRE(dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL) != nullptr);
  REQUIRE(mpspack::shim::threads_on_openmp());
  check();
}

TEST_CASE("mm_out: float32 products run on oneDNN's sgemm when its plugin opens, small ones on OpenBLAS",
          "[shim][ops][onednn]") {
  std::string why;
  if (!mpspack::shim::onednn_plugin_open(&why)) FAIL("the oneDNN plugin of this build does not open: " << why);
  // Sizes no kernel block divides (a ragged edge everywhere), large enough that oneDNN threads them, and two
  // products below kOnednnGemmMinMacs; each operand as stored and as a transposed view, as AOTInductor passes
  // nn.Linear's weight.
  const auto [M, K, N] = GENERATE(
      table<int64_t, int64_t, int64_t>({{67, 129, 259}, {2, 1031, 257}, {300, 5, 301}, {7, 9, 5}, {63, 63, 63}}));
  const bool on_onednn = double(M) * double(K) * double(N) >= mpspack::shim::kOnednnGemmMinMacs;
  const auto a = random_floats(M * K, 21), b = random_floats(K * N, 22);
  const auto want = ref_mm(a, b, M, K, N);
  for (int la : {0, 1})
    for (int lb : {0, 1}) {
      INFO("M " << M << " K " << K << " N " << N << " layouts mat1 " << la << " mat2 " << lb);
      Strided A({M, K}, layout(la, M, K), a), B({K, N}, layout(lb, K, N), b);
      Handle out = empty({M, N}, {N, 1}, f32);
      const uint64_t before = mpspack::shim::onednn_gemm_calls();
      REQUIRE(aoti_torch_cpu_mm_out(out.get(), A.h.get(), B.h.get()) == 0);
      CHECK(mpspack::shim::onednn_gemm_calls() == before + (on_onednn ? 1 : 0));
      require_close(read_f32(out.get()), want, 1e-4, 1e-4);
    }
}

TEST_CASE("addmm_out: a Linear layer's bias is added in oneDNN's pass, other addmms as before", "[shim][ops][onednn]") {
  std::string why;
  if (!mpspack::shim::onednn_plugin_open(&why)) FAIL("the oneDNN plugin of this build does not open: " << why);
  // Ragged sizes past kOnednnGemmMinMacs; out starts as NaN so that a bias not added (or out read) shows.
  const int64_t M = 67, K = 129, N = 259;
  const auto a = random_floats(M * K, 31), b = random_floats(K * N, 32), bias = random_floats(N, 33);
  const auto mm = ref_mm(a, b, M, K, N);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // self as AOTInductor passes a Linear's bias: [N], or [M, N] with row stride 0; and a bias of stride 2 and a
  // beta of 0.5, which the fused path must leave to the copy-then-accumulate one.
  struct Case {
    const char* what;
    std::vector<int64_t> sizes, strides;
    double beta;
  };
  const Case cases[] = {{"[N]", {N}, {1}, 1.0},
                        {"[M, N] stride 0", {M, N}, {0, 1}, 1.0},
                        {"[N] stride 2", {N}, {2}, 1.0},
                        {"[N], beta 0.5", {N}, {1}, 0.5}};
  for (const Case& c : cases)
    for (int lb : {0, 1}) {
      INFO(c.what << ", mat2 layout " << lb);
      Strided A({M, K}, {K, 1}, a), B({K, N}, layout(lb, K, N), b);
      Strided S(
          c.sizes, c.strides, c.sizes.size() == 1 ? bias : [&] {
            std::vector<float> rows;  // the [M, N] view's values: the bias in every row
            for (int64_t i = 0; i < M; ++i) rows.insert(rows.end(), bias.begin(), bias.end());
            return rows;
          }());
      Strided O({M, N}, {N, 1}, std::vector<float>(M * N, nan));
      const uint64_t before = mpspack::shim::onednn_gemm_calls();
      REQUIRE(aoti_torch_cpu_addmm_out(O.h.get(), S.h.get(), A.h.get(), B.h.get(), c.beta, 1.0) == 0);
      CHECK(mpspack::shim::onednn_gemm_calls() == before + 1);
      std::vector<double> want(M * N);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) want[i * N + j] = c.beta * bias[j] + mm[i * N + j];
      require_close(read_f32(O.h.get()), want, 1e-4, 1e-4);
    }
}

TEST_CASE("constant memory answers for bytes inside one registered range only, and not once withdrawn",
          "[shim][packed]") {
  using namespace mpspack::shim;
  std::vector<char> bytes(200);
  char* const p = bytes.data();
  const int model_a = 0, model_b = 0;  // owners, by address
  add_constant_ranges(&model_a, {{p + 50, 100}});
  add_constant_ranges(&model_b, {{p + 160, 20}, {nullptr, 8}, {p + 190, 0}});
  CHECK(is_constant_memory(p + 50, 100));
  CHECK(is_constant_memory(p + 149, 1));
  CHECK_FALSE(is_constant_memory(p + 149, 2));   // past its end
  CHECK_FALSE(is_constant_memory(p + 49, 2));    // before its start
  CHECK_FALSE(is_constant_memory(p + 150, 1));   // between the two
  CHECK_FALSE(is_constant_memory(p + 140, 30));  // across both
  CHECK(is_constant_memory(p + 170, 10));
  CHECK_FALSE(is_constant_memory(p + 190, 1));  // an empty range holds nothing
  remove_constant_ranges(&model_a);
  CHECK_FALSE(is_constant_memory(p + 50, 1));
  CHECK(is_constant_memory(p + 160, 20));
  add_constant_ranges(&model_b, {{p, 10}});  // registered again: replaces what it had
  CHECK_FALSE(is_constant_memory(p + 160, 1));
  CHECK(is_constant_memory(p, 10));
  remove_constant_ranges(&model_b);
  CHECK_FALSE(is_constant_memory(p, 1));
}

TEST_CASE("MPSPACK_CPU_PACK_WEIGHTS: a weight in constant memory is packed once into oneDNN's layout, and dropped "
          "when its memory goes",
          "[shim][ops][onednn][packed]") {
  using namespace mpspack::shim;
  std::string why;
  if (!onednn_plugin_open(&why)) FAIL("the oneDNN plugin of this build does not open: " << why);
  mpspack::Tuning t;
  t.cpu_pack_weights = true;
  const mpspack::ScopedTuning tuned(t);
  // A Linear layer as AOTInductor passes it: B the transposed view of the weight [N, K]; ragged sizes past
  // kOnednnGemmMinMacs.
  const int64_t M = 67, K = 129, N = 259;
  const auto a = random_floats(M * K, 41), bias = random_floats(N, 43);
  Strided A({M, K}, {K, 1}, a), S({N}, {1}, bias);
  auto check_products = [&](AtenTensorHandle B, const std::vector<float>& b) {
    const auto mm = ref_mm(a, b, M, K, N);
    std::vector<double> linear(M * N);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) linear[i * N + j] = bias[j] + mm[i * N + j];
    Handle out = empty({M, N}, {N, 1}, f32);
    for (int rep = 0; rep < 2; ++rep) {  // the second from what the first packed
      REQUIRE(aoti_torch_cpu_addmm_out(out.get(), S.h.get(), A.h.get(), B, 1.0, 1.0) == 0);
      require_close(read_f32(out.get()), linear, 1e-4, 1e-4);
    }
    REQUIRE(aoti_torch_cpu_mm_out(out.get(), A.h.get(), B) == 0);
    require_close(read_f32(out.get()), mm, 1e-4, 1e-4);
  };
  const auto b = random_floats(K * N, 42);
  Strided B({K, N}, {1, K}, b);
  const std::size_t kept = onednn_packed_bytes();
  check_products(B.h.get(), b);
  CHECK(onednn_packed_bytes() == kept);  // not constant memory: read as stored

  add_constant_ranges(&B, {{B.buf.data(), B.buf.size() * sizeof(float)}});
  {
    mpspack::Tuning off;
    off.cpu_pack_weights = false;
    const mpspack::ScopedTuning unpacked(off);
    check_products(B.h.get(), b);
    CHECK(onednn_packed_bytes() == kept);  // MPSPACK_CPU_PACK_WEIGHTS=off: read as stored
  }
  check_products(B.h.get(), b);
  CHECK(onednn_packed_bytes() >= kept + 2 * std::size_t(K * N) * sizeof(float));  // addmm's plan and mm's

  // The memory gets other values, as a model loaded at the same address would give it: withdrawn, written,
  // registered again. A packed copy kept past the withdrawal would give the old weight's products.
  remove_constant_ranges(&B);
  CHECK(onednn_packed_bytes() == kept);
  const auto b2 = random_floats(K * N, 44);
  Strided B2({K, N}, {1, K}, b2);
  std::copy(B2.buf.begin(), B2.buf.end(), B.buf.begin());
  add_constant_ranges(&B, {{B.buf.data(), B.buf.size() * sizeof(float)}});
  check_products(B.h.get(), b2);
  remove_constant_ranges(&B);
  CHECK(onednn_packed_bytes() == kept);

  // The weight in a mapped file, as a container's mapped weights are: once packed, its own pages go back to the
  // file, and a plan that packs it later reads them back from there (mm after addmm).
  mpspack::test::TempDir tmp;
  const auto path = tmp / "weight.bin";
  const std::size_t file_bytes = B2.buf.size() * sizeof(float);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(B2.buf.data()), std::streamsize(file_bytes));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  void* mapped = ::mmap(nullptr, file_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  REQUIRE(mapped != MAP_FAILED);
  Handle from_file = from_blob(mapped, {K, N}, {1, K}, f32);
  add_constant_ranges(mapped, {{mapped, file_bytes}});
  check_products(from_file.get(), b2);
  CHECK(onednn_packed_bytes() >= kept + 2 * std::size_t(K * N) * sizeof(float));
  CHECK(present_pages(mapped, file_bytes) == 0);
  remove_constant_ranges(mapped);
  ::munmap(mapped, file_bytes);
}

TEST_CASE("addmm_out: beta 0 ignores self, out may be self (addmm_), mm_out", "[shim][ops]") {
  const int64_t M = 4, K = 3, N = 6;
  const auto a = random_floats(M * K, 4), b = random_floats(K * N, 5);
  const auto mm = ref_mm(a, b, M, K, N);
  Strided A({M, K}, {K, 1}, a), B({K, N}, {N, 1}, b);
  Strided nan_self({M, N}, {N, 1}, std::vector<float>(M * N, std::numeric_limits<float>::quiet_NaN()));
  Handle out = empty({M, N}, {N, 1}, f32);
  REQUIRE(aoti_torch_cpu_addmm_out(out.get(), nan_self.h.get(), A.h.get(), B.h.get(), 0.0, 1.0) == 0);
  require_close(read_f32(out.get()), mm);

  const auto init = random_floats(M * N, 6);
  Strided inplace({M, N}, {N, 1}, init);
  REQUIRE(aoti_torch_cpu_addmm_out(inplace.h.get(), inplace.h.get(), A.h.get(), B.h.get(), 1.0, 1.0) == 0);
  std::vector<double> want(M * N);
  for (size_t i = 0; i < want.size(); ++i) want[i] = init[i] + mm[i];
  require_close(read_f32(inplace.h.get()), want);

  Handle o2 = empty({M, N}, {1, M}, f32);
  REQUIRE(aoti_torch_cpu_mm_out(o2.get(), A.h.get(), B.h.get()) == 0);
  require_close(read_f32(o2.get()), mm);

  Handle wrong = empty({M, N + 1}, {N + 1, 1}, f32);
  CHECK(aoti_torch_cpu_mm_out(wrong.get(), A.h.get(), B.h.get()) == 1);
}

TEST_CASE("mm_out for float64, float16, bfloat16 and int64", "[shim][ops]") {
  const int64_t M = 3, K = 4, N = 2;
  SECTION("float64 (dgemm)") {
    std::vector<double> a(M * K), b(K * N);
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0.1 * double(i) - 0.3;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.2 * double(i) + 0.05;
    Handle A = from_blob(a.data(), {K, M}, {1, K}, aoti_torch_dtype_float64());  // transposed view: A^T
    Handle B = from_blob(b.data(), {K, N}, {N, 1}, aoti_torch_dtype_float64());
    Handle AT;
    const int64_t sz[] = {M, K}, st[] = {K, 1};
    REQUIRE(aoti_torch__reinterpret_tensor(A.get(), 2, sz, st, 0, AT.out()) == 0);
    Handle O = empty({M, N}, {N, 1}, aoti_torch_dtype_float64());
    REQUIRE(aoti_torch_cpu_mm_out(O.get(), AT.get(), B.get()) == 0);
    void* p = nullptr;
    aoti_torch_get_data_ptr(O.get(), &p);
    const double* o = static_cast<double*>(p);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double r = 0;
        for (int64_t k = 0; k < K; ++k) r += a[i * K + k] * b[k * N + j];
        CHECK(std::abs(o[i * N + j] - r) < 1e-12);
      }
  }
  SECTION("float16 (widened to float), through conversions") {
    std::vector<float> a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, b{1, -1, 0.5f, 2, -2, 1, 0, 3};
    Strided A32({M, K}, {K, 1}, a), B32({K, N}, {N, 1}, b);
    Handle A = empty({M, K}, {K, 1}, aoti_torch_dtype_float16()), B = empty({K, N}, {N, 1}, aoti_torch_dtype_float16());
    REQUIRE(aoti_torch_copy_(A.get(), A32.h.get(), 0) == 0);
    REQUIRE(aoti_torch_copy_(B.get(), B32.h.get(), 0) == 0);
    Handle O = empty({M, N}, {N, 1}, aoti_torch_dtype_float16());
    REQUIRE(aoti_torch_cpu_mm_out(O.get(), A.get(), B.get()) == 0);
    Handle O32 = empty({M, N}, {N, 1}, f32);
    REQUIRE(aoti_torch_copy_(O32.get(), O.get(), 0) == 0);
    require_close(read_f32(O32.get()), ref_mm(a, b, M, K, N));
  }
  // Below kOnednnGemmMinMacs the weights are widened in blocks of columns: one block; a single row through the
  // matrix-vector product, three blocks. Above it, oneDNN's bf16 matmul where this CPU has bf16 kernels (else
  // the widening, split over the shim's threads): a batch of 8, and a single row.
  for (const auto& [Mb, Kb, Nb] : {std::array<int64_t, 3>{5, 77, 9}, std::array<int64_t, 3>{1, 4096, 40},
                                   std::array<int64_t, 3>{8, 512, 300}, std::array<int64_t, 3>{1, 4096, 80}})
    DYNAMIC_SECTION("bfloat16 addmm: a Linear layer's transposed weight, a broadcast bias, beta and alpha, "
                    << Mb << "x" << Kb << "x" << Nb) {
      const auto x = random_floats(Mb * Kb, 31), w = random_floats(Nb * Kb, 32), bias = random_floats(Nb, 33);
      auto to_bf16 = [](const std::vector<float>& v, std::vector<int64_t> sizes) {
        Strided f(sizes, contiguous(sizes), v);
        Handle h = empty(sizes, contiguous(sizes), aoti_torch_dtype_bfloat16());
        REQUIRE(aoti_torch_copy_(h.get(), f.h.get(), 0) == 0);
        Handle back = empty(sizes, contiguous(sizes), f32);
        REQUIRE(aoti_torch_copy_(back.get(), h.get(), 0) == 0);
        return std::pair{std::move(h), read_f32(back.get())};  // the tensor and its values as bfloat16 holds them
      };
      auto [X, xv] = to_bf16(x, {Mb, Kb});
      auto [W, wv] = to_bf16(w, {Nb, Kb});
      auto [Bias, bv] = to_bf16(bias, {Nb});
      Handle WT, Self;
      const int64_t wt_sizes[] = {Kb, Nb}, wt_strides[] = {1, Kb}, self_sizes[] = {Mb, Nb}, self_strides[] = {0, 1};
      REQUIRE(aoti_torch__reinterpret_tensor(W.get(), 2, wt_sizes, wt_strides, 0, WT.out()) == 0);
      REQUIRE(aoti_torch__reinterpret_tensor(Bias.get(), 2, self_sizes, self_strides, 0, Self.out()) == 0);
      // As stored, then (MPSPACK_CPU_PACK_WEIGHTS=on) with the weight in constant memory, as a model's parameter is:
      // oneDNN keeps it packed in its own layout.
      for (const bool packed : {false, true}) {
        INFO((packed ? "packed" : "as stored"));
        mpspack::Tuning t;
        t.cpu_pack_weights = packed;
        const mpspack::ScopedTuning tuned(t);
        void* w_data = nullptr;
        REQUIRE(aoti_torch_get_data_ptr(W.get(), &w_data) == 0);
        if (packed) mpspack::shim::add_constant_ranges(&W, {{w_data, std::size_t(Nb * Kb) * 2}});
        const std::size_t kept = mpspack::shim::onednn_packed_bytes();
        Handle O = empty({Mb, Nb}, {Nb, 1}, aoti_torch_dtype_bfloat16());
        const double beta = 0.5, alpha = 2.0;
        const uint64_t onednn_before = mpspack::shim::onednn_gemm_calls();
        REQUIRE(aoti_torch_cpu_addmm_out(O.get(), Self.get(), X.get(), WT.get(), beta, alpha) == 0);
        // The route: never oneDNN below the threshold; above it, oneDNN where the CPU has bf16 instructions
        // ("avx512_core_bf16", "avx512_core_amx"). Elsewhere oneDNN decides whether it has more than its reference
        // loops (which are refused), so the route is not checked there.
        const std::string isa = mpspack::shim::onednn_description();
        const bool bf16_isa = isa.find("bf16") != std::string::npos || isa.find("amx") != std::string::npos;
        const bool big = double(Mb) * double(Kb) * double(Nb) >= mpspack::shim::kOnednnGemmMinMacs;
        const uint64_t on_onednn = mpspack::shim::onednn_gemm_calls() - onednn_before;
        INFO("oneDNN: " << isa);
        if (!big) CHECK(on_onednn == 0);
        else if (bf16_isa) CHECK(on_onednn == 1);
        else
          WARN("route not checked: " << isa << " has no bf16 instructions (ran on "
                                     << (on_onednn ? "oneDNN" : "the widening path") << ")");
        Handle O32 = empty({Mb, Nb}, {Nb, 1}, f32);
        REQUIRE(aoti_torch_copy_(O32.get(), O.get(), 0) == 0);
        const auto got = read_f32(O32.get());
        for (int64_t i = 0; i < Mb; ++i)
          for (int64_t j = 0; j < Nb; ++j) {
            double r = 0, magnitude = 0;
            for (int64_t k = 0; k < Kb; ++k) {
              r += double(xv[i * Kb + k]) * double(wv[j * Kb + k]);
              magnitude += std::abs(double(xv[i * Kb + k]) * double(wv[j * Kb + k]));
            }
            r = beta * bv[j] + alpha * r;
            // one rounding to bfloat16 (8 significant bits) of a float-accumulated result
            CHECK(std::abs(got[i * Nb + j] - r) <= std::abs(r) / 256 + 1e-6 * magnitude);
          }
        if (packed && big && bf16_isa) CHECK(mpspack::shim::onednn_packed_bytes() > kept);
        mpspack::shim::remove_constant_ranges(&W);
      }
    }
  SECTION("int64 (loop)") {
    std::vector<int64_t> a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, b{1, -1, 2, 0, -3, 1, 4, 2};
    Handle A = from_blob(a.data(), {M, K}, {K, 1}, aoti_torch_dtype_int64());
    Handle B = from_blob(b.data(), {K, N}, {N, 1}, aoti_torch_dtype_int64());
    Handle O = empty({M, N}, {N, 1}, aoti_torch_dtype_int64());
    REQUIRE(aoti_torch_cpu_mm_out(O.get(), A.get(), B.get()) == 0);
    void* p = nullptr;
    aoti_torch_get_data_ptr(O.get(), &p);
    const int64_t* o = static_cast<int64_t*>(p);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        int64_t r = 0;
        for (int64_t k = 0; k < K; ++k) r += a[i * K + k] * b[k * N + j];
        CHECK(o[i * N + j] == r);
      }
  }
}

TEST_CASE("bmm_out with transposed batch operands, baddbmm_out", "[shim][ops]") {
  const int64_t Bn = 3, M = 4, K = 5, N = 2;
  const auto a = random_floats(Bn * M * K, 7), b = random_floats(Bn * K * N, 8);
  std::vector<double> want(Bn * M * N);
  for (int64_t z = 0; z < Bn; ++z) {
    std::vector<float> az(a.begin() + z * M * K, a.begin() + (z + 1) * M * K);
    std::vector<float> bz(b.begin() + z * K * N, b.begin() + (z + 1) * K * N);
    auto r = ref_mm(az, bz, M, K, N);
    std::copy(r.begin(), r.end(), want.begin() + z * M * N);
  }
  // a as [B, M, K] stored batch-last ([M, K, B] contiguous), b with each matrix transposed.
  Strided A({Bn, M, K}, {1, K * Bn, Bn}, a), B({Bn, K, N}, {K * N, 1, K}, b);
  Handle O = empty({Bn, M, N}, {M * N, N, 1}, f32);
  REQUIRE(aoti_torch_cpu_bmm_out(O.get(), A.h.get(), B.h.get()) == 0);
  require_close(read_f32(O.get()), want);

  const auto self = random_floats(N, 9);
  Strided S({1, 1, N}, {N, N, 1}, self);
  Handle O2 = empty({Bn, M, N}, {M * N, N, 1}, f32);
  REQUIRE(aoti_torch_cpu_baddbmm_out(O2.get(), S.h.get(), A.h.get(), B.h.get(), 1.0, 0.5) == 0);
  std::vector<double> want2(want.size());
  for (size_t i = 0; i < want.size(); ++i) want2[i] = self[i % N] + 0.5 * want[i];
  require_close(read_f32(O2.get()), want2);
}

// Matrices too small to split over the threads alone, a batch of them large enough to: the batch goes over the
// threads at once, each matrix cut into blocks of rows where the team has more threads than the batch has matrices;
// with MPSPACK_CPU_BMM=one, one product after another.
TEST_CASE("bmm_out and baddbmm_out of small matrices, the batch over the threads", "[shim][ops]") {
  const auto [Bn, M, K, N] = GENERATE(std::array<int64_t, 4>{8, 64, 32, 32}, std::array<int64_t, 4>{2, 64, 32, 48});
  const bool over_threads = GENERATE(true, false);
  mpspack::Tuning tuned = mpspack::tuning();
  tuned.cpu_bmm_threads = over_threads;
  const mpspack::ScopedTuning scoped(tuned);
  INFO(Bn << " x [" << M << " x " << K << "] @ [" << K << " x " << N << "], " << mpspack::shim::thread_count()
          << " threads, the batch over them: " << over_threads);
  const auto a = random_floats(Bn * M * K, 21), b = random_floats(Bn * K * N, 22), self = random_floats(N, 23);
  // b's matrices transposed, as a key is read for the scores.
  Strided A({Bn, M, K}, {M * K, K, 1}, a), B({Bn, K, N}, {K * N, 1, K}, b), S({1, 1, N}, {N, N, 1}, self);
  std::vector<double> want(Bn * M * N);
  for (int64_t z = 0; z < Bn; ++z)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double r = 0;
        for (int64_t k = 0; k < K; ++k) r += double(a[(z * M + i) * K + k]) * double(b[(z * K + k) * N + j]);
        want[(z * M + i) * N + j] = r;
      }
  Handle O = empty({Bn, M, N}, {M * N, N, 1}, f32);
  REQUIRE(aoti_torch_cpu_bmm_out(O.get(), A.h.get(), B.h.get()) == 0);
  require_close(read_f32(O.get()), want);
  Handle O2 = empty({Bn, M, N}, {M * N, N, 1}, f32);
  REQUIRE(aoti_torch_cpu_baddbmm_out(O2.get(), S.h.get(), A.h.get(), B.h.get(), 1.0, 0.5) == 0);
  for (size_t i = 0; i < want.size(); ++i) want[i] = self[i % N] + 0.5 * want[i];
  require_close(read_f32(O2.get()), want);
}

TEST_CASE("bmm_out in float64, the batch over the threads", "[shim][ops]") {
  const int64_t Bn = 5, M = 48, K = 32, N = 40;
  const auto af = random_floats(Bn * M * K, 11), bf = random_floats(Bn * K * N, 12);
  std::vector<double> a(af.begin(), af.end()), b(bf.begin(), bf.end()), o(Bn * M * N, 0.0);
  Handle A = from_blob(a.data(), {Bn, M, K}, {M * K, K, 1}, aoti_torch_dtype_float64());
  Handle B = from_blob(b.data(), {Bn, K, N}, {K * N, 1, K}, aoti_torch_dtype_float64());
  Handle O = from_blob(o.data(), {Bn, M, N}, {M * N, N, 1}, aoti_torch_dtype_float64());
  REQUIRE(aoti_torch_cpu_bmm_out(O.get(), A.get(), B.get()) == 0);
  for (int64_t z = 0; z < Bn; ++z)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double r = 0;
        for (int64_t k = 0; k < K; ++k) r += a[(z * M + i) * K + k] * b[z * K * N + j * K + k];
        CHECK(std::abs(o[(z * M + i) * N + j] - r) <= 1e-12 * (1 + std::abs(r)));
      }
}

namespace {

std::vector<double> ref_conv2d(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>* bias,
                               int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t KH, int64_t KW, int64_t s,
                               int64_t p, int64_t d, int64_t g, int64_t& OH, int64_t& OW) {
  OH = (H + 2 * p - d * (KH - 1) - 1) / s + 1;
  OW = (W + 2 * p - d * (KW - 1) - 1) / s + 1;
  const int64_t Cg = C / g, Og = O / g;
  std::vector<double> y(N * O * OH * OW);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias ? (*bias)[o] : 0.0;
          const int64_t gi = o / Og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * s - p + kh * d, iw = ow * s - p + kw * d;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x[((n * C + gi * Cg + c) * H + ih) * W + iw]) *
                       double(w[((o * Cg + c) * KH + kh) * KW + kw]);
              }
          y[((n * O + o) * OH + oh) * OW + ow] = acc;
        }
  return y;
}

}  // namespace

TEST_CASE("convolution 2-D with groups, dilation, padding, stride and bias", "[shim][ops]") {
  struct Case {
    int64_t N, C, H, W, O, K, s, p, d, g;
    bool bias;
  };
  for (const Case& c : {Case{2, 4, 9, 8, 6, 3, 2, 1, 2, 2, true}, Case{1, 3, 7, 7, 4, 3, 1, 1, 1, 1, false},
                        Case{2, 6, 6, 5, 6, 1, 1, 0, 1, 6, true}, Case{1, 2, 5, 5, 4, 2, 3, 2, 1, 1, true}}) {
    INFO("N" << c.N << " C" << c.C << " H" << c.H << " W" << c.W << " O" << c.O << " K" << c.K << " s" << c.s << " p"
             << c.p << " d" << c.d << " g" << c.g);
    const auto x = random_floats(c.N * c.C * c.H * c.W, 10), w = random_floats(c.O * (c.C / c.g) * c.K * c.K, 11),
               bias = random_floats(c.O, 12);
    int64_t OH = 0, OW = 0;
    const auto want =
        ref_conv2d(x, w, c.bias ? &bias : nullptr, c.N, c.C, c.H, c.W, c.O, c.K, c.K, c.s, c.p, c.d, c.g, OH, OW);
    Strided X({c.N, c.C, c.H, c.W}, contiguous({c.N, c.C, c.H, c.W}), x);
    Strided Wt({c.O, c.C / c.g, c.K, c.K}, contiguous({c.O, c.C / c.g, c.K, c.K}), w);
    Strided Bs({c.O}, {1}, bias);
    AtenTensorHandle bh = Bs.h.get();
    const int64_t st[] = {c.s, c.s}, pd[] = {c.p, c.p}, dl[] = {c.d, c.d}, op[] = {0, 0};
    Handle Y;
    REQUIRE(aoti_torch_cpu_convolution(X.h.get(), Wt.h.get(), c.bias ? &bh : nullptr, st, 2, pd, 2, dl, 2, 0, op, 2,
                                       c.g, Y.out()) == 0);
    CHECK(sizes_of(Y.get()) == std::vector<int64_t>{c.N, c.O, OH, OW});
    CHECK(strides_of(Y.get()) == contiguous({c.N, c.O, OH, OW}));
    require_close(read_f32(Y.get()), want);
  }
}

TEST_CASE("convolution: channels-last input gives channels-last output, 1-D, a transposed weight that does not fit",
          "[shim][ops]") {
  const int64_t N = 2, C = 3, H = 5, W = 4, O = 2, K = 3;
  const auto x = random_floats(N * C * H * W, 13), w = random_floats(O * C * K * K, 14);
  int64_t OH = 0, OW = 0;
  const auto want = ref_conv2d(x, w, nullptr, N, C, H, W, O, K, K, 1, 1, 1, 1, OH, OW);
  Strided X({N, C, H, W}, {H * W * C, 1, W * C, C}, x);  // channels-last
  Strided Wt({O, C, K, K}, contiguous({O, C, K, K}), w);
  const int64_t one[] = {1}, zero[] = {0};
  Handle Y;
  REQUIRE(aoti_torch_cpu_convolution(X.h.get(), Wt.h.get(), nullptr, one, 1, one, 1, one, 1, 0, zero, 1, 1, Y.out()) ==
          0);
  CHECK(strides_of(Y.get()) == std::vector<int64_t>{OH * OW * O, 1, OW * O, O});
  require_close(read_f32(Y.get()), want);

  // 1-D: a 2-D conv with H = 1.
  const int64_t L = 9;
  const auto x1 = random_floats(N * C * L, 15), w1 = random_floats(O * C * K, 16);
  int64_t oh1 = 0, ol = 0;
  const auto want1 = ref_conv2d(x1, w1, nullptr, N, C, 1, L, O, 1, K, 1, 0, 1, 1, oh1, ol);
  Strided X1({N, C, L}, contiguous({N, C, L}), x1);
  Strided W1({O, C, K}, contiguous({O, C, K}), w1);
  Handle Y1;
  REQUIRE(aoti_torch_cpu_convolution(X1.h.get(), W1.h.get(), nullptr, one, 1, zero, 1, one, 1, 0, zero, 1, 1,
                                     Y1.out()) == 0);
  CHECK(sizes_of(Y1.get()) == std::vector<int64_t>{N, O, ol});
  require_close(read_f32(Y1.get()), want1);

  // Transposed, the weight must be [C, O/groups, k...]: [2, 3, 3, 3] does not fit 3 input channels.
  Handle T;
  CHECK(aoti_torch_cpu_convolution(X.h.get(), Wt.h.get(), nullptr, one, 1, one, 1, one, 1, 1, zero, 1, 1, T.out()) ==
        1);
  CHECK(T.h == nullptr);
  CHECK_THAT(std::string(mpspack::shim::last_error()), Catch::Contains("does not fit 3 input channels"));
}

namespace {

// Reference attention over logical [B,H,L,E] arrays. mask: [L,S] (bool as 0/1 when is_bool) or null.
void ref_sdpa(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int64_t B,
              int64_t H, int64_t L, int64_t S, int64_t E, bool causal, const std::vector<float>* mask, bool is_bool,
              double scale, std::vector<double>& out, std::vector<double>& lse) {
  out.assign(B * H * L * E, 0.0);
  lse.assign(B * H * L, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(S);
        double mx = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < E; ++e)
            dot += double(q[((b * H + h) * L + i) * E + e]) * double(k[((b * H + h) * S + j) * E + e]);
          s[j] = dot * scale;
          if (mask) {
            const float m = (*mask)[i * S + j];
            if (is_bool) {
              if (m == 0) s[j] = -INFINITY;
            } else {
              s[j] += m;
            }
          }
          if (causal && j > i) s[j] = -INFINITY;
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += std::exp(s[j] - mx);
        lse[(b * H + h) * L + i] = mx + std::log(sum);
        for (int64_t j = 0; j < S; ++j) {
          const double p = std::exp(s[j] - mx) / sum;
          for (int64_t e = 0; e < E; ++e) out[((b * H + h) * L + i) * E + e] += p * v[((b * H + h) * S + j) * E + e];
        }
      }
}

}  // namespace

TEST_CASE("sdpa flash_attention_for_cpu: causal, masks, scale, torch's output layouts", "[shim][ops]") {
  const int64_t B = 2, H = 3, L = 5, S = 5, E = 4;
  const auto q = random_floats(B * H * L * E, 20), k = random_floats(B * H * S * E, 21),
             v = random_floats(B * H * S * E, 22);
  // q as torch code usually has it: a [B,L,H,E] contiguous tensor transposed to [B,H,L,E].
  Strided Q({B, H, L, E}, {L * H * E, E, H * E, 1}, q);
  Strided K({B, H, S, E}, contiguous({B, H, S, E}), k);
  Strided V({B, H, S, E}, contiguous({B, H, S, E}), v);
  std::vector<double> want, want_lse;

  SECTION("causal, default scale") {
    ref_sdpa(q, k, v, B, H, L, S, E, true, nullptr, false, 1.0 / std::sqrt(double(E)), want, want_lse);
    Handle O, LSE;
    REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(Q.h.get(), K.h.get(), V.h.get(), 0.0, 1, nullptr,
                                                                       nullptr, O.out(), LSE.out()) == 0);
    CHECK(sizes_of(O.get()) == std::vector<int64_t>{B, H, L, E});
    CHECK(strides_of(O.get()) == std::vector<int64_t>{L * H * E, E, H * E, 1});  // empty_like(query)
    CHECK(sizes_of(LSE.get()) == std::vector<int64_t>{B, H, L});
    CHECK(strides_of(LSE.get()) == std::vector<int64_t>{L * H, 1, H});
    require_close(read_f32(O.get()), want);
    require_close(read_f32(LSE.get()), want_lse);
  }
  SECTION("a null result pointer is a result the caller does not want (as AOTInductor passes for logsumexp)") {
    ref_sdpa(q, k, v, B, H, L, S, E, true, nullptr, false, 1.0 / std::sqrt(double(E)), want, want_lse);
    Handle O;
    REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(Q.h.get(), K.h.get(), V.h.get(), 0.0, 1, nullptr,
                                                                       nullptr, O.out(), nullptr) == 0);
    require_close(read_f32(O.get()), want);
  }
  SECTION("float additive mask and explicit scale; contiguous query gives contiguous output") {
    auto mask = random_floats(L * S, 23, -2.f, 2.f);
    Strided M({L, S}, {S, 1}, mask);
    Strided Qc({B, H, L, E}, contiguous({B, H, L, E}), q);
    double scale = 0.37;
    ref_sdpa(q, k, v, B, H, L, S, E, false, &mask, false, scale, want, want_lse);
    AtenTensorHandle mh = M.h.get();
    Handle O, LSE;
    REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(Qc.h.get(), K.h.get(), V.h.get(), 0.0, 0, &mh,
                                                                       &scale, O.out(), LSE.out()) == 0);
    CHECK(strides_of(O.get()) == contiguous({B, H, L, E}));
    require_close(read_f32(O.get()), want);
    require_close(read_f32(LSE.get()), want_lse);
  }
  SECTION("bool mask broadcast from [1,1,L,S], combined with causal") {
    std::vector<uint8_t> mb(L * S);
    std::vector<float> mf(L * S);
    for (int64_t i = 0; i < L * S; ++i) {
      mb[i] = (i % 3 != 1) || (i % S == 0);  // keep column 0 so no row is fully masked
      mf[i] = mb[i];
    }
    Handle M = from_blob(mb.data(), {1, 1, L, S}, {L * S, L * S, S, 1}, aoti_torch_dtype_bool());
    ref_sdpa(q, k, v, B, H, L, S, E, true, &mf, true, 1.0 / std::sqrt(double(E)), want, want_lse);
    AtenTensorHandle mh = M.get();
    Handle O, LSE;
    REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(Q.h.get(), K.h.get(), V.h.get(), 0.0, 1, &mh,
                                                                       nullptr, O.out(), LSE.out()) == 0);
    require_close(read_f32(O.get()), want);
    require_close(read_f32(LSE.get()), want_lse);
  }
  SECTION("a row whose every key is masked gives zeros and a logsumexp of -inf; the other rows are unchanged") {
    std::vector<uint8_t> mb(L * S, 1);
    std::vector<float> mf(L * S, 1.0f);
    for (int64_t j = 0; j < S; ++j) mb[2 * S + j] = 0, mf[2 * S + j] = 0.0f;  // query row 2 sees no key
    Handle M = from_blob(mb.data(), {L, S}, {S, 1}, aoti_torch_dtype_bool());
    ref_sdpa(q, k, v, B, H, L, S, E, false, &mf, true, 1.0 / std::sqrt(double(E)), want, want_lse);
    for (int64_t bh = 0; bh < B * H; ++bh) {  // the reference's NaNs for that row, as this op answers them
      want_lse[bh * L + 2] = -INFINITY;
      for (int64_t e = 0; e < E; ++e) want[(bh * L + 2) * E + e] = 0.0;
    }
    AtenTensorHandle mh = M.get();
    Handle O, LSE;
    REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(Q.h.get(), K.h.get(), V.h.get(), 0.0, 0, &mh,
                                                                       nullptr, O.out(), LSE.out()) == 0);
    require_close(read_f32(O.get()), want);
    const auto lse = read_f32(LSE.get());
    for (int64_t bh = 0; bh < B * H; ++bh)
      for (int64_t i = 0; i < L; ++i) {
        INFO("head " << bh << " row " << i);
        if (i == 2) CHECK(lse[size_t(bh * L + i)] == -INFINITY);
        else CHECK(std::abs(lse[size_t(bh * L + i)] - want_lse[size_t(bh * L + i)]) < 1e-4);
      }
  }
  SECTION("a long sequence runs in several blocks of query rows, the last one short; k and v read in place") {
    // 1000 query rows over 600 keys of 32 values: at most 873 rows a block (16 Mi multiply-adds), so at least two
    // per head, a short one among them on 2 threads (873 + 127). Keys and values as a model's
    // projections hand them over, [B,S,H,E] rows viewed as [B,H,S,E]: read where they are, a row apart of H*E;
    // the query as a slice of a fused [B,L,3,H,E] projection, its rows 3*H*E apart with NaNs between.
    const int64_t Hl = 2, Ll = 1000, Sl = 600, El = 32;
    const auto ql = random_floats(Hl * Ll * El, 24), kl = random_floats(Hl * Sl * El, 25),
               vl = random_floats(Hl * Sl * El, 26);
    Strided Ql({1, Hl, Ll, El}, {Ll * 3 * Hl * El, El, 3 * Hl * El, 1}, ql);
    Strided Kl({1, Hl, Sl, El}, {Sl * Hl * El, El, Hl * El, 1}, kl);
    Strided Vl({1, Hl, Sl, El}, {Sl * Hl * El, El, Hl * El, 1}, vl);
    ref_sdpa(ql, kl, vl, 1, Hl, Ll, Sl, El, true, nullptr, false, 1.0 / std::sqrt(double(El)), want, want_lse);
    Handle O, LSE;
    REQUIRE(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(Ql.h.get(), Kl.h.get(), Vl.h.get(), 0.0, 1,
                                                                       nullptr, nullptr, O.out(), LSE.out()) == 0);
    require_close(read_f32(O.get()), want);
    require_close(read_f32(LSE.get()), want_lse);
  }
  SECTION("dropout is refused") {
    Handle O, LSE;
    CHECK(aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu(Q.h.get(), K.h.get(), V.h.get(), 0.1, 0, nullptr,
                                                                     nullptr, O.out(), LSE.out()) == 1);
  }
}
