"""`bookbuild check` lints sources without executing them: each defect is named with file and line."""
from pathlib import Path

import pytest

from bookbuild.check import check, run_check
from fixturebook import append


def only(findings, kind=None):
    assert len(findings) == 1, [str(f) for f in findings]
    if kind:
        assert findings[0].kind == kind
    return findings[0]


def test_fixture_book_is_clean(fixture_book, capsys):
    assert check(fixture_book) == []
    assert run_check(fixture_book) == 0
    assert "no problems" in capsys.readouterr().out


def test_unknown_cell_option_is_an_error(fixture_book):
    line = append(fixture_book / "chapters/two.qmd", "```{python}\n#| colour: red\n1\n```\n")
    f = only(check(fixture_book), "error")
    assert (f.file, f.line) == ("chapters/two.qmd", line)
    assert "unknown cell option `colour`" in f.message


def test_documented_but_unsupported_cell_option_is_named(fixture_book):
    append(fixture_book / "chapters/two.qmd", "```{python}\n#| layout-ncol: 2\n1\n```\n")
    f = only(check(fixture_book), "unsupported")
    assert "layout-ncol" in f.message


def test_figure_without_alt_text(fixture_book):
    line = append(fixture_book / "chapters/two.qmd",
                  '```{python}\n#| label: fig-noalt\n#| fig-cap: "No alt."\n1\n```\n')
    f = only(check(fixture_book), "error")
    assert f.line == line and "fig-noalt has no fig-alt" in f.message


