# Torch's side of one zoo row, in a fresh process (bench/zoo/zoo.py starts it and times it from spawn):
#   capi:    the case's model.pt2 on torch's runtime without torch's package loader: its model library's own C
#            API with libtorch's shim loaded globally (capi_runner.py; the default, first choice);
#   package: the same package through torch's own loader, torch._inductor.aoti_load_package
#            (AOTIModelPackageLoader through libtorch), called as loader.run(inputs) where the loader has it;
#   eager:   the model rebuilt from bench/zoo/models.py with the same seed, run in eager mode (the fallback where
#            neither runner works).
# The inputs are the case's input<i>.bin files. Prints ZOO_FIRST_RESULT as soon as the first outputs are ready
# (after a device sync), then warms up, times ITERATIONS calls (each followed by a device sync) and prints one
# JSON line: the latency, in-process phase times, the memory the process took by the end of the timed runs (as
# `mpspack run --bench` reads its own then: peak host RSS, and on CUDA the device's used memory and torch's
# allocator peaks), and its first outputs' errors against torch eager's (expected.pt) and against mpspack's (the
# folder that `mpspack run --output` wrote), at the row's tolerance.
# A crash writes no core file (that alone can take tens of seconds) and prints the Python stack.
# ZOO_TORCH_PROFILE=1: afterwards, ITERATIONS more calls under torch.profiler, whose table of aten ops (the ones the
# model library calls through torch's shim: convolutions, products, attention) goes to stderr, to set beside
# `MPSPACK_PROFILE_SHIM=1 mpspack run ... --bench` (docs/CLI.md).
#   python3 time_torch.py capi|package|eager CASE_DIR cpu|cuda ITERATIONS WARMUP RTOL ATOL [MPSPACK_OUTPUT_DIR]
import time

STARTED = time.perf_counter()

import ctypes  # noqa: E402
import faulthandler  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
FIRST_RESULT_MARK = "ZOO_FIRST_RESULT"


def ms(a, b):
    return round((b - a) * 1e3, 3)


def guarded(compare):
    """A comparison that cannot be made is reported as such; the timing stands."""
    try:
        return compare()
    except Exception as e:
        return [{"ok": False, "problem": f"{type(e).__name__}: {e}"[:300]}]


def no_core_files():
    """No core file on a crash, to a file or to a core_pattern pipe (PR_SET_DUMPABLE 0 stops both)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE
    faulthandler.enable()


def package_runner(torch, case_dir, inputs):
    compiled = torch._inductor.aoti_load_package(os.path.join(case_dir, "model.pt2"))
    loader = getattr(compiled, "loader", None)
    if loader is not None and hasattr(loader, "run"):
        return (lambda xs=inputs: loader.run(xs)), "torch runner (aoti_load_package, loader.run)"
    return (lambda xs=inputs: compiled(*xs)), "torch runner (aoti_load_package)"


def eager_runner(torch, meta, device, inputs):
    import models
    import tensors
    torch.manual_seed(models.SEED)
    module, _ = models.get(meta["model"]).build()
    module = models.place(module, device)
    return (lambda xs=inputs: tensors.flat_outputs(module(*xs))), "torch eager"


def run_later_calls(torch, case_dir, device, call, sync, rtol, atol):
    """An entry with several input sets (models.Entry.calls): its later sets, in order on the model that just ran
    the first, against eager's outputs of the same sequence (for a stateful model, what the earlier calls left in
    its buffers counts). One comparison list per later call; none for a single-set entry."""
    path = os.path.join(case_dir, "calls.pt")
    if not os.path.exists(path):
        return []
    import tensors
    saved = torch.load(path)
    results = []
    for inputs, wanted in zip(saved["inputs"][1:], saved["outputs"][1:]):
        got = [t.detach().cpu() for t in tensors.flat_outputs(call([x.to(device) for x in inputs]))]
        sync()
        results.append(tensors.compare_all(got, wanted, rtol, atol))
    return results


def peak_rss_bytes():
    """VmHWM, the process's peak resident set, as mpspack's bench report reads its own (peak_rss_bytes)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # KiB on Linux


