"""filters/exercise.lua under Pandoc (as Quarto and bookbuild run it): the HTML exercise (statement,
starter code block, buttons, live region, hidden hints and solution, page data with the reference's
counts), print and EPUB (statement, starter, collapsed callouts, no check), and the build stopping
at file:line when a reference fails its check or a starter passes it (python3 -m calc.exercises
page, which the filter runs)."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bookbuild import pandoc

ROOT = Path(__file__).resolve().parents[2]
DUMP = Path(__file__).resolve().parent / "filters" / "dump_native.lua"

CHAPTER = '''# A chapter {#sec-a}

Prose before.

::: {.exercise #ex-copy}
#### Exercise: a copy

Copy A to B, one element per thread.

```{.python .starter}
def copy(A, B, n):
    i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x
    if i < n:
        B[i] = A[i]
```

::: {.hint}
Use `cuda.threadIdx.x` last.
:::

::: {.hint}
`cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x`.
:::

::: {.solution}
```{.python}
def copy(A, B, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        B[i] = A[i]
```

Neighbouring lanes read neighbouring elements.
:::

```{.python .check}
sizes = [1, 33, 256]

def inputs(n, rng):
    return (Array("A", [rng.random() for _ in range(n)]), Array("B", n), n)

def launch_shape(n):
    return ((n + 31) // 32,), 32

def expected(n, A, B, _n):
    return {"B": list(A.data)}

budgets = ["sectors_per_request <= 4", "global_requests <= 2 * reference"]
```
:::

Prose after.
'''


@pytest.fixture
def project(tmp_path):
    (tmp_path / "filters").mkdir()
    for name in ("exercise.lua", "project.lua"):
        shutil.copy(ROOT / "filters" / name, tmp_path / "filters" / name)
    shutil.copytree(ROOT / "calc", tmp_path / "calc", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "a.qmd").write_text(CHAPTER)
    return tmp_path


def render(project: Path, fmt: str, text: str | None = None) -> subprocess.CompletedProcess:
    if text is not None:
        (project / "chapters" / "a.qmd").write_text(text)
    return subprocess.run([pandoc.binary(), "chapters/a.qmd", "-f", "markdown", "-t", fmt,
                           "--lua-filter", "filters/exercise.lua", "-M", "book-page=chapters/a.html",
                           "-M", "book-root=../"], cwd=project, capture_output=True, text=True)


def test_html_exercise(project):
    proc = render(project, "html")
    assert proc.returncode == 0, proc.stderr
    html = proc.stdout
    assert html.count('<section class="exercise" id="ex-copy"') == 1
    assert html.count('href="../assets/css/exercises.css"') == 1 and '"../assets/js/exercises.js"' in html
    assert re.search(r'<div class="exercise-status" role="status" aria-live="polite">', html)
    for label in ("Run", "Check", "Stop", "Start over", "Hint (1 of 2)", "Solution"):
        assert f">{label}</button>" in html, label
    assert html.count('class="exercise-hint" hidden') == 2 and 'class="exercise-solution" hidden' in html
    assert "exercise-starter" in html and "cuda.threadIdx.x * cuda.gridDim.x" in html
    assert "sizes = [1, 33, 256]" not in html.split('class="exercise-data"')[0]   # the check is data, not text
    data = json.loads(re.search(r'<script type="application/json" class="exercise-data">(.*?)</script>', html, re.S).group(1))
    assert data["id"] == "ex-copy" and data["reference"]["figures"]["sectors_per_request"] == 4
    assert data["reference"]["figures"]["global_loads"] == 256 // 32       # at the measured size, 256
    assert "<h4" not in html.split("exercise-statement")[1].split("</div>")[0]   # the title is the label


@pytest.mark.parametrize("fmt", ["typst", "epub3"])
def test_print_and_epub(project, fmt):
    # the filter's output as Pandoc's AST, written for that format (-t json runs it with FORMAT=json;
    # a Lua writer wrapper would be heavier): the filter sees FORMAT through -t
    proc = subprocess.run([pandoc.binary(), "chapters/a.qmd", "-f", "markdown", "-t", fmt, "-o", "out." + fmt,
                           "--lua-filter", "filters/exercise.lua", "--lua-filter", str(DUMP),
                           "-M", "book-page=chapters/a.html"], cwd=project, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    native = (project / "ast.native").read_text()
    assert 'Str "Copy"' in native and "cuda.threadIdx.x * cuda.gridDim.x" in native
    assert native.count('"callout-tip"') == 3 and native.count('( "collapse" , "true" )') == 3
    assert '( "title" , "Hint 1" )' in native and '( "title" , "Solution" )' in native
    assert "sizes = [1, 33, 256]" not in native
    assert "exercise-data" not in native


def line_of(text, needle):
    return next(k + 1 for k, ln in enumerate(text.split("\n")) if needle in ln)


def test_a_starter_that_passes_stops_the_build_at_its_line(project):
    text = CHAPTER.replace("    i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x", "    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x")
    proc = render(project, "html", text)
    assert proc.returncode != 0
    want = f"exercise.lua: chapters/a.qmd:{line_of(text, '{.python .starter}') + 1}: the starter of #ex-copy passes"
    assert want in proc.stderr, proc.stderr


def test_a_reference_that_fails_stops_the_build_at_its_line(project):
    text = CHAPTER.replace("    if i < n:\n        B[i] = A[i]\n```\n\nNeighbouring", "    B[i] = A[i]\n```\n\nNeighbouring")
    assert text != CHAPTER
    proc = render(project, "html", text)
    assert proc.returncode != 0
    line = line_of(text, "::: {.solution}") + 4       # the unguarded store, in the chapter
    assert f"exercise.lua: chapters/a.qmd:{line}: the reference solution of #ex-copy fails its own check" in proc.stderr, proc.stderr
    assert "outside global array A" in proc.stderr


def test_an_unknown_budget_stops_the_build_at_its_line(project):
    text = CHAPTER.replace('"sectors_per_request <= 4"', '"sectors_per_req <= 4"')
    proc = render(project, "html", text)
    assert proc.returncode != 0
    assert f"chapters/a.qmd:{line_of(text, 'sectors_per_req')}: unknown budget name 'sectors_per_req'" in proc.stderr, proc.stderr
