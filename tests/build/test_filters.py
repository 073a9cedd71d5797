"""Golden tests for the build's Lua filters (pandoc/lua-filters style): each folder under
filters/ holds an input, the expected output per format, and the test diffs them.

A test run never writes them: regenerate after an intended change with ``make golden``
(``python3 -m tests.update_golden``) and read the diff before committing it."""
import subprocess
from pathlib import Path

import pytest

from bookbuild import pandoc

HERE = Path(__file__).parent / "filters"
CASES = {"callout": ["html", "typst"], "tabset": ["html", "typst"], "margin": ["html", "typst"],
         "code": ["html"], "crossref": ["html", "typst"], "links": ["html", "typst"],
         "conditional": ["html", "typst"], "tables": ["html", "typst"]}
EXT = {"html": "html", "typst": "typ"}


def run_filter(name: str, fmt: str) -> str:
    folder = HERE / name
    args = [pandoc.binary(), str(folder / "input.md"), "-t", fmt, "--lua-filter", str(pandoc.LUA / f"{name}.lua")]
    if fmt == "html":
        args.append("--katex")  # as the build runs it: KaTeX renders \tag at build time
    if (folder / "index.json").exists():
        args += ["-M", f"book-xref={folder / 'index.json'}"]
    proc = subprocess.run(args, capture_output=True, text=True, check=True)
    assert proc.stderr == "", proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name,fmt", [(n, f) for n, fmts in CASES.items() for f in fmts])
def test_filter_output_matches_golden(name, fmt):
    expected = HERE / name / f"expected.{EXT[fmt]}"
    assert run_filter(name, fmt) == expected.read_text()


def test_conditional_content_of_an_epub_page():
    """The EPUB's pages are written as HTML (JSON, then epub3), and say so in book-format: what is
    for the EPUB shows, what needs scripts (html:js) does not."""
    folder = HERE / "conditional"
    out = subprocess.run([pandoc.binary(), str(folder / "input.md"), "-t", "html", "--lua-filter",
                          str(pandoc.LUA / "conditional.lua"), "-M", "book-format=epub3"],
                         capture_output=True, text=True, check=True).stdout
    shown = [line for line in out.splitlines() if line.startswith("<p>")]
    assert shown == ["<p>Visible in HTML (and the EPUB, an HTML format).</p>",
                     "<p>Visible in the EPUB or typst (a list).</p>",
                     "<p>A div that is no conditional stays.</p>",
                     "<p>A sentence with an HTML span in it.</p>"]
