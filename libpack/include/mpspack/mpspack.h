/* mpspack's C API: build, open, describe, verify, load, run and benchmark containers from any language.
 *
 * C99. Every function is in libmpspack_c.so.0 (link with -lmpspack_c), which holds libpack, the runtime and the
 * AOTInductor shim that model libraries bind to; nothing else of mpspack is needed at run time. The C++ headers
 * beside this one are not part of this API.
 *
 * Conventions
 * - Every call returns an mpspack_status: MPSPACK_OK (0) or an error code. A call that fails leaves its out
 *   parameters untouched (out handles are set to NULL) and sets the calling thread's error message, one line that
 *   names the file, argument or handle involved, the same line `mpspack` prints for the same problem. Read it with
 *   mpspack_last_error(). A call that succeeds does not change it.
 * - No C++ exception crosses this API: every call catches everything at the boundary (an exception that escaped
 *   libpack is MPSPACK_ERR_INTERNAL, std::bad_alloc MPSPACK_ERR_OUT_OF_MEMORY).
 * - Handles are opaque and validated: every handle the API returns is registered until it is closed, and a call
 *   given NULL, a handle of the wrong kind, or one already closed (double close included) returns
 *   MPSPACK_ERR_INVALID_HANDLE without touching it. (A pointer that never came from the API is not detected when
 *   it happens to equal a live handle's address, which it cannot.)
 * - Strings the API returns (const char*) are UTF-8 as stored, NUL-terminated, and owned by the handle they came
 *   from: valid until it is closed. Strings returned as char** (JSON reports) are the caller's: free them with
 *   mpspack_string_free().
 * - Pointers into a container's mapped file (constants, segments, example tensors) are valid until the container
 *   handle is closed. A model keeps what it uses of the container alive itself: a container may be closed while
 *   models loaded from it are still in use.
 * - Option structs are versioned by their first field, struct_size: fill it with sizeof(the struct), or start from
 *   the *_init() function, which sets it and every default. A caller built against an older, shorter struct gets
 *   the defaults for the fields it does not have.
 * - Dtypes are c10 ScalarType codes, as AOTInductor reports them (MPSPACK_DTYPE_*); mpspack_dtype_name() gives
 *   the name mpspack prints ("f32", "bf16"). Tensors are dense, row-major (C order), little-endian.
 *
 * Thread safety, per call, is stated beside each declaration:
 *   "any thread"      : may be called from several threads at once, on the same handle too.
 *   "one at a time"   : concurrent calls on the SAME handle must be serialised by the caller; calls on different
 *                       handles may run concurrently.
 *   "process-wide"    : changes state of the whole process (CPU affinity, thread counts); call it while no model
 *                       runs.
 * Closing a handle must not race with any other call on it.
 */
#ifndef MPSPACK_MPSPACK_H
#define MPSPACK_MPSPACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MPSPACK_API __attribute__((visibility("default")))
#else
#define MPSPACK_API
#endif

/* The version of this API: incremented when a declaration changes; additions keep it. */
#define MPSPACK_C_API_VERSION 1

/* ------------------------------------------------------------------------------------------------ status --- */

typedef enum mpspack_status {
  MPSPACK_OK = 0,
  MPSPACK_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, an index out of range, an option out of its range, a
                                       wrong dtype, shape, size or count of inputs or outputs */
  MPSPACK_ERR_INVALID_HANDLE = 2,   /* NULL, closed, or not a handle of this kind */
  MPSPACK_ERR_NOT_FOUND = 3,        /* a file that does not exist */
  MPSPACK_ERR_IO = 4,               /* a file that cannot be read or written */
  MPSPACK_ERR_NOT_CONTAINER = 5,    /* a file that is not what the call reads (not a container, not a model
                                       library or .pt2) */
  MPSPACK_ERR_CORRUPT = 6,          /* a damaged file: a structural rule of the format broken (its rule id, e.g.
                                       "S3", is in the message), a hash that does not match */
  MPSPACK_ERR_UNSUPPORTED = 7,      /* valid but not runnable here: another device kind or machine, a shim
                                       function this build lacks, no backend for the device */
  MPSPACK_ERR_RUNTIME = 8,          /* the model or the device failed while loading or running */
  MPSPACK_ERR_CHECK_FAILED = 9,     /* a check ran and found a problem: verify found damage, a model's outputs
                                       did not match their reference */
  MPSPACK_ERR_OUT_OF_MEMORY = 10,
  MPSPACK_ERR_INTERNAL = 11 /* a bug in mpspack: please report it with the message */
} mpspack_status;

