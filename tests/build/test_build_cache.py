"""The execution cache (Quarto's freeze): a chapter runs again only when its source or the
project Python it imports changed; a rebuild with nothing changed runs and rewrites nothing."""
from __future__ import annotations

import os
import time
from pathlib import Path

from bookbuild import build

CHAPTERS = ["chapters/one.qmd", "chapters/two.qmd"]  # the fixture's pages with code


def html(root: Path, page: str) -> str:
    return (root / "_book" / page).read_text(encoding="utf-8")


def test_rebuild_with_nothing_changed_executes_and_rewrites_nothing(warm_book):
    first = build(warm_book)
    assert first.executed == [] and sorted(first.cached) == CHAPTERS
    outputs = [p for p in (warm_book / "_book").rglob("*") if p.is_file() and "pagefind" not in p.parts]
    stamps = {p: p.stat().st_mtime_ns for p in outputs}
    again = build(warm_book)
    assert again.executed == [] and sorted(again.cached) == CHAPTERS
    assert {p: p.stat().st_mtime_ns for p in outputs} == stamps, "a no-op build rewrote files"
    assert again.timings["total"] < 2.0


def test_touching_a_file_without_changing_it_executes_nothing(warm_book):
    later = time.time() + 5
    for ch in CHAPTERS:
        os.utime(warm_book / ch, (later, later))
    report = build(warm_book, ("html",), search=False)
    assert report.executed == []


def test_editing_one_chapter_executes_only_that_chapter(warm_book):
    two = warm_book / "chapters/two.qmd"
    two.write_text(two.read_text().replace("`{python} 2 + 3`", "`{python} 2 + 40`"))
    report = build(warm_book, ("html",), search=False)
    assert report.executed == ["chapters/two.qmd"] and report.cached == ["chapters/one.qmd"]
    assert "The value again: 42." in html(warm_book, "chapters/two.html")
    assert "4.0 FLOP/byte" in html(warm_book, "chapters/one.html")


def test_changing_an_imported_module_executes_the_chapters_that_import_it(warm_book):
    calc = warm_book / "fixturecalc" / "__init__.py"
    calc.write_text(calc.read_text().replace("return peak / bw", "return 2 * peak / bw"))
    report = build(warm_book, ("html",), search=False)
    assert report.executed == ["chapters/one.qmd"], "chapter two does not import fixturecalc"
    assert "The ridge point is 8.0 FLOP/byte" in html(warm_book, "chapters/one.html")

    # once chapter two imports it too, a change runs both
    two = warm_book / "chapters/two.qmd"
    two.write_text(two.read_text() + "\n```{python}\nimport fixturecalc\n```\n\nRidge `{python} fixturecalc.ridge(6, 2)`.\n")
    assert build(warm_book, ("html",), search=False).executed == ["chapters/two.qmd"]
    calc.write_text(calc.read_text().replace("return 2 * peak / bw", "return 3 * peak / bw"))
    report = build(warm_book, ("html",), search=False)
    assert report.executed == CHAPTERS
    assert "Ridge 9.0." in html(warm_book, "chapters/two.html")


def test_changing_a_file_a_cell_reads_executes_that_chapter_again(warm_book):
    """A cell that prints a project file (as the attention chapter prints its CUDA sources) shows
    the file as it is now, not as it was when the chapter was cached."""
    data = warm_book / "fixturecalc" / "listing.txt"
    data.write_text("first version\n")
    two = warm_book / "chapters/two.qmd"
    two.write_text(two.read_text() + "\n```{python}\nwith open('fixturecalc/listing.txt') as f:\n"
                   "    listing = f.read().strip()\n```\n\nListing: `{python} listing`.\n")
    build(warm_book, ("html",), search=False)
    assert "Listing: first version." in html(warm_book, "chapters/two.html")
    assert build(warm_book, ("html",), search=False).executed == []

    data.write_text("second version\n")
    report = build(warm_book, ("html",), search=False)
    assert report.executed == ["chapters/two.qmd"], "only the chapter that reads the file runs again"
    assert "Listing: second version." in html(warm_book, "chapters/two.html")


