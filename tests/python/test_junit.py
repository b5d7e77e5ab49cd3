"""`--junit FILE` of verify, run and run --bench: the XML CI systems read, for passing, failing and erroring cases.

Each file is read with Debian's python3-junitparser (the counts, each case's result, its message), and checked
against the rules of the JUnit XML schema Jenkins publishes (junit-10.xsd), which GitLab and GitHub's test
reporters read too: which elements may hold which, in what order, which attributes each may have and must have,
and their types."""

from __future__ import annotations

import pathlib
import re
import subprocess
import xml.etree.ElementTree as ET

import junitparser
import pytest

# junit-10.xsd: each element's attributes (required ones first, marked), and the children it may hold, in order.
ATTRIBUTES = {
    "testsuites": ({"name", "time", "tests", "failures", "disabled", "errors"}, set()),
    "testsuite": ({"name", "tests", "failures", "errors", "time", "disabled", "skipped", "timestamp", "hostname",
                   "id", "package", "file", "log", "url", "version"}, {"name", "tests"}),
    "properties": (set(), set()),
    "property": ({"name", "value"}, {"name", "value"}),
    "testcase": ({"name", "assertions", "time", "classname", "status", "class", "file", "line", "log", "group",
                  "url"}, {"name"}),
    "skipped": ({"message"}, set()),
    "error": ({"message", "type"}, set()),
    "failure": ({"message", "type"}, set()),
    "system-out": (set(), set()),
    "system-err": (set(), set()),
}
CHILDREN = {
    "testsuites": ["testsuite"],
    "testsuite": ["properties", "testcase", "system-out", "system-err"],
    "properties": ["property"],
    "testcase": ["skipped", "error", "failure", "system-out", "system-err"],
}
INTEGER = re.compile(r"^[0-9]+$")
DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")
TIMESTAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")  # xs:dateTime, no zone


def schema_problems(e: ET.Element, path: str = "") -> list[str]:
    where = f"{path}/{e.tag}"
    if e.tag not in ATTRIBUTES:
        return [f"{where}: not an element of the schema"]
    allowed, required = ATTRIBUTES[e.tag]
    problems = [f"{where}: attribute {a} not in the schema" for a in set(e.attrib) - allowed]
    problems += [f"{where}: no {a} attribute" for a in required - set(e.attrib)]
    for a, v in e.attrib.items():
        if a in ("tests", "failures", "errors", "skipped", "disabled") and not INTEGER.match(v):
            problems.append(f"{where}: {a}={v!r} is not a count")
        if a == "time" and not DECIMAL.match(v):
            problems.append(f"{where}: time={v!r} is not a decimal")
        if a == "timestamp" and not TIMESTAMP.match(v):
            problems.append(f"{where}: timestamp={v!r} is not the schema's dateTime")
    order = CHILDREN.get(e.tag, [])
    last = -1
    for c in e:
        if c.tag not in order:
            problems.append(f"{where}: {c.tag} may not be inside {e.tag}")
            continue
        if order.index(c.tag) < last:
            problems.append(f"{where}: {c.tag} out of the schema's order")
        last = order.index(c.tag)
        problems += schema_problems(c, where)
    if e.tag not in CHILDREN and len(e):
        problems.append(f"{where}: holds elements")
    if e.tag == "testcase" and len(e.findall("skipped")) > 1:
        problems.append(f"{where}: more than one skipped")
    return problems


def read(path: pathlib.Path) -> junitparser.TestSuite:
    """The one suite of a --junit file, after the schema's rules and the counts it states were checked."""
    assert schema_problems(ET.parse(path).getroot()) == []
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert len(suites) == 1
    suite = suites[0]
    cases = list(suite)
    results = [type(r) for c in cases for r in c.result]
    assert suite.tests == len(cases)
    assert suite.failures == results.count(junitparser.Failure)
    assert suite.errors == results.count(junitparser.Error)
    assert suite.skipped == results.count(junitparser.Skipped)
    assert (xml.tests, xml.failures, xml.errors) == (suite.tests, suite.failures, suite.errors)
    return suite


