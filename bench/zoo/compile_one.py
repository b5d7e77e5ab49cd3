# One (model, device) of the zoo, in a process of its own (bench/zoo/zoo.py runs several at once): builds the
# model (bench/zoo/models.py, seeded), computes torch eager's outputs, exports it (torch.export.export) and
# compiles and packages it with AOTInductor the way torch documents (aoti_compile_and_package, default options).
# Writes into CASE_DIR:
#   model.pt2                                  the package
#   input<i>.bin, expected<j>.bin              raw little-endian tensors for `mpspack run --input/--expect`
#   inputs.pt, expected.pt                     the same tensors for torch's side (time_torch.py)
#   meta.json                                  dtypes and shapes, seconds per step, versions; or the step that
#                                              failed and why (the exit status is then 1)
#   call<k>_input<i>.bin, call<k>_expected<j>.bin, calls.pt
#                                              for an entry with several input sets (models.Entry.calls): set k
#                                              (k >= 1) and what a freshly loaded model gives for it alone;
#                                              calls.pt: every set, eager's outputs of the sets run in order on
#                                              one model, and the fresh ones
#   python3 compile_one.py MODEL cpu|cuda CASE_DIR
# Environment: ZOO_CPU_THREADS (default: torch's default thread count) is the thread count AOTInductor bakes
# into a CPU package's OpenMP loops (inductor's cpp.threads; left alone it would take this worker's own, smaller,
# torch thread count); ZOO_CPU_DYNAMIC_THREADS=1 makes those loops take OMP_NUM_THREADS at run time instead
# (inductor's cpp.dynamic_threads); ZOO_WORKER_THREADS (default 2) is this process's own torch thread count;
# ZOO_TF32=0 computes CUDA references with TF32 convolutions off (torch's default is on).
import copy
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def set_cudnn_tf32(torch, on):
    # The legacy setter alone: it sets cuDNN's convolution and RNN precision together, which the newer
    # fp32_precision API would not, and torch refuses to read a mix of the two.
    torch.backends.cudnn.allow_tf32 = on


def library_versions(source):
    import torch
    versions = {"torch": torch.__version__}
    if source in ("torchvision", "timm", "transformers"):
        module = __import__(source)
        versions[source] = getattr(module, "__version__", "?")
    return versions


def make_case(name, device, case_dir, meta):
    import torch
    import torch._inductor.config as inductor_config

    import models
    import tensors

    entry = models.get(name)
    meta["step"] = "set-up"
    # What a user compiling in a plain process gets: torch's default thread count, read before this worker lowers
    # its own.
    inductor_config.cpp.threads = int(os.environ.get("ZOO_CPU_THREADS") or torch.get_num_threads())
    torch.set_num_threads(int(os.environ.get("ZOO_WORKER_THREADS", "2")))
    meta["cpu_threads_baked"] = inductor_config.cpp.threads if device == "cpu" else None
    if os.environ.get("ZOO_CPU_DYNAMIC_THREADS") == "1":
        if not hasattr(inductor_config.cpp, "dynamic_threads"):
            raise RuntimeError("ZOO_CPU_DYNAMIC_THREADS=1, but this torch has no inductor cpp.dynamic_threads")
        inductor_config.cpp.dynamic_threads = True
        meta["cpu_threads_baked"] = "dynamic (OMP_NUM_THREADS at run time)" if device == "cpu" else None
    tf32 = os.environ.get("ZOO_TF32", "1") != "0"
    if device == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device")
        set_cudnn_tf32(torch, tf32)
    meta["tf32"] = tf32 if device == "cuda" else None
    meta["versions"] = library_versions(entry.source)

    meta["step"] = "build"
    torch.manual_seed(models.SEED)
    module, built_inputs = entry.build()
    module = models.place(module, device)
    sets = [tuple(x.to(device) for x in s) for s in models.input_sets(entry, built_inputs)]
    # A stateful model is exported as it was before any call: eager's calls below change its buffers.
    pristine = copy.deepcopy(module) if entry.calls == "sequence" or entry.stateful else module

    meta["step"] = "eager"
    with torch.no_grad():
        outputs = [tensors.flat_outputs(module(*s)) for s in sets]
        # What a freshly loaded model gives for each later set alone, as one `mpspack run` process can check it.
        fresh = [tensors.flat_outputs(copy.deepcopy(pristine)(*s)) if entry.calls == "sequence" else outputs[k]
                 for k, s in enumerate(sets)]
    if device == "cuda":
        torch.cuda.synchronize()

    meta["step"] = "save"
    meta["inputs"] = tensors.save_all(sets[0], case_dir, "input")
    meta["outputs"] = tensors.save_all(outputs[0], case_dir, "expected")
    torch.save([x.detach().cpu() for x in sets[0]], os.path.join(case_dir, "inputs.pt"))
    torch.save([y.detach().cpu() for y in outputs[0]], os.path.join(case_dir, "expected.pt"))
    if entry.calls:
        meta["calls_kind"] = entry.calls
        meta["calls"] = [{"inputs": tensors.save_all(sets[k], case_dir, f"call{k}_input"),
                          "outputs": tensors.save_all(fresh[k], case_dir, f"call{k}_expected")}
                         for k in range(1, len(sets))]
        torch.save({"kind": entry.calls, "inputs": [[x.detach().cpu() for x in s] for s in sets],
                    "outputs": [[y.detach().cpu() for y in o] for o in outputs],
                    "fresh_outputs": [[y.detach().cpu() for y in o] for o in fresh]},
                   os.path.join(case_dir, "calls.pt"))

    meta["step"] = "export"
    t = time.time()
    # Dynamic dims are exported from the last set: an example dim of size 1 would be specialised to 1.
    example = sets[-1] if entry.calls == "shapes" else sets[0]
    dynamic = entry.dynamic() if entry.dynamic else None
    with torch.no_grad():
        program = torch.export.export(pristine, example, dynamic_shapes=dynamic)
    meta["export_s"] = round(time.time() - t, 1)

    meta["step"] = "compile"
    t = time.time()
    package = os.path.join(case_dir, "model.pt2")
    with torch.no_grad():
        torch._inductor.aoti_compile_and_package(program, package_path=package)
    meta["compile_s"] = round(time.time() - t, 1)
    meta["pt2_bytes"] = os.path.getsize(package)
    meta["step"] = "done"


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("cpu", "cuda"):
        print("usage: compile_one.py MODEL cpu|cuda CASE_DIR", file=sys.stderr)
        return 2
    name, device, case_dir = sys.argv[1:4]
    os.makedirs(case_dir, exist_ok=True)
    meta = {"model": name, "device": device, "ok": False, "step": "start"}
    start = time.time()
    try:
        make_case(name, device, case_dir, meta)
        meta["ok"] = True
    except Exception as e:  # every failure becomes the row's reason, never a crash of the zoo
        meta["error"] = f"{meta['step']}: {type(e).__name__}: {e}"[:1500]
        meta["traceback"] = traceback.format_exc()[-3000:]
        traceback.print_exc()
    meta["wall_s"] = round(time.time() - start, 1)
    with open(os.path.join(case_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"compile_one: {name} {device}: {'ok' if meta['ok'] else meta['error']}", flush=True)
    return 0 if meta["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
