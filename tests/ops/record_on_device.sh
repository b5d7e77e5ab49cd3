#!/usr/bin/env bash
# On the device machine (torch 2.11 and a GPU): records the op conformance cases from torch 2.11 on the CPU
# (cases/torch-2.11) and on the GPU (cases/torch-2.11-cuda), then, when the carried build has it
# (bench/device/payload.sh), runs the CUDA functions on the GPU cases. The recorded folders go to $OUT as one
# archive (the device tool returns few files), to be unpacked into tests/ops/cases/ and committed.
#
#   bash tests/ops/record_on_device.sh [OP ...]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${OUT:-/tmp/ops-out}"
mkdir -p "$out"
work="$(mktemp -d)"
status=0
python3 "$here/make_cases.py" --out "$work/torch-2.11" --device cpu ${1:+--only "$@"} || status=1
python3 "$here/make_cases.py" --out "$work/torch-2.11-cuda" --device cuda ${1:+--only "$@"} || status=1
tar czf "$out/ops-cases.tgz" -C "$work" torch-2.11 torch-2.11-cuda
runner="$here/../../.device/bin/op_conformance_cuda"
# cuBLAS and cuDNN as tests/device/run.sh finds them: the toolkit's, else the ones torch installed.
sites=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null)
for lib in cublas:libcublas.so.13 cudnn:libcudnn.so.9; do
  var="MPSPACK_$(echo "${lib%%:*}" | tr a-z A-Z)"
  if [ -z "${!var:-}" ] && ! ldconfig -p | grep -q "${lib#*:} "; then
    found=$(find $sites /usr/local -name "${lib#*:}" 2>/dev/null | head -1)
    [ -n "$found" ] && export "$var=$found"
  fi
done
if [ -x "$runner" ]; then
  "$runner" --device cuda --cases "$work/torch-2.11-cuda" > "$out/cuda-conformance.txt" 2>/dev/null || status=1
  grep -v '^ok' "$out/cuda-conformance.txt"
fi
exit $status
