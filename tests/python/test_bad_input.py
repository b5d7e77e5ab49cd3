"""Bad input is one mpspack.FormatError (a ValueError) whose message names the file and the rule,
never an IndexError, struct.error or a crash (a path that cannot be opened at all raises the matching
OSError, which is also an mpspack.Error): truncated and garbage files, damaged headers, and
metadata blocks mutated at random with the header checksum recomputed (so the mutation reaches the
FlatBuffers reader and the structural rules, as a hostile file would)."""

from __future__ import annotations

import os
import pathlib
import random
import shutil
import struct
import subprocess
import sys
import tempfile

import pytest

import mpspack
from conftest import SOURCE_DIR, rechecksum, rewrite


def refused(path, rule: str | None = None) -> mpspack.FormatError:
    with pytest.raises(mpspack.FormatError) as e:
        mpspack.open(path)
    assert isinstance(e.value, ValueError)
    msg = str(e.value)
    assert msg.startswith(f"{path}: "), msg
    if rule:
        assert f"rule {rule}:" in msg, msg
    return e.value


def test_empty_garbage_and_other_files(tmp_path, tiny_so):
    (tmp_path / "empty.mpk").write_bytes(b"")
    refused(tmp_path / "empty.mpk", "H1")
    (tmp_path / "garbage.mpk").write_bytes(os.urandom(4096))
    refused(tmp_path / "garbage.mpk", "H1")
    refused(tiny_so, "H1")  # a model library is not a container
    (tmp_path / "magic.mpk").write_bytes(b"MPSPACK\0" + b"\x01")
    refused(tmp_path / "magic.mpk", "H2")
    os.mkfifo(tmp_path / "fifo.mpk")
    assert "is a FIFO, not a regular file" in str(refused(tmp_path / "fifo.mpk"))  # refused, not waited on


def test_paths_that_cannot_be_opened_raise_the_matching_os_error(tmp_path):
    # A folder: IsADirectoryError, and a FormatError too; the CLI's message.
    folder = refused(tmp_path)
    assert isinstance(folder, IsADirectoryError) and isinstance(folder, mpspack.IsAFolderError)
    assert str(folder) == f"{tmp_path}: is a directory, not a file"
    assert folder.filename == str(tmp_path)
    # Missing: FileNotFoundError, also the package's own error; not a FormatError (nothing was read).
    for absent in (tmp_path / "absent.mpk", tmp_path / "no_folder" / "x.mpk"):
        with pytest.raises(FileNotFoundError) as e:
            mpspack.open(absent)
        assert isinstance(e.value, mpspack.NotFoundError) and isinstance(e.value, mpspack.OpenError)
        assert isinstance(e.value, mpspack.Error) and not isinstance(e.value, mpspack.FormatError)
        assert str(e.value) == f"{absent}: cannot open: No such file or directory"
        assert e.value.filename == str(absent)
    # A file under a regular file: ENOTDIR, which is a missing file too.
    (tmp_path / "plain").write_bytes(b"x")
    with pytest.raises(mpspack.NotFoundError):
        mpspack.open(tmp_path / "plain" / "x.mpk")


def test_no_permission_raises_permission_error(tmp_path):
    """A file that may not be read: PermissionError. Root reads any file, so there the check runs in a child
    process as the unprivileged user `nobody`, on a file in a folder it may enter (pytest's own are private)."""
    root = os.geteuid() == 0
    folder = pathlib.Path(tempfile.mkdtemp(prefix="mpspack-perm-")) if root else tmp_path
    try:
        folder.chmod(0o755)
        locked = folder / "locked.mpk"
        locked.write_bytes(b"MPSPACK\0")
        locked.chmod(0)
        code = ("import sys, mpspack\n"
                "try:\n    mpspack.open(sys.argv[1])\n"
                "except PermissionError as e:\n"
                "    assert isinstance(e, mpspack.AccessError) and isinstance(e, mpspack.Error), type(e)\n"
                "    print(e)\n")
        env = dict(os.environ, PYTHONPATH=str(SOURCE_DIR / "python"))
        r = subprocess.run([sys.executable, "-c", code, str(locked)], env=env, capture_output=True, text=True,
                           timeout=60, user=65534 if root else None)
        if root and r.returncode != 0 and "locked.mpk" not in r.stderr:
            pytest.skip(f"the child process as `nobody` cannot load the package or its library here: "
                        f"{r.stderr.strip()[-300:]}")
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip() == f"{locked}: cannot open: Permission denied"
    finally:
        if root:
            shutil.rmtree(folder)


def test_errno_maps_to_the_builtin_exceptions():
    """The mapping from an OS error number to the exception, for each kind (errors.os_error)."""
    import errno
    from mpspack.errors import os_error
    for code, builtin, own in ((errno.ENOENT, FileNotFoundError, mpspack.NotFoundError),
                               (errno.ENOTDIR, FileNotFoundError, mpspack.NotFoundError),
                               (errno.EACCES, PermissionError, mpspack.AccessError),
                               (errno.EPERM, PermissionError, mpspack.AccessError),
                               (errno.EISDIR, IsADirectoryError, mpspack.IsAFolderError),
                               (errno.EIO, OSError, mpspack.OpenError)):
        e = os_error(code, "f.mpk", "f.mpk: cannot open: why")
        assert isinstance(e, builtin) and isinstance(e, own) and e.errno == code
        assert str(e) == "f.mpk: cannot open: why" and e.filename == "f.mpk"


