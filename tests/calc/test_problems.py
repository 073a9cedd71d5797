"""calc.problems: reading a reader's answer (the same cases as assets/js/problem-units.js, from
tests/fixtures/problem_units.json), showing numbers at two or three figures, a problem's worked
answer, the static validation `bookbuild check` uses, and the Solutions appendix's problems. (The
page's own module on the same cases runs in node: tests/build/test_problem_units_js.py; this file
also runs inside Pyodide, tests/calc/test_in_pyodide.py.)"""
import json
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


@pytest.mark.parametrize("case", CASES, ids=[c[0] or "(empty)" for c in CASES])
def test_grade_python(case):
    _expect(P.grade(*case[:5]), case)


def test_units_of_another_dimension_are_refused_with_what_each_measures():
    g = P.grade("3 ms", 1.2e12, "TB/s", 0.03, 0.1)
    assert g["verdict"] == "invalid" and g["message"] == "“ms” is a time, but this answer is a bandwidth: give it in TB/s"


@pytest.mark.parametrize("value, unit, shown", [
    (295.2, "FLOP/B", "295 FLOP/B"),          # two figures would be 1.6 % off: three
    (989.4e12, "FLOP/s", "990 TFLOP/s"),      # two are 0.06 % off
    (3.352e12, "B/s", "3.35 TB/s"),
    (80 * 2**30, "GiB", "80 GiB"),
    (3.4e-3, "s", "3.4 ms"),
    (0.3, "%", "30%"),
    (8, "GPUs", "8 GPUs"),
    (140e9, "GB", "140 GB"),
    (4.0, "×", "4×"),
    (1.432, "×", "1.43×"),
    (1024, "B", "1,024 B"),
    (0.05, "%", "5%"),
])
def test_show(value, unit, shown):
    assert P.show(value, unit) == shown


def test_a_problem_prints_its_steps_and_answer_for_the_filter():
    p = P.problem()
    peak = p.step("Dense BF16 peak:", 989.4e12, "FLOP/s")
    bw = p.step("HBM bandwidth:", 3.352e12, "B/s")
    ridge = p.step(f"Ridge point = {peak} / {bw}", peak / bw, "FLOP/B")
    p.answer(ridge, "FLOP/B", right=0.03, close=0.10)
    md = p.markdown()
    assert '::: {.problem-answer value="295.1' in md and 'unit="FLOP/B" right="0.03" close="0.1" shown="295 FLOP/B"' in md
    assert "1. Dense BF16 peak: 990 TFLOP/s\n2. HBM bandwidth: 3.35 TB/s\n3. Ridge point = 990 TFLOP/s / 3.35 TB/s = 295 FLOP/B" in md
    assert "**Answer: 295 FLOP/B** (right within ±3%, close within ±10%)." in md


@pytest.mark.parametrize("right, close", [(0.1, 0.03), (0, 0.1), (0.03, 1.5)])
def test_bands_must_be_ordered_fractions(right, close):
    with pytest.raises(ValueError, match="tolerances"):
        P.Problem().answer(1.0, "s", right=right, close=close)


def test_an_unreadable_unit_stops_the_cell():
    with pytest.raises(P.UnitError, match="unknown unit “furlong”"):
        P.Problem().answer(1.0, "furlong", right=0.03, close=0.1)


CHAPTER = '''# A chapter {#sec-a}

::: {.problem #prob-ridge title="Ridge point"}
What is it?

```{python}
#| output: asis
from calc import problems
p = problems.problem()
x = p.step("Peak / bandwidth = 1000 / 10", 100.0, "FLOP/B")
p.answer(x, "FLOP/B", right=0.03, close=0.1)
print(p.markdown())
```
:::
'''


def test_validate_finds_what_the_build_would_stop_on():
    assert P.validate_book(P.read_problems(CHAPTER, "a.qmd")) == []
    bad = CHAPTER.replace('"FLOP/B", right=0.03, close=0.1', '"FLOP/furlong", right=0.03')
    found = P.validate_book(P.read_problems(bad, "a.qmd"))
    assert [(ln, m.split(":")[0]) for _, ln, m in found] == [(11, "problem #prob-ridge"), (11, "problem #prob-ridge")]
    assert "unknown unit “furlong”" in found[0][2] and "needs its tolerance close=" in found[1][2]
    none = CHAPTER.replace('p.answer(x, "FLOP/B", right=0.03, close=0.1)\n', "")
    assert "has no p.answer" in P.validate_book(P.read_problems(none, "a.qmd"))[0][2]
    untitled = CHAPTER.replace(' title="Ridge point"', "")
    assert P.validate_book(P.read_problems(untitled, "a.qmd"))[0][1:] == (3, 'problem #prob-ridge needs a title="..."')
    twice = CHAPTER + CHAPTER.split("\n", 2)[2]
    assert "used twice" in P.validate_book(P.read_problems(twice, "a.qmd"))[0][2]


def test_solutions_markdown_runs_each_cell_alone(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "a.qmd").write_text(CHAPTER)
    md = P.solutions_markdown(str(tmp_path), ["chapters/a.qmd"])
    assert "### A chapter {.unnumbered .unlisted}" in md
    assert "#### Problem 1: Ridge point {#sol-prob-ridge .unnumbered .unlisted}" in md
    assert "[The problem](../chapters/a.qmd#prob-ridge)." in md
    assert "1. Peak / bandwidth = 1000 / 10 = 100 FLOP/B" in md and "**Answer: 100 FLOP/B**" in md
    (tmp_path / "chapters" / "a.qmd").write_text(CHAPTER.replace("from calc import problems\n", ""))
    with pytest.raises(ValueError, match="must import what it uses"):
        P.solutions_markdown(str(tmp_path), ["chapters/a.qmd"])