/* The calling thread's message of its last failed call ("" when none failed yet). Valid until this thread's next
 * failing call. Thread safety: any thread (each thread has its own). */
MPSPACK_API const char* mpspack_last_error(void);

/* The OS error behind the calling thread's last failed call when it was a file that could not be opened or read
 * (ENOENT, ENOTDIR, EACCES, EPERM, EISDIR for a folder, ...), 0 otherwise (a failure that was no OS error, or no
 * failure yet). Set by the same calls as mpspack_last_error(). Thread safety: any thread (each thread has its own). */
MPSPACK_API int32_t mpspack_last_errno(void);

/* "MPSPACK_ERR_CORRUPT" for a code, "unknown status" for others (static strings). Thread safety: any thread. */
MPSPACK_API const char* mpspack_status_name(mpspack_status status);

/* mpspack's version ("0.1.0+g<commit>"), static. Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_version(const char** version);

/* MPSPACK_C_API_VERSION of the library itself. Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_api_version(int32_t* version);

/* Frees a string the API returned through char** (NULL is fine). Thread safety: any thread. */
MPSPACK_API void mpspack_string_free(char* s);

/* ------------------------------------------------------------------------------------------------ dtypes --- */

enum {
  MPSPACK_DTYPE_UINT8 = 0,
  MPSPACK_DTYPE_INT8 = 1,
  MPSPACK_DTYPE_INT16 = 2,
  MPSPACK_DTYPE_INT32 = 3,
  MPSPACK_DTYPE_INT64 = 4,
  MPSPACK_DTYPE_FLOAT16 = 5,
  MPSPACK_DTYPE_FLOAT32 = 6,
  MPSPACK_DTYPE_FLOAT64 = 7,
  MPSPACK_DTYPE_COMPLEX32 = 8,
  MPSPACK_DTYPE_COMPLEX64 = 9,
  MPSPACK_DTYPE_COMPLEX128 = 10,
  MPSPACK_DTYPE_BOOL = 11,
  MPSPACK_DTYPE_BFLOAT16 = 15,
  MPSPACK_DTYPE_FLOAT8_E5M2 = 23,
  MPSPACK_DTYPE_FLOAT8_E4M3FN = 24,
  MPSPACK_DTYPE_FLOAT8_E5M2FNUZ = 25,
  MPSPACK_DTYPE_FLOAT8_E4M3FNUZ = 26,
  MPSPACK_DTYPE_UINT16 = 27,
  MPSPACK_DTYPE_UINT32 = 28,
  MPSPACK_DTYPE_UINT64 = 29
};

/* For a dtype code: its name as mpspack prints it ("f32"), as torch names it ("float32"), its element size in
 * bytes and NumPy's descr without byte order ("f4", "" where NumPy has none: bf16, float8). Any out pointer may be
 * NULL. MPSPACK_ERR_INVALID_ARGUMENT for a code mpspack does not know. Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_dtype_info(int32_t dtype, const char** name, const char** torch_name,
                                              uint32_t* itemsize, const char** numpy_descr);

/* ------------------------------------------------------------------------------------------------- build --- */

typedef struct mpspack_build_options {
  uint32_t struct_size;
  /* External weights blobs for the external-blob libraries, in input order (NULL/0: <stem>_weights.blob beside
   * each library, as `mpspack build`). */
  const char* const* weights;
  size_t n_weights;
  int32_t keep_libtorch; /* nonzero: keep libtorch*.so in NEEDED (default 0: dropped when only the shim is used) */
  /* Reference tensors recorded as the first library's example, FILE[:DTYPE:SHAPE] (.npy carries its own), inputs
   * and outputs in model order. */
  const char* const* example_inputs;
  size_t n_example_inputs;
  const char* const* example_outputs;
  size_t n_example_outputs;
  int32_t fsync; /* nonzero: fsync the output before it is renamed into place (default 0) */
} mpspack_build_options;

/* Sets struct_size and the defaults. Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_build_options_init(mpspack_build_options* options);

/* `mpspack build INPUTS... -o OUTPUT`: model libraries (.so) and/or .pt2 packages into one container, written
 * atomically (nothing under `output` on failure). options NULL: the defaults. Thread safety: any thread (different
 * outputs). */
