#!/usr/bin/env bash
# docs/CI.md's pipeline as a shell script, run by CTest on the bundled example (test "docs/CI.md pipeline"):
# the lines between the two markers below are the document's YAML steps, verbatim, and tests/python/test_ci_doc.py
# checks that every line of those steps is here, so the document cannot drift from what runs.
#
# What the YAML gets from the CI system, this takes from the environment: MPSPACK, the mpspack to run (the YAML
# installs the .deb and runs /usr/bin/mpspack); MODEL_DIR, a folder with model.so, input0.bin and expected0.bin;
# UPDATE_BASELINE, true on the default branch; GITHUB_STEP_SUMMARY, the job summary (summary.md when unset, as on
# GitLab). It runs in the current folder, where baseline/ is the kept baseline (absent on a first run, which then
# starts one).
set -euo pipefail
mpspack() { "${MPSPACK:?MPSPACK names the mpspack to run}" "$@"; }
: "${MODEL_DIR:?MODEL_DIR names the model folder}" "${UPDATE_BASELINE:=false}"

# --- steps of docs/CI.md
mpspack build "$MODEL_DIR/model.so" --example-input "$MODEL_DIR/input0.bin:f32:4x16" --example-output "$MODEL_DIR/expected0.bin:f32:4x8" -o model.mpk
mkdir -p results
mpspack verify model.mpk --junit results/verify.xml
mpspack run model.mpk --junit results/run.xml
mpspack run model.mpk --bench --repetitions 5 --threads 1 --format json --junit results/bench.xml > bench.json
mpspack run model.mpk --bench --iterations 20 --threads 1 --format md >> "${GITHUB_STEP_SUMMARY:-summary.md}"
container=$(sha256sum model.mpk | cut -d' ' -f1)
if [ "$(cat baseline/container.sha256 2>/dev/null)" != "$container" ]; then
  echo "no baseline for this container yet: this run starts one"
  mkdir -p baseline && cp bench.json baseline/bench.json && echo "$container" > baseline/container.sha256
fi
status=0
mpspack report --baseline baseline/bench.json bench.json --max-slowdown 10% > gate.md || status=$?
cat gate.md >> "${GITHUB_STEP_SUMMARY:-summary.md}" && cat gate.md
if [ "$status" = 0 ] && [ "$UPDATE_BASELINE" = true ]; then cp bench.json baseline/bench.json; fi
exit "$status"
# --- end of the steps
