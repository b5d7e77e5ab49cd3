#!/usr/bin/env python3
# Two builds of bench/attention_cpu.cpp side by side, e.g. a change against the commit before it: in each round both
# run every shape, which goes first alternating; per shape the median ms of each and the median, lowest and highest
# of the rounds' ratios (the second build over the first). OMP_NUM_THREADS sets both builds' threads.
#   python3 bench/attention_builds.py BEFORE/attention_cpu AFTER/attention_cpu [REPS=30] [ROUNDS=5]
import statistics
import subprocess
import sys


def shapes_ms(binary, reps):
    out = subprocess.run([binary, str(reps)], capture_output=True, text=True, check=True).stdout
    rows = [line.split("|") for line in out.splitlines() if line.startswith("| [")]
    return [r[1].strip() for r in rows], [float(r[2]) for r in rows]


def main():
    if len(sys.argv) < 3:
        print("usage: attention_builds.py BEFORE AFTER [REPS] [ROUNDS]", file=sys.stderr)
        return 2
    builds = sys.argv[1:3]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    ms = {b: [] for b in builds}
    names = []
    for r in range(rounds):
        for b in builds if r % 2 == 0 else builds[::-1]:
            names, times = shapes_ms(b, reps)
            ms[b].append(times)
    before, after = (ms[b] for b in builds)
    print(f"{rounds} rounds of {reps} calls; ms: median over rounds; ratio: after / before, median (lowest-highest)\n")
    print("| attention | before ms | after ms | ratio |\n|---|---|---|---|")
    for i, name in enumerate(names):
        ratios = [a[i] / b[i] for a, b in zip(after, before)]
        print(f"| {name} | {statistics.median(t[i] for t in before):.3f} | {statistics.median(t[i] for t in after):.3f}"
              f" | {statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