MPSPACK_API mpspack_status mpspack_build(const char* const* inputs, size_t n_inputs, const char* output,
                                         const mpspack_build_options* options);

/* --------------------------------------------------------------------------------------------- container --- */

typedef struct mpspack_container mpspack_container;

/* Opens a container: maps it read-only, checks its header, metadata and every structural rule of FORMAT.md (the
 * validator `mpspack inspect` and `run` use). Does not read the segments: mpspack_container_verify() does.
 * Errors: NOT_FOUND, IO, NOT_CONTAINER, CORRUPT (the message names the file and the rule).
 * Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_container_open(const char* path, mpspack_container** container);

/* Closes it; NULL or an already closed handle is MPSPACK_ERR_INVALID_HANDLE (no crash). Thread safety: one at a
 * time (nothing else may use the handle meanwhile). */
MPSPACK_API mpspack_status mpspack_container_close(mpspack_container* container);

typedef struct mpspack_header_info {
  uint16_t version_major, version_minor;
  uint32_t header_size, flags;
  uint64_t metadata_offset, metadata_size, data_offset, data_size, file_size, checksum;
} mpspack_header_info;

/* The rest of the container calls: thread safety "any thread" (a container is read-only once open). */

MPSPACK_API mpspack_status mpspack_container_header(const mpspack_container* container, mpspack_header_info* header);
/* The path it was opened from; the producer and its version as the metadata records them. Any out may be NULL. */
MPSPACK_API mpspack_status mpspack_container_info(const mpspack_container* container, const char** path,
                                                  const char** producer, const char** producer_version);
/* The whole mapped file (for hashing, or reading what the descriptors point at). */
MPSPACK_API mpspack_status mpspack_container_bytes(const mpspack_container* container, const void** data,
                                                   uint64_t* size);

/* Counts of each kind of entry; any out may be NULL. */
typedef struct mpspack_counts {
  size_t sources, segments, libraries, weights, examples;
} mpspack_counts;
MPSPACK_API mpspack_status mpspack_container_counts(const mpspack_container* container, mpspack_counts* counts);

enum {
  MPSPACK_SEGMENT_LIBRARY = 0,
  MPSPACK_SEGMENT_WEIGHTS = 1,
  MPSPACK_SEGMENT_CUBIN = 2,
  MPSPACK_SEGMENT_EXAMPLE = 3
};

typedef struct mpspack_segment_info {
  int32_t kind;          /* MPSPACK_SEGMENT_* */
  const char* kind_name; /* "library", "weights", "cubin", "example" */
  const char* name;
  uint64_t offset, size, alignment;
  uint64_t xxh3;    /* the recorded XXH3-64 of its bytes */
  const void* data; /* its bytes in the mapping (size bytes) */
} mpspack_segment_info;
MPSPACK_API mpspack_status mpspack_container_segment(const mpspack_container* container, size_t index,
                                                     mpspack_segment_info* info);

typedef struct mpspack_source_info {
  const char* name;
  uint64_t size;
  const char* sha256;  /* lowercase hex */
  const char* kind;    /* "so", "blob", "pt2", "cubin", "tensor" */
  const char* flavour; /* for libraries, else "" */
  uint32_t mode;       /* permission bits as build read them; 0 when not recorded */
} mpspack_source_info;
MPSPACK_API mpspack_status mpspack_container_source(const mpspack_container* container, size_t index,
                                                    mpspack_source_info* info);

enum { MPSPACK_FLAVOUR_EMBEDDED = 0, MPSPACK_FLAVOUR_MMAP_SELF = 1, MPSPACK_FLAVOUR_EXTERNAL_BLOB = 2 };

typedef struct mpspack_library_info {
  const char* name;
  const char* device;       /* "cpu", "cuda" */
  const char* abi;          /* "aoti-c-shim" */
  const char* machine;      /* "x86_64", "aarch64" */
  int32_t flavour;          /* MPSPACK_FLAVOUR_* */
  const char* flavour_name; /* "embedded", "mmap-self", "external-blob" */
  uint32_t segment;         /* its library segment */
  int32_t weights;          /* index of its weights entry (mpspack_container_weights), -1 when none */
  const uint32_t* cubins;   /* its cubin segments */
  size_t n_cubins;
  const char* const* needed; /* DT_NEEDED as stored, and those build dropped */
  size_t n_needed;
  const char* const* dropped_needed;
  size_t n_dropped_needed;
  const char* const* imports; /* the shim functions it imports */
  size_t n_imports;
  uint64_t original_size; /* the library file before build split it */
  const char* original_sha256;
} mpspack_library_info;
MPSPACK_API mpspack_status mpspack_container_library(const mpspack_container* container, size_t index,
                                                     mpspack_library_info* info);
