"""What a render with real Quarto 1.10 got wrong (issue #15), each asserted on our side: the
book's filters under Quarto's conditions (Pandoc run from the chapter's folder, `error` replaced
by a logger, a `quarto` table), inline values inserted as Quarto inserts them, assets and the
widget runtime declared in _quarto.yml, and `check` rules that keep each finding from coming back."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild import BuildError, build
from bookbuild.check import check
from bookbuild.execute.markdown import math_spans, quarto_inline
from fixturebook import append

ROOT = Path(__file__).resolve().parents[2]
FILTERS = ROOT / "filters"
# What Quarto does to a user filter's globals (src/resources/filters/common/log.lua): `error`
# only logs.  Run before the book's filters, it makes plain Pandoc behave as Quarto does.
QUARTO_ERROR = 'function error(message) io.stderr:write("ERROR " .. tostring(message) .. "\\n") end\n'


def pandoc_bin() -> str:
    from bookbuild.pandoc import binary
    return binary()


@pytest.fixture
def book(tmp_path) -> Path:
    """A two-chapter book with terms and prerequisites, and the project's filters."""
    shutil.copytree(FILTERS, tmp_path / "filters")
    (tmp_path / "_quarto.yml").write_text(
        "project: {type: book}\nbook:\n  title: T\n  chapters: [index.qmd, chapters/a.qmd, chapters/b.qmd]\n"
        "  appendices: [appendices/glossary.qmd]\n")
    (tmp_path / "index.qmd").write_text("# Preface {.unnumbered}\n")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters/a.qmd").write_text(
        '---\nterms:\n  - term: ridge point\n    def: "Where the roofs meet."\n---\n# Alpha {#sec-a}\n\n'
        '::: {.callout-note title="Learning goals"}\n- one\n:::\n\nThe [ridge point]{.term}.\n')
    (tmp_path / "chapters/b.qmd").write_text(
        "---\nprerequisites: [chapters/a.qmd]\n---\n# Beta {#sec-b}\n\nA [ridge point]{.term}.\n")
    (tmp_path / "appendices").mkdir()
    (tmp_path / "appendices/glossary.qmd").write_text("# Glossary {#sec-glossary}\n")
    return tmp_path


def run_like_quarto(book: Path, chapter: str, *filters: str, quarto_error: bool = True) -> subprocess.CompletedProcess:
    """Pandoc as Quarto runs it for a chapter: in the chapter's folder, filters by relative path."""
    args = [pandoc_bin(), "-f", "markdown", Path(chapter).name, "-t", "html"]
    if quarto_error:
        (book / "quarto-error.lua").write_text(QUARTO_ERROR)
        args += ["--lua-filter", "../quarto-error.lua"]
    for f in filters:
        args += ["--lua-filter", f"../filters/{f}"]
    env = {**os.environ, "BOOK_PYTHON": sys.executable}
    return subprocess.run(args, cwd=book / Path(chapter).parent, capture_output=True, text=True, env=env)


def test_glossary_links_stay_inside_the_site_when_pandoc_runs_in_the_chapter_folder(book):
    proc = run_like_quarto(book, "chapters/b.qmd", "glossary.lua", "prerequisites.lua")
    assert proc.returncode == 0, proc.stderr
    assert 'href="../appendices/glossary.html#term-ridge-point"' in proc.stdout
    assert "../../" not in proc.stdout and "defined twice" not in proc.stderr
    # the prerequisite is a cross-reference Quarto resolves (plain Pandoc shows it as the citation)
    assert '<p>Builds on <span class="citation" data-cites="sec-a">@sec-a</span>' in proc.stdout


def test_a_failing_filter_stops_pandoc_even_where_error_only_logs(book):
    line = append(book / "chapters/b.qmd", "An [unknown thing]{.term}.\n")
    proc = run_like_quarto(book, "chapters/b.qmd", "glossary.lua")
    assert proc.returncode != 0, "Quarto's logging `error` must not let the render carry on"
    assert f"glossary.lua: chapters/b.qmd:{line}: unknown term" in proc.stderr


