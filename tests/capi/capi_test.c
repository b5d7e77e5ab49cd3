/* tests/capi: mpspack's C API (mpspack.h) from a plain C99 program built against the installed tree with only
 * libmpspack_c and its header (capi_test.cmake builds and runs it).
 *
 *   capi_test fixture CASE_DIR TMP IN_SPEC OUT_SPEC   build a rebuilt-bookworm case (model.so [+ weights.blob]) with
 *                                                     its input and expected output recorded as the example
 *                                                     (SPEC: "f32:8x64"), then open, verify, load and run it
 *                                                     against expected0.bin; misuse of a model
 *   capi_test example MPK TMP                         the bundled example container: describe, verify, load, run
 *                                                     its recorded example, bench; misuse of files and handles
 *   capi_test pt2 PKG.pt2 TMP                         a .pt2 built into a container: its constants described
 *   capi_test cuda CASE_DIR TMP IN_SPEC OUT_SPEC      a CUDA case on the GPU: host and device inputs, outputs
 *                                                     left on the device; exit 77 (skipped) without a usable GPU
 *
 * Prints one line per failed check and exits 1 when any failed. */
#include <mpspack/mpspack.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                                                   \
  do {                                                                                                                \
    if (!(cond)) {                                                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, mpspack_last_error()); \
      failures++;                                                                                                     \
    }                                                                                                                 \
  } while (0)
#define OK(call) CHECK((call) == MPSPACK_OK)

/* The call failed with `want`, and the thread's message names `needle` (the file or argument). */
static void expect_error_at(int line, mpspack_status got, mpspack_status want, const char* needle) {
  const char* msg = mpspack_last_error();
  if (got != want || !strstr(msg, needle)) {
    fprintf(stderr, "%s:%d: expected %s naming '%s', got %s: %s\n", __FILE__, line, mpspack_status_name(want), needle,
            mpspack_status_name(got), msg);
    failures++;
  }
}
#define EXPECT_ERROR(call, want, needle) expect_error_at(__LINE__, (call), (want), (needle))

static char* path_join(const char* a, const char* b) {
  char* p = malloc(strlen(a) + strlen(b) + 2);
  sprintf(p, "%s/%s", a, b);
  return p;
}

static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  unsigned char* data;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  data = malloc(n > 0 ? (size_t)n : 1);
  *size = fread(data, 1, (size_t)n, f);
  fclose(f);
  return data;
}

static int write_file(const char* path, const void* data, size_t size) {
  FILE* f = fopen(path, "wb");
  int ok;
  if (!f) return 0;
  ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

static int file_exists(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f) fclose(f);
  return f != NULL;
}

/* got == want within `run`'s default tolerance for float32 (rtol 1e-4, atol 1e-5); other dtypes byte for byte. */
static int same_values(int32_t dtype, const void* got, const void* want, uint64_t nbytes) {
  uint64_t i;
  if (dtype != MPSPACK_DTYPE_FLOAT32) return memcmp(got, want, nbytes) == 0;
  for (i = 0; i < nbytes / 4; ++i) {
    float g, w;
    memcpy(&g, (const unsigned char*)got + 4 * i, 4);
    memcpy(&w, (const unsigned char*)want + 4 * i, 4);
    if (!(fabs((double)g - w) <= 1e-5 + 1e-4 * fabs((double)w))) return 0;
  }
  return 1;
}