def test_changing_the_matplotlibrc_executes_every_chapter_again(warm_book):
    rc = warm_book / "matplotlibrc"
    rc.write_text((rc.read_text() if rc.exists() else "") + "\nlines.linewidth: 3\n")
    assert sorted(build(warm_book, ("html",), search=False).executed) == CHAPTERS


def test_changing_project_python_that_a_filter_runs_converts_the_pages_again(warm_book):
    """A filter may run the project's Python (filters/widget.lua runs `python -m widgets`): the
    page shows what the changed code draws, though no cell imports it."""
    (warm_book / "fixturecalc" / "stamp.py").write_text('print("<p>stamp one</p>")\n')
    (warm_book / "filters" / "stamp.lua").write_text(
        'function Div(div)\n'
        '  if not div.classes:includes("stamp") then return nil end\n'
        '  return pandoc.RawBlock("html", pandoc.pipe(os.getenv("BOOK_PYTHON") or "python3",'
        ' {"-m", "fixturecalc.stamp"}, ""))\n'
        'end\n')
    config = warm_book / "_quarto.yml"
    config.write_text(config.read_text().replace("  - filters/shout.lua", "  - filters/shout.lua\n  - filters/stamp.lua"))
    two = warm_book / "chapters/two.qmd"
    two.write_text(two.read_text() + "\n::: {.stamp}\n:::\n")
    build(warm_book, ("html",), search=False)
    assert "<p>stamp one</p>" in html(warm_book, "chapters/two.html")

    (warm_book / "fixturecalc" / "stamp.py").write_text('print("<p>stamp two</p>")\n')
    report = build(warm_book, ("html",), search=False)
    assert report.executed == [], "no cell imports fixturecalc.stamp"
    assert "<p>stamp two</p>" in html(warm_book, "chapters/two.html")


def test_a_prose_edit_reuses_the_kernels_answers_and_a_code_edit_does_not(warm_book):
    """A chapter whose cells and inline expressions are unchanged is not run again: the kernel's
    recorded answers are put into the new text (what the kernel would answer again)."""
    two = warm_book / "chapters/two.qmd"
    two.write_text(two.read_text().replace("A zeppelin appears", "A blimp, not a zeppelin, appears"))
    report = build(warm_book, ("html",), search=False)
    assert report.executed == [] and report.replayed == ["chapters/two.qmd"]
    assert report.cached == ["chapters/one.qmd"]
    page = " ".join(html(warm_book, "chapters/two.html").split())           # pandoc wraps lines
    assert "A blimp, not a zeppelin, appears" in page and "The value again: 5." in page
    assert "hidden value 42" in page and 'id="fig-two-bars"' in page and page.count("never runs") == 1
    assert sorted(build(warm_book, ("html",), search=False).cached) == CHAPTERS

    two.write_text(two.read_text().replace("hidden = 41 + 1", "hidden = 40 + 1"))       # a cell
    assert build(warm_book, ("html",), search=False).executed == ["chapters/two.qmd"]
    assert "hidden value 41" in html(warm_book, "chapters/two.html")
    two.write_text(two.read_text().replace("`{python} 2 + 3`", "`{python} 2 + 4`"))      # inline code
    assert build(warm_book, ("html",), search=False).executed == ["chapters/two.qmd"]
    assert "The value again: 6." in html(warm_book, "chapters/two.html")
    two.write_text(two.read_text().replace("#| eval: false", "#| eval: true"))          # an option
    assert build(warm_book, ("html",), search=False).executed == ["chapters/two.qmd"]
    assert html(warm_book, "chapters/two.html").count("never runs") == 2      # the code and its output


