#!/usr/bin/env bash
# Builds a SYNTHETIC large embedded model: examples/tiny_mlp plus an extra constant of PAD_MIB MiB
# of random bytes (copied at Create, ignored by Run; bench/synthetic/model_pad.cpp), and packs it.
#   bash bench/synthetic/make.sh BUILD_DIR PAD_MIB OUT_DIR
# OUT_DIR gets: model.so (the original embedded library), input0.bin, expected0.bin,
# embedded.mpk (examples recorded). Nothing is written into the source tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$1"; pad_mib="$2"; out="$3"
mkdir -p "$out"
g++ -O2 -std=c++20 -o "$out/gen" "$root/examples/tiny_mlp/gen.cpp" -I"$root/examples/tiny_mlp"
"$out/gen" "$out/constants.small" "$out/input0.bin" "$out/expected0.bin"
cp "$out/constants.small" "$out/constants.bin"
# Random bytes (nothing sparse or compressible), appended after the real constants.
[ "$pad_mib" -gt 0 ] && head -c "$((pad_mib << 20))" /dev/urandom >> "$out/constants.bin"
g++ -O2 -std=c++20 -fPIC -shared -fvisibility=hidden -Wl,-z,noexecstack -I"$root/examples/tiny_mlp" \
  -DTINY_MLP_CONSTANTS="\"$out/constants.bin\"" \
  "$root/bench/synthetic/model_pad.cpp" "$root/examples/tiny_mlp/constants.S" -o "$out/model.so"
rm -f "$out/gen" "$out/constants.small" "$out/constants.bin"
"$build/bin/mpspack" -q build "$out/model.so" -o "$out/embedded.mpk" \
  --example-input "$out/input0.bin:f32:4x16" --example-output "$out/expected0.bin:f32:4x8"
