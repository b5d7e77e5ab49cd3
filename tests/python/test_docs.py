"""docs/PYTHON.md's examples run as written: every ```python block, in order, each in a fresh namespace, in a
folder holding what the page says (the bundled example's model.so, input0.bin and expected0.bin, and
tiny_mlp.mpk packed from them)."""

from __future__ import annotations

import re
import shutil

import pytest

from conftest import SOURCE_DIR

PAGE = SOURCE_DIR / "docs" / "PYTHON.md"


def blocks() -> list[str]:
    found = re.findall(r"^```python\n(.*?)^```$", PAGE.read_text(), flags=re.S | re.M)
    assert len(found) >= 5, f"{PAGE} has {len(found)} python blocks"
    return found


@pytest.mark.parametrize("index", range(len(blocks())))
def test_example_runs(index, built, tiny_so, tmp_path, monkeypatch, capsys):
    for name in ("model.so", "input0.bin", "expected0.bin"):
        shutil.copy(tiny_so.parent / name, tmp_path / name)
    shutil.copy(built["tiny"], tmp_path / "tiny_mlp.mpk")
    monkeypatch.chdir(tmp_path)
    code = blocks()[index]
    exec(compile(code, f"{PAGE}, python block {index + 1}", "exec"), {"__name__": "__doc_example__"})
    printed = capsys.readouterr().out
    assert "Traceback" not in printed
