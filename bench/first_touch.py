#!/usr/bin/env python3
# What a file's first read through a fresh mapping costs, apart from any loader: each FILE mapped whole (private,
# read-only, at an address the kernel picks), one byte read from every 4 KiB page, twice; the first pass's time
# and minor faults, the second pass's time. A page cache that holds the file in 2 MiB folios is mapped a PMD at a
# time (a few dozen faults for 64 MiB); smaller folios take a fault per 64-256 KiB and a page-table entry per
# 4 KiB, which on a VM like the development one costs most of the first pass (docs/PERFORMANCE.md, "Weights
# without a copy"). Warm the files first (cat FILE > /dev/null); how they got into the page cache (written in
# large aligned chunks, or read) decides their folios.
#
#   python3 bench/first_touch.py FILE...
import mmap
import os
import resource
import sys
import time


def touch(m, size):
    total = 0
    for off in range(0, size, 4096):
        total += m[off]
    return total


def main():
    if len(sys.argv) < 2:
        print("usage: first_touch.py FILE...", file=sys.stderr)
        return 2
    print("| file | MiB | first pass ms | minor faults | second pass ms |\n|---|---|---|---|---|")
    for path in sys.argv[1:]:
        fd = os.open(path, os.O_RDONLY)
        size = os.fstat(fd).st_size
        m = mmap.mmap(fd, size, mmap.MAP_PRIVATE, mmap.PROT_READ)
        faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        touch(m, size)
        t1 = time.perf_counter()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0
        touch(m, size)
        t2 = time.perf_counter()
        m.close()
        os.close(fd)
        print(f"| {path} | {size >> 20} | {1e3 * (t1 - t0):.1f} | {faults} | {1e3 * (t2 - t1):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