def test_a_prose_edit_with_a_changed_module_runs_the_chapter(warm_book):
    one = warm_book / "chapters/one.qmd"
    one.write_text(one.read_text() + "\nOne more sentence.\n")
    calc = warm_book / "fixturecalc" / "__init__.py"
    calc.write_text(calc.read_text().replace("return peak / bw", "return 2 * peak / bw"))
    report = build(warm_book, ("html",), search=False)
    assert report.executed == ["chapters/one.qmd"] and report.replayed == []
    assert "The ridge point is 8.0 FLOP/byte" in html(warm_book, "chapters/one.html")


REPO = Path(__file__).resolve().parents[2]
EXERCISE = """
::: {.exercise #ex-fixture}
### Exercise: a fixture

Do the sum.

```{.python .check}
sizes = [1]
```
:::
"""


def test_a_page_made_from_the_chapters_runs_again_only_when_the_parts_it_reads_change(warm_book):
    """A generated page (the Solutions appendix, the glossary, the chapter map) reads every chapter
    but only in part, through calc.exercises.read_book (the exercises) and
    bookfigs.backmatter.book_chapters (front matter and titles): a word of prose outside those
    parts leaves it cached; an edit inside an exercise's check, or to a title, runs it again."""
    one, two = warm_book / "chapters/one.qmd", warm_book / "chapters/two.qmd"
    one.write_text(one.read_text() + EXERCISE)
    appendix = warm_book / "chapters/appendix.qmd"
    appendix.write_text(appendix.read_text() + f"""
```{{python}}
import sys
sys.path.insert(0, {str(REPO)!r})
from pathlib import Path
from calc import exercises
from bookfigs import backmatter
checks = [ex.check.strip() for ex in exercises.read_book(".", ["chapters/one.qmd"])]
titles = [ch.title for ch in backmatter.book_chapters(Path("."))]
```

Checks: `{{python}} "; ".join(checks)`. Titles: `{{python}} "; ".join(titles)`.
""")
    report = build(warm_book, ("html",), search=False)
    assert "chapters/appendix.qmd" in report.executed
    assert "Checks: sizes = [1]. Titles: " in html(warm_book, "chapters/appendix.html")

    one.write_text(one.read_text().replace("The roofline is due to", "The roofline model is due to"))
    two.write_text(two.read_text().replace("A zeppelin appears", "A blimp appears"))
    report = build(warm_book, ("html",), search=False)
    assert report.executed == [] and "chapters/appendix.qmd" in report.cached, "prose outside the parts read"

    one.write_text(one.read_text().replace("sizes = [1]", "sizes = [1, 2]"))
    report = build(warm_book, ("html",), search=False)
    assert report.executed == ["chapters/appendix.qmd"], "an exercise's check changed"
    assert "Checks: sizes = [1, 2]." in html(warm_book, "chapters/appendix.html")

    two.write_text(two.read_text().replace("# Chapter two", "# Chapter deux", 1))
    report = build(warm_book, ("html",), search=False)
    assert "chapters/appendix.qmd" in report.executed, "a chapter's title changed"
    assert "Chapter deux" in html(warm_book, "chapters/appendix.html")


def test_the_parts_a_generated_page_reads_are_the_exercise_divs_and_the_headings(tmp_path):
    from bookbuild.execute.freeze import exercise_divs, front_and_headings, parts_digest
    text = ("---\ntitle: T\nterms: [a]\n---\n# Title {#sec-t}\n\nProse.\n\n```{.python}\n::: {.exercise}\n```\n\n"
            ":::: {.exercise #ex-a}\nStatement.\n\n::: {.hint}\nA hint.\n:::\n::::\n\nMore prose.\n\n"
            "::: {.callout-note}\nNot read.\n:::\n\n::: {.problem #pr-b}\nA problem.\n:::\n")
    divs = exercise_divs(text)
    assert "Statement." in divs and "A hint." in divs and "A problem." in divs
    assert "Prose." not in divs and "Not read." not in divs and "More prose." not in divs
    assert exercise_divs(":::: {.exercise}\nunclosed\n") is None
    heads = front_and_headings(text)
    assert "terms: [a]" in heads and "# Title {#sec-t}" in heads and "Prose." not in heads
    page = tmp_path / "ch.qmd"
    page.write_text(text)
    before = parts_digest(page, ["exercises"])
    page.write_text(text.replace("More prose.", "Other prose."))
    assert parts_digest(page, ["exercises"]) == before
    page.write_text(text.replace("A hint.", "Another hint."))
    assert parts_digest(page, ["exercises"]) != before
    assert parts_digest(page, ["no such part"]) == parts_digest(page, ["whole"])   # unknown: the bytes


