# Where a zoo row's time goes on each side, one after the other on the same package: mpspack's shim functions
# (MPSPACK_PROFILE_SHIM=1 mpspack run --bench) and the aten ops torch's shim calls for the same library
# (time_torch.py capi with ZOO_TORCH_PROFILE=1, torch.profiler). Run after zoo.py compiled the cases (its WORK).
#   python3 bench/zoo/profile_ops.py MPSPACK cpu_convnext_tiny [cpu_bert ...]     (ITERATIONS, default 20)
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tensors  # noqa: E402


def main():
    mpspack, cases = sys.argv[1], sys.argv[2:]
    work = os.environ.get("WORK", "/tmp/zoo_work")
    iterations = os.environ.get("ITERATIONS", "20")
    for name in cases:
        folder = os.path.join(work, name)
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
        device = name.split("_", 1)[0]
        ours = subprocess.run(tensors.run_command(mpspack, folder, device, meta["inputs"], "--bench", "--warmup", "5",
                                                  "--iterations", iterations, "--format", "json"),
                              capture_output=True, text=True, env=dict(os.environ, MPSPACK_PROFILE_SHIM="1"))
        p50 = json.loads(ours.stdout)["latency_ms"]["p50"] if ours.returncode == 0 else None
        print(f"=== {name}: mpspack p50 {p50} ms, exit {ours.returncode}\n{ours.stderr[-3000:]}", flush=True)
        theirs = subprocess.run([sys.executable, os.path.join(HERE, "time_torch.py"), "capi", folder, device,
                                 iterations, "5", "1", "1"], capture_output=True, text=True,
                                env=dict(os.environ, ZOO_TORCH_PROFILE="1"))
        p50 = json.loads(theirs.stdout.strip().splitlines()[-1])["latency_ms"]["p50"] if theirs.returncode == 0 else None
        print(f"=== {name}: torch p50 {p50} ms, exit {theirs.returncode}\n{theirs.stderr[-5000:]}", flush=True)


if __name__ == "__main__":
    main()
