import pytest

from bookbuild import pandoc
from bookbuild.errors import BuildError
from bookbuild.pandoc.xref import Page, build_index, check_references


def page(source, text, appendix=False):
    return Page(source, source.replace(".qmd", ".html"), pandoc.read(text, None, source), text, appendix)


def test_numbers_follow_chapters_sections_and_skip_unnumbered():
    pages = [
        page("index.qmd", "# Preface {.unnumbered}\n\nHi.\n"),
        page("a.qmd", "# A {#sec-a}\n\n## One {#sec-one}\n\n## Two\n\n### Sub {#sec-sub}\n\n"
                      "::: {#fig-x}\nimg\n\nCap\n:::\n\n$$x$$ {#eq-e}\n"),
        page("b.qmd", "# B\n\n::: {#fig-y}\nimg\n\nCap Y\n:::\n"),
        page("c.qmd", "# C {#sec-c}\n", appendix=True),
    ]
    idx = build_index(pages)
    labels = idx["labels"]
    assert labels["sec-a"]["number"] == "1" and labels["sec-a"]["kind"] == "chapter"
    assert labels["sec-one"]["number"] == "1.1"
    assert labels["sec-sub"]["number"] == "1.2.1"
    assert labels["fig-x"]["number"] == "1.1" and labels["fig-x"]["title"] == "Cap"
    assert labels["eq-e"]["number"] == "1.1"
    assert labels["fig-y"]["number"] == "2.1" and labels["fig-y"]["page"] == "b.html"
    assert labels["sec-c"]["number"] == "A"
    assert idx["pages"]["index.qmd"]["number"] == ""


def test_duplicate_label_names_both_files():
    pages = [page("a.qmd", "# A {#sec-a}\n"), page("b.qmd", "# B\n\n## Again {#sec-a}\n")]
    with pytest.raises(BuildError) as e:
        build_index(pages)
    assert e.value.file == "b.qmd" and e.value.line == 3 and "a.qmd" in e.value.message


def test_unresolved_reference_has_file_line_and_suggestions():
    pages = [page("a.qmd", "# A {#sec-a}\n\n::: {#fig-real}\nx\n\nc\n:::\n\nSee @fig-rael.\n")]
    idx = build_index(pages)
    with pytest.raises(BuildError) as e:
        check_references(pages, idx)
    assert e.value.line == 9 and "fig-real" in e.value.hint


def test_tabset_titles_are_not_numbered_sections():
    pages = [page("a.qmd", "# A\n\n::: {.panel-tabset}\n## P\nx\n\n## Q\ny\n:::\n\n## Real\n")]
    idx = build_index(pages)
    assert [h["number"] for h in idx["sections"]["a.html"]] == ["1", "1.1"]
