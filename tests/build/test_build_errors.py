"""A defect in the sources stops the build with a BuildError that names the file and the line and
says what to do; nothing half-built (no "??") reaches the output."""
from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild import BuildError, build
from bookbuild.__main__ import main
from fixturebook import append


def build_error(root: Path) -> BuildError:
    with pytest.raises(BuildError) as info:
        build(root, ("html",), search=False)
    return info.value


def assert_untouched(root: Path, page: str = "chapters/two.html") -> None:
    """The failed build wrote no page (the warm copy starts without _book)."""
    assert not (root / "_book" / page).exists()


def test_exception_in_a_cell_names_cell_line_and_traceback(warm_book):
    start = append(warm_book / "chapters/two.qmd",
                   "```{python}\n#| label: boom\nx = 1\ny = x / 0\n```\n")
    err = build_error(warm_book)
    assert err.file.endswith("chapters/two.qmd")
    assert err.line == start + 3, "the line of `y = x / 0`"
    assert "cell 'boom'" in err.message and "ZeroDivisionError" in err.message
    assert "y = x / 0" in err.detail and "Traceback" not in err.message
    text = str(err)
    assert f"chapters/two.qmd:{start + 3}:" in text and "ZeroDivisionError" in text and "hint:" in text
    assert "y = x / 0" in text, "the traceback is part of the printed error"
    assert_untouched(warm_book)


def test_error_inside_an_imported_function_points_at_the_calling_line(warm_book):
    start = append(warm_book / "chapters/two.qmd",
                   "```{python}\nimport fixturecalc\n\nfixturecalc.ridge(1, 0)\n```\n")
    err = build_error(warm_book)
    cells = (warm_book / "chapters/two.qmd").read_text().count("```{python}")
    assert err.line == start + 3 and f"cell #{cells}" in err.message  # unlabelled: named by position
    assert "ZeroDivisionError" in err.message and "fixturecalc" in err.detail


def test_undefined_name_inline(warm_book):
    start = append(warm_book / "chapters/two.qmd", "Some text.\n\nThe answer is `{python} not_defined * 2`.\n")
    err = build_error(warm_book)
    assert err.file.endswith("chapters/two.qmd") and err.line == start + 2
    assert "not_defined" in err.message and "NameError" in err.message
    assert "define the name" in err.hint
    assert_untouched(warm_book)


@pytest.mark.parametrize("ref,known", [("@fig-nothere", "fig-line"), ("@sec-nothere", "sec-figs"),
                                       ("@tbl-nothere", "tbl-small"), ("@eq-nothere", "eq-ridge")])
def test_unresolved_cross_reference(warm_book, ref, known):
    start = append(warm_book / "chapters/appendix.qmd", f"A paragraph.\n\nSee {ref} for more.\n")
    err = build_error(warm_book)
    assert (err.file, err.line) == ("chapters/appendix.qmd", start + 2)
    assert f"unresolved cross-reference {ref}" in err.message
    assert known in err.hint
    assert_untouched(warm_book)


def test_unknown_citation(warm_book):
    start = append(warm_book / "chapters/appendix.qmd", "As shown before [@nobody2020].\n")
    err = build_error(warm_book)
    assert (err.file, err.line) == ("chapters/appendix.qmd", start)
    assert "unknown citation @nobody2020" in err.message and "references.bib" in err.hint


def test_duplicate_label_names_both_places(warm_book):
    start = append(warm_book / "chapters/appendix.qmd", "## Figures again {#sec-figs}\n\nText.\n")
    err = build_error(warm_book)
    assert (err.file, err.line) == ("chapters/appendix.qmd", start)
    assert "duplicate label 'sec-figs'" in err.message and "chapters/one.qmd" in err.message


def test_duplicate_figure_label_across_chapters(warm_book):
    start = append(warm_book / "chapters/two.qmd",
                   "```{python}\n#| label: fig-line\n#| fig-cap: Again.\n#| fig-alt: Again.\n"
                   "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n```\n")
    err = build_error(warm_book)
    assert err.file == "chapters/two.qmd" and err.line == start + 1
    assert "duplicate label 'fig-line'" in err.message


def test_malformed_quarto_yml(warm_book):
    cfg = warm_book / "_quarto.yml"
    lines = cfg.read_text().split("\n")
    at = lines.index("execute:")
    lines.insert(at + 1, "  echo: [unclosed")
    cfg.write_text("\n".join(lines))
    err = build_error(warm_book)
    assert err.file.endswith("_quarto.yml") and "malformed YAML" in err.message
    assert err.line is not None and abs(err.line - (at + 2)) <= 1


def test_missing_chapter_file(warm_book):
    (warm_book / "chapters/appendix.qmd").unlink()
    err = build_error(warm_book)
    assert err.file.endswith("_quarto.yml") and err.line == 17
    assert "chapters/appendix.qmd does not exist" in err.message


def test_labelled_figure_without_caption(warm_book):
    start = append(warm_book / "chapters/two.qmd",
                   "```{python}\n#| label: fig-nocap\n#| fig-alt: A dot.\n"
                   "import matplotlib.pyplot as plt\nplt.plot([1])\nplt.show()\n```\n")
    err = build_error(warm_book)
    assert err.file.endswith("chapters/two.qmd") and err.line == start
    assert "fig-nocap" in err.message and "fig-cap" in err.message and "fig-cap" in err.hint


def test_command_line_prints_file_line_and_fails(warm_book, capsys):
    start = append(warm_book / "chapters/appendix.qmd", "See @sec-missing.\n")
    assert main(["build", "--to", "html", "--no-search", "--root", str(warm_book)]) == 1
    err = capsys.readouterr().err
    assert f"error: chapters/appendix.qmd:{start}: unresolved cross-reference @sec-missing" in err
    assert "hint:" in err