/* The model's misuse: each refused with an error naming the argument, and the model still runs afterwards. */
static void model_misuse(mpspack_model* model, const mpspack_tensor* input) {
  mpspack_tensor bad = *input;
  mpspack_outputs* outs = NULL;
  mpspack_tensor out_buf;
  float small[1];
  int64_t wrong_shape[1];
  EXPECT_ERROR(mpspack_model_run(model, input, 0, &outs), MPSPACK_ERR_INVALID_ARGUMENT, "takes 1 input");
  CHECK(outs == NULL);
  bad.dtype = bad.dtype == MPSPACK_DTYPE_INT32 ? MPSPACK_DTYPE_FLOAT32 : MPSPACK_DTYPE_INT32;
  EXPECT_ERROR(mpspack_model_run(model, &bad, 1, &outs), MPSPACK_ERR_INVALID_ARGUMENT, "input 0");
  bad = *input;
  bad.nbytes -= 1;
  EXPECT_ERROR(mpspack_model_run(model, &bad, 1, &outs), MPSPACK_ERR_INVALID_ARGUMENT, "bytes given");
  bad = *input;
  wrong_shape[0] = 1;
  bad.ndim = 1;
  bad.shape = wrong_shape;
  EXPECT_ERROR(mpspack_model_run(model, &bad, 1, &outs), MPSPACK_ERR_INVALID_ARGUMENT, "input 0");
  bad = *input;
  bad.dtype = 99;
  EXPECT_ERROR(mpspack_model_run(model, &bad, 1, &outs), MPSPACK_ERR_INVALID_ARGUMENT, "inputs[0]");
  bad = *input;
  bad.shape = NULL;
  EXPECT_ERROR(mpspack_model_run(model, &bad, 1, &outs), MPSPACK_ERR_INVALID_ARGUMENT, "inputs[0]");
  bad = *input;
  bad.data = NULL;
  EXPECT_ERROR(mpspack_model_run(model, &bad, 1, &outs), MPSPACK_ERR_INVALID_ARGUMENT, "no data");
  EXPECT_ERROR(mpspack_model_run(model, input, 1, NULL), MPSPACK_ERR_INVALID_ARGUMENT, "outputs");
  memset(&out_buf, 0, sizeof out_buf);
  out_buf.data = small;
  out_buf.nbytes = sizeof small;
  EXPECT_ERROR(mpspack_model_run_into(model, input, 1, &out_buf, 1), MPSPACK_ERR_INVALID_ARGUMENT, "outputs[0]");
  EXPECT_ERROR(mpspack_model_run_into(model, input, 1, &out_buf, 2), MPSPACK_ERR_INVALID_ARGUMENT, "n_outputs");
  EXPECT_ERROR(mpspack_model_input(model, 5, &bad), MPSPACK_ERR_INVALID_ARGUMENT, "index");
  /* A handle of another kind is refused by the registry, not dereferenced. */
  EXPECT_ERROR(mpspack_model_run((mpspack_model*)(void*)&bad, input, 1, &outs), MPSPACK_ERR_INVALID_HANDLE, "model");
  EXPECT_ERROR(mpspack_model_run(NULL, input, 1, &outs), MPSPACK_ERR_INVALID_HANDLE, "model");
  OK(mpspack_model_run(model, input, 1, &outs));
  OK(mpspack_outputs_free(outs));
  EXPECT_ERROR(mpspack_outputs_free(outs), MPSPACK_ERR_INVALID_HANDLE, "outputs");
}

/* One run through mpspack_model_run and one into a caller buffer; both match `expected`. */
static void run_and_compare(mpspack_model* model, const mpspack_tensor* input, const unsigned char* expected,
                            size_t expected_size) {
  mpspack_outputs* outs = NULL;
  mpspack_tensor out, into;
  size_t n = 0;
  void* buffer;
  OK(mpspack_model_run(model, input, 1, &outs));
  if (!outs) return;
  OK(mpspack_outputs_count(outs, &n));
  CHECK(n == 1);
  OK(mpspack_outputs_get(outs, 0, &out));
  CHECK(out.memory == MPSPACK_MEMORY_HOST);
  CHECK(strcmp(out.name, "output0") == 0);
  CHECK(out.nbytes == expected_size);
  CHECK(out.nbytes == expected_size && same_values(out.dtype, out.data, expected, expected_size));
  buffer = malloc(expected_size);
  memset(&into, 0, sizeof into);
  into.data = buffer;
  into.nbytes = expected_size;
  OK(mpspack_model_run_into(model, input, 1, &into, 1));
  CHECK(into.dtype == out.dtype && into.ndim == out.ndim);
  CHECK(into.ndim > 0 && into.shape[0] == out.shape[0]);
  CHECK(same_values(out.dtype, buffer, expected, expected_size));
  free(buffer);
  OK(mpspack_outputs_free(outs));
}