def memory_used(torch, device):
    """Host peak RSS; on CUDA the device's used memory (cudaMemGetInfo: total - free, the process's CUDA context,
    libraries, allocator reserve and the model's own cudaMallocs, as mpspack's device.memory_used_bytes) and
    torch's caching allocator's peaks (what the model's intermediates and outputs took through torch's shim;
    AOTInductor's runtime cudaMallocs the weights' block itself, outside that allocator)."""
    m = {"peak_rss_bytes": peak_rss_bytes()}
    if device == "cuda":
        free, total = torch.cuda.mem_get_info()
        m.update(device_used_bytes=total - free, device_total_bytes=total,
                 max_allocated_bytes=torch.cuda.max_memory_allocated(),
                 max_reserved_bytes=torch.cuda.max_memory_reserved())
    return m


def print_op_profile(torch, call, sync, iterations):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(iterations):
            call()
            sync()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=20), file=sys.stderr, flush=True)


def main():
    mode, case_dir, device = sys.argv[1], sys.argv[2], sys.argv[3]
    iterations, warmup = int(sys.argv[4]), int(sys.argv[5])
    rtol, atol = float(sys.argv[6]), float(sys.argv[7])
    mpspack_dir = sys.argv[8] if len(sys.argv) > 8 else ""
    no_core_files()
    import torch
    import tensors
    imported = time.perf_counter()
    with open(os.path.join(case_dir, "meta.json")) as f:
        meta = json.load(f)
    if device == "cuda":
        torch.backends.cudnn.allow_tf32 = os.environ.get("ZOO_TF32", "1") != "0"
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    inputs = [x.to(device) for x in tensors.load_inputs(case_dir, meta)]
    if mode == "capi":
        import capi_runner
        call, runner = capi_runner.runner(torch, case_dir, device, inputs)
    elif mode == "package":
        call, runner = package_runner(torch, case_dir, inputs)
    else:
        call, runner = eager_runner(torch, meta, device, inputs)
    loaded = time.perf_counter()
    with torch.inference_mode():
        first = [t.detach().cpu() for t in tensors.flat_outputs(call())]
        sync()
        print(FIRST_RESULT_MARK, flush=True)
        first_done = time.perf_counter()
        later_calls = guarded(lambda: run_later_calls(torch, case_dir, device, call, sync, rtol, atol))
        for _ in range(warmup):
            call()
            sync()
        times = []
        for _ in range(iterations):
            a = time.perf_counter()
            call()
            sync()
            times.append((time.perf_counter() - a) * 1e3)
        memory = guarded(lambda: memory_used(torch, device))
        if os.environ.get("ZOO_TORCH_PROFILE") == "1":
            print_op_profile(torch, call, sync, iterations)
    report = {
        "runner": runner, "torch": torch.__version__, "iterations": iterations, "warmup": warmup,
        "threads": torch.get_num_threads(),
        "latency_ms": {"p50": statistics.median(times), "min": min(times), "mean": statistics.fmean(times),
                       "p90": sorted(times)[int(0.9 * (len(times) - 1))]},
        "in_process_ms": {"import_torch": ms(STARTED, imported), "load": ms(imported, loaded),
                          "first_run": ms(loaded, first_done), "start_to_first_result": ms(STARTED, first_done)},
        "memory": memory,
    }
    report["vs_eager"] = guarded(lambda: tensors.compare_all(
        first, torch.load(os.path.join(case_dir, "expected.pt")), rtol, atol))
    if later_calls:
        report["vs_eager_later_calls"] = later_calls
    if mpspack_dir:
        report["vs_mpspack"] = guarded(lambda: tensors.compare_all(
            [tensors.load_mpspack_output(mpspack_dir, i, o["shape"]) for i, o in enumerate(meta["outputs"])],
            first, rtol, atol))
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
