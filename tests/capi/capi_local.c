/* tests/capi: the C API's library opened the way a host language opens it, with dlopen(RTLD_LOCAL) (Python's
 * ctypes does): its symbols are then in no global scope, and a model library it loads must still bind to its shim.
 *
 *   capi_local LIBMPSPACK_C MPK [IMPOSTOR]   opens the library RTLD_LOCAL, loads MPK's model and runs its recorded
 *                                            example; with IMPOSTOR, first opens that library RTLD_GLOBAL: it
 *                                            defines the model's aoti_torch_* imports as functions that abort, as
 *                                            libtorch's own shim sits in the global scope of a process that
 *                                            imported torch, and the model must still bind to mpspack's
 *
 * Exits 0 when the run matched the example's recorded output. */
#define _POSIX_C_SOURCE 200809L
#include <mpspack/mpspack.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef mpspack_status (*open_fn)(const char*, mpspack_container**);
typedef mpspack_status (*load_fn)(const mpspack_container*, const mpspack_load_options*, mpspack_model**);
typedef mpspack_status (*example_fn)(const mpspack_container*, size_t, int32_t, size_t, mpspack_tensor*);
typedef mpspack_status (*run_fn)(mpspack_model*, const mpspack_tensor*, size_t, mpspack_outputs**);
typedef mpspack_status (*get_fn)(const mpspack_outputs*, size_t, mpspack_tensor*);
typedef const char* (*error_fn)(void);

/* dlsym's object pointer as a function pointer (ISO C has no conversion between the two; POSIX guarantees it). */
static void* symbol(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (!p) fprintf(stderr, "capi_local: no %s in the library\n", name);
  return p;
}
#define BIND(var, type, name)      \
  do {                             \
    void* p_ = symbol(lib, name);  \
    if (!p_) return 1;             \
    memcpy(&var, &p_, sizeof var); \
  } while (0)

/* got == want within `run`'s default tolerance for float32 (rtol 1e-4, atol 1e-5); other dtypes byte for byte. */
static int same_values(const mpspack_tensor* got, const mpspack_tensor* want) {
  uint64_t i;
  if (got->nbytes != want->nbytes || got->dtype != want->dtype) return 0;
  if (want->dtype != MPSPACK_DTYPE_FLOAT32) return memcmp(got->data, want->data, want->nbytes) == 0;
  for (i = 0; i < want->nbytes / 4; ++i) {
    float g, w;
    memcpy(&g, (const unsigned char*)got->data + 4 * i, 4);
    memcpy(&w, (const unsigned char*)want->data + 4 * i, 4);
    if (!(fabs((double)g - w) <= 1e-5 + 1e-4 * fabs((double)w))) return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  void* lib;
  open_fn open_c;
  load_fn load;
  example_fn example;
  run_fn run;
  get_fn get;
  error_fn last_error;
  mpspack_container* c = NULL;
  mpspack_model* m = NULL;
  mpspack_outputs* outs = NULL;
  mpspack_tensor input, want, got;
  if (argc != 3 && argc != 4) return 2;
  if (argc == 4 && !dlopen(argv[3], RTLD_NOW | RTLD_GLOBAL)) {
    fprintf(stderr, "capi_local: %s\n", dlerror());
    return 1;
  }
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "capi_local: %s\n", dlerror());
    return 1;
  }
  /* Nothing of it is global: a lookup in the global scope finds no shim function of its own. */
  if (argc == 3 && dlsym(RTLD_DEFAULT, "aoti_torch_empty_strided")) {
    fprintf(stderr, "capi_local: the shim is in the global scope; this test needs it not to be\n");
    return 1;
  }
  BIND(open_c, open_fn, "mpspack_container_open");
  BIND(load, load_fn, "mpspack_model_load");
  BIND(example, example_fn, "mpspack_container_example_tensor");
  BIND(run, run_fn, "mpspack_model_run");
  BIND(get, get_fn, "mpspack_outputs_get");
  BIND(last_error, error_fn, "mpspack_last_error");
  if (open_c(argv[2], &c) || load(c, NULL, &m) || example(c, 0, 0, 0, &input) || run(m, &input, 1, &outs) ||
      get(outs, 0, &got) || example(c, 0, 1, 0, &want)) {
    fprintf(stderr, "capi_local: %s\n", last_error());
    return 1;
  }
  if (!same_values(&got, &want)) {
    fprintf(stderr, "capi_local: the output differs from the recorded one\n");
    return 1;
  }
  printf("capi_local: ran %s from a library opened RTLD_LOCAL%s\n", argv[2],
         argc == 4 ? ", beside other aoti_torch_* in the global scope" : "");
  return 0;
}