static int fixture(const char* dir, const char* tmp, const char* in_spec, const char* out_spec) {
  char *so = path_join(dir, "model.so"), *blob = path_join(dir, "weights.blob"), *mpk = path_join(tmp, "model.mpk");
  char *in_file = path_join(dir, "input0.bin"), *expected_file = path_join(dir, "expected0.bin");
  char ex_in[4096], ex_out[4096];
  const char* inputs[1];
  const char* weights[1];
  const char* ex_inputs[1];
  const char* ex_outputs[1];
  mpspack_build_options bo;
  mpspack_load_options lo;
  mpspack_container* c = NULL;
  mpspack_model* model = NULL;
  mpspack_counts counts;
  mpspack_library_info lib;
  mpspack_tensor sig, input, unaligned;
  int64_t shape[8];
  int32_t d;
  char* report = NULL;
  size_t n_in = 0, n_out = 0, input_size = 0, expected_size = 0;
  unsigned char *input_data, *expected, *shifted;
  const char *device, *library, *mode;

  inputs[0] = so;
  weights[0] = blob;
  sprintf(ex_in, "%s:%s", in_file, in_spec);
  sprintf(ex_out, "%s:%s", expected_file, out_spec);
  ex_inputs[0] = ex_in;
  ex_outputs[0] = ex_out;
  OK(mpspack_build_options_init(&bo));
  if (file_exists(blob)) {
    bo.weights = weights;
    bo.n_weights = 1;
  }
  bo.example_inputs = ex_inputs;
  bo.n_example_inputs = 1;
  bo.example_outputs = ex_outputs;
  bo.n_example_outputs = 1;
  OK(mpspack_build(inputs, 1, mpk, &bo));

  OK(mpspack_container_open(mpk, &c));
  OK(mpspack_container_counts(c, &counts));
  CHECK(counts.libraries == 1 && counts.examples == 1);
  OK(mpspack_container_library(c, 0, &lib));
  CHECK(strcmp(lib.device, "cpu") == 0);
  OK(mpspack_container_verify(c, &report));
  CHECK(report && strstr(report, "\"ok\": true"));
  mpspack_string_free(report);

  OK(mpspack_load_options_init(&lo));
  OK(mpspack_model_load(c, &lo, &model));
  OK(mpspack_model_io_count(model, &n_in, &n_out));
  CHECK(n_in == 1 && n_out == 1);
  OK(mpspack_model_info(model, &device, &library, &mode));
  CHECK(strcmp(device, "cpu") == 0);
  OK(mpspack_model_input(model, 0, &sig));
  CHECK(strcmp(sig.name, "input0") == 0 && sig.ndim > 0 && sig.dtype >= 0);

  input_data = read_file(in_file, &input_size);
  expected = read_file(expected_file, &expected_size);
  CHECK(input_data && expected);
  /* The signature's shape belongs to the model handle: the input keeps its own copy to outlive it. */
  CHECK(sig.ndim <= 8);
  for (d = 0; d < sig.ndim && d < 8; ++d) shape[d] = sig.shape[d];
  input = sig;
  input.shape = shape;
  input.data = input_data;
  input.nbytes = input_size;
  input.memory = MPSPACK_MEMORY_HOST;
  run_and_compare(model, &input, expected, expected_size);
  /* Host memory not aligned for the dtype is copied, not given to the model in place: the same result. */
  shifted = malloc(input_size + 1);
  memcpy(shifted + 1, input_data, input_size);
  unaligned = input;
  unaligned.data = shifted + 1;
  run_and_compare(model, &unaligned, expected, expected_size);
  free(shifted);
  model_misuse(model, &input);

  /* Outputs left on the device (host memory on the CPU) outlive the model and the container they came from. */
  {
    mpspack_outputs* on_device = NULL;
    mpspack_tensor t;
    mpspack_model* second = NULL;
    OK(mpspack_model_load(c, NULL, &second));
    OK(mpspack_model_run_device(second, &input, 1, &on_device));
    OK(mpspack_model_close(second));
    OK(mpspack_outputs_get(on_device, 0, &t));
    CHECK(t.memory == MPSPACK_MEMORY_HOST && t.nbytes == expected_size);
    CHECK(t.nbytes == expected_size && same_values(t.dtype, t.data, expected, expected_size));
    OK(mpspack_outputs_free(on_device));
  }

  /* The model keeps the container's mapping: closing the container first leaves it runnable. */
  OK(mpspack_container_close(c));
  EXPECT_ERROR(mpspack_container_close(c), MPSPACK_ERR_INVALID_HANDLE, "container");
  run_and_compare(model, &input, expected, expected_size);
  OK(mpspack_model_close(model));
  EXPECT_ERROR(mpspack_model_close(model), MPSPACK_ERR_INVALID_HANDLE, "model");
  EXPECT_ERROR(mpspack_model_run(model, &input, 1, NULL), MPSPACK_ERR_INVALID_ARGUMENT, "outputs");

  /* Weights copied into the model (external blob) or not verified: the same outputs. */
  lo.copy_weights = 1;
  lo.verify_weights = 0;
  OK(mpspack_model_load_file(mpk, &lo, &model));
  run_and_compare(model, &input, expected, expected_size);
  OK(mpspack_model_close(model));

  free(input_data);
  free(expected);
  free(so);
  free(blob);
  free(mpk);
  free(in_file);
  free(expected_file);
  return failures ? 1 : 0;
}