@pytest.mark.parametrize("cut", [1, 65536, 200000])
def test_truncated(built, tmp_path, cut):
    data = built["pt2_blob"].read_bytes()
    (tmp_path / "cut.mpk").write_bytes(data[:len(data) - cut])
    refused(tmp_path / "cut.mpk", "H6")


def test_extended(built, tmp_path):
    (tmp_path / "long.mpk").write_bytes(built["pt2_blob"].read_bytes() + b"\0")
    refused(tmp_path / "long.mpk", "H6")


@pytest.mark.parametrize("field,value,rule", [
    (16, struct.pack("<I", 0x04030201), "H3"), (8, struct.pack("<H", 2), "H4"), (12, struct.pack("<I", 64), "H5"),
    (20, struct.pack("<I", 1), "H7"), (24, struct.pack("<Q", 256), "H8"), (40, struct.pack("<Q", 4096), "H9"),
    (100, b"\x01", "H10"), (64, b"\xff", "H11"), (200, b"\xff", "H11")])
def test_header_rules(built, tmp_path, field, value, rule):
    data = bytearray(built["pt2_blob"].read_bytes())
    data[field:field + len(value)] = value
    (tmp_path / "h.mpk").write_bytes(data)
    refused(tmp_path / "h.mpk", rule)


@pytest.mark.parametrize("edit,rule", [
    ({".segments[1].alignment": 3}, "S1"), ({".segments[1].offset": 0x10000}, "S3"),
    ({".segments[1].size": 1 << 40}, "S2"), ({".segments[1].kind": 0}, "S5"), ({".segments[1].kind": 9}, "M6"),
    ({".libraries[0].weights": 5}, "L2"), ({".libraries[0].original_size": 1}, "L3"),
    ({".weights[0].constants[0].offset": 64}, "W1"), ({".weights[0].constants[0].dtype": 99}, "W2"),
    ({".weights[0].constants[0].shape[0]": 5}, "W2"), ({".weights[0].constants[0].stride[1]": -1}, "W2")])
def test_structural_rules(built, tmp_path, edit, rule):
    rewrite(built["pt2_blob"], tmp_path / "s.mpk", edit)
    refused(tmp_path / "s.mpk", rule)


def test_random_metadata_mutations_only_raise_format_error(built, tmp_path):
    """1000 containers, each with 1-4 metadata bytes changed and the checksum recomputed: each opens
    or is refused with FormatError; nothing else escapes (IndexError, struct.error, KeyError, ...)."""
    rng = random.Random(19)
    for name in ("pt2_blob", "tiny"):
        base = bytearray(built[name].read_bytes())
        md_off, md_size = struct.unpack_from("<QQ", base, 24)
        path = tmp_path / f"m_{name}.mpk"
        opened = refused_count = 0
        for _ in range(500):
            data = bytearray(base)
            for _ in range(rng.randint(1, 4)):
                data[md_off + rng.randrange(md_size)] = rng.choice([0, 0xff, 0x7f, 0x80, rng.randrange(256)])
            rechecksum(data)
            path.write_bytes(data)
            try:
                with mpspack.open(path) as c:
                    c.to_dict()
                    try:
                        c.constants()
                    except (mpspack.NoConstantsTable, ValueError, KeyError) as e:
                        assert not isinstance(e, mpspack.FormatError)
                opened += 1
            except mpspack.FormatError as e:
                assert str(e).startswith(f"{path}: rule "), str(e)
                refused_count += 1
        assert refused_count > 100  # the mutations did reach the reader's checks


def test_shared_offsets_cannot_blow_up_the_decoded_size(tmp_path):
    """A few kilobytes of metadata whose one list of 2^20 entries all point at one 4 KiB string:
    rule M4 (decoded size) refuses it before it is decoded into 4 GiB of names."""
    import flatbuffers
    b = flatbuffers.Builder(0)
    s = b.CreateString("x" * 4096)
    n = 1 << 16
    b.StartVector(4, n, 4)
    for _ in range(n):
        b.PrependUOffsetTRelative(s)
    names = b.EndVector()
    # Library { name (0), ..., needed (6) }: one library whose `needed` list is those references.
    b.StartObject(17)
    b.PrependUOffsetTRelativeSlot(6, names, 0)
    lib = b.EndObject()
    b.StartVector(4, 1, 4)
    b.PrependUOffsetTRelative(lib)
    libs = b.EndVector()
    b.StartObject(7)
    b.PrependUOffsetTRelativeSlot(4, libs, 0)
    root = b.EndObject()
    b.Finish(root, file_identifier=b"MPKM")
    block = bytes(b.Output())
    data_off = (128 + len(block) + 65535) // 65536 * 65536
    header = bytearray(128)
    struct.pack_into("<8sHHIIIQQQQQ", header, 0, b"MPSPACK\0", 1, 0, 128, 0x01020304, 0, 128, len(block),
                     data_off, 0, data_off)
    data = header + block + bytes(data_off - 128 - len(block))
    rechecksum(data)
    (tmp_path / "bomb.mpk").write_bytes(data)
    refused(tmp_path / "bomb.mpk", "M4")