/* The library a user means by NAME or decimal INDEX; NULL or "" means the only one (a container holding several
 * is refused, naming them), as `run --library`. */
MPSPACK_API mpspack_status mpspack_container_find_library(const mpspack_container* container, const char* name_or_index,
                                                          size_t* index);

typedef struct mpspack_weights_info {
  uint32_t segment; /* the weights segment */
  size_t n_constants;
} mpspack_weights_info;
MPSPACK_API mpspack_status mpspack_container_weights(const mpspack_container* container, size_t index,
                                                     mpspack_weights_info* info);

typedef struct mpspack_constant_info {
  const char* name;
  const char* fqn;
  int32_t dtype;          /* c10 code; -1 when not recorded */
  const char* dtype_name; /* "f32", ...; "dtype<N>" for codes mpspack does not name */
  size_t ndim;
  const int64_t* shape;   /* ndim entries (in elements) */
  const int64_t* stride;  /* ndim entries (in elements) */
  int64_t storage_offset; /* in elements, from `data` */
  uint64_t offset;        /* byte offset inside the weights segment */
  uint64_t nbytes;        /* bytes of its block (padded as AOTInductor pads) */
  int32_t type;           /* 0 unknown, 1 parameter, 2 buffer, 3 tensor constant, 4 folded */
  int32_t from_folded;
  /* Its block in the mapped file (segment start + offset), nbytes long; NULL when the block lies outside the
   * segment (a folded constant of size 0). The first element is data + storage_offset * itemsize. */
  const void* data;
} mpspack_constant_info;
MPSPACK_API mpspack_status mpspack_container_constant(const mpspack_container* container, size_t weights_index,
                                                      size_t constant_index, mpspack_constant_info* info);

/* A tensor's description and memory: what the API returns for examples, model signatures and outputs, and what a
 * caller passes as inputs (and outputs, to mpspack_model_run_into). */
enum { MPSPACK_MEMORY_HOST = 0, MPSPACK_MEMORY_DEVICE = 1 };
typedef struct mpspack_tensor {
  int32_t dtype;        /* c10 code */
  int32_t ndim;         /* -1: unknown (a signature without a recorded example) */
  const int64_t* shape; /* ndim entries */
  void* data;           /* dense, row-major; NULL in a signature */
  uint64_t nbytes;      /* bytes at data */
  int32_t memory;       /* MPSPACK_MEMORY_HOST, or MPSPACK_MEMORY_DEVICE: memory of the model's device (a CUDA
                           device pointer on the model's GPU) */
  const char* name;     /* given by the API ("input0", "output1"); ignored in what the caller passes */
} mpspack_tensor;

typedef struct mpspack_example_info {
  size_t library; /* the library index it is an example of */
  size_t n_inputs, n_outputs;
} mpspack_example_info;
MPSPACK_API mpspack_status mpspack_container_example(const mpspack_container* container, size_t index,
                                                     mpspack_example_info* info);
/* An example's input (is_output 0) or output tensor, with data pointing into the mapping (read-only). */
MPSPACK_API mpspack_status mpspack_container_example_tensor(const mpspack_container* container, size_t index,
                                                            int32_t is_output, size_t tensor_index,
                                                            mpspack_tensor* tensor);

/* The container as `mpspack inspect --json` describes it (libraries, segments, weights, sources, examples). The
 * caller frees *json with mpspack_string_free(). */
MPSPACK_API mpspack_status mpspack_container_manifest_json(const mpspack_container* container, char** json);

/* ------------------------------------------------------------------------------------------------ verify --- */

/* `mpspack verify`: hashes every segment against its recorded XXH3 and checks that every byte outside the header,
 * metadata and segments is zero. MPSPACK_OK when intact; MPSPACK_ERR_CHECK_FAILED when damaged (the message is
 * the first problem; the report lists all); MPSPACK_ERR_IO when a segment cannot be read.
 * report_json (may be NULL): set on OK and CHECK_FAILED, the same JSON as `mpspack verify --json`; free it with
 * mpspack_string_free(). Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_container_verify(const mpspack_container* container, char** report_json);

/* The same from a path, opening it first, as `mpspack verify FILE`: a container whose structure is damaged is
 * MPSPACK_ERR_CHECK_FAILED with report_json {"ok": false, "problems": [the open error]}, one that cannot be read is
 * its open error (NOT_FOUND, IO, NOT_CONTAINER) with report_json also set. Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_verify(const char* path, char** report_json);

/* ------------------------------------------------------------------------------------------------- model --- */