/* The constants of weights entry 0: each one's block lies inside the mapped file. */
static void check_constants(const mpspack_container* c) {
  const void* base = NULL;
  uint64_t size = 0;
  mpspack_weights_info w;
  mpspack_constant_info k;
  size_t i;
  OK(mpspack_container_bytes(c, &base, &size));
  OK(mpspack_container_weights(c, 0, &w));
  CHECK(w.n_constants > 0);
  for (i = 0; i < w.n_constants; ++i) {
    OK(mpspack_container_constant(c, 0, i, &k));
    CHECK(k.name && k.name[0] != '\0');
    CHECK(k.dtype_name && k.dtype_name[0] != '\0');
    CHECK(k.data == NULL ||
          ((const char*)k.data >= (const char*)base && (const char*)k.data + k.nbytes <= (const char*)base + size));
  }
  EXPECT_ERROR(mpspack_container_constant(c, 0, w.n_constants, &k), MPSPACK_ERR_INVALID_ARGUMENT, "constant index");
}

/* Runs the recorded example's inputs (read from the container) and compares with its recorded outputs. */
static void run_recorded_example(const mpspack_container* c) {
  mpspack_model* model = NULL;
  mpspack_example_info ex;
  mpspack_tensor inputs[8], want, got;
  mpspack_outputs* outs = NULL;
  size_t i;
  OK(mpspack_container_example(c, 0, &ex));
  CHECK(ex.n_inputs > 0 && ex.n_inputs <= 8);
  for (i = 0; i < ex.n_inputs && i < 8; ++i) OK(mpspack_container_example_tensor(c, 0, 0, i, &inputs[i]));
  OK(mpspack_model_load(c, NULL, &model));
  OK(mpspack_model_run(model, inputs, ex.n_inputs, &outs));
  for (i = 0; i < ex.n_outputs; ++i) {
    OK(mpspack_container_example_tensor(c, 0, 1, i, &want));
    OK(mpspack_outputs_get(outs, i, &got));
    CHECK(got.nbytes == want.nbytes && same_values(got.dtype, got.data, want.data, want.nbytes));
  }
  OK(mpspack_outputs_free(outs));
  OK(mpspack_model_close(model));
}

