#!/usr/bin/env python3
# Real models, packed by mpspack, checked and timed against torch on the machine that runs this (the device
# machine: torch, torchvision, timm and transformers installed; nothing is downloaded). For each selected
# (model, device):
#   1. compile, several at once (JOBS worker processes, compile_one.py): the model from models.py, torch eager's
#      outputs, torch.export.export, aoti_compile_and_package -> model.pt2;
#   2. then one row at a time, so that no measurement disturbs another: `mpspack build`, `mpspack run --expect`
#      against torch eager's outputs at the model's tolerance (models.tolerance), `mpspack run --bench`, and
#      torch's runtime on the same .pt2 in one fresh process (time_torch.py: the model library's C API on
#      libtorch's shim, capi_runner.py; torch eager where that fails, the row says which and why), each side's
#      first result timed from process start; with ZOO_TWO_CORE=1 the CPU rows are timed again on two cores
#      (taskset -c 0,1, OMP_NUM_THREADS=2, both sides).
# Writes OUT/zoo.json (every row) and OUT/zoo.md (the table), and prints the table last.
#
#   [MODELS=a,b|all|newops|fullsize] [DEVICES=cpu,cuda] python3 bench/zoo/zoo.py [MPSPACK (default build/bin/mpspack)]
#   python3 bench/zoo/zoo.py --list
# Environment (defaults): JOBS (6) compile workers; TIME_BUDGET_S (300) no compile starts after this many seconds;
# COMPILE_DEADLINE_S (TIME_BUDGET_S + 120) compiles still running then are stopped; TOTAL_BUDGET_S (540) no row is
# timed after this; ITERATIONS (50), WARMUP (5) timed and warm-up runs on both sides; ROUNDS (3) times each side
# is timed, alternating which goes first (mpspack first in the first round), the row's p50s the medians of the
# rounds' (the device machine's 16-core timings move by up to 1.6x between calls); ZOO_TWO_CORE (0);
# ZOO_TF32 (1; 0: CUDA references, torch's runs and mpspack's (MPSPACK_CUDNN_TF32=0) with TF32 convolutions
# off); TORCH_RUNNER (capi; package: torch's package loader, aoti_load_package, instead; eager: torch eager
# only); OUT (/tmp/zoo_out); WORK (/tmp/zoo_work) the
# models, rebuilt each run unless REUSE=1 (then a case compiled earlier in WORK is timed again without compiling).
import concurrent.futures
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402
import proc  # noqa: E402
import report  # noqa: E402
import tensors  # noqa: E402

DEFAULT_MODELS = "resnet18,convnext_tiny,audio_encoder,gpt2,llama,mlp_bf16"
SETTINGS_VARS = ("MODELS", "DEVICES", "JOBS", "TIME_BUDGET_S", "COMPILE_DEADLINE_S", "TOTAL_BUDGET_S", "ITERATIONS",
                 "WARMUP", "ROUNDS", "ZOO_TWO_CORE", "ZOO_TF32", "TORCH_RUNNER", "OUT", "WORK", "REUSE", "ZOO_CPU_THREADS",
                 "ZOO_CPU_DYNAMIC_THREADS")
STARTED = time.time()


def env_int(name, default):
    return int(os.environ.get(name) or default)