def test_markdown_image_without_alt_text(fixture_book):
    (fixture_book / "chapters/pic.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    line = append(fixture_book / "chapters/two.qmd", "Look: ![](pic.svg)\n")
    f = only(check(fixture_book), "error")
    assert f.line == line and "no alt text" in f.message


def test_unknown_div_class(fixture_book):
    line = append(fixture_book / "chapters/two.qmd", "::: {.sidebarx}\nhi\n:::\n")
    f = only(check(fixture_book), "error")
    assert f.line == line and ".sidebarx" in f.message


def test_div_class_handled_by_a_project_filter_is_known(fixture_book):
    # filters/shout.lua handles .shout, which one.qmd already uses; a second use is still fine
    append(fixture_book / "chapters/two.qmd", "::: {.shout}\nloud\n:::\n")
    assert check(fixture_book) == []


@pytest.mark.parametrize("source, feature", [
    ("{{< pagebreak >}}\n", "shortcode"),
    ("::: {.column-screen}\nwide\n:::\n", ".column-screen"),   # (column-page is implemented, #34)
    ("```{r}\n1 + 1\n```\n", "{r} cell"),
    ("```{ojs}\n1 + 1\n```\n", "Observable JS"),
    ("::: {layout-ncol=2}\na\n:::\n", "layout-ncol"),
])
def test_unsupported_quarto_features_are_named(fixture_book, source, feature):
    line = append(fixture_book / "chapters/two.qmd", source)
    f = only(check(fixture_book), "unsupported")
    assert f.line == line and feature in f.message


def test_broken_cross_reference_and_citation(fixture_book):
    line = append(fixture_book / "chapters/two.qmd", "See @fig-nowhere and [@nobody2020].\n")
    findings = check(fixture_book)
    assert {(f.line, f.message) for f in findings} == {
        (line, "cross-reference @fig-nowhere points at no label"),
        (line, "citation @nobody2020 is not in the bibliography"),
    }


def test_broken_internal_links(fixture_book):
    line = append(fixture_book / "chapters/two.qmd",
                  "[a](one.qmd#sec-figs) [b](one.qmd#nope) [c](missing.qmd) [d](#sec-two) [e](https://x.org)\n")
    findings = check(fixture_book)
    assert sorted(f.message for f in findings) == [
        "link to missing.qmd: no such page or file",
        "link to one.qmd#nope: no #nope on chapters/one.html",
    ]
    assert all(f.line == line for f in findings)


def test_duplicate_label(fixture_book):
    line = append(fixture_book / "chapters/two.qmd", "## Again {#sec-figs}\n")
    f = only(check(fixture_book), "error")
    assert f.line == line and "duplicate label sec-figs" in f.message


def test_unsupported_config_keys(fixture_book):
    cfg = fixture_book / "_quarto.yml"
    cfg.write_text(cfg.read_text().replace("format:\n  html:\n", "format:\n  docx: default\n  html:\n    theme: cosmo\n"))
    findings = check(fixture_book)
    assert sorted(f.message for f in findings) == [
        "`format.html.theme` is a Quarto option this build ignores",
        "format `docx`: this build writes html, typst (PDF) and epub only",
    ]
    assert all(f.kind == "unsupported" and f.file == "_quarto.yml" and f.line for f in findings)


def test_typst_template_partials_must_exist_and_be_quartos(fixture_book):
    """`template-partials` is Quarto's side of book.typ (_typst/ in the book): each must exist and
    replace one of Quarto's typst partials by its name, or Quarto's render fails or ignores it."""
    cfg = fixture_book / "_quarto.yml"
    (fixture_book / "_typst").mkdir()
    (fixture_book / "_typst/page.typ").write_text("#set page(paper: \"a4\")\n")
    (fixture_book / "_typst/extra.typ").write_text("\n")
    cfg.write_text(cfg.read_text().replace("    papersize: a4\n", "    papersize: a4\n    margin: {x: 2cm, y: 2cm}\n"
                   "    fontsize: 11pt\n    template-partials: [_typst/page.typ, _typst/extra.typ, _typst/typst-show.typ]\n"))
    found = sorted(f.message for f in check(fixture_book))
    assert found == ["template partial _typst/extra.typ replaces none of Quarto's typst partials (numbering.typ, "
                     "definitions.typ, typst-template.typ, page.typ, typst-show.typ, notes.typ, biblio.typ)",
                     "template partial _typst/typst-show.typ does not exist"], found


def test_prerequisite_must_be_a_chapter(fixture_book):
    p = fixture_book / "chapters/two.qmd"
    p.write_text("---\nprerequisites: [chapters/nine.qmd]\n---\n" + p.read_text())
    f = only(check(fixture_book), "error")
    assert f.line == 2 and "chapters/nine.qmd" in f.message


def test_malformed_config_is_reported_not_raised(fixture_book):
    (fixture_book / "_quarto.yml").write_text("project:\n  type: book\n book: [\n")
    f = only(check(fixture_book), "error")
    assert f.file == "_quarto.yml" and "malformed YAML" in f.message


def test_check_does_not_execute_cells(fixture_book):
    append(fixture_book / "chapters/two.qmd", "```{python}\nraise SystemExit('executed!')\n```\n")
    assert check(fixture_book) == []
    assert not (fixture_book / ".bookcache" / "exec").exists()


def test_the_book_itself_is_clean():
    root = Path(__file__).resolve().parents[2]
    assert [str(f) for f in check(root)] == []


def test_margin_captions_are_named_as_unsupported(fixture_book):
    cfg = fixture_book / "_quarto.yml"
    cfg.write_text(cfg.read_text() + "tbl-cap-location: margin\n")
    f = only(check(fixture_book), "unsupported")
    assert f.message == "`tbl-cap-location: margin`: this build places captions top or bottom only"
    assert f.file == "_quarto.yml" and f.line == len(cfg.read_text().splitlines())


# -- exercises (issue #29): calc.exercises.validate_book, run by check without running a kernel

EXERCISE = '''::: {.exercise #ex-copy}
Copy A to B.

```{.python .starter}
def copy(A, B, n):
    pass
```

::: {.hint}
One element per thread.
:::

::: {.solution}
```{.python}
def copy(A, B, n):
    i = blockIdx.x * blockDim.x + threadIdx.x
    if i < n:
        B[i] = A[i]
```
:::

```{.python .check}
sizes = [1, 33]

def inputs(n, rng):
    return (Array("A", [rng.random() for _ in range(n)]), Array("B", n), n)

def launch_shape(n):
    return ((n + 31) // 32,), 32

def expected(n, A, B, _n):
    return {"B": list(A.data)}

budgets = ["sectors_per_request <= 4", "global_requests <= 2 * reference"]
```
:::
'''


def with_exercises(book: Path) -> Path:
    """The fixture book with the project's exercise filter and calc.exercises."""
    import shutil
    repo = Path(__file__).resolve().parents[2]
    for name in ("exercise.lua", "project.lua"):
        shutil.copy(repo / "filters" / name, book / "filters" / name)
    shutil.copytree(repo / "calc", book / "calc", ignore=shutil.ignore_patterns("__pycache__"))
    cfg = book / "_quarto.yml"
    cfg.write_text(cfg.read_text().replace("  - filters/shout.lua\n",
                                           "  - filters/shout.lua\n  - path: filters/exercise.lua\n    at: pre-ast\n"))
    return book


def test_a_valid_exercise_is_clean(fixture_book):
    book = with_exercises(fixture_book)
    append(book / "chapters/two.qmd", EXERCISE)
    assert check(book) == []


@pytest.mark.parametrize("edit, needle, message", [
    (("budgets = [", "budget = ["), "budget = [", "unknown key 'budget'"),
    (('"sectors_per_request <= 4"', '"sector_per_request <= 4"'), "sector_per_request", "unknown budget name"),
    (("::: {.solution}", "::: {.callout-note}"), "{.exercise #ex-copy}", "has no solution"),
    (("::: {.hint}\nOne element per thread.\n:::\n", ""), "{.exercise #ex-copy}", "has 0 hints"),
])
def test_exercise_problems_are_errors_at_their_line(fixture_book, edit, needle, message):
    book = with_exercises(fixture_book)
    text = EXERCISE.replace(*edit)
    assert text != EXERCISE
    start = append(book / "chapters/two.qmd", text)
    found = [f for f in check(book) if message in f.message]
    assert found, [str(f) for f in check(book)]
    f = found[0]
    assert f.kind == "error" and f.file == "chapters/two.qmd"
    assert f.line == start + next(k for k, ln in enumerate(text.split("\n")) if needle in ln)


PROBLEM = '''
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


def with_problems(book: Path) -> Path:
    """The fixture book with the project's problem filter and calc.problems."""
    import shutil
    repo = Path(__file__).resolve().parents[2]
    for name in ("problem.lua", "project.lua"):
        shutil.copy(repo / "filters" / name, book / "filters" / name)
    shutil.copytree(repo / "calc", book / "calc", ignore=shutil.ignore_patterns("__pycache__"))
    cfg = book / "_quarto.yml"
    cfg.write_text(cfg.read_text().replace("  - filters/shout.lua\n",
                                           "  - filters/shout.lua\n  - path: filters/problem.lua\n    at: pre-ast\n"))
    return book


def test_a_valid_problem_is_clean(fixture_book):
    book = with_problems(fixture_book)
    append(book / "chapters/two.qmd", PROBLEM)
    assert check(book) == []


@pytest.mark.parametrize("edit, needle, message", [
    (('p.answer(r, "FLOP/B", right=0.03, close=0.10)\n', ""), "```{python}", "has no p.answer"),
    (('"FLOP/B", right', '"FLOP/furlong", right'), "p.answer", "unknown unit “furlong”"),
    ((", close=0.10)", ")"), "p.answer", "needs its tolerance close="),
    ((' title="Ridge point"', ""), "{.problem", 'needs a title="..."'),
    (("#prob-ridge", "#ridge"), "{.problem", "needs an id starting with prob-"),
])
def test_problem_mistakes_are_errors_at_their_line(fixture_book, edit, needle, message):
    book = with_problems(fixture_book)
    text = PROBLEM.replace(*edit)
    assert text != PROBLEM
    start = append(book / "chapters/two.qmd", text)
    found = [f for f in check(book) if message in f.message]
    assert found, [str(f) for f in check(book)]
    f = found[0]
    assert f.kind == "error" and f.file == "chapters/two.qmd"
    want = start + next(k for k, ln in enumerate(text.split("\n")) if needle in ln)
    assert f.line == (want + 1 if needle == "```{python}" else want)


def test_an_exercise_id_used_twice(fixture_book):
    book = with_exercises(fixture_book)
    append(book / "chapters/one.qmd", EXERCISE)
    line = append(book / "chapters/two.qmd", EXERCISE)
    f = only(check(book), "error")
    assert f.file == "chapters/two.qmd" and f.line == line and "used twice" in f.message