/* Two models of one container, each run on its own thread at once (thread safety: one call at a time per model,
 * different models concurrently); each thread's results match the recorded example. */
struct worker {
  const mpspack_container* c;
  int ok;
};

static void* run_worker(void* arg) {
  struct worker* w = arg;
  mpspack_model* model = NULL;
  mpspack_tensor input, want, got;
  mpspack_outputs* outs = NULL;
  int i;
  w->ok = mpspack_model_load(w->c, NULL, &model) == MPSPACK_OK &&
          mpspack_container_example_tensor(w->c, 0, 0, 0, &input) == MPSPACK_OK &&
          mpspack_container_example_tensor(w->c, 0, 1, 0, &want) == MPSPACK_OK;
  for (i = 0; w->ok && i < 20; ++i) {
    w->ok = mpspack_model_run(model, &input, 1, &outs) == MPSPACK_OK &&
            mpspack_outputs_get(outs, 0, &got) == MPSPACK_OK && got.nbytes == want.nbytes &&
            same_values(got.dtype, got.data, want.data, want.nbytes);
    if (outs) mpspack_outputs_free(outs);
    outs = NULL;
  }
  if (w->ok) w->ok = mpspack_model_close(model) == MPSPACK_OK;
  return NULL;
}

static void concurrent_models(const mpspack_container* c) {
  pthread_t threads[2];
  struct worker workers[2];
  int i;
  for (i = 0; i < 2; ++i) {
    workers[i].c = c;
    workers[i].ok = 0;
    CHECK(pthread_create(&threads[i], NULL, run_worker, &workers[i]) == 0);
  }
  for (i = 0; i < 2; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(workers[i].ok);
  }
}

static void bench(const char* mpk) {
  mpspack_bench_options b;
  char* report = NULL;
  OK(mpspack_bench_options_init(&b));
  b.warmup = 1;
  b.iterations = 3;
  OK(mpspack_bench(mpk, NULL, &b, &report));
  CHECK(report && strstr(report, "\"latency_ms\"") && strstr(report, "\"iterations\": 3"));
  mpspack_string_free(report);
  b.iterations = 0;
  EXPECT_ERROR(mpspack_bench(mpk, NULL, &b, &report), MPSPACK_ERR_INVALID_ARGUMENT, "iterations");
  CHECK(report == NULL);
  { /* A loaded model's bench: the same report, for the container and options it was loaded from. */
    mpspack_model* model = NULL;
    b.iterations = 2;
    OK(mpspack_model_load_file(mpk, NULL, &model));
    OK(mpspack_model_bench(model, &b, &report));
    CHECK(report && strstr(report, "\"iterations\": 2") && strstr(report, "\"backend\": \"cpu\""));
    mpspack_string_free(report);
    OK(mpspack_model_close(model));
  }
}

/* Copies `mpk` to TMP/NAME with the byte at `offset` flipped. */
static char* damaged_copy(const char* mpk, const char* tmp, const char* name, uint64_t offset) {
  size_t size = 0;
  unsigned char* data = read_file(mpk, &size);
  char* out = path_join(tmp, name);
  CHECK(data && offset < size);
  if (data && offset < size) data[offset] ^= 0xff;
  CHECK(write_file(out, data, size));
  free(data);
  return out;
}