def test_unknown_widget_choice_stops_with_file_line_and_choices(book):
    line = append(book / "chapters/a.qmd", '::: {.widget name="roofline" device="h100-sxn"}\n:::\n')
    os.symlink(ROOT / "widgets", book / "widgets")
    os.symlink(ROOT / "calc", book / "calc")
    proc = run_like_quarto(book, "chapters/a.qmd", "widget.lua")
    assert proc.returncode != 0
    assert f"widget.lua: chapters/a.qmd:{line}:" in proc.stderr
    assert "h100-sxn" in proc.stderr and "h100-sxm" in proc.stderr, "the valid choices are listed"


def test_filter_failure_becomes_a_located_build_error_without_a_lua_traceback(warm_book):
    line = append(warm_book / "chapters/two.qmd", '::: {.widget name="roofline" kernel="no-such"}\n:::\n')
    (warm_book / "_quarto.yml").write_text((warm_book / "_quarto.yml").read_text().replace(
        "filters:\n", "filters:\n  - path: filters/widget.lua\n    at: pre-ast\n"))
    shutil.copy(FILTERS / "widget.lua", warm_book / "filters")
    shutil.copy(FILTERS / "project.lua", warm_book / "filters")
    os.symlink(ROOT / "widgets", warm_book / "widgets")
    os.symlink(ROOT / "calc", warm_book / "calc")
    with pytest.raises(BuildError) as info:
        build(warm_book, ("html",), search=False)
    err = info.value
    assert err.file == "chapters/two.qmd" and err.line == line
    assert "roofline" in err.message and "stack traceback" not in str(err)


def test_print_tabsets_leave_quarto_no_tabset_to_warn_about(book):
    (book / "chapters/a.qmd").write_text("# A {#sec-a}\n\n::: {.panel-tabset}\n\n## One\n\nfirst\n\n## Two\n\nsecond\n\n:::\n")
    out = subprocess.run([pandoc_bin(), "a.qmd", "-f", "markdown", "--lua-filter",
                          "../filters/print-tabsets.lua", "-t", "typst"], cwd=book / "chapters",
                         capture_output=True, text=True, check=True).stdout
    assert "#strong[One]" in out and "#strong[Two]" in out and "= One" not in out


@pytest.mark.parametrize("data, in_math, expected", [
    ({"text/plain": "'4,096'"}, False, r"4\,096"),           # Quarto escapes , (the range +-.)
    ({"text/plain": "'1.5 x_y'"}, False, r"1\.5 x\_y"),
    ({"text/plain": "4096"}, True, "4096"),                   # a number goes in as it is
    ({"text/markdown": r"\text{4,096}", "text/plain": "<IPython.core.display.Markdown object>"}, True,
     r"\text{4,096}"),
    ({"text/plain": "'4096'"}, True, "4096"),                 # nothing to escape: harmless in math
])
def test_inline_values_are_inserted_as_quarto_inserts_them(data, in_math, expected):
    assert quarto_inline(data, "x", in_math, Path("c.qmd"), 3) == expected


@pytest.mark.parametrize("data, in_math", [
    ({"text/plain": "'4,096'"}, True),            # TeX would read \, as a thin space
    ({"text/plain": r"'\\text{4}'"}, False),      # Quarto doubles the backslash: visible on the page
    ({"text/html": "<b>x</b>", "text/plain": "x"}, False),
    ({"text/plain": "\"multiplied by $e^{m - m'}$\""}, False),   # TeX inside a str: braces and - escaped
])
def test_inline_values_quarto_would_mangle_stop_the_build(data, in_math):
    with pytest.raises(BuildError) as info:
        quarto_inline(data, "x", in_math, Path("c.qmd"), 3)
    assert info.value.file == "c.qmd" and info.value.line == 3 and "Markdown" in str(info.value)


