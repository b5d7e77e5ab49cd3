#!/usr/bin/env bash
# Builds the SYNTHETIC Linear model (bench/synthetic/linear.cpp) with MIB MiB of weights in both layouts:
#   OUT/embedded/model.so               weights embedded (AOTInductor's default)
#   OUT/blob/model.so + weights.blob    package_constants_in_so=False: the .so holds the blob's size only
#   OUT/mmap/model.so                   force_mmap_weights (torch's choice above 2 GB): the weights appended after
#                                       the ELF file on a 16 KiB boundary, then a magic; the library maps them itself
#   OUT/model.pt2                       the blob layout as aoti_compile_and_package packs it: .so, weights blob, and
#                                       the wrapper source's constants_info_ lines (which give the constants table)
#   OUT/embedded.mpk, OUT/blob.mpk, OUT/mmap.mpk, OUT/pt2.mpk   packed with the example input and output recorded
#   OUT/input0.bin, OUT/expected0.bin   x [1, 1024] f32 and y [1, MIB*256] f32
# Deterministic (bench/synthetic/linear_gen.cpp), no torch. Nothing is written into the source tree.
# LAYOUTS="embedded blob mmap pt2" (the default) names the layouts to make; OUT/blob/weights.blob and the inputs are
# always made (the other layouts are built from the blob).
#   [LAYOUTS="..."] bash bench/synthetic/make_linear.sh BUILD_DIR MIB OUT_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$1"; mib="$2"; out="$3"
layouts=" ${LAYOUTS:-embedded blob mmap pt2} "
want() { [[ "$layouts" == *" $1 "* ]]; }
in=1024; rows=$((mib * 256))
mkdir -p "$out/blob"
g++ -O2 -std=c++20 -o "$out/linear_gen" "$root/bench/synthetic/linear_gen.cpp"
"$out/linear_gen" "$in" "$rows" "$out/blob/weights.blob" "$out/input0.bin" "$out/expected0.bin"
so() {  # so OUT_SO CONSTANTS_FILE [-DLINEAR_EXTERNAL]
  g++ -O2 -std=c++20 -fPIC -shared -fvisibility=hidden -Wl,-z,noexecstack -DLINEAR_IN=$in -DLINEAR_OUT=$rows \
    -DTINY_MLP_CONSTANTS="\"$2\"" ${3:-} "$root/bench/synthetic/linear.cpp" "$root/examples/tiny_mlp/constants.S" -o "$1"
}
if want embedded; then
  mkdir -p "$out/embedded"
  so "$out/embedded/model.so" "$out/blob/weights.blob"
fi
if want blob || want pt2; then
  /usr/bin/python3 -c "import struct,os,sys; open(sys.argv[1],'wb').write(struct.pack('<Q', os.path.getsize(sys.argv[2])))" \
    "$out/blob/size.bin" "$out/blob/weights.blob"
  so "$out/blob/model.so" "$out/blob/size.bin" -DLINEAR_EXTERNAL
fi
if want mmap; then
  mkdir -p "$out/mmap"
  # mmap-self: the region holds {weights size + 8, magic}; the file is padded with spaces to 16 KiB, then the weights,
  # then the magic, as torch writes it.
  /usr/bin/python3 -c "import struct,os,sys; open(sys.argv[1],'wb').write(struct.pack('<QQ', os.path.getsize(sys.argv[2]) + 8, 0x4d504b53454c4621))" \
    "$out/mmap/region.bin" "$out/blob/weights.blob"
  so "$out/mmap/model.so" "$out/mmap/region.bin" -DLINEAR_MMAP_SELF
  /usr/bin/python3 - "$out/mmap/model.so" "$out/blob/weights.blob" <<'PY'
import shutil, struct, sys
with open(sys.argv[1], "r+b") as so, open(sys.argv[2], "rb") as blob:
    so.seek(0, 2)
    so.write(b" " * (-so.tell() % 16384))
    shutil.copyfileobj(blob, so, 1 << 24)
    so.write(struct.pack("<Q", 0x4d504b53454c4621))
PY
fi
rm -f "$out/linear_gen" "$out/blob/size.bin" "$out/mmap/region.bin"
want pt2 && /usr/bin/python3 - "$out" "$in" "$rows" <<'PY'
import sys, zipfile
out, n_in, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pad = lambda n: (n + 63) // 64 * 64
lines = []
for i, (name, shape, stride, size) in enumerate([("weight", [rows, n_in], [n_in, 1], rows * n_in * 4),
                                                  ("bias", [rows], [1], rows * 4)]):
    f = f"    constants_info_[{i}]"
    lines += [f'{f}.name = "{name}";', f"{f}.dtype = cached_torch_dtype_float32;", f"{f}.offset = 0;",
              f"{f}.data_size = {pad(size)};", f"{f}.from_folded = false;",
              f"{f}.shape = {{{', '.join(map(str, shape))}}};", f"{f}.stride = {{{', '.join(map(str, stride))}}};",
              f'{f}.original_fqn = "{name}";']
m = "linear/data/aotinductor/model/linear"
with zipfile.ZipFile(f"{out}/model.pt2", "w", zipfile.ZIP_STORED, allowZip64=True) as z:
    z.writestr("linear/archive_format", "pt2")
    z.writestr("linear/archive_version", "0")
    z.writestr("linear/byteorder", "little")
    z.writestr("linear/.data/version", "6")
    z.writestr(f"{m}.wrapper.cpp", "// synthetic: the constants table only\nAOTInductorModel::AOTInductorModel() {\n"
               + "\n".join(lines) + "\n}\n")
    z.writestr(f"{m}.wrapper_metadata.json", '{"AOTI_DEVICE_KEY": "cpu", "AOTI_PLATFORM": "linux", "AOTI_MACHINE": "x86_64"}')
    z.write(f"{out}/blob/model.so", f"{m}.wrapper.so")
    z.write(f"{out}/blob/weights.blob", f"{m}.wrapper_weights.blob")
PY
examples=(--example-input "$out/input0.bin:f32:1x$in" --example-output "$out/expected0.bin:f32:1x$rows")
want embedded && "$build/bin/mpspack" -q build "$out/embedded/model.so" -o "$out/embedded.mpk" "${examples[@]}"
want blob && "$build/bin/mpspack" -q build "$out/blob/model.so" --weights "$out/blob/weights.blob" -o "$out/blob.mpk" "${examples[@]}"
want mmap && "$build/bin/mpspack" -q build "$out/mmap/model.so" -o "$out/mmap.mpk" "${examples[@]}"
want pt2 && "$build/bin/mpspack" -q build "$out/model.pt2" -o "$out/pt2.mpk" "${examples[@]}"
true
