"""docs/CI.md's pipeline and its script twin (tests/ci/pipeline.sh, run by CTest as "docs/CI.md pipeline") hold
the same steps: the YAML step that runs mpspack (GitHub's `run: |` step, GitLab's `script: - |`) is, line for line
and in order, the script's steps, in both YAML files, so the document cannot drift from what is tested. Lines that
only a CI system runs (installing the .deb, the cache) are outside those steps."""

from __future__ import annotations

import re

from conftest import SOURCE_DIR

DOC = SOURCE_DIR / "docs" / "CI.md"
SCRIPT = SOURCE_DIR / "tests" / "ci" / "pipeline.sh"


def yaml_blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", DOC.read_text(), re.S)


def literal_blocks(yaml: str) -> list[list[str]]:
    """The lines of each literal block (`key: |` or `- |`), dedented: a step's shell script."""
    blocks, lines = [], yaml.splitlines()
    for i, line in enumerate(lines):
        if not re.search(r"(^\s*-|:)\s*\|\s*$", line):
            continue
        indent = len(line) - len(line.lstrip())
        body = []
        for following in lines[i + 1:]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            body.append(following)
        width = min(len(b) - len(b.lstrip()) for b in body if b.strip())
        blocks.append([b[width:].rstrip() for b in body if b.strip()])
    return blocks


def steps(yaml: str) -> list[str]:
    """The literal block that runs mpspack build (the other literal blocks list artifact paths)."""
    found = [b for b in literal_blocks(yaml) if any(line.startswith("mpspack build ") for line in b)]
    assert len(found) == 1
    return found[0]


def script_steps() -> list[str]:
    text = SCRIPT.read_text()
    body = text.split("# --- steps of docs/CI.md\n", 1)[1].split("# --- end of the steps\n", 1)[0]
    return [line.rstrip() for line in body.splitlines() if line.strip()]


def test_both_yaml_files_run_exactly_the_script_twin_steps():
    blocks = yaml_blocks()
    assert len(blocks) == 2  # GitHub Actions, GitLab CI
    twin = script_steps()
    assert any(line.startswith("mpspack report --baseline ") for line in twin)
    for yaml in blocks:
        assert steps(yaml) == twin


def test_the_step_lines_are_found_by_the_check():
    # A line changed in the document only is a difference the check above must see.
    changed = yaml_blocks()[0].replace("--max-slowdown 10%", "--max-slowdown 20%")
    assert steps(changed) != script_steps()