class Settings:
    def __init__(self, mpspack):
        self.mpspack = mpspack
        names = os.environ.get("MODELS") or DEFAULT_MODELS
        groups = models.groups()
        # "all": the zoo's own rows; the full-size ones (MODELS=fullsize) take a call of their own each few models,
        # and the architectures a new user tried (MODELS=archs) one call of their own.
        own_rows = [n for n, e in models.REGISTRY.items() if e.group not in ("fullsize", "archs")]
        self.models = own_rows if names == "all" else [
            m for n in names.split(",") if n.strip() for m in groups.get(n.strip(), [n.strip()])]
        self.devices = [d.strip() for d in (os.environ.get("DEVICES") or "cpu,cuda").split(",") if d.strip()]
        self.jobs = env_int("JOBS", 6)
        self.compile_budget_s = env_int("TIME_BUDGET_S", 300)
        self.compile_deadline_s = env_int("COMPILE_DEADLINE_S", self.compile_budget_s + 120)
        self.total_budget_s = env_int("TOTAL_BUDGET_S", 540)
        self.iterations = max(20, env_int("ITERATIONS", 50))
        self.warmup = env_int("WARMUP", 5)
        self.rounds = max(1, env_int("ROUNDS", 3))
        self.two_core = os.environ.get("ZOO_TWO_CORE", "0") == "1"
        self.tf32 = os.environ.get("ZOO_TF32", "1") != "0"
        self.torch_runner = os.environ.get("TORCH_RUNNER") or "capi"
        if self.torch_runner not in TORCH_MODE_ORDER:
            print(f"zoo.py: TORCH_RUNNER={self.torch_runner!r}: capi, package or eager", file=sys.stderr)
            raise SystemExit(2)
        self.out = os.environ.get("OUT") or "/tmp/zoo_out"
        self.work = os.environ.get("WORK") or "/tmp/zoo_work"
        self.reuse = os.environ.get("REUSE") == "1"


def elapsed():
    return time.time() - STARTED


def step_limit(s, default_s):
    """A step's time limit: its own, or less, so that the last row ends soon after TOTAL_BUDGET_S."""
    return max(15.0, min(default_s, s.total_budget_s + 30 - elapsed()))


def log(msg):
    print(f"[zoo {elapsed():6.1f} s] {msg}", flush=True)


def command_line():
    assigned = [f"{k}={shlex.quote(os.environ[k])}" for k in SETTINGS_VARS if os.environ.get(k)]
    return " ".join(assigned + ["python3"] + [shlex.quote(a) for a in sys.argv])


# --- the machine and the libraries mpspack's CUDA backend opens ---

def has_gpu():
    if not shutil.which("nvidia-smi"):
        return False, "no nvidia-smi"
    r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return (r.returncode == 0 and "GPU" in r.stdout), (r.stdout.strip().splitlines() or [r.stderr.strip()])[0]


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    ok, gpu = has_gpu()
    return f"{cpu}, {os.cpu_count()} cores" + (f"; {gpu}" if ok else "; no GPU")


def site_dirs():
    import site
    dirs = list(site.getsitepackages())
    try:
        dirs.append(site.getusersitepackages())
    except AttributeError:
        pass
    return [d for d in dirs if os.path.isdir(d)]


def nvidia_libraries():
    """The lib folders of the NVIDIA wheels torch installed, and where libcublas.so.13 and libcudnn.so.9 are."""
    folders, found = [], {}
    for root in site_dirs():
        for dirpath, _, files in os.walk(os.path.join(root, "nvidia")):
            if os.path.basename(dirpath) == "lib" and any(".so" in f for f in files):
                folders.append(dirpath)
            for f in files:
                if f in ("libcublas.so.13", "libcudnn.so.9"):
                    found.setdefault(f, os.path.join(dirpath, f))
    return folders, found


def in_ldconfig(soname):
    r = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True) if shutil.which("ldconfig") else None
    return bool(r) and f"{soname} " in r.stdout


def mpspack_env():
    """As tests/device/run.sh: torch's cuBLAS (and cuDNN) named for mpspack unless the system has its own."""
    env = dict(os.environ)
    folders, found = nvidia_libraries()
    if folders:
        env["LD_LIBRARY_PATH"] = ":".join(folders + [p for p in [env.get("LD_LIBRARY_PATH")] if p])
    for var, soname in (("MPSPACK_CUBLAS", "libcublas.so.13"), ("MPSPACK_CUDNN", "libcudnn.so.9")):
        if not env.get(var) and soname in found and not in_ldconfig(soname):
            env[var] = found[soname]
    return env


# --- rows ---

def new_row(model, device):
    entry = models.REGISTRY.get(model)
    return {"model": model, "device": device, "source": entry.source if entry else None,
            "dtype": entry.dtype if entry else None, "note": entry.note if entry else "", "errors": []}


def case_dir(s, row):
    return os.path.join(s.work, f"{row['device']}_{row['model']}")