typedef struct mpspack_model mpspack_model;

typedef struct mpspack_load_options {
  uint32_t struct_size;
  const char* library;       /* NAME or INDEX; NULL or "": the only one */
  const char* device;        /* "cpu", "cuda" or "cuda:N"; NULL or "": the kind the library was compiled for,
                                index 0 */
  int32_t verify_weights;    /* default 1: the weights are checked against their hashes beside the load, and the
                                first run returns its outputs only once that check passed (`run` without
                                --no-verify). The library segment is always checked. */
  int32_t copy_weights;      /* default 0: external-blob weights used in place from the mapping; 1: copied into the
                                model (`run --copy-weights`) */
  uint32_t threads;          /* default 0: as they are; N: the CPU team's size, as `run --bench --threads N`:
                                process-wide (CPU affinity narrowed to the first N CPUs, OMP_NUM_THREADS) */
  int32_t tf32_convolutions; /* default 1; 0: float32 convolutions on a GPU without TF32 (`run --no-tf32`,
                               process-wide) */
} mpspack_load_options;

/* Sets struct_size and the defaults. Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_load_options_init(mpspack_load_options* options);

/* Loads a library of an open container on a device, with the loader and checks of `mpspack run`: its segments
 * against their hashes, device kind, machine, the shim functions it imports, then the weights by flavour.
 * options NULL: the defaults. The model keeps what it needs of the container alive. Errors: UNSUPPORTED (another
 * device kind, machine, missing shim functions, no backend), CORRUPT (a hash), RUNTIME (the library failed to
 * load or create), INVALID_ARGUMENT (library or device option). Thread safety: any thread; options.threads and
 * tf32_convolutions are process-wide. */
MPSPACK_API mpspack_status mpspack_model_load(const mpspack_container* container, const mpspack_load_options* options,
                                              mpspack_model** model);
/* Opens the container at `path` and loads from it (the model holds the container). */
MPSPACK_API mpspack_status mpspack_model_load_file(const char* path, const mpspack_load_options* options,
                                                   mpspack_model** model);

/* Unloads it; NULL or a closed handle is MPSPACK_ERR_INVALID_HANDLE (no crash). Thread safety: one at a time. */
MPSPACK_API mpspack_status mpspack_model_close(mpspack_model* model);

/* What it takes and returns. Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_model_io_count(const mpspack_model* model, size_t* n_inputs, size_t* n_outputs);
/* Input or output i: name ("input<i>", "output<i>": AOTInductor libraries carry no user names), and the dtype and
 * shape when the container records an example for the library (else dtype -1, ndim -1). data is NULL. */
MPSPACK_API mpspack_status mpspack_model_input(const mpspack_model* model, size_t index, mpspack_tensor* info);
MPSPACK_API mpspack_status mpspack_model_output(const mpspack_model* model, size_t index, mpspack_tensor* info);
/* "cpu", "cuda:0": where it runs; the library's name; how the weights reached it ("embedded-mapped", ...). */
MPSPACK_API mpspack_status mpspack_model_info(const mpspack_model* model, const char** device, const char** library,
                                              const char** weights_mode);

/* The outputs of one run, in host memory the API allocated; freed with mpspack_outputs_free(). */
typedef struct mpspack_outputs mpspack_outputs;

/* Runs the model once on `inputs` (n_inputs must be the model's input count), caller-owned and only read:
 * MPSPACK_MEMORY_HOST (any device: copied to it) or MPSPACK_MEMORY_DEVICE (a CUDA model: a pointer on its GPU,
 * used in place). Each input's nbytes must match its dtype and shape, and (with a recorded example) its dtype and
 * shape the example's; a mismatch is MPSPACK_ERR_INVALID_ARGUMENT naming the input.
 * Outputs: host memory the API allocates, returned in *outputs. Errors: INVALID_ARGUMENT (count, dtype, shape,
 * size, memory), RUNTIME (the model failed; its own message went to stderr), CORRUPT (the weights' check failed).
 * Thread safety: one at a time per model (an AOTInductor model container runs one call at a time); different
 * models may run concurrently. */
