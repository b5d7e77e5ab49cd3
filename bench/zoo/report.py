# bench/zoo/zoo.py's results: every row as JSON (zoo.json) and one markdown table (zoo.md) under OUT, both
# rewritten after each row so that a run stopped early still leaves what it measured.
import json
import os
import statistics

COLUMNS = ("model", "device", "matches torch eager: max abs / rel error (rtol, atol)",
           "mpspack vs torch's runner: max abs", "p50 ms mpspack", "p50 ms torch", "mpspack / torch",
           "first result ms mpspack / torch", "peak RSS MiB mpspack / torch",
           "GPU MiB mpspack / torch: process used (allocator peak)", "2 cores: p50 ms mpspack / torch (ratio)",
           "torch side", "notes")


def ms(v):
    if v is None:
        return "–"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def times(r):
    return "–" if r is None else (f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x")


# A miss says how far torch's own runtime on the same package is from eager where it misses too: deep bf16 models
# part from eager by rounding alone, and a row as far off as torch's runtime is not a wrong kernel.
def _match(row):
    if row.get("match") is None:
        return "not run"
    verdict = "yes" if row["match"] else f"NO ({row.get('mismatches', '?')} elements)"
    cell = f"{verdict}: {row['max_abs']:.2g} / {row['max_rel']:.2g} ({row['rtol']:g}, {row['atol']:g})"
    theirs = row.get("torch", {}).get("vs_eager") or []
    if not row["match"] and theirs and not all(e.get("ok") for e in theirs) and all("max_abs" in e for e in theirs):
        cell += f"; torch's runtime misses too: {max(e['max_abs'] for e in theirs):.2g}"
    return cell


def _vs_runner(row):
    errs = row.get("torch", {}).get("vs_mpspack")
    if not errs:
        return "–"
    if any("problem" in e for e in errs):
        return "; ".join(e.get("problem", "") for e in errs)[:80]
    return f"{max(e['max_abs'] for e in errs):.2g}"


def mib(v):
    return "–" if v is None else f"{v / (1 << 20):.0f}"


def _memory(row):
    """Each side's memory dict (zoo.bench_memory, time_torch.memory_used), or {} where it was not read."""
    theirs = row.get("torch", {}).get("memory")
    return row.get("mpspack_memory") or {}, theirs if isinstance(theirs, dict) else {}


def _rss(row):
    ours, theirs = _memory(row)
    if not ours and not theirs:
        return "–"
    return f"{mib(ours.get('peak_rss_bytes'))} / {mib(theirs.get('peak_rss_bytes'))}"


# The GPU's used memory by the end of the timed runs (cudaMemGetInfo: total - free) in each side's own process:
# the same reading on both sides, CUDA context, libraries and allocator reserve included. In brackets, the peak of
# each side's allocator for the model's intermediates and outputs: mpspack's pool, torch's caching allocator
# (neither holds the weights' block, which each side allocates apart).
def _gpu(row):
    ours, theirs = _memory(row)
    if "device_used_bytes" not in ours and "device_used_bytes" not in theirs:
        return "–"
    return (f"{mib(ours.get('device_used_bytes'))} / {mib(theirs.get('device_used_bytes'))} "
            f"({mib(ours.get('pool_peak_bytes'))} / {mib(theirs.get('max_allocated_bytes'))})")


def _two_core(row):
    two = row.get("two_core")
    if not two:
        return "–"
    r = ratio(two.get("mpspack_p50_ms"), two.get("torch_p50_ms"))
    return f"{ms(two.get('mpspack_p50_ms'))} / {ms(two.get('torch_p50_ms'))}" + (f" ({times(r)})" if r else "")


# The ratio of the sides' medians, then the rounds' own ratios: their range and their median. Each round times
# both sides back to back, so a round's ratio is free of what moves the machine between rounds (up to 1.5x there),
# which the ratio of two medians can mix: rounds of 0.84x, 0.85x and 1.25x have given medians 1.25x apart.
def _ratio(row, r):
    rounds = row.get("rounds") or []
    each = [ratio(x["mpspack_p50_ms"], x["torch_p50_ms"]) for x in rounds]
    if len(each) < 2:
        return times(r)
    return (f"{times(r)} (rounds {times(min(each))}-{times(max(each))}, "
            f"their median {times(statistics.median(each))})")


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def table_row(row):
    torch_side = row.get("torch", {})
    r = ratio(row.get("mpspack_p50_ms"), torch_side.get("p50_ms"))
    notes = ["TF32 tolerance: torch convolves in TF32 by default"] if "TF32" in row.get("tolerance_note", "") else []
    if row.get("cpu_threads_baked") is not None:
        notes.append(f"package loops: {row['cpu_threads_baked']} threads")
    notes += row.get("notes", [])
    notes += [e[:220] for e in row.get("errors", [])]
    cells = (row["model"], row["device"], _match(row), _vs_runner(row), ms(row.get("mpspack_p50_ms")),
             ms(torch_side.get("p50_ms")), _ratio(row, r),
             f"{ms(row.get('mpspack_first_result_ms'))} / {ms(torch_side.get('first_result_ms'))}",
             _rss(row), _gpu(row), _two_core(row), torch_side.get("runner", "–"), "; ".join(notes))
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def markdown(header, rows):
    lines = [f"Command: `{header['command']}`", "",
             f"Machine: {header.get('machine', '?')}; {header.get('versions', '')}", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += [table_row(r) for r in rows]
    lines += ["", "p50: median of the timed runs (inputs already on the device, a device sync after each run); with "
              "several rounds, the median of the rounds' p50s, each side timed once a round, which side goes first "
              "alternating; the ratio is that of the two medians, then the range and the median of the rounds' own "
              "ratios. "
              "First result: mpspack's `time_to_first_result_ms` (from its process start); torch's side from "
              "spawning its process to its first outputs on the host. Ratio below 1: mpspack faster. "
              "Memory, each side's process by the end of its first round's timed runs: peak host RSS (VmHWM); "
              "on CUDA the GPU's used memory (cudaMemGetInfo, the same reading on both sides: CUDA context, "
              "libraries and allocator reserve included) and, in brackets, the peak of the allocator that holds "
              "the model's intermediates and outputs (mpspack's pool, torch's caching allocator; the weights' "
              "block is apart on both)."]
    lines += commands(rows)
    return "\n".join(lines) + "\n"


def commands(rows):
    """Each timed row's two commands (the first round's), as zoo.json keeps them."""
    out = []
    for row in rows:
        ours, theirs = row.get("commands", {}).get("bench"), row.get("torch", {}).get("command")
        if ours or theirs:
            out += [f"- {row['model']} {row['device']}: mpspack `{ours or '–'}`; torch `{theirs or '–'}`"]
    return ["", "Commands (each row's first round):", ""] + out if out else []


def write(out_dir, header, rows):
    os.makedirs(out_dir, exist_ok=True)
    tmp = os.path.join(out_dir, "zoo.json.tmp")
    with open(tmp, "w") as f:
        json.dump({"header": header, "rows": rows}, f, indent=1)
    os.replace(tmp, os.path.join(out_dir, "zoo.json"))
    text = markdown(header, rows)
    with open(os.path.join(out_dir, "zoo.md"), "w") as f:
        f.write(text)
    return text