def mpspack(mpspack_bin, *args, code: int) -> subprocess.CompletedProcess:
    r = subprocess.run([mpspack_bin, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == code, r.stderr
    return r


@pytest.fixture()
def tiny(tmp_path, mpspack_bin, tiny_so) -> pathlib.Path:
    d = tiny_so.parent
    out = tmp_path / "tiny.mpk"
    mpspack(mpspack_bin, "build", tiny_so, "--example-input", f"{d / 'input0.bin'}:f32:4x16", "--example-output",
            f"{d / 'expected0.bin'}:f32:4x8", "-o", out, code=0)
    return out


def only_case(suite: junitparser.TestSuite) -> junitparser.TestCase:
    cases = list(suite)
    assert len(cases) == 1
    return cases[0]


def test_verify_passes_fails_and_errors(tmp_path, mpspack_bin, tiny):
    x = tmp_path / "verify.xml"
    mpspack(mpspack_bin, "verify", tiny, "--junit", x, code=0)
    case = only_case(read(x))
    assert case.name == str(tiny) and case.classname == "mpspack.verify" and case.is_passed

    damaged = tmp_path / "damaged.mpk"
    data = bytearray(tiny.read_bytes())
    data[-1] ^= 0xFF  # inside the last segment
    damaged.write_bytes(data)
    r = mpspack(mpspack_bin, "verify", damaged, "--junit", x, code=1)
    suite = read(x)
    assert suite.failures == 1
    failure, = only_case(suite).result
    assert isinstance(failure, junitparser.Failure) and failure.type == "damaged"
    assert failure.message and failure.message in r.stderr  # the one-line reason, as on stderr

    text = tmp_path / "notes.txt"
    text.write_text("not a container\n")
    r = mpspack(mpspack_bin, "verify", text, "--junit", x, code=2)
    error, = only_case(read(x)).result
    assert isinstance(error, junitparser.Error)
    assert error.message in r.stderr and "not a file mpspack verify reads" in error.message


def test_run_one_case_per_output_with_the_numbers_of_a_mismatch(tmp_path, mpspack_bin, tiny, tiny_so):
    x = tmp_path / "run.xml"
    mpspack(mpspack_bin, "run", tiny, "--junit", x, code=0)
    case = only_case(read(x))
    assert case.name == f"{tiny} library 'model' output 0" and case.classname == "mpspack.run" and case.is_passed
    assert "max_abs_error: " in case.system_out

    wrong = tmp_path / "wrong.bin"
    wrong.write_bytes(bytes(4 * 32))  # zeros: every element off
    r = mpspack(mpspack_bin, "run", tiny, "--input", f"{tiny_so.parent / 'input0.bin'}:f32:4x16", "--expect",
                f"{wrong}:f32:4x8", "--junit", x, code=1)
    failure, = only_case(read(x)).result
    assert isinstance(failure, junitparser.Failure) and failure.type == "mismatch"
    assert failure.message.startswith(f"DOES NOT MATCH {wrong}: ")
    assert "elements out of tolerance" in failure.message
    assert re.search(r"^mismatches: [0-9]+ of 32$", failure.text, re.M)
    assert "max_abs_error: " in failure.text and "first_mismatch: [" in failure.text
    assert "output 0 does not match" in r.stderr

    mpspack(mpspack_bin, "run", tiny, "--input", f"{tiny_so.parent / 'input0.bin'}:f32:4x16", "--junit", x, code=0)
    skipped, = only_case(read(x)).result
    assert isinstance(skipped, junitparser.Skipped) and "no reference" in skipped.message

    mpspack(mpspack_bin, "run", tmp_path / "absent.mpk", "--junit", x, code=2)
    error, = only_case(read(x)).result
    assert isinstance(error, junitparser.Error) and "absent.mpk" in error.message


def test_bench_case_carries_the_figures_and_fails_on_a_mismatch(tmp_path, mpspack_bin, tiny, tiny_so):
    x = tmp_path / "bench.xml"
    mpspack(mpspack_bin, "run", tiny, "--bench", "--iterations", "3", "--repetitions", "2", "--junit", x, code=0)
    suite = read(x)
    case = only_case(suite)
    assert case.classname == "mpspack.bench" and case.is_passed
    assert re.search(r"^latency_ms: p50 [0-9.e+-]+, p90 ", case.system_out, re.M)
    assert "repetitions: 2" in case.system_out
    assert {p.name for p in suite.properties()} >= {"mpspack_version", "backend", "container_sha256"}

    wrong = tmp_path / "wrong.bin"
    wrong.write_bytes(bytes(4 * 32))
    mpspack(mpspack_bin, "run", tiny, "--bench", "--iterations", "2", "--input",
            f"{tiny_so.parent / 'input0.bin'}:f32:4x16", "--expect", f"{wrong}:f32:4x8", "--junit", x, code=1)
    failure, = only_case(read(x)).result
    assert isinstance(failure, junitparser.Failure) and "do not match" in failure.message

    mpspack(mpspack_bin, "run", tmp_path / "absent.mpk", "--bench", "--junit", x, code=2)
    error, = only_case(read(x)).result
    assert isinstance(error, junitparser.Error)


def test_names_that_xml_cannot_hold_are_escaped(tmp_path, mpspack_bin, tiny):
    odd = tmp_path / "a&b<c>\"'\x01.mpk"
    odd.write_bytes(tiny.read_bytes())
    x = tmp_path / "odd.xml"
    mpspack(mpspack_bin, "verify", odd, "--junit", x, code=0)
    assert only_case(read(x)).name == str(tmp_path / "a&b<c>\"'\\x01.mpk")  # the control byte as printable() writes it


def test_a_junit_file_that_cannot_be_written_is_one_error_and_nothing_is_left(tmp_path, mpspack_bin, tiny):
    r = mpspack(mpspack_bin, "verify", tiny, "--junit", tmp_path / "absent" / "v.xml", code=2)
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("mpspack: --junit: ")
    assert not (tmp_path / "absent").exists()
    r = mpspack(mpspack_bin, "verify", tiny, "--junit", "", code=2)
    assert r.stderr == "mpspack: --junit: an empty value is not allowed (see --help)\n"


def test_the_schema_check_refuses_what_the_schema_refuses():
    good = ('<testsuites tests="1"><testsuite name="s" tests="1" time="0.001"><properties><property name="a" '
            'value="b"/></properties><testcase name="c" classname="k" time="0.000"><failure message="m" type="t">x'
            '</failure><system-out>y</system-out></testcase></testsuite></testsuites>')
    assert schema_problems(ET.fromstring(good)) == []
    for bad, why in [(good.replace('<testcase name="c"', '<testcase'), "no name attribute"),
                     (good.replace('classname="k"', 'classname="k" seconds="1"'), "attribute seconds not in"),
                     (good.replace('tests="1" time', 'tests="one" time'), "is not a count"),
                     (good.replace('time="0.001"', 'time="1ms"'), "is not a decimal"),
                     (good.replace("<failure", "<system-out>z</system-out><failure"), "out of the schema's order"),
                     (good.replace("<properties>", "<testcase name='e'/><properties>"), "out of the schema's order"),
                     (good.replace("<system-out>y</system-out>", "<stdout>y</stdout>"), "may not be inside")]:
        assert any(why in p for p in schema_problems(ET.fromstring(bad))), why
