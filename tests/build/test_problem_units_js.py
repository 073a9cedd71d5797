"""assets/js/problem-units.js, the page's reader of answers, on the same cases as calc.problems
(tests/fixtures/problem_units.json) and with the same unit words: in node, beside the build's other
tests of the page's scripts (tests/calc/test_problems.py holds the Python side)."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from calc import problems as P

ROOT = Path(__file__).resolve().parents[2]
CASES = json.loads((ROOT / "tests" / "fixtures" / "problem_units.json").read_text())["cases"]


def _expect(got, case):
    typed, value, unit, right, close, verdict, want = case
    assert got["verdict"] == verdict, (case, got)
    if verdict == "invalid":
        assert want in got["message"], (case, got)
    else:
        assert got["value"] == pytest.approx(want, rel=1e-9), (case, got)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_grade_javascript_agrees():
    # the page's module on the same cases, in one node run
    script = ("import {grade} from " + json.dumps((ROOT / "assets/js/problem-units.js").as_uri()) + ";\n"
              "import {readFileSync} from 'node:fs';\n"
              "const cases = JSON.parse(readFileSync(process.argv[1], 'utf8')).cases;\n"
              "console.log(JSON.stringify(cases.map((c) => grade(...c.slice(0, 5)))));\n")
    out = subprocess.run(["node", "--input-type=module", "-e", script, str(ROOT / "tests/fixtures/problem_units.json")],
                         capture_output=True, text=True, check=True).stdout
    for case, got in zip(CASES, json.loads(out), strict=True):
        _expect(got, case)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_knows_the_same_unit_words():
    script = ("import {ATOM_TABLE} from " + json.dumps((ROOT / "assets/js/problem-units.js").as_uri()) + ";\n"
              "console.log(JSON.stringify(ATOM_TABLE));\n")
    js = json.loads(subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True,
                                   check=True).stdout)
    assert js == {k: [s, list(d)] for k, (s, d) in P._ATOMS.items()}
