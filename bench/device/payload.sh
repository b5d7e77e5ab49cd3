#!/usr/bin/env bash
# Gathers what a run on the device machine needs into .device/ (git-ignored), to be named in the device tool's
# `carry` (64 MiB in all with the working tree):
#   .device/bin/   mpspack, test_cuda_shim, op_conformance_cuda (tests/ops), direct_load (bench/zero_copy.sh), cuda_conv_host, attention_cpu,
#                  attention_cuda and matmul_cpu (bench/device/attention_torch.py, attention_cuda_torch.py,
#                  matmul_torch.py), int8_matmul_cpu (int8_torch.py), int4_matmul_cpu (int4_torch.py), test_shim (the CPU shim's unit tests, for
#                  the kernels only that CPU runs: test_shim "[int8]", "[int4]"), h2d_copies, stripped
#   .device/lib/   the libraries mpspack carries beside itself (RUNPATH $ORIGIN/../lib) and the C API's libmpspack_c.so
#   .device/fixtures/  the torch-built cases from ../shared, which does not travel
# Files over 4 MiB go as .xz.
# On the device machine, `bash bench/device/payload.sh --unpack` restores the .xz files in place.
#
#   bash bench/device/payload.sh [BUILD_DIR]      (default build)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [ "${1:-}" = "--unpack" ]; then
  for f in "$root"/.device/bin/*.xz "$root"/.device/lib/*.xz "$root"/.device/lib/*/*.xz; do
    [ -e "$f" ] && xz -d -f "$f"
  done
  exit 0
fi
build="${1:-$root/build}"
out="$root/.device"
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/fixtures"
for exe in mpspack test_cuda_shim op_conformance_cuda direct_load cuda_conv_host attention_cpu attention_cuda matmul_cpu \
           int8_matmul_cpu int4_matmul_cpu test_shim h2d_copies; do
  [ -x "$build/bin/$exe" ] && strip -o "$out/bin/$exe" "$build/bin/$exe"
done
cp -a "$build/lib/." "$out/lib/"
rm -f "$out"/lib/*.a
# The C API's library is mpspack's own build, unstripped in the build tree: strip it as the tools are.
for f in "$out"/lib/libmpspack_c.so.*; do
  [ -f "$f" ] && [ ! -L "$f" ] && strip "$f"
done
find "$out/bin" "$out/lib" -type f -size +4M -exec xz -T2 -6 {} \;
shared="$root/../shared/fixtures/aoti-2.11"
cp -a "$shared/torch-built" "$out/fixtures/"
du -sh "$out"