static void file_misuse(const char* mpk, const char* tmp) {
  mpspack_container* c = (mpspack_container*)1;
  mpspack_container* good = NULL;
  mpspack_model* m = NULL;
  mpspack_segment_info seg;
  mpspack_load_options lo;
  char *missing = path_join(tmp, "missing.mpk"), *text = path_join(tmp, "text.mpk"), *report = NULL;
  char *bad_header, *bad_segment, *out = path_join(tmp, "never.mpk");
  const char* inputs[1];

  EXPECT_ERROR(mpspack_container_open(missing, &c), MPSPACK_ERR_NOT_FOUND, "missing.mpk");
  CHECK(mpspack_last_errno() == ENOENT);
  CHECK(c == NULL);
  EXPECT_ERROR(mpspack_container_open(tmp, &c), MPSPACK_ERR_IO, tmp);
  CHECK(mpspack_last_errno() == EISDIR);
  EXPECT_ERROR(mpspack_container_open(NULL, &c), MPSPACK_ERR_INVALID_ARGUMENT, "path");
  CHECK(write_file(text, "not a container\n", 16));
  EXPECT_ERROR(mpspack_container_open(text, &c), MPSPACK_ERR_NOT_CONTAINER, "text.mpk");
  CHECK(mpspack_last_errno() == 0);
  EXPECT_ERROR(mpspack_model_load_file(missing, NULL, &m), MPSPACK_ERR_NOT_FOUND, "missing.mpk");
  CHECK(m == NULL);
  EXPECT_ERROR(mpspack_container_close(NULL), MPSPACK_ERR_INVALID_HANDLE, "container");

  /* A damaged header is refused at open (and by verify as a failed check); a damaged segment by verify. */
  bad_header = damaged_copy(mpk, tmp, "bad_header.mpk", 20);
  EXPECT_ERROR(mpspack_container_open(bad_header, &c), MPSPACK_ERR_CORRUPT, "bad_header.mpk");
  EXPECT_ERROR(mpspack_verify(bad_header, &report), MPSPACK_ERR_CHECK_FAILED, "bad_header.mpk");
  CHECK(report && strstr(report, "\"ok\": false"));
  mpspack_string_free(report);
  OK(mpspack_container_open(mpk, &good));
  OK(mpspack_container_segment(good, 0, &seg));
  bad_segment = damaged_copy(mpk, tmp, "bad_segment.mpk", seg.offset + seg.size / 2);
  OK(mpspack_container_close(good));
  OK(mpspack_container_open(bad_segment, &c));
  EXPECT_ERROR(mpspack_container_verify(c, &report), MPSPACK_ERR_CHECK_FAILED, "bad_segment.mpk");
  CHECK(report && strstr(report, "\"ok\": false"));
  mpspack_string_free(report);
  /* Its library segment is checked before it is loaded. */
  EXPECT_ERROR(mpspack_model_load(c, NULL, &m), MPSPACK_ERR_CORRUPT, "bad_segment.mpk");
  CHECK(m == NULL);
  OK(mpspack_container_close(c));

  /* Options: a struct_size that is no size of the struct; a device that is not one. */
  OK(mpspack_load_options_init(&lo));
  lo.struct_size = 3;
  EXPECT_ERROR(mpspack_model_load_file(mpk, &lo, &m), MPSPACK_ERR_INVALID_ARGUMENT, "struct_size");
  OK(mpspack_load_options_init(&lo));
  lo.device = "tpu";
  EXPECT_ERROR(mpspack_model_load_file(mpk, &lo, &m), MPSPACK_ERR_INVALID_ARGUMENT, "tpu");
  lo.device = "cpu:1";
  EXPECT_ERROR(mpspack_model_load_file(mpk, &lo, &m), MPSPACK_ERR_INVALID_ARGUMENT, "cpu:1");

  /* build: a missing input names it, and nothing is written. */
  inputs[0] = missing;
  EXPECT_ERROR(mpspack_build(inputs, 1, out, NULL), MPSPACK_ERR_NOT_FOUND, "missing.mpk");
  CHECK(!file_exists(out));
  EXPECT_ERROR(mpspack_build(inputs, 0, out, NULL), MPSPACK_ERR_INVALID_ARGUMENT, "inputs");

  free(missing);
  free(text);
  free(bad_header);
  free(bad_segment);
  free(out);
}

/* The CUDA runtime's copy and allocation, from the libcudart the library brings (a dependency of libmpspack_c when
 * built with CUDA), for moving test data to and from the GPU. */
typedef int (*cuda_memcpy_fn)(void*, const void*, size_t, int);
typedef int (*cuda_malloc_fn)(void**, size_t);
typedef int (*cuda_free_fn)(void*);
enum { HOST_TO_DEVICE = 1, DEVICE_TO_HOST = 2 };

