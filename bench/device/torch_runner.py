# torch's own runtime on the same AOTInductor library, driven through the library's C API because on the device
# image torch._inductor.aoti_load_package cannot load these packages: libtorch's C shim made global, then the
# library's own CreateWithDevice + AOTInductorModelUpdateConstantsFromBlob (the blob mapped, as torch's package
# loader does) + Run, timed to the first synchronised result; then steady-state Run latency on inputs already
# on the GPU. Prints one JSON object.
#   python3 torch_runner.py MODEL.so WEIGHTS.blob INPUT.bin D ITERATIONS [cuda|cpu]
import ctypes, json, os, sys, time
t_start = time.perf_counter()
import numpy as np
import torch

so, blob, inp, D, iters = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
device = sys.argv[6] if len(sys.argv) > 6 else "cuda"
gpu = device == "cuda"
sync = torch.cuda.synchronize if gpu else (lambda: None)
t_torch = time.perf_counter()
lib_dir = os.path.join(os.path.dirname(torch.__file__), "lib")
for name in ("libtorch_cpu.so", "libtorch_cuda.so") if gpu else ("libtorch_cpu.so",):
    ctypes.CDLL(os.path.join(lib_dir, name), mode=os.RTLD_GLOBAL)
x = torch.from_numpy(np.fromfile(inp, dtype=np.float32).reshape(-1, D)).to(device)
sync()
aoti = torch._C._aoti
# torch's pybind11 bindings pass AtenTensorHandles as capsules (void*).
_get = ctypes.pythonapi.PyCapsule_GetPointer
_get.restype, _get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_new = ctypes.pythonapi.PyCapsule_New
_new.restype, _new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
as_ptr = lambda c: c if isinstance(c, int) else _get(c, None)

t0 = time.perf_counter()
lib = ctypes.CDLL(so, mode=os.RTLD_LOCAL)
h = ctypes.c_void_p()
assert lib.AOTInductorModelContainerCreateWithDevice(ctypes.byref(h), ctypes.c_size_t(1), device.encode(), None) == 0
t_create = time.perf_counter()
weights = np.memmap(blob, dtype=np.uint8, mode="r")
assert lib.AOTInductorModelUpdateConstantsFromBlob(h, ctypes.c_void_p(weights.ctypes.data)) == 0
t_weights = time.perf_counter()
n_out = ctypes.c_size_t()
lib.AOTInductorModelContainerGetNumOutputs(h, ctypes.byref(n_out))
stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream if gpu else None)

def run():
    ins = aoti.unsafe_alloc_void_ptrs_from_tensors([x])
    in_arr = (ctypes.c_void_p * 1)(*[as_ptr(c) for c in ins])
    out_arr = (ctypes.c_void_p * n_out.value)()
    assert lib.AOTInductorModelContainerRun(h, in_arr, ctypes.c_size_t(1), out_arr, n_out, stream, None) == 0
    return aoti.alloc_tensors_by_stealing_from_void_ptrs([_new(out_arr[i], None, None) for i in range(n_out.value)])

outs = run()
sync()
t_first = time.perf_counter()
first = outs[0].cpu().numpy()
for _ in range(3):
    run(); sync()
times = []
for _ in range(iters):
    a = time.perf_counter()
    run(); sync()
    times.append((time.perf_counter() - a) * 1e3)
times.sort()
print(json.dumps({
    "runner": "torch " + torch.__version__ + " (libtorch shim, library's own C API)",
    "import_torch_ms": (t_torch - t_start) * 1e3,
    "create_ms": (t_create - t0) * 1e3,
    "update_constants_from_blob_ms": (t_weights - t_create) * 1e3,
    "first_run_ms": (t_first - t_weights) * 1e3,
    "ready_to_first_result_ms": (t_first - t0) * 1e3,
    "latency_ms": {"min": times[0], "p50": times[len(times) // 2], "mean": sum(times) / len(times)},
    "iterations": iters,
    "output_sum": float(first.astype(np.float64).sum()),
}))
