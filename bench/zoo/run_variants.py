# mpspack alone on a case zoo.py compiled (its WORK), in variants side by side: each variant some extra `run`
# options and environment settings, the variants alternating within each round. Prints each variant's p50 per
# round and the median over rounds of its ratio to the first variant's p50 in the same round.
#   python3 bench/zoo/run_variants.py MPSPACK CASE LABEL:SETTINGS [LABEL:SETTINGS ...]   (ROUNDS=3, ITERATIONS=20)
#   e.g. cuda_gpt2_124m_decode plain: graph:--cuda-graph      cpu_gpt2_124m_decode split: one:MPSPACK_CPU_GEMV=blas
# SETTINGS: space-separated; NAME=VALUE with an upper-case NAME is set in the environment, anything else is passed
# to `mpspack run` after --bench.
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tensors  # noqa: E402


def parse(variant):
    label, _, settings = variant.partition(":")
    env, args = {}, []
    for token in settings.split():
        name, eq, value = token.partition("=")
        if eq and name.isupper():
            env[name] = value
        else:
            args.append(token)
    return label, env, args


def p50(mpspack, folder, device, meta, env, args, iterations):
    cmd = tensors.run_command(mpspack, folder, device, meta["inputs"], "--bench", "--warmup", "5", "--iterations",
                              iterations, "--format", "json", *args)
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env))
    if done.returncode != 0:
        sys.exit(f"run_variants: {' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)["latency_ms"]["p50"]


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: run_variants.py MPSPACK CASE LABEL:SETTINGS [LABEL:SETTINGS ...]")
    mpspack, case, variants = sys.argv[1], sys.argv[2], [parse(v) for v in sys.argv[3:]]
    folder = os.path.join(os.environ.get("WORK", "/tmp/zoo_work"), case)
    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    rounds, iterations = int(os.environ.get("ROUNDS", "3")), os.environ.get("ITERATIONS", "20")
    table = {label: [] for label, _, _ in variants}
    for r in range(rounds):
        order = variants if r % 2 == 0 else variants[::-1]
        for label, env, args in order:
            table[label].append(p50(mpspack, folder, case.split("_", 1)[0], meta, env, args, iterations))
    first = variants[0][0]
    print(f"{case}: p50 ms per round, {iterations} runs each; ratio: median over rounds against {first}")
    for label, values in table.items():
        ratio = statistics.median(v / b for v, b in zip(values, table[first]))
        print(f"  {label:12s} {' '.join(f'{v:9.3f}' for v in values)}   {ratio:.3f}x")


if __name__ == "__main__":
    main()
