"""Reading a container (docs/FORMAT.md) the way the C++ reader does: parse the header, check it
(rules H1..H11), decode the metadata with every offset bounds-checked (M1..M6), check the
structural rules (S, L, W, E), and only then trust what it says. Opening reads the header and the
metadata only; the file is mapped once, read-only, and constants are views of that mapping."""

from __future__ import annotations

import errno
import mmap
import os
import stat
import struct
import warnings

import numpy as np
import xxhash

from ._flatbuf import decode_metadata
from .errors import FormatError, NoConstantsTable, open_error

MAGIC = b"MPSPACK\0"
VERSION_MAJOR = 1
VERSION_MINOR = 1
HEADER_SIZE = 128
FIXED_FIELDS = 72  # magic .. checksum
BYTE_ORDER_MARK = 0x01020304
SEGMENT_ALIGNMENT = 65536
FILE_NAME_BYTES = 200
EXPANSION_RATIO = 16
_HEADER = struct.Struct("<8sHHIIIQQQQQQ")
_CHECKSUM_AT = 64
_READ_STEP = 1 << 20
# docs/FORMAT.md, Segment.chunk_xxh3: segments over this size also record the XXH3-64 of each such piece.
HASH_CHUNK_BYTES = 16 << 20


def _chunk_count(size: int) -> int:
    return 0 if size <= HASH_CHUNK_BYTES else -(-size // HASH_CHUNK_BYTES)

SEGMENT_KINDS = {0: "library", 1: "weights", 2: "cubin", 3: "example"}
FLAVOURS = {0: "embedded", 1: "mmap-self", 2: "external-blob"}
# c10 ScalarType code -> (name as inspect prints it, numpy dtype), as in libpack's dtype table
# (libpack/include/mpspack/dtype.hpp; tests/python/test_dtypes.py holds the two equal). bf16 has no
# numpy dtype: its raw 16-bit pattern is given as uint16 (the top half of a float32); complex32 and the
# float8 types likewise (RAW_BITS).
DTYPES = {
    0: ("u8", np.dtype("u1")), 1: ("i8", np.dtype("i1")), 2: ("i16", np.dtype("<i2")),
    3: ("i32", np.dtype("<i4")), 4: ("i64", np.dtype("<i8")), 5: ("f16", np.dtype("<f2")),
    6: ("f32", np.dtype("<f4")), 7: ("f64", np.dtype("<f8")), 11: ("bool", np.dtype("?")),
    15: ("bf16", np.dtype("<u2")), 8: ("c32", np.dtype("<u4")), 9: ("c64", np.dtype("<c8")),
    10: ("c128", np.dtype("<c16")), 23: ("f8e5m2", np.dtype("u1")), 24: ("f8e4m3fn", np.dtype("u1")),
    25: ("f8e5m2fnuz", np.dtype("u1")), 26: ("f8e4m3fnuz", np.dtype("u1")), 27: ("u16", np.dtype("<u2")),
    28: ("u32", np.dtype("<u4")), 29: ("u64", np.dtype("<u8")),
}
# Codes NumPy has no dtype for: their raw bits are given as unsigned integers of the same size.
RAW_BITS = {15, 8, 23, 24, 25, 26}
BF16 = 15


def dtype_name(code: int) -> str:
    return DTYPES[code][0] if code in DTYPES else f"dtype{code}"


def _plain_name(name: str) -> bool:
    if name in ("", ".", ".."):
        return False
    return not any(ord(ch) < 0x20 or ord(ch) == 0x7F or ch in "/\\" for ch in name)


def _hex(v: int) -> str:
    return f"{v:016x}"


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= max(d, 0)
    return n


class Container:
    """An opened container. The attributes `header`, `format`, `producer`, `sources`, `segments`,
    `libraries`, `weights` and `examples` hold what `mpspack inspect --json` prints under those keys
    (except `missing_shim_imports`, which depends on the mpspack executable, not on the file);
    `metadata` is the decoded metadata block with the schema's field names."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.name = os.fsdecode(self.path)
        self._mm = None
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as e:
            raise open_error(e.errno, self.name) from None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise open_error(errno.EISDIR, self.name, "is a folder, not a regular file")
            if not stat.S_ISREG(st.st_mode):
                kind = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device",
                        stat.S_IFBLK: "a device"}.get(stat.S_IFMT(st.st_mode), "special")
                raise FormatError(f"{self.name}: is {kind}, not a regular file")
            self.size = st.st_size
            if self.size == 0:
                raise self._rule("H1", "empty file, not an mpspack container")
            self._mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            self._fd = os.dup(fd)
        finally:
            os.close(fd)
        try:
            self._parse()
        except BaseException:
            self.close()
            raise

    # ---- opening ---------------------------------------------------------------------------

    def _rule(self, rule: str, message: str) -> FormatError:
        return FormatError(f"{self.name}: rule {rule}: {message}")

    def _parse(self) -> None:
        mm, size = self._mm, self.size
        if mm[:8] != MAGIC:
            raise self._rule("H1", "not an mpspack container (bad magic)")
        if size < FIXED_FIELDS:
            raise self._rule("H2", f"truncated: {size} bytes, shorter than the {HEADER_SIZE}-byte header")
        (_, major, minor, header_size, bom, flags, md_off, md_size, data_off, data_size, file_size,
         checksum) = _HEADER.unpack_from(mm, 0)
        if bom != BYTE_ORDER_MARK:
            raise self._rule("H3", f"byte-order mark is {bom:#010x}, expected {BYTE_ORDER_MARK:#010x}")
        if major != VERSION_MAJOR:
            raise self._rule("H4", f"container format version {major}.{minor} is not supported "
                                   f"(this reader reads {VERSION_MAJOR}.x)")
        if not HEADER_SIZE <= header_size <= 65536:
            raise self._rule("H5", f"header size {header_size} is outside [{HEADER_SIZE}, 65536]")
        if size != file_size:
            raise self._rule("H6", f"file is {size} bytes but the header records {file_size} (truncated or extended)")
        if size < header_size:
            raise self._rule("H2", f"truncated: {size} bytes, shorter than the {header_size}-byte header")
        if flags != 0:
            raise self._rule("H7", f"unknown flags {flags:#x}")
        if md_off != header_size or md_off + md_size > file_size:
            raise self._rule("H8", f"metadata at offset {md_off:#x} + size {md_size:#x} does not start right after "
                                   f"the {header_size}-byte header or lies outside the file ({file_size:#x} bytes)")
        md_end = md_off + md_size
        if data_off % SEGMENT_ALIGNMENT or data_off < md_end or data_off + data_size != file_size:
            raise self._rule("H9", f"data region at offset {data_off:#x} + size {data_size:#x} is not a multiple of "
                                   f"{SEGMENT_ALIGNMENT:#x} running from after the metadata ({md_end:#x}) to the end "
                                   f"of the file ({file_size:#x})")
        reserved_end = header_size if minor <= VERSION_MINOR else HEADER_SIZE
        reserved = mm[FIXED_FIELDS:reserved_end]
        if any(reserved):
            first = next(i for i, b in enumerate(reserved) if b)
            raise self._rule("H10", f"reserved header byte {FIXED_FIELDS + first:#x} is not zero")
        if md_size > (64 << 20):
            raise self._rule("M1", f"metadata block is {md_size} bytes (limit {64 << 20})")
        block = mm[md_off:md_end]
        h = xxhash.xxh3_64()
        h.update(mm[:_CHECKSUM_AT])
        h.update(bytes(8))
        h.update(mm[FIXED_FIELDS:header_size])
        h.update(block)
        if h.intdigest() != checksum:
            raise self._rule("H11", f"header checksum mismatch: recorded {checksum:#018x}, computed "
                                    f"{h.intdigest():#018x} (header or metadata damaged)")
        self.format = {"major": major, "minor": minor}
        self.header = {"header_size": header_size, "metadata_offset": md_off, "metadata_size": md_size,
                       "data_offset": data_off, "data_size": data_size, "file_size": file_size,
                       "checksum": _hex(checksum)}
        self.metadata = decode_metadata(block, self.name)
        self._check_kinds()
        self._validate()
        self._describe()

    def _check_kinds(self) -> None:
        m = self.metadata
        for i, s in enumerate(m["segments"]):
            if s["kind"] not in SEGMENT_KINDS:
                raise self._rule("M6", f"segment {i} has unknown kind {s['kind']}")
        for lib in m["libraries"]:
            if lib["flavour"] not in FLAVOURS:
                raise self._rule("M6", f"library '{lib['name']}' has unknown flavour {lib['flavour']}")

    def _validate(self) -> None:
        """The structural rules (libpack/src/format/validate.cpp), in the same order."""
        m, h = self.metadata, self.header
        segs = m["segments"]
        end = h["data_offset"]
        for i, s in enumerate(segs):
            a = s["alignment"]
            if a == 0 or a & (a - 1) or a > SEGMENT_ALIGNMENT or s["offset"] % a:
                raise self._rule("S1", f"segment {i} ('{s['name']}') at offset {s['offset']:#x} has alignment {a:#x}: "
                                       f"not a power of two up to {SEGMENT_ALIGNMENT:#x} that divides its offset")
            if s["offset"] < h["data_offset"] or s["offset"] + s["size"] > h["file_size"]:
                raise self._rule("S2", f"segment {i} ('{s['name']}') at offset {s['offset']:#x} + size {s['size']:#x} "
                                       f"lies outside the data region [{h['data_offset']:#x}, {h['file_size']:#x})")
            if s["offset"] < end:
                raise self._rule("S3", f"segment {i} ('{s['name']}') at offset {s['offset']:#x} overlaps or precedes "
                                       f"the one before it (which ends at {end:#x})")
            end = s["offset"] + s["size"]
            chunks = s.get("chunk_xxh3") or []
            if chunks and len(chunks) != _chunk_count(s["size"]):
                raise self._rule("S6", f"segment {i} ('{s['name']}') of {s['size']:#x} bytes records {len(chunks)} "
                                       f"chunk hashes; its {HASH_CHUNK_BYTES}-byte chunks need "
                                       f"{_chunk_count(s['size'])}")
        if end != h["file_size"]:
            raise self._rule("S4", f"the last segment ends at {end:#x} but the file is {h['file_size']:#x} bytes")

        used = [0] * len(segs)

        def ref(index: int, kind: int, owner: str) -> None:
            if index >= len(segs):
                raise self._rule("S5", f"{owner} refers to segment {index}, but there are {len(segs)}")
            if segs[index]["kind"] != kind:
                raise self._rule("S5", f"{owner} refers to segment {index} of kind "
                                       f"{SEGMENT_KINDS[segs[index]['kind']]}, expected {SEGMENT_KINDS[kind]}")
            if used[index]:
                raise self._rule("S5", f"{owner} refers to segment {index} ('{segs[index]['name']}'), which another "
                                       f"object already refers to")
            used[index] = 1

        for w in m["weights"]:
            ref(w["segment"], 1, "weights")
        for lib in m["libraries"]:
            owner = f"library '{lib['name']}'"
            ref(lib["segment"], 0, owner)
            for c in lib["cubins"]:
                ref(c, 2, owner)
        for e in m["examples"]:
            for t in e["inputs"]:
                ref(t["segment"], 3, "example input")
            for t in e["outputs"]:
                ref(t["segment"], 3, "example output")

        for w in m["weights"]:
            size = segs[w["segment"]]["size"]
            for c in w["constants"]:
                if c["from_folded"]:
                    continue
                if c["offset"] + c["size"] > size:
                    raise self._rule("W1", f"constant '{c['name']}' at offset {c['offset']:#x} + size {c['size']:#x} "
                                           f"lies outside its weights segment ({size:#x} bytes)")
                self._geometry(c)

        for lib in m["libraries"]:
            owner = f"library '{lib['name']}'"
            if not _plain_name(lib["name"]) or len(lib["name"].encode()) > FILE_NAME_BYTES:
                raise self._rule("L1", f"library name '{lib['name']}' is not a plain file name of at most "
                                       f"{FILE_NAME_BYTES} bytes (no '/', '\\', control characters, '.' or '..')")
            wi = lib["weights"]
            if wi < -1 or wi >= len(m["weights"]):
                raise self._rule("L2", f"{owner} refers to weights {wi}, but there are {len(m['weights'])}")
            stored = segs[lib["segment"]]["size"]
            if stored + lib["removed_size"] != lib["original_size"]:
                raise self._rule("L3", f"{owner}: stored size {stored:#x} + removed {lib['removed_size']:#x} does not "
                                       f"give the original size {lib['original_size']:#x}")
            if lib["removed_offset"] > stored:
                raise self._rule("L4", f"{owner}: removed offset {lib['removed_offset']:#x} lies past the stored "
                                       f"library ({stored:#x} bytes)")
            if lib["removed_size"] > 0 and (wi < 0 or segs[m["weights"][wi]["segment"]]["size"] != lib["removed_size"]):
                raise self._rule("L4", f"{owner}: {lib['removed_size']:#x} bytes were removed but its weights segment "
                                       f"does not hold them")
            for p in lib["restore"]:
                if p["offset"] + len(p["bytes"]) > lib["original_size"]:
                    raise self._rule("L5", f"{owner}: restore patch at {p['offset']:#x} + {len(p['bytes']):#x} lies "
                                           f"outside the original ({lib['original_size']:#x} bytes)")
            r = lib["region"]
            if r is not None and r["end_vaddr"] < r["start_vaddr"]:
                raise self._rule("L6", f"{owner}: constants region ends before it starts")
            for c in lib["cubins"]:
                n = segs[c]["name"]
                if not _plain_name(n) or len(n.encode()) > FILE_NAME_BYTES:
                    raise self._rule("L7", f"cubin name '{n}' is not a plain file name of at most {FILE_NAME_BYTES} "
                                           f"bytes (no '/', '\\', control characters, '.' or '..')")
        total = 0
        for lib in m["libraries"]:
            total += lib["original_size"]
            if lib["flavour"] == 2 and lib["weights"] >= 0:
                total += segs[m["weights"][lib["weights"]]["segment"]]["size"]
            total += sum(segs[c]["size"] for c in lib["cubins"])
        if total > EXPANSION_RATIO * h["file_size"]:
            raise self._rule("L8", f"unpacking would write {total:#x} bytes, more than {EXPANSION_RATIO} times the "
                                   f"container's {h['file_size']:#x} bytes")
        for e in m["examples"]:
            if e["library"] >= len(m["libraries"]):
                raise self._rule("E1", f"example refers to library {e['library']}, but there are {len(m['libraries'])}")
            for t in e["inputs"] + e["outputs"]:
                if t["dtype"] not in DTYPES:
                    raise self._rule("E2", f"example tensor has unknown dtype {t['dtype']}")
                if any(d < 0 for d in t["shape"]):
                    raise self._rule("E2", "example tensor shape is negative or overflows")
                need = _numel(t["shape"]) * DTYPES[t["dtype"]][1].itemsize
                if need != segs[t["segment"]]["size"]:
                    raise self._rule("E2", f"example tensor needs {need:#x} bytes but its segment holds "
                                           f"{segs[t['segment']]['size']:#x}")

    def _geometry(self, c: dict) -> None:
        if c["dtype"] not in DTYPES:
            raise self._rule("W2", f"constant '{c['name']}' has unknown dtype {c['dtype']}")
        if len(c["shape"]) != len(c["stride"]):
            raise self._rule("W2", f"constant '{c['name']}' has {len(c['shape'])} sizes but {len(c['stride'])} strides")
        if c["storage_offset"] < 0:
            raise self._rule("W2", f"constant '{c['name']}' has a negative storage offset")
        last = c["storage_offset"]
        for n, s in zip(c["shape"], c["stride"]):
            if n < 0 or s < 0:
                raise self._rule("W2", f"constant '{c['name']}' has a negative size or stride")
            if n == 0:
                return
            last += (n - 1) * s
        if (last + 1) * DTYPES[c["dtype"]][1].itemsize > c["size"]:
            raise self._rule("W2", f"constant '{c['name']}''s shape and strides reach past its {c['size']} bytes")

    def _describe(self) -> None:
        """The inspect --json view of the metadata."""
        m = self.metadata
        segs = m["segments"]
        self.producer = {"name": m["producer"], "version": m["producer_version"]}
        self.sources = [{k: s[k] for k in ("name", "size", "sha256", "kind", "flavour", "mode")} for s in m["sources"]]
        self.segments = [{"index": i, "kind": SEGMENT_KINDS[s["kind"]], "name": s["name"], "offset": s["offset"],
                          "size": s["size"], "alignment": s["alignment"], "xxh3": _hex(s["xxh3"])}
                         for i, s in enumerate(segs)]
        self.libraries = []
        for lib in m["libraries"]:
            r = lib["region"]
            region = None if r is None else {
                "section": r["section"], "start_vaddr": r["start_vaddr"], "end_vaddr": r["end_vaddr"],
                "size": r["end_vaddr"] - r["start_vaddr"], "file_offset": r["file_offset"], "writable": r["writable"]}
            self.libraries.append({
                "name": lib["name"], "device": lib["device"], "abi": lib["abi"], "machine": lib["machine"],
                "flavour": FLAVOURS[lib["flavour"]], "segment": lib["segment"], "needed": lib["needed"],
                "dropped_needed": lib["dropped_needed"], "imports": lib["imports"],
                "weights": None if lib["weights"] < 0 else lib["weights"], "cubins": lib["cubins"],
                "original_size": lib["original_size"], "original_sha256": lib["original_sha256"],
                "constants_region": region})
        self.weights = []
        for w in m["weights"]:
            consts, totals = [], {}
            for c in w["constants"]:
                consts.append({"name": c["name"], "fqn": c["fqn"], "dtype": dtype_name(c["dtype"]),
                               "shape": c["shape"], "stride": c["stride"], "storage_offset": c["storage_offset"],
                               "offset": c["offset"], "size": c["size"], "type": c["type"],
                               "from_folded": c["from_folded"], "aligned_64": c["offset"] % 64 == 0})
                t = totals.setdefault(dtype_name(c["dtype"]), {"count": 0, "parameters": 0, "bytes": 0})
                t["count"] += 1
                t["parameters"] += _numel(c["shape"])
                t["bytes"] += c["size"]
            seg = segs[w["segment"]]
            self.weights.append({"segment": w["segment"], "size": seg["size"], "offset": seg["offset"],
                                 "alignment": seg["alignment"], "constants": consts,
                                 "totals_by_dtype": dict(sorted(totals.items()))})
        self.examples = [{"library": e["library"],
                          "inputs": [{"dtype": dtype_name(t["dtype"]), "shape": t["shape"], "segment": t["segment"]}
                                     for t in e["inputs"]],
                          "outputs": [{"dtype": dtype_name(t["dtype"]), "shape": t["shape"], "segment": t["segment"]}
                                      for t in e["outputs"]]}
                         for e in m["examples"]]

    def to_dict(self) -> dict:
        """What `mpspack inspect --json` prints for this file (without `missing_shim_imports`)."""
        return {"schema_version": 1, "file": self.name, "kind": "container", "format": self.format,
                "header": self.header, "producer": self.producer, "sources": self.sources,
                "segments": self.segments, "libraries": self.libraries, "weights": self.weights,
                "examples": self.examples}

    # ---- data ------------------------------------------------------------------------------

    def _mapping(self):
        if self._mm is None:
            raise ValueError(f"{self.name}: the container is closed")
        return self._mm

    def _view(self, offset: int, size: int) -> memoryview:
        return memoryview(self._mapping())[offset:offset + size]

    def segment_bytes(self, index: int) -> memoryview:
        """A read-only view of segment `index`'s bytes in the file's mapping (no copy)."""
        s = self.metadata["segments"][index]
        return self._view(s["offset"], s["size"])

    def _weights_index(self, library) -> int:
        m = self.metadata
        if library is None:
            if len(m["weights"]) == 1:
                return 0
            if not m["weights"]:
                raise NoConstantsTable(f"{self.name}: the container holds no weights")
            raise ValueError(f"{self.name}: the container holds {len(m['weights'])} weights entries; "
                             f"say which library's with library=NAME or INDEX")
        if isinstance(library, str):
            matches = [i for i, lib in enumerate(m["libraries"]) if lib["name"] == library]
            if not matches:
                raise KeyError(f"{self.name}: no library named '{library}' "
                               f"(there are: {', '.join(l['name'] for l in m['libraries'])})")
            library = matches[0]
        if not 0 <= library < len(m["libraries"]):
            raise IndexError(f"{self.name}: no library {library} (there are {len(m['libraries'])})")
        wi = m["libraries"][library]["weights"]
        if wi < 0:
            raise NoConstantsTable(f"{self.name}: library '{m['libraries'][library]['name']}' has no weights")
        return wi

    def weights_bytes(self, library=None) -> np.ndarray:
        """The whole weights segment of `library` (name or index; optional when there is one set of
        weights) as a read-only uint8 array over the file's mapping (no copy). Works with or
        without a constants table."""
        seg = self.metadata["segments"][self.metadata["weights"][self._weights_index(library)]["segment"]]
        return np.ndarray((seg["size"],), np.uint8, buffer=self._mapping(), offset=seg["offset"])

    def has_constants_table(self, library=None) -> bool:
        return bool(self.metadata["weights"][self._weights_index(library)]["constants"])

    def _table(self, library, torch: bool):
        wi = self._weights_index(library)
        w = self.metadata["weights"][wi]
        if not w["constants"]:
            raise NoConstantsTable(
                f"{self.name}: weights {wi} has no constants table (the input did not carry names, shapes and "
                f"dtypes; a .pt2 does, a plain model.so does not): its {self.weights[wi]['size']} bytes are "
                f"available as weights_bytes()")
        torch_module = None
        if torch:
            try:
                import torch as torch_module
            except ImportError as e:
                raise ImportError("constants(torch=True) needs torch, which cannot be imported here; "
                                  "constants() gives numpy arrays without it") from e
        return self.metadata["segments"][w["segment"]], w["constants"], torch_module

    def _array(self, seg: dict, c: dict, torch_module):
        dt = DTYPES[c["dtype"]][1]
        arr = np.ndarray(tuple(c["shape"]), dt, buffer=self._mapping(),
                         offset=seg["offset"] + c["offset"] + c["storage_offset"] * dt.itemsize,
                         strides=tuple(s * dt.itemsize for s in c["stride"]))
        return _as_torch(arr, c["dtype"], torch_module) if torch_module is not None else arr

    def constants(self, library=None, *, torch: bool = False) -> dict:
        """name -> read-only array viewing the file's mapping (no copy), shaped by the constants
        table (dtype, shape, strides, storage offset). bf16 comes as its raw uint16 bit pattern.
        With torch=True, torch tensors over the same memory (bf16 as torch.bfloat16); the tensors
        must not be written to. Folded constants (no storage) are left out. `library` (name or
        index) picks the weights when the container holds several. Raises NoConstantsTable when
        the input carried no table (a plain model.so): the segment's bytes are then available
        from weights_bytes()."""
        seg, table, torch_module = self._table(library, torch)
        return {c["name"]: self._array(seg, c, torch_module) for c in table if not c["from_folded"]}

    def constant(self, name: str, library=None, *, torch: bool = False):
        """One constant by name (see constants()); only that one is mapped into an array."""
        seg, table, torch_module = self._table(library, torch)
        for c in table:
            if c["name"] == name and not c["from_folded"]:
                return self._array(seg, c, torch_module)
        raise KeyError(f"{self.name}: no constant named '{name}' with storage")

    # ---- integrity -------------------------------------------------------------------------

    def verify(self, *, check: bool = True) -> dict:
        """What `mpspack verify --json` checks and reports: every segment's XXH3-64 and every
        padding byte (the header checksum and the structure were checked on open). Reads with
        pread, not through the mapping, so a file cut short is an error rather than SIGBUS.
        Returns the report; when the file is damaged raises FormatError listing the problems,
        unless check=False (then the report says "ok": false)."""
        m, h = self.metadata, self.header
        problems, results, checked = [], [], 0

        def zero(begin: int, end: int, gap: str) -> None:
            for pos in range(begin, end, _READ_STEP):
                chunk = os.pread(self._fd, min(_READ_STEP, end - pos), pos)
                nz = np.flatnonzero(np.frombuffer(chunk, np.uint8))
                if nz.size:
                    i = pos + int(nz[0])
                    problems.append(f"{self.name}: byte {i:#x} in the padding {gap} is {chunk[nz[0]]:#04x}, not zero")
                    return

        zero(h["metadata_offset"] + h["metadata_size"], h["data_offset"], "after the metadata")
        cursor = h["data_offset"]
        for i, s in enumerate(m["segments"]):
            zero(cursor, s["offset"], f"before segment {i}")
            hasher = xxhash.xxh3_64()
            recorded_chunks = s.get("chunk_xxh3") or []
            chunk_hasher, chunks = xxhash.xxh3_64(), []
            pos, end, readable = s["offset"], s["offset"] + s["size"], True
            while pos < end:
                # Reads end on chunk boundaries (_READ_STEP divides HASH_CHUNK_BYTES), so each read feeds one chunk.
                chunk = os.pread(self._fd, min(_READ_STEP, end - pos), pos)
                if not chunk:
                    problems.append(f"{self.name}: cannot read segment '{s['name']}' at offset {pos:#x}: "
                                    f"the file ended early")
                    readable = False
                    break
                hasher.update(chunk)
                chunk_hasher.update(chunk)
                pos += len(chunk)
                checked += len(chunk)
                if recorded_chunks and ((pos - s["offset"]) % HASH_CHUNK_BYTES == 0 or pos == end):
                    chunks.append(chunk_hasher.intdigest())
                    chunk_hasher.reset()
            computed = hasher.intdigest() if readable else 0
            bad_chunk = next((k for k, (c, r) in enumerate(zip(chunks, recorded_chunks)) if c != r), None)
            ok = readable and computed == s["xxh3"] and bad_chunk is None
            if readable and computed != s["xxh3"]:
                problems.append(f"{self.name}: segment {i} ('{s['name']}', {s['size']} bytes at {s['offset']:#x}) "
                                f"is damaged: XXH3 {computed:016x}, recorded {s['xxh3']:016x}")
            elif readable and bad_chunk is not None:
                begin = bad_chunk * HASH_CHUNK_BYTES
                problems.append(f"{self.name}: segment {i} ('{s['name']}', {s['size']} bytes at {s['offset']:#x}) "
                                f"is damaged: chunk {bad_chunk} (bytes {begin:#x}-{min(s['size'], begin + HASH_CHUNK_BYTES):#x}) "
                                f"has XXH3 {chunks[bad_chunk]:016x}, recorded {recorded_chunks[bad_chunk]:016x}")
            results.append({"index": i, "name": s["name"], "ok": ok, "xxh3": _hex(s["xxh3"]),
                            "computed_xxh3": _hex(computed)})
            cursor = end
        report = {"schema_version": 1, "file": self.name, "ok": not problems, "header_checksum": True,
                  "bytes_checked": checked, "segments": results, "problems": problems}
        if problems and check:
            err = FormatError("; ".join(problems))
            err.report = report
            raise err
        return report

    # ---- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Drops this object's hold on the file. The mapping is never closed explicitly: numpy
        keeps a reference to the mmap object (not a hold on its buffer), so mmap.close() would
        unmap pages that live arrays point at. It is unmapped when the last array over it is gone."""
        self._mm = None
        fd = getattr(self, "_fd", None)
        if fd is not None:
            self._fd = None
            os.close(fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<mpspack.Container {self.name!r}: {len(self.segments)} segments, {len(self.libraries)} libraries, "
                f"{len(self.weights)} weights>") if self._mm is not None else f"<mpspack.Container {self.name!r} closed>"


def _as_torch(arr: np.ndarray, code: int, torch):
    with warnings.catch_warnings():
        # The mapping is read-only; torch warns that it cannot express that. The tensors must not be written.
        warnings.simplefilter("ignore", UserWarning)
        if code == BF16:
            return torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
        return torch.from_numpy(arr)


def open(path: str | os.PathLike) -> Container:  # noqa: A001 - mpspack.open, as the README says
    """Opens a container: checks its header, metadata and structure (not the segments' hashes:
    see Container.verify()) and maps it read-only. Raises FormatError for a file that is not a
    container or is damaged; a path that cannot be opened raises the matching OSError, which is also
    an mpspack.OpenError: FileNotFoundError (mpspack.NotFoundError), IsADirectoryError for a folder
    (mpspack.IsAFolderError, also a FormatError), PermissionError (mpspack.AccessError)."""
    return Container(path)