static void* cuda_function(const char* name) {
  void* f = dlsym(RTLD_DEFAULT, name);
  CHECK(f != NULL);
  return f;
}

/* A CUDA case: built with its example, loaded on "cuda" (exit 77, skipped, where this machine has no usable GPU),
 * run on host inputs, on an input in GPU memory, and with the outputs left on the GPU. */
static int cuda(const char* dir, const char* tmp, const char* in_spec, const char* out_spec) {
  char *so = path_join(dir, "model.so"), *mpk = path_join(tmp, "cuda.mpk");
  char *in_file = path_join(dir, "input0.bin"), *expected_file = path_join(dir, "expected0.bin");
  char ex_in[4096], ex_out[4096];
  const char *inputs[1], *ex_inputs[1], *ex_outputs[1];
  mpspack_build_options bo;
  mpspack_load_options lo;
  mpspack_model* model = NULL;
  mpspack_outputs* outs = NULL;
  mpspack_tensor sig, input, out;
  int64_t shape[8];
  int32_t d;
  size_t input_size = 0, expected_size = 0;
  unsigned char *input_data, *expected, *back;
  void *f, *on_gpu = NULL;
  cuda_memcpy_fn cuda_memcpy;
  cuda_malloc_fn cuda_malloc;
  cuda_free_fn cuda_free;
  mpspack_status st;

  inputs[0] = so;
  sprintf(ex_in, "%s:%s", in_file, in_spec);
  sprintf(ex_out, "%s:%s", expected_file, out_spec);
  ex_inputs[0] = ex_in;
  ex_outputs[0] = ex_out;
  OK(mpspack_build_options_init(&bo));
  bo.example_inputs = ex_inputs;
  bo.n_example_inputs = 1;
  bo.example_outputs = ex_outputs;
  bo.n_example_outputs = 1;
  OK(mpspack_build(inputs, 1, mpk, &bo));
  OK(mpspack_load_options_init(&lo));
  lo.device = "cuda";
  st = mpspack_model_load_file(mpk, &lo, &model);
  if (st != MPSPACK_OK && strstr(mpspack_last_error(), "no usable CUDA device here")) {
    printf("capi_test cuda: skipped: %s\n", mpspack_last_error());
    return 77;
  }
  CHECK(st == MPSPACK_OK);
  if (st != MPSPACK_OK) return 1;
  OK(mpspack_model_input(model, 0, &sig));
  for (d = 0; d < sig.ndim && d < 8; ++d) shape[d] = sig.shape[d];
  input_data = read_file(in_file, &input_size);
  expected = read_file(expected_file, &expected_size);
  input = sig;
  input.shape = shape;
  input.data = input_data;
  input.nbytes = input_size;
  input.memory = MPSPACK_MEMORY_HOST;
  run_and_compare(model, &input, expected, expected_size);

  f = cuda_function("cudaMemcpy");
  memcpy(&cuda_memcpy, &f, sizeof f);
  f = cuda_function("cudaMalloc");
  memcpy(&cuda_malloc, &f, sizeof f);
  f = cuda_function("cudaFree");
  memcpy(&cuda_free, &f, sizeof f);
  CHECK(cuda_malloc(&on_gpu, input_size) == 0 && cuda_memcpy(on_gpu, input_data, input_size, HOST_TO_DEVICE) == 0);
  input.data = on_gpu;
  input.memory = MPSPACK_MEMORY_DEVICE;
  run_and_compare(model, &input, expected, expected_size);
  OK(mpspack_model_run_device(model, &input, 1, &outs));
  OK(mpspack_outputs_get(outs, 0, &out));
  CHECK(out.memory == MPSPACK_MEMORY_DEVICE && out.nbytes == expected_size);
  back = malloc(expected_size);
  CHECK(cuda_memcpy(back, out.data, expected_size, DEVICE_TO_HOST) == 0);
  CHECK(same_values(out.dtype, back, expected, expected_size));
  OK(mpspack_model_close(model));
  OK(mpspack_outputs_free(outs)); /* after the model: the outputs hold it */
  cuda_free(on_gpu);
  free(back);
  free(input_data);
  free(expected);
  free(so);
  free(mpk);
  free(in_file);
  free(expected_file);
  return failures ? 1 : 0;
}

