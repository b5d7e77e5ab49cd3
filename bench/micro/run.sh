#!/usr/bin/env bash
# Micro-measurements behind a few choices in docs/PERFORMANCE.md ("build, verify, unpack and inspect", "Embedded
# weights", "Weights without a copy", "CPU: OpenBLAS's kernels and threads"):
#   1. XXH3 in cache, portable build vs AVX2 build (why hash.cpp picks AVX2 at run time);
#   2. hashing a page-cached file through a mapping vs pread() into an aligned / misaligned buffer (why verify
#      reads with pread into an aligned buffer);
#   3. what Create's copy of embedded constants costs, in parts: faulting in fresh memory, faulting in the
#      page-cached source, the memcpy itself; then the destination faulted in up front by 1, 2, 4 (and all)
#      threads (why the loader hands Create a block faulted in on up to 4 threads: loader/large_blocks.hpp).
#   4. start-up cost of each shared library mpspack carries in lib/: an empty program linked against each (why
#      none is linked into mpspack: each is opened when a command needs it), next to `mpspack --version`.
#      Needs hyperfine.
#   5. OpenBLAS's kernel sets on one thread, on the products the CPU shim hands OpenBLAS (why shim/blas.hpp names
#      the kernel set by what the CPU can run instead of leaving OpenBLAS to pick it by model number).
#   6. the first pass over a page-cached file through a fresh private mapping against later passes: lazy page
#      tables, populated up front (MADV_POPULATE_READ), and 2 MiB-aligned with MADV_HUGEPAGE (why the loader
#      populates the weights it maps: loader/model.cpp, populate()).
#   7. a small library's bytes (384 KiB) into a fresh memfd, alone and with their XXH3, in one pass or two, from a
#      process that does nothing else (why the loader's check and copy of a small library stay two plain passes:
#      loader/library_memory.cpp).
#   bash bench/micro/run.sh [build-dir] [FILE_MIB=2048]
# Not run here: gemv_kernels.cpp (the shim's GEMV row kernel against its variants), which wants the device
# machine's 16 cores; its header says how to build and run it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../../build}" && pwd)"; mib="${2:-2048}"
work="$(mktemp -d "${TMPDIR:-/tmp}/mpspack-micro-XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"

echo "== 1. XXH3 in cache"
g++ -O2 "$here/xxh3_speed.cpp" -o "$work/x_portable" && g++ -O2 -mavx2 "$here/xxh3_speed.cpp" -o "$work/x_avx2"
echo -n "portable: "; "$work/x_portable"; echo -n "avx2:     "; "$work/x_avx2"

echo "== 2. hashing a ${mib} MiB page-cached file"
head -c "$((mib << 20))" /dev/urandom > "$work/file" && cat "$work/file" > /dev/null
g++ -O2 -mavx2 "$here/read_hash.cpp" -o "$work/read_hash" && "$work/read_hash" "$work/file"
echo "== 3. Create's copy of ${mib} MiB of constants, in parts"
threads="1 2 4"; [ "$(nproc)" -gt 4 ] && threads="$threads $(nproc)"
g++ -O2 -pthread "$here/copy_faults.cpp" -o "$work/copy_faults" && "$work/copy_faults" "$work/file" $threads

echo "== 4. start-up per library (empty main linked against it)"
echo 'int main(){}' > "$work/empty.cpp"
g++ -O2 "$work/empty.cpp" -o "$work/none"
cmds=("$work/none")
for lib in "$build"/lib/*.so.*; do
  name=$(basename "$lib")
  g++ -O2 "$work/empty.cpp" -o "$work/with_$name" -Wl,--no-as-needed "$lib" -Wl,-rpath,"$build/lib"
  cmds+=("$work/with_$name")
done
hyperfine -N --warmup 5 --runs 60 "${cmds[@]}" "$build/bin/mpspack --version" 2>&1 | grep -E "Benchmark|Time"

echo "== 5. OpenBLAS's kernel sets, one thread"
openblas=$(sed -n 's/^MPSPACK_OPENBLAS_STATIC:FILEPATH=//p' "$build/CMakeCache.txt")
g++ -O2 "$here/blas_kernels.cpp" -I/usr/include/x86_64-linux-gnu/openblas-pthread "$openblas" -pthread \
  -o "$work/blas_kernels"
sets="Prescott"
grep -qw avx2 /proc/cpuinfo && sets="$sets Haswell"
grep -qw avx512bw /proc/cpuinfo && sets="$sets SkylakeX"
echo "-- unset (OpenBLAS's own pick)"
OPENBLAS_NUM_THREADS=1 "$work/blas_kernels"
for s in $sets; do
  echo "-- OPENBLAS_CORETYPE=$s"
  OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=$s "$work/blas_kernels"
done

echo "== 6. first touch of a ${mib} MiB page-cached file through a fresh mapping"
g++ -O2 -march=native "$here/first_touch.cpp" -o "$work/first_touch" && "$work/first_touch" "$work/file"
rm -f "$work/file"

echo "== 7. a 384 KiB library into a fresh memfd, with its hash"
head -c $((384 << 10)) /dev/urandom > "$work/small" && cat "$work/small" > /dev/null
g++ -O2 -mavx2 "$here/memfd_write.cpp" -o "$work/memfd_write" && "$work/memfd_write" "$work/small" 300