def test_many_chapters_run_in_two_kernels_each_from_a_clean_namespace(fixture_book, monkeypatch):
    """A cold build with many chapters to run shares them between two kernels (on a machine with
    two cores or more: here the build is told it has two, whatever this one has). Two of the
    chapters meet at a named pipe, the first opening it to write, the second to read: each open
    blocks until the other's, so they can only both finish in two kernels running at once (in one
    kernel the first would wait for ever: an alarm makes that an error instead)."""
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    config = fixture_book / "_quarto.yml"
    pipe = fixture_book / "meet.fifo"
    os.mkfifo(pipe)
    extra = [f"chapters/x{i}.qmd" for i in range(4)]
    meet = {0: "os.O_WRONLY", 1: "os.O_RDONLY"}
    for i, rel in enumerate(extra):
        rendezvous = (f"def late(*_):\n    raise TimeoutError('chapter x{i} met no other kernel')\n"
                      f"signal.signal(signal.SIGALRM, late)\nsignal.alarm(120)\n"
                      f"os.close(os.open({str(pipe)!r}, {meet[i]}))\nsignal.alarm(0)\n") if i in meet else ""
        (fixture_book / rel).write_text(
            f"# Extra {i} {{#sec-extra-{i}}}\n\n```{{python}}\nimport os, signal\n"
            "assert 'leftover' not in globals()\nleftover = 1\n" + rendezvous + "pid = os.getpid()\n```\n\n"
            "Kernel `{python} pid`.\n")
    config.write_text(config.read_text().replace("        - chapters/two.qmd\n",
                                                 "        - chapters/two.qmd\n" + "".join(f"        - {r}\n" for r in extra)))
    report = build(fixture_book, ("html",), search=False)
    assert report.executed == [*CHAPTERS, *extra]              # in book order, whichever kernel ran them
    pids = {r: html(fixture_book, r.replace(".qmd", ".html")).split("Kernel ")[1].split(".")[0] for r in extra}
    assert pids["chapters/x0.qmd"] != pids["chapters/x1.qmd"]  # they met: two kernels at once
    assert len(set(pids.values())) == 2


def test_the_cross_reference_index_is_read_back_while_the_pages_asts_are_the_same(warm_book, monkeypatch):
    """A build whose pages read into the same ASTs does not walk them for the index again; a new
    heading (a new label) makes it again, and the page's contents entry links to it."""
    import json
    import sys
    build(warm_book, ("html",), search=False)
    made = json.loads((warm_book / ".bookcache" / "xref.json").read_text())
    xref = sys.modules["bookbuild.pandoc.xref"]
    walked = []
    real = xref.build_index
    monkeypatch.setattr(xref, "build_index", lambda pages: walked.append(1) or real(pages))
    build(warm_book, ("html",), search=False)
    assert walked == [] and json.loads((warm_book / ".bookcache" / "xref.json").read_text()) == made
    chapter = warm_book / "chapters" / "one.qmd"
    chapter.write_text(chapter.read_text() + "\n## A new section {#sec-new-one}\n\nText.\n")
    build(warm_book, ("html",), search=False)
    assert walked == [1]
    assert "sec-new-one" in json.loads((warm_book / ".bookcache" / "xref.json").read_text())["labels"]
    assert 'href="#sec-new-one"' in (warm_book / "_book" / "chapters" / "one.html").read_text()