/* A .pt2 package built into a container through the API: its constants table, described. */
static int pt2(const char* package, const char* tmp) {
  char* mpk = path_join(tmp, "pkg.mpk");
  const char* inputs[1];
  mpspack_container* c = NULL;
  inputs[0] = package;
  OK(mpspack_build(inputs, 1, mpk, NULL));
  OK(mpspack_container_open(mpk, &c));
  check_constants(c);
  OK(mpspack_container_verify(c, NULL));
  OK(mpspack_container_close(c));
  free(mpk);
  return failures ? 1 : 0;
}

static int example(const char* mpk, const char* tmp) {
  mpspack_container* c = NULL;
  mpspack_header_info h;
  const char *version = NULL, *path = NULL, *producer = NULL, *producer_version = NULL, *name = NULL;
  char *json = NULL, *report = NULL;
  int32_t api = 0;
  uint32_t itemsize = 0;
  mpspack_counts counts;
  size_t index = 99;

  OK(mpspack_version(&version));
  CHECK(version && version[0] != '\0');
  OK(mpspack_api_version(&api));
  CHECK(api == MPSPACK_C_API_VERSION);
  OK(mpspack_dtype_info(MPSPACK_DTYPE_BFLOAT16, &name, NULL, &itemsize, NULL));
  CHECK(strcmp(name, "bf16") == 0 && itemsize == 2);
  EXPECT_ERROR(mpspack_dtype_info(12345, &name, NULL, NULL, NULL), MPSPACK_ERR_INVALID_ARGUMENT, "12345");

  OK(mpspack_container_open(mpk, &c));
  OK(mpspack_container_header(c, &h));
  CHECK(h.version_major == 1 && h.file_size > 0);
  OK(mpspack_container_info(c, &path, &producer, &producer_version));
  CHECK(strcmp(path, mpk) == 0 && strcmp(producer, "mpspack") == 0);
  OK(mpspack_container_counts(c, &counts));
  CHECK(counts.libraries == 1 && counts.weights >= 1 && counts.examples == 1);
  OK(mpspack_container_find_library(c, NULL, &index));
  CHECK(index == 0);
  EXPECT_ERROR(mpspack_container_find_library(c, "no-such-library", &index), MPSPACK_ERR_INVALID_ARGUMENT,
               "no-such-library");
  OK(mpspack_container_manifest_json(c, &json));
  CHECK(json && strstr(json, "\"libraries\"") && strstr(json, "\"constants\""));
  mpspack_string_free(json);
  OK(mpspack_container_verify(c, &report));
  CHECK(report && strstr(report, "\"ok\": true"));
  mpspack_string_free(report);
  OK(mpspack_verify(mpk, NULL));
  run_recorded_example(c);
  concurrent_models(c);
  OK(mpspack_container_close(c));
  EXPECT_ERROR(mpspack_container_counts(c, &counts), MPSPACK_ERR_INVALID_HANDLE, "container");

  bench(mpk);
  file_misuse(mpk, tmp);
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 6 && strcmp(argv[1], "fixture") == 0) return fixture(argv[2], argv[3], argv[4], argv[5]);
  if (argc == 4 && strcmp(argv[1], "example") == 0) return example(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "pt2") == 0) return pt2(argv[2], argv[3]);
  if (argc == 6 && strcmp(argv[1], "cuda") == 0) return cuda(argv[2], argv[3], argv[4], argv[5]);
  fprintf(stderr, "usage: capi_test fixture|cuda CASE_DIR TMP IN_SPEC OUT_SPEC | example MPK TMP | pt2 PKG TMP\n");
  return 2;
}
