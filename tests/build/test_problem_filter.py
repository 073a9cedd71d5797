"""filters/problem.lua under Pandoc (as Quarto and bookbuild run it), on a chapter whose problem
cell has already printed its answer (calc.problems' markdown, as `output: asis` leaves it inside a
`.cell` div): the HTML problem (label, statement, labelled field, Check and worked-answer buttons,
bands, live region, hidden worked answer, the answer as data), print and EPUB (label, statement,
unit, link to the Solutions appendix, no answer), and the build stopping on a problem whose cell
printed no answer."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bookbuild import pandoc
from calc import problems

ROOT = Path(__file__).resolve().parents[2]
DUMP = Path(__file__).resolve().parent / "filters" / "dump_native.lua"


def answer_markdown():
    p = problems.Problem()
    peak = p.step("Dense BF16 peak:", 989.4e12, "FLOP/s")
    bw = p.step("HBM bandwidth:", 3.352e12, "B/s")
    r = p.step(f"Ridge = {peak} / {bw}", peak / bw, "FLOP/B")
    p.answer(r, "FLOP/B", right=0.03, close=0.10)
    return p.markdown()


def chapter(answer=True):
    cell = "::: {.cell}\n" + (answer_markdown() if answer else "") + "\n:::\n"
    return ("# A chapter {#sec-a}\n\nProse before.\n\n::: {.problem #prob-ridge title=\"The ridge point\"}\n"
            + cell + "\nWhat is the H100's ridge point?\n:::\n\nProse after.\n")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "filters").mkdir()
    for name in ("problem.lua", "project.lua"):
        shutil.copy(ROOT / "filters" / name, tmp_path / "filters" / name)
    (tmp_path / "chapters").mkdir()
    return tmp_path


def render(project, fmt, text, out=None):
    (project / "chapters" / "a.qmd").write_text(text)
    args = [pandoc.binary(), "chapters/a.qmd", "-f", "markdown", "-t", fmt, "--lua-filter", "filters/problem.lua",
            "-M", "book-page=chapters/a.html", "-M", "book-root=../"]
    if out:
        args += ["-o", out, "--lua-filter", str(DUMP)]
    return subprocess.run(args, cwd=project, capture_output=True, text=True)


def test_html_problem(project):
    proc = render(project, "html", chapter())
    assert proc.returncode == 0, proc.stderr
    html = proc.stdout
    assert html.count('<section class="problem" id="prob-ridge" data-problem="prob-ridge"') == 1
    assert re.search(r'data-value="295\.1\d*" data-unit="FLOP/B" data-right="0\.03" data-close="0\.1" data-shown="295 FLOP/B"', html)
    assert html.count('href="../assets/css/problems.css"') == 1 and 'src="../assets/js/problems.js"' in html
    assert '<span class="problem-kind">Problem 1</span> The ridge point</p>' in html
    assert '<label for="prob-ridge-input">Your answer (in FLOP/B)</label>' in html
    assert '<button type="submit" class="problem-check">Check</button>' in html
    assert 'aria-expanded="false" aria-controls="prob-ridge-worked">Show the worked answer</button>' in html
    assert "Right within ±3%, close within ±10%." in html
    assert 'role="status" aria-live="polite"' in html
    worked = re.search(r'<div id="prob-ridge-worked" class="problem-worked" hidden="">(.*?)</div>', html, re.S).group(1)
    assert "990 TFLOP/s / 3.35 TB/s = 295 FLOP/B" in worked and "<strong>Answer: 295 FLOP/B</strong>" in worked
    assert html.index("What is the H100") < html.index("problem-form")          # statement above the field
    assert 'class="cell"' not in html                                            # the emptied cell is gone


@pytest.mark.parametrize("fmt", ["typst", "epub3"])
def test_print_and_epub(project, fmt):
    proc = render(project, fmt, chapter(), out="out." + fmt)
    assert proc.returncode == 0, proc.stderr
    native = (project / "ast.native").read_text()
    assert 'Str "Problem 1: The ridge point"' in native and 'Str "ridge"' in native
    assert '"../appendices/solutions.qmd#sol-prob-ridge"' in native
    assert 'Str "FLOP/B;"' in native
    assert "TFLOP/s" not in native and "problem-answer" not in native and "Answer:" not in native


def test_a_problem_whose_cell_printed_no_answer_stops_the_build(project):
    proc = render(project, "html", chapter(answer=False))
    assert proc.returncode != 0
    assert "problem.lua: chapters/a.qmd:5: problem #prob-ridge has no answer" in proc.stderr, proc.stderr


FIXTURE_PROBLEM = '''
::: {.problem #prob-ridge title="Ridge point"}
```{python}
#| output: asis
from calc import problems
p = problems.problem()
r = p.step("Peak / bandwidth = 1000 / 10", 100.0, "FLOP/B")
p.answer(r, "FLOP/B", right=0.03, close=0.10)
print(p.markdown())
```

What is the ridge point?
:::
'''

FIXTURE_SOLUTIONS = '''
```{python}
#| output: asis
from calc import problems
print(problems.solutions_markdown(".", ["chapters/two.qmd"]))
```
'''


def test_the_fixture_book_builds_a_problem_and_prints_its_worked_answer_in_the_appendix(fixture_book):
    # the whole path: the cell executed by bookbuild's kernel, its asis output read by the filter
    # inside the div, the HTML page; the PDF with the statement in the chapter and the working in
    # the appendix (pdftotext)
    from bookbuild import build
    from fixturebook import append
    book = fixture_book
    for name in ("problem.lua", "project.lua"):
        shutil.copy(ROOT / "filters" / name, book / "filters" / name)
    shutil.copytree(ROOT / "calc", book / "calc", ignore=shutil.ignore_patterns("__pycache__"))
    cfg = book / "_quarto.yml"
    cfg.write_text(cfg.read_text().replace("  - filters/shout.lua\n",
                                           "  - filters/shout.lua\n  - path: filters/problem.lua\n    at: pre-ast\n"))
    append(book / "chapters/two.qmd", FIXTURE_PROBLEM)
    append(book / "chapters/appendix.qmd", FIXTURE_SOLUTIONS)
    build(book, ("html", "pdf"), search=False)
    html = (book / "_book/chapters/two.html").read_text(encoding="utf-8")
    assert '<section class="problem" id="prob-ridge"' in html and 'data-value="100.0" data-unit="FLOP/B"' in html
    assert "Peak / bandwidth = 1000 / 10 = 100 FLOP/B" in html.split('class="problem-worked"')[1]
    pdf = next((book / "_book").glob("*.pdf"))
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    cut = text.rindex("Extra tables")              # the appendix's heading (the first is the contents')
    chapter, appendix = text[:cut], text[cut:]
    assert "Problem 1: Ridge point" in chapter and "Answer in FLOP/B; worked answer: Solutions." in chapter
    assert "Peak / bandwidth" not in chapter
    assert "Problem 1: Ridge point" in appendix and "1. Peak / bandwidth = 1000 / 10 = 100 FLOP/B" in appendix
    assert "Answer: 100 FLOP/B (right within ±3%, close within ±10%)." in appendix