def read_meta(folder):
    try:
        with open(os.path.join(folder, "meta.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def compile_order(rows):
    """The rows to compile, longest expected first (models.Entry.compile_limit_s), so that the last compile to
    end starts early; rows without a limit keep their order after them."""
    return sorted(rows, key=lambda row: -models.get(row["model"]).compile_limit_s)


def compile_timeout(s, row):
    """(seconds, why): what is left to COMPILE_DEADLINE_S, or less where the entry sets its own limit."""
    left = max(10.0, s.compile_deadline_s - elapsed())
    own = models.get(row["model"]).compile_limit_s
    if own and own < left:
        return float(own), f"its own limit (models.py compile_limit_s={own})"
    return left, f"COMPILE_DEADLINE_S={s.compile_deadline_s}"


def compile_case(s, row, timeout_s):
    try:
        return start_compile(s, row, timeout_s)
    except Exception as e:  # the zoo's own failure to start a worker is that row's reason
        return {"ok": False, "error": f"zoo.py: {type(e).__name__}: {e}"}, "not compiled"


def start_compile(s, row, timeout_s):
    folder = case_dir(s, row)
    if s.reuse and (read_meta(folder) or {}).get("ok"):
        return read_meta(folder), "reused"
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    env = dict(os.environ)
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(max(1, min(8, 2 * (os.cpu_count() or 2) // s.jobs))))
    env.setdefault("ZOO_WORKER_THREADS", str(max(1, (os.cpu_count() or 2) // s.jobs)))
    r = proc.run([sys.executable, os.path.join(HERE, "compile_one.py"), row["model"], row["device"], folder],
                 env=env, timeout_s=timeout_s, stdout_path=os.path.join(folder, "compile.log"))
    meta = read_meta(folder)
    if meta is None:
        return {"ok": False, "error": f"the compile worker wrote no meta.json: {r.why()}"}, "compiled"
    return meta, "compiled"


def compile_all(s, rows, gpu):
    """Compiles every row that can be, JOBS at a time; a row that cannot says why."""
    pending = []
    for row in rows:
        if row["source"] is None:
            row["errors"].append(f"no model {row['model']!r} in bench/zoo/models.py")
        elif row["device"] not in ("cpu", "cuda"):
            row["errors"].append(f"unknown device {row['device']!r} (cpu or cuda)")
        elif row["device"] not in models.get(row["model"]).devices:
            row.setdefault("notes", []).append(
                f"skipped: {row['model']} runs on {', '.join(models.get(row['model']).devices)} only")
        elif row["device"] == "cuda" and not gpu[0]:
            row["errors"].append(f"not run: no usable NVIDIA GPU ({gpu[1]})")
        else:
            pending.append(row)
    pending = compile_order(pending)
    running = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, s.jobs)) as pool:
        while pending or running:
            while pending and len(running) < s.jobs:
                if elapsed() > s.compile_budget_s:
                    for row in pending:
                        row["errors"].append(f"not compiled: TIME_BUDGET_S={s.compile_budget_s} passed first")
                    pending = []
                    break
                row = pending.pop(0)
                timeout_s, why = compile_timeout(s, row)
                running[pool.submit(compile_case, s, row, timeout_s)] = (row, why)
            if not running:
                break
            done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                row, why = running.pop(future)
                meta, how = future.result()
                row["compiled"] = bool(meta.get("ok"))
                for key in ("export_s", "compile_s", "pt2_bytes", "versions", "tf32", "cpu_threads_baked"):
                    if key in meta:
                        row[key] = meta[key]
                if not meta.get("ok"):
                    stopped = " (the limit: " + why + ")" if "did not finish within" in meta.get("error", "") else ""
                    row["errors"].append("torch could not compile it: " + meta.get("error", "?") + stopped)
                log(f"{how} {row['model']} {row['device']}: " +
                    (f"export {meta.get('export_s')} s, compile {meta.get('compile_s')} s" if meta.get("ok")
                     else row["errors"][-1][:300]))


def mpspack_cmd(s, row, meta, *extra, inputs=None):
    return tensors.run_command(s.mpspack, case_dir(s, row), row["device"], inputs or meta["inputs"], *extra)


def check(s, row, meta, env):
    """mpspack run --expect torch eager's outputs; writes mpspack's outputs for torch's side to compare."""
    folder = case_dir(s, row)
    expects = tensors.run_args("--expect", folder, meta["outputs"])
    out_dir = os.path.join(folder, "mpspack_out")
    cmd = mpspack_cmd(s, row, meta, *expects, "--rtol", str(row["rtol"]), "--atol", str(row["atol"]),
                      "--output", out_dir, "--json")
    row["commands"]["check"] = shlex.join(cmd)
    r = proc.run(cmd, env=env, timeout_s=step_limit(s, 180))
    row["mpspack_run_spawn_to_exit_ms"] = round(r.wall_ms, 1)
    if r.rc not in (0, 1):
        row["errors"].append("mpspack run: " + r.why())
        return ""
    try:
        j = json.loads(r.stdout)
        outs = j["outputs"]
        row["mpspack_timings_ms"] = j.get("timings")
    except (ValueError, KeyError) as e:
        row["errors"].append(f"mpspack run --json gave no report ({e})")
        return ""
    row["match"] = r.rc == 0 and all(o.get("match") for o in outs)
    row["mismatches"] = sum(o.get("mismatches") or 0 for o in outs)
    row["max_abs"] = max((o.get("max_abs_error") or 0.0) for o in outs) if outs else 0.0
    row["max_rel"] = max((o.get("max_rel_error") or 0.0) for o in outs) if outs else 0.0
    problems = [o["problem"] for o in outs if o.get("problem")]
    if problems:
        row["errors"].append("mpspack run: " + "; ".join(problems)[:300])
    if meta.get("calls"):
        check_later_calls(s, row, meta, env)
    return out_dir


def check_later_calls(s, row, meta, env):
    """The entry's later input sets (models.Entry.calls), each in an `mpspack run` process of its own (run takes
    one input set per process), against what a freshly loaded model gives for that set alone: for a "shapes" entry
    that is the whole check; for a "sequence" entry the state carried between calls is not checked by mpspack
    (diverge.py runs torch's runtime on the sequence). The row's match and errors cover every call."""
    folder = case_dir(s, row)
    row["calls"] = []
    for k, call in enumerate(meta["calls"], start=1):
        expects = tensors.run_args("--expect", folder, call["outputs"])
        cmd = mpspack_cmd(s, row, meta, *expects, "--rtol", str(row["rtol"]), "--atol", str(row["atol"]), "--json",
                          inputs=call["inputs"])
        r = proc.run(cmd, env=env, timeout_s=step_limit(s, 180))
        got = {"call": k + 1, "shapes": [i["shape"] for i in call["inputs"]], "command": shlex.join(cmd)}
        try:
            outs = json.loads(r.stdout)["outputs"] if r.rc in (0, 1) else None
        except (ValueError, KeyError):
            outs = None
        if outs is None:
            row["errors"].append(f"call {k + 1}: mpspack run: " + r.why())
            row["match"] = False
        else:
            got.update(match=r.rc == 0 and all(o.get("match") for o in outs),
                       max_abs=max((o.get("max_abs_error") or 0.0) for o in outs) if outs else 0.0,
                       max_rel=max((o.get("max_rel_error") or 0.0) for o in outs) if outs else 0.0)
            row["match"] = bool(row.get("match")) and got["match"]
            row["mismatches"] = (row.get("mismatches") or 0) + sum(o.get("mismatches") or 0 for o in outs)
            row["max_abs"] = max(row.get("max_abs") or 0.0, got["max_abs"])
            row["max_rel"] = max(row.get("max_rel") or 0.0, got["max_rel"])
            if not got["match"]:
                row["errors"].append(f"call {k + 1} (shapes {got['shapes']}): out of tolerance, "
                                     f"max abs {got['max_abs']:.3g}")
        row["calls"].append(got)
    what = ("a fresh process each, so against eager's fresh model: the cache carried between calls is not checked "
            "by mpspack run" if meta.get("calls_kind") == "sequence" else "each shape in its own process")
    row.setdefault("notes", []).append(f"{len(meta['calls']) + 1} calls checked ({what}); timing and torch's side: call 1")


def bench_memory(report):
    """What mpspack's bench report says of the process's memory at the end of its timed runs, in time_torch.py's
    names: peak host RSS; on a GPU the device's used memory (cudaMemGetInfo), the shim's pool peak (the model's
    intermediates and outputs) and the weights mpspack uploaded (outside that pool)."""
    m = {"peak_rss_bytes": report.get("peak_rss_bytes")}
    device = report.get("device")
    if device:
        m.update(device_used_bytes=device.get("memory_used_bytes"), device_total_bytes=device.get("memory_total_bytes"),
                 pool_peak_bytes=device.get("pool_peak_bytes"),
                 weights_uploaded_bytes=(device.get("weights_upload") or {}).get("bytes", 0))
    return m


def bench(s, row, meta, env, prefix=()):
    """mpspack run --bench: (p50 ms, time to first result ms, command, error, memory (bench_memory))."""
    cmd = list(prefix) + mpspack_cmd(s, row, meta, "--bench", "--warmup", str(s.warmup),
                                     "--iterations", str(s.iterations), "--format", "json")
    r = proc.run(cmd, env=env, timeout_s=step_limit(s, 300))
    if r.rc != 0:
        return None, None, shlex.join(cmd), "mpspack run --bench: " + r.why(), None
    try:
        j = json.loads(r.stdout)
        return j["latency_ms"]["p50"], j.get("time_to_first_result_ms"), shlex.join(cmd), None, bench_memory(j)
    except (ValueError, KeyError, AttributeError) as e:
        return None, None, shlex.join(cmd), f"mpspack run --bench gave no report ({e})", None


def last_json_line(text):
    for line in reversed(text.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


# Each torch-side mode: what the row calls it, how long its process may take to its first result (import torch,
# load, one run) before it counts as hung, and how many seconds more per GB of package: the runners' limit keeps a
# crash or hang to about 15 s a small row, and a full-size package is first extracted from its zip (the runners
# copy the library, 2-2.5 GB for the Llama rows) and its weights copied into the model; eager rebuilds the model
# first, drawing every random weight again.
TORCH_MODES = {"capi": ("the C-API runner", 15.0, 10.0), "package": ("aoti_load_package", 15.0, 10.0),
               "eager": ("eager", 60.0, 30.0)}
TORCH_MODE_ORDER = {"capi": ["capi", "eager"], "package": ["package", "eager"], "eager": ["eager"]}


def first_result_limit(mode, pt2_bytes):
    """Seconds a torch-side process of MODE may take to its first result, for a package of PT2_BYTES."""
    _, base_s, per_gb_s = TORCH_MODES[mode]
    return base_s + per_gb_s * (pt2_bytes or 0) / 1e9


def torch_side(s, row, mpspack_out, modes, env=None, prefix=()):
    """Torch's side in a fresh process per attempt, first result and steady state in the same process: the first
    mode that works, its report and mode, and why each earlier mode failed."""
    failures, failed_attempts = [], []
    for mode in modes:
        what = TORCH_MODES[mode][0]
        first_limit_s = first_result_limit(mode, row.get("pt2_bytes"))
        cmd = list(prefix) + [sys.executable, os.path.join(HERE, "time_torch.py"), mode, case_dir(s, row),
                              row["device"], str(s.iterations), str(s.warmup), str(row["rtol"]), str(row["atol"])]
        cmd += [mpspack_out] if mpspack_out else []
        r = proc.run(cmd, env=env, timeout_s=step_limit(s, 240), mark="ZOO_FIRST_RESULT",
                     mark_limit_s=first_limit_s)
        rep = last_json_line(r.stdout)
        if r.rc == 0 and rep:
            rep.update(mode=mode, command=shlex.join(cmd), first_result_ms=r.mark_ms,
                       p50_ms=rep["latency_ms"]["p50"])
            if failures:
                rep["runner"] += " (" + "; ".join(failures) + ")"
                rep["failed_attempts"] = failed_attempts
            return rep
        failures.append(f"{what} failed: {r.why()}"[:300])
        failed_attempts.append({"mode": mode, "command": shlex.join(cmd), "why": r.why(),
                                "spawn_to_end_ms": round(r.wall_ms, 1), "stderr_tail": r.stderr_tail[-2000:]})
    return {"runner": "none", "errors": failures, "failed_attempts": failed_attempts}


def time_row(s, row, env):
    meta = read_meta(case_dir(s, row))
    entry = models.get(row["model"])
    scales = [o.get("max_abs") for o in meta["outputs"] if o.get("max_abs")]
    row["rtol"], row["atol"], row["tolerance_note"] = models.tolerance(entry, row["device"], s.tf32,
                                                                       max(scales) if scales else None)
    row["commands"] = {}
    folder = case_dir(s, row)
    build = [s.mpspack, "-q", "build", os.path.join(folder, "model.pt2"), "-o", os.path.join(folder, "model.mpk")]
    row["commands"]["build"] = shlex.join(build)
    r = proc.run(build, env=env, timeout_s=step_limit(s, 120))
    row["mpspack_build_ms"] = round(r.wall_ms, 1)
    mpspack_out = ""
    if r.rc != 0:
        row["errors"].append("mpspack build: " + r.why())
    else:
        mpspack_out = check(s, row, meta, env)
    if mpspack_out:
        p50, first, row["commands"]["bench"], err, row["mpspack_memory"] = bench(s, row, meta, env)
        row["mpspack_p50_ms"], row["mpspack_first_result_ms"] = p50, first
        if err:
            row["errors"].append(err)
    row["torch"] = torch_side(s, row, mpspack_out, TORCH_MODE_ORDER[s.torch_runner])
    row["errors"] += row["torch"].get("errors", [])
    later = row["torch"].get("vs_eager_later_calls")
    if later:
        row.setdefault("notes", []).append(
            f"torch's side, calls 2-{len(later) + 1} in order on one model against eager's: " +
            ("match" if all(c.get("ok") for call in later for c in (call if isinstance(call, list) else [call]))
             else f"DIFFER {later}"[:200]))
    if s.rounds > 1 and row.get("mpspack_p50_ms") is not None and row["torch"].get("p50_ms") is not None:
        more_rounds(s, row, meta, env)
    if s.two_core and row["device"] == "cpu":
        time_two_cores(s, row, meta, env)


def more_rounds(s, row, meta, env):
    """Rounds 2..ROUNDS of the steady state, torch first in the even ones; the row's p50s become the medians of
    every round's, each round's kept in row["rounds"]."""
    rounds = [{"mpspack_p50_ms": row["mpspack_p50_ms"], "torch_p50_ms": row["torch"]["p50_ms"]}]
    for r in range(1, s.rounds):
        got = {}
        for side in (("torch", "mpspack") if r % 2 else ("mpspack", "torch")):
            if side == "mpspack":
                got["mpspack_p50_ms"], _, _, err, _ = bench(s, row, meta, env)
            else:
                rep = torch_side(s, row, "", [row["torch"]["mode"]])
                got["torch_p50_ms"], err = rep.get("p50_ms"), "; ".join(rep.get("errors", [])) or None
            if err:
                row["errors"].append(f"round {r + 1}: {err}"[:300])
        if None in got.values():
            break
        rounds.append(got)
    row["rounds"] = rounds
    row["mpspack_p50_ms"] = statistics.median(x["mpspack_p50_ms"] for x in rounds)
    row["torch"]["p50_ms"] = statistics.median(x["torch_p50_ms"] for x in rounds)


def time_two_cores(s, row, meta, env):
    """The CPU row again on cores 0 and 1, both sides with OMP_NUM_THREADS=2. The package keeps the thread count
    AOTInductor baked into its loops (row's cpu_threads_baked)."""
    prefix = ["taskset", "-c", "0,1"] if shutil.which("taskset") else []
    if not prefix:
        row["errors"].append("2 cores: no taskset on this machine")
        return
    two = {}
    env2 = dict(env, OMP_NUM_THREADS="2")
    if row.get("mpspack_p50_ms") is not None:
        two["mpspack_p50_ms"], two["mpspack_first_result_ms"], two["mpspack_command"], err, _ = \
            bench(s, row, meta, env2, prefix)
        two["mpspack_command"] = "OMP_NUM_THREADS=2 " + two["mpspack_command"]
        if err:
            row["errors"].append("2 cores: " + err)
    mode = row["torch"].get("mode")
    if mode:
        rep = torch_side(s, row, "", [mode], env=dict(os.environ, OMP_NUM_THREADS="2"), prefix=prefix)
        two["torch_p50_ms"], two["torch_first_result_ms"] = rep.get("p50_ms"), rep.get("first_result_ms")
        two["torch_command"] = "OMP_NUM_THREADS=2 " + rep.get("command", "")
        row["errors"] += ["2 cores: " + e for e in rep.get("errors", [])]
    row["two_core"] = two


def header(s):
    return {"command": command_line(), "machine": machine(), "versions": {},
            "mpspack_version": subprocess.run([s.mpspack, "--version"], capture_output=True, text=True).stdout.strip(),
            "iterations": s.iterations, "warmup": s.warmup, "rounds": s.rounds, "tf32": s.tf32, "two_core": s.two_core}


def main():
    if sys.argv[1:] == ["--list"]:
        for e in models.REGISTRY.values():
            only = "" if tuple(e.devices) == ("cpu", "cuda") else f"[{', '.join(e.devices)} only] "
            print(f"{e.name:30} {e.source:12} {e.dtype:5} {'conv' if e.conv else '':5} {only}{e.note}")
        for group, names in models.groups().items():
            print(f"MODELS={group}: {','.join(names)}")
        return 0
    s = Settings(sys.argv[1] if len(sys.argv) > 1 else "build/bin/mpspack")
    if not (os.path.isfile(s.mpspack) and os.access(s.mpspack, os.X_OK)):
        print(f"zoo.py: {s.mpspack}: no mpspack executable there", file=sys.stderr)
        return 2
    s.mpspack = os.path.abspath(s.mpspack)
    os.makedirs(s.work, exist_ok=True)
    rows = [new_row(m, d) for m in s.models for d in s.devices]
    head = header(s)

    def stop(signum, _frame):
        proc.end_all()
        report.write(s.out, head, rows)
        log(f"stopped by signal {signum}; what was measured is in {s.out}")
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log(f"{len(rows)} rows: models {','.join(s.models)}; devices {','.join(s.devices)}; {s.jobs} compile jobs")
    gpu = has_gpu() if "cuda" in s.devices else (False, "")
    compile_all(s, rows, gpu)
    for row in rows:
        head["versions"].update(row.get("versions") or {})
    report.write(s.out, head, rows)
    env = mpspack_env()
    if not s.tf32:  # both sides without TF32: mpspack's float32 convolutions on the GPU as well
        env["MPSPACK_CUDNN_TF32"] = "0"
    log("mpspack env: " + ", ".join(f"{k}={env[k]}" for k in ("MPSPACK_CUBLAS", "MPSPACK_CUDNN", "MPSPACK_CUDNN_TF32")
                                    if k in env))
    for row in rows:
        if not row.get("compiled"):
            continue
        if elapsed() > s.total_budget_s:
            row["errors"].append(f"not timed: TOTAL_BUDGET_S={s.total_budget_s} passed first")
            continue
        try:
            time_row(s, row, env)
        except Exception as e:  # a row that breaks the zoo's own code is still a row, with the reason
            row["errors"].append(f"zoo.py: {type(e).__name__}: {e}"[:300])
        # Every torch-side process extracts the package's library again; a full-size one's copy is 0.4-2.5 GB.
        shutil.rmtree(os.path.join(case_dir(s, row), "torch_capi"), ignore_errors=True)
        log(f"timed {row['model']} {row['device']}: match {row.get('match')}, p50 mpspack "
            f"{report.ms(row.get('mpspack_p50_ms'))} ms, torch {report.ms(row.get('torch', {}).get('p50_ms'))} ms")
        report.write(s.out, head, rows)
    text = report.write(s.out, head, rows)
    print(f"\nwritten: {os.path.join(s.out, 'zoo.json')}, {os.path.join(s.out, 'zoo.md')}\n")
    print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
