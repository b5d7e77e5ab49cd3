#!/usr/bin/env bash
# The GPU suite, for the device machine (an NVIDIA GPU, torch installed): every CUDA case of the given case
# folders (make_aoti_cases.py output, or the torch-built fixtures with their manifest.json) goes build ->
# verify -> run --device cuda and is compared with torch's outputs.
#
#   tests/device/run.sh MPSPACK CASE_ROOT...
#
# mpspack opens cuBLAS at the first matrix product and cuDNN at the first convolution: the toolkit's, or the
# ones torch installed (found here). The shim's own test runs twice: float32 convolutions with TF32 (torch's
# default) and without (MPSPACK_CUDNN_TF32=0, checked at a tighter tolerance).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mpspack="$1"; shift
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: no NVIDIA GPU on this machine (nvidia-smi -L failed)"; exit 0
fi
sites=$(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null)
if [ -z "${MPSPACK_CUBLAS:-}" ] && ! ldconfig -p | grep -q 'libcublas.so.13 '; then
  cublas=$(find $sites /usr/local -name 'libcublas.so.13' 2>/dev/null | head -1)
  [ -n "$cublas" ] && export MPSPACK_CUBLAS="$cublas"
fi
if [ -z "${MPSPACK_CUDNN:-}" ] && ! ldconfig -p | grep -q 'libcudnn.so.9 '; then
  cudnn=$(find $sites /usr/local -name 'libcudnn.so.9' 2>/dev/null | head -1)
  [ -n "$cudnn" ] && export MPSPACK_CUDNN="$cudnn"
fi
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); cuBLAS: ${MPSPACK_CUBLAS:-from the library path}; cuDNN: ${MPSPACK_CUDNN:-from the library path}"
status=0
# The shim's CUDA ops against its CPU ops and direct loops, when the test binary sits beside the tool (build/bin).
if [ -x "$(dirname "$mpspack")/test_cuda_shim" ]; then
  "$(dirname "$mpspack")/test_cuda_shim" | tail -n 2 || status=1
  MPSPACK_CUDNN_TF32=0 "$(dirname "$mpspack")/test_cuda_shim" '[convolution]' | tail -n 2 || status=1
fi
# Every CUDA fallback on the op conformance cases torch 2.11 recorded on a GPU (tests/ops/README.md).
ops_cases="$here/../ops/cases/torch-2.11-cuda"
if [ -x "$(dirname "$mpspack")/op_conformance_cuda" ] && [ -d "$ops_cases" ]; then
  "$(dirname "$mpspack")/op_conformance_cuda" --device cuda --cases "$ops_cases" | grep -v '^ok' || status=1
fi
"$here/run_cases.sh" cuda "$mpspack" "$@" || status=1
exit $status