MPSPACK_API mpspack_status mpspack_model_run(mpspack_model* model, const mpspack_tensor* inputs, size_t n_inputs,
                                             mpspack_outputs** outputs);

/* The same, with the outputs left in the model's device memory, not copied back: on a CUDA model MPSPACK_MEMORY_DEVICE
 * tensors on its GPU (dense; for DLPack), on the CPU host memory (MPSPACK_MEMORY_HOST). The device's work is finished
 * when it returns. They belong to *outputs until mpspack_outputs_free(), which may come after mpspack_model_close():
 * the outputs keep what of the model they need. Thread safety: one at a time per model. */
MPSPACK_API mpspack_status mpspack_model_run_device(mpspack_model* model, const mpspack_tensor* inputs, size_t n_inputs,
                                                    mpspack_outputs** outputs);

/* The same, with the outputs copied into caller-provided host buffers: outputs[i].data and .nbytes set by the
 * caller (nbytes must equal the output's size; dtype/ndim/shape are filled in by the call, with shape pointing
 * into the model handle, valid until the next run on it). n_outputs must be the model's output count.
 * Thread safety: one at a time per model. */
MPSPACK_API mpspack_status mpspack_model_run_into(mpspack_model* model, const mpspack_tensor* inputs, size_t n_inputs,
                                                  mpspack_tensor* outputs, size_t n_outputs);

/* Thread safety of the outputs calls: any thread (free: one at a time). */
MPSPACK_API mpspack_status mpspack_outputs_count(const mpspack_outputs* outputs, size_t* count);
/* Output i: dtype, shape, data (owned by `outputs`, writable; host memory, or the device's for
 * mpspack_model_run_device), nbytes, memory, name. The outputs are the caller's until mpspack_outputs_free(): they
 * stay valid after the model (and its container) is closed. */
MPSPACK_API mpspack_status mpspack_outputs_get(const mpspack_outputs* outputs, size_t index, mpspack_tensor* tensor);
MPSPACK_API mpspack_status mpspack_outputs_free(mpspack_outputs* outputs);

/* ------------------------------------------------------------------------------------------------- bench --- */

typedef struct mpspack_bench_options {
  uint32_t struct_size;
  uint64_t warmup;           /* warm-up runs (default 3) */
  double warmup_ms;          /* > 0: warm up for this long instead (default 0: unused) */
  uint64_t iterations;       /* timed runs (default 20) */
  double duration_s;         /* > 0: time runs for this long instead (default 0: unused) */
  uint64_t repetitions;      /* default 1 */
  const double* percentiles; /* extra latency percentiles, each in (0, 100) */
  size_t n_percentiles;
  int32_t cold;              /* drop the container from the page cache first */
  int32_t include_transfers; /* time each run with its copies in and out */
  int32_t cuda_graph;        /* GPUs: replay one captured run */
  /* Inputs FILE[:DTYPE:SHAPE] (NULL/0: the recorded example's), or generated from a seed (has_seed); expected
   * outputs to check the first run against. */
  const char* const* inputs;
  size_t n_inputs;
  int32_t has_seed;
  uint64_t seed;
  const char* const* expects;
  size_t n_expects;
} mpspack_bench_options;

/* Sets struct_size and the defaults. Thread safety: any thread. */
MPSPACK_API mpspack_status mpspack_bench_options_init(mpspack_bench_options* options);

/* `mpspack run FILE --bench --json`: opens `path`, loads the library with `load` (NULL: defaults), warms up, times
 * the runs; *report_json is the same JSON report (free with mpspack_string_free). MPSPACK_ERR_CHECK_FAILED (report
 * still set) when the first run did not match its reference. It loads its own copy of the model: the load phases
 * are part of the report. Thread safety: process-wide (it times the whole process's work, and load.threads). */
MPSPACK_API mpspack_status mpspack_bench(const char* path, const mpspack_load_options* load,
                                         const mpspack_bench_options* bench, char** report_json);
/* The same for the container and load options a model was loaded from (a second load, as the CLI does). */
MPSPACK_API mpspack_status mpspack_model_bench(const mpspack_model* model, const mpspack_bench_options* bench,
                                               char** report_json);

#ifdef __cplusplus
}
#endif

#endif /* MPSPACK_MPSPACK_H */