def test_math_spans_follow_inline_and_display_math():
    spans, display = math_spans(r"a $n = x$ b $$y$$ \$5 $$z", False)
    assert spans == [(2, 9), (12, 17), (22, 25)] and display
    spans, display = math_spans("w$$ tail", True)
    assert spans == [(0, 3)] and not display


def test_a_str_inside_math_stops_the_build_with_its_line(warm_book):
    line = append(warm_book / "chapters/two.qmd", "Size $n = `{python} f'{4096:,}'`$.\n")
    with pytest.raises(BuildError) as info:
        build(warm_book, ("html",), search=False)
    assert info.value.file.endswith("chapters/two.qmd") and info.value.line == line
    assert "inside math" in info.value.message


def test_post_render_scripts_run_with_quartos_environment(warm_book):
    (warm_book / "mark.py").write_text(
        "import os, pathlib\nout = pathlib.Path(os.environ['QUARTO_PROJECT_OUTPUT_DIR'])\n"
        "(out / 'mark.txt').write_text(os.environ['QUARTO_PROJECT_OUTPUT_FILES'])\n")
    cfg = warm_book / "_quarto.yml"
    cfg.write_text(cfg.read_text().replace("  execute-dir: project\n",
                                           f"  execute-dir: project\n  post-render:\n    - {sys.executable} mark.py\n"))
    build(warm_book, ("html",), search=False)
    written = (warm_book / "_book" / "mark.txt").read_text().split("\n")
    assert "_book/chapters/one.html" in written and "_book/index.html" in written


def test_a_failing_post_render_script_stops_the_build(warm_book):
    cfg = warm_book / "_quarto.yml"
    cfg.write_text(cfg.read_text().replace("  execute-dir: project\n",
                                           "  execute-dir: project\n  post-render:\n    - false\n"))
    with pytest.raises(BuildError) as info:
        build(warm_book, ("html",), search=False)
    assert info.value.file.endswith("_quarto.yml") and "post-render" in info.value.message


def test_declared_css_and_head_include_reach_every_page_relative_to_it(warm_book):
    (warm_book / "assets/css").mkdir(parents=True, exist_ok=True)
    (warm_book / "assets/css/extra.css").write_text("p { }\n")
    (warm_book / "_includes").mkdir(exist_ok=True)
    (warm_book / "_includes/head.html").write_text('<script defer src="/assets/js/extra.js"></script>\n')
    (warm_book / "assets/js").mkdir(parents=True, exist_ok=True)
    (warm_book / "assets/js/extra.js").write_text("// extra\n")
    cfg = warm_book / "_quarto.yml"
    text = cfg.read_text()
    assert "    css: [assets/css/palette.css" in text and "    include-in-header: _includes/head.html" in text
    cfg.write_text(text.replace("    css: [assets/css/palette.css", "    css: [assets/css/extra.css, assets/css/palette.css"))
    build(warm_book, ("html",), search=False)
    chapter = (warm_book / "_book/chapters/one.html").read_text()
    index = (warm_book / "_book/index.html").read_text()
    assert 'href="../assets/css/extra.css"' in chapter and 'src="../assets/js/extra.js"' in chapter
    assert 'href="assets/css/extra.css"' in index and 'src="assets/js/extra.js"' in index
    assert (warm_book / "_book/assets/js/extra.js").is_file()


def messages(root: Path) -> list[str]:
    return [f"{f.file}:{f.line}: {f.message}" for f in check(root)]


def test_check_finds_a_chapter_titled_twice(fixture_book):
    p = fixture_book / "chapters/two.qmd"
    p.write_text('---\ntitle: "Two"\n---\n' + p.read_text())
    assert any(m.startswith("chapters/two.qmd:2:") and "titled twice" in m for m in messages(fixture_book))


