"""The done-when of the Python item: open a 4 GiB container and read one constant in milliseconds,
without copying the file. The container is the .pt2 fixture's with its weights segment (the last
one) grown by 4 GiB of zeros in a sparse file, and its constant moved to the end of it."""

from __future__ import annotations

import os
import time

import numpy as np

import mpspack
from conftest import rewrite

GROW = 4 << 30


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_open_4gib_and_read_one_constant_in_milliseconds(built, tmp_path):
    src = built["pt2_blob"]
    with mpspack.open(src) as c:
        seg = c.segments[c.weights[0]["segment"]]
        want = c.constant("l_weight").copy()
    new_offset = (seg["size"] + GROW - want.nbytes) // 64 * 64
    big = tmp_path / "big.mpk"
    rewrite(src, big, {".weights[0].constants[0].offset": new_offset}, grow_last_segment=GROW)
    with open(big, "r+b") as f:  # the constant's bytes, at its new place near the end
        f.seek(seg["offset"] + new_offset)
        f.write(want.tobytes())
    assert os.path.getsize(big) > 4 << 30
    assert os.stat(big).st_blocks * 512 < 64 << 20  # sparse: the test writes no 4 GiB

    rss_before = rss_bytes()
    t0 = time.perf_counter()
    with mpspack.open(big) as c:
        a = c.constant("l_weight")
        got = float(a.sum())
    elapsed = time.perf_counter() - t0
    rss_growth = rss_bytes() - rss_before
    print(f"open + read one constant of a {os.path.getsize(big) / 2**30:.1f} GiB container: "
          f"{elapsed * 1e3:.2f} ms, RSS +{rss_growth >> 10} KiB")
    assert np.array_equal(a, want) and got == float(want.sum())
    assert a.base.size == os.path.getsize(big) and not a.flags.owndata  # a view of the mapping, no copy
    assert rss_growth < 32 << 20  # nothing close to the file's size was read or copied
    assert elapsed < 0.25  # milliseconds in practice (about 1 ms); generous for a loaded CI machine
