#!/usr/bin/env bash
# The CPU convolution paths side by side (bench/conv_cpu.cpp: im2col + OpenBLAS against oneDNN, on real nets'
# shapes), on one thread and on the whole OpenMP team (every core this process may use), in one command:
#   bash bench/conv_cpu.sh [BUILD_DIR=build] [REPS=50]
# The build needs -DMPSPACK_BUILD_BENCH=ON; conv_cpu is built here if it is missing. Its first line names the
# machine, oneDNN's version and instruction set, and the team's size.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"; reps="${2:-50}"
[ -x "$build/bin/conv_cpu" ] || cmake --build "$build" --target conv_cpu
echo "== one thread (OMP_NUM_THREADS=1)"
OMP_NUM_THREADS=1 "$build/bin/conv_cpu" "$reps"
echo; echo "== the whole team ($(nproc) cores)"
"$build/bin/conv_cpu" "$reps"