def test_check_finds_a_plain_inline_value_inside_math(fixture_book):
    line = append(fixture_book / "chapters/two.qmd",
                  "```{python}\nfrom IPython.display import Markdown\ndef tex(x):\n    return Markdown(str(x))\n```\n\n"
                  "Fine $n = `{python} tex(3)`$, wrong $m = `{python} str(3)`$.\n")
    found = [m for m in messages(fixture_book) if "inside math" in m]
    assert len(found) == 1 and f"chapters/two.qmd:{line + 6}:" in found[0] and "str(3)" in found[0]


def test_check_finds_a_space_a_span_would_drop(fixture_book):
    # Pandoc's reader (so Quarto's too) trims a bracketed span's edges: "done.[ More]{.x}" prints
    # "done.More". The roofline chapter's widget caption lost its space this way in both builds.
    line = append(fixture_book / "chapters/two.qmd",
                  "Kept. [Said]{.content-visible when-format=\"html\"} and\n"
                  "lost.[ Gone]{.content-visible when-format=\"html\"} too [x ]{.mark}.\n")
    found = [m for m in messages(fixture_book) if "span" in m and "space" in m]
    assert [m.split(": ", 1)[0] for m in found] == [f"chapters/two.qmd:{line + 1}"] * 2
    assert "[ Gone]" in found[0] and "[x ]" in found[1]


def test_check_finds_a_filter_that_depends_on_the_working_directory(fixture_book):
    append(fixture_book / "filters/shout.lua", 'local f = io.open("notes.txt")\n')
    assert any(m.startswith("filters/shout.lua:") and "working directory" in m for m in messages(fixture_book))


def test_check_finds_an_asset_no_page_loads(fixture_book):
    (fixture_book / "assets/css").mkdir(parents=True, exist_ok=True)
    (fixture_book / "assets/css/stray.css").write_text("p { }\n")
    assert any("assets/css/stray.css is in no page" in m for m in messages(fixture_book))


def test_check_finds_unknown_terms_and_widget_choices_without_executing(tmp_path):
    shutil.copytree(ROOT, tmp_path / "book", ignore=shutil.ignore_patterns(
        "_book", ".bookcache", "node_modules", ".git", "tests", "__pycache__"))
    book = tmp_path / "book"
    roofline = book / "chapters/roofline.qmd"
    roofline.write_text(roofline.read_text().replace('device="h100-sxm"', 'device="h100-sxn"', 1))
    line = append(book / "chapters/gpu.qmd", "A [warp divergance]{.term}.\n")
    found = messages(book)
    assert any("h100-sxn" in m and "h100-sxm" in m and m.startswith("chapters/roofline.qmd:") for m in found)
    assert any(m.startswith(f"chapters/gpu.qmd:{line}:") and "warp divergance" in m for m in found)


def test_quarto_pdf_of_the_whole_book_gets_each_chapters_box_and_prerequisites(book):
    """Quarto's typst book is one document: every chapter from its `# Title {#sec-...}`, without
    its front matter (src/project/types/book/book-render.ts); the filters read that from disk."""
    def body(name):
        return (book / name).read_text().split("---\n", 2)[2]
    (book / "book-all.md").write_text("# Preface {.unnumbered}\n\n" + body("chapters/a.qmd") + "\n" + body("chapters/b.qmd"))
    out = subprocess.run([pandoc_bin(), "-f", "markdown", "book-all.md", "-t", "native",
                          "--lua-filter", "filters/glossary.lua", "--lua-filter", "filters/prerequisites.lua"],
                         cwd=book, capture_output=True, text=True, check=True).stdout
    a, b = out.index('"sec-a"'), out.index('"sec-b"')
    box = out.index("Terms in this chapter")
    builds = out.index('Str "Builds"')
    assert a < box < b, "chapter a's terms box is inside chapter a"
    assert out.index('Str "The"', a) < box, "after chapter a's prose: at its end"
    assert b < builds, "chapter b's prerequisites are inside chapter b"
    assert out.count("Terms in this chapter") == 1
