#!/usr/bin/env bash
# The GPU suite, for the device machine (an NVIDIA GPU, torch installed): every CUDA case of the given case
# folders (make_aoti_cases.py output, or the torch-built fixtures with their manifest.json) goes build ->
# verify -> run --device cuda and is compared with torch's outputs.
#
#   tests/device/run.sh MPSPACK CASE_ROOT...
#
# mpspack opens cuBLAS at the first matrix product: the toolkit's, or the one torch installed (found here).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mpspack="$1"; shift
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: no NVIDIA GPU on this machine (nvidia-smi -L failed)"; exit 0
fi
if [ -z "${MPSPACK_CUBLAS:-}" ] && ! ldconfig -p | grep -q 'libcublas.so.13 '; then
  sites=$(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
  cublas=$(find $sites /usr/local -name 'libcublas.so.13' 2>/dev/null | head -1)
  [ -n "$cublas" ] && export MPSPACK_CUBLAS="$cublas"
fi
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); cuBLAS: ${MPSPACK_CUBLAS:-from the library path}"
status=0
# The shim's CUDA ops against its CPU ops, when the test binary sits beside the tool (build/bin).
if [ -x "$(dirname "$mpspack")/test_cuda_shim" ]; then
  "$(dirname "$mpspack")/test_cuda_shim" | tail -n 2 || status=1
fi
"$here/run_cases.sh" cuda "$mpspack" "$@" || status=1
exit $status
