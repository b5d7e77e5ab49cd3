#!/usr/bin/env bash
# Builds the SYNTHETIC Linear model (bench/synthetic/linear.cpp) with MIB MiB of weights in both layouts:
#   OUT/embedded/model.so               weights embedded (AOTInductor's default)
#   OUT/blob/model.so + weights.blob    package_constants_in_so=False: the .so holds the blob's size only
#   OUT/embedded.mpk, OUT/blob.mpk      packed with the example input and output recorded
#   OUT/input0.bin, OUT/expected0.bin   x [1, 1024] f32 and y [1, MIB*256] f32
# Deterministic (bench/synthetic/linear_gen.cpp), no torch. Nothing is written into the source tree.
#   bash bench/synthetic/make_linear.sh BUILD_DIR MIB OUT_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$1"; mib="$2"; out="$3"
in=1024; rows=$((mib * 256))
mkdir -p "$out/embedded" "$out/blob"
g++ -O2 -std=c++20 -o "$out/linear_gen" "$root/bench/synthetic/linear_gen.cpp"
"$out/linear_gen" "$in" "$rows" "$out/blob/weights.blob" "$out/input0.bin" "$out/expected0.bin"
so() {  # so OUT_SO CONSTANTS_FILE [-DLINEAR_EXTERNAL]
  g++ -O2 -std=c++20 -fPIC -shared -fvisibility=hidden -Wl,-z,noexecstack -DLINEAR_IN=$in -DLINEAR_OUT=$rows \
    -DTINY_MLP_CONSTANTS="\"$2\"" ${3:-} "$root/bench/synthetic/linear.cpp" "$root/examples/tiny_mlp/constants.S" -o "$1"
}
so "$out/embedded/model.so" "$out/blob/weights.blob"
/usr/bin/python3 -c "import struct,os,sys; open(sys.argv[1],'wb').write(struct.pack('<Q', os.path.getsize(sys.argv[2])))" \
  "$out/blob/size.bin" "$out/blob/weights.blob"
so "$out/blob/model.so" "$out/blob/size.bin" -DLINEAR_EXTERNAL
rm -f "$out/linear_gen" "$out/blob/size.bin"
examples=(--example-input "$out/input0.bin:f32:1x$in" --example-output "$out/expected0.bin:f32:1x$rows")
"$build/bin/mpspack" -q build "$out/embedded/model.so" -o "$out/embedded.mpk" "${examples[@]}"
"$build/bin/mpspack" -q build "$out/blob/model.so" --weights "$out/blob/weights.blob" -o "$out/blob.mpk" "${examples[@]}"
