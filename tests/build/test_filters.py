"""Golden tests for the build's Lua filters (pandoc/lua-filters style): each folder under
filters/ holds an input, the expected output per format, and the test diffs them.

Regenerate after an intended change with ``BOOK_UPDATE_GOLDEN=1 pytest tests/build/test_filters.py``
and read the diff before committing it."""
import os
import subprocess
from pathlib import Path

import pytest

from bookbuild import pandoc

HERE = Path(__file__).parent / "filters"
CASES = {"callout": ["html", "typst"], "tabset": ["html", "typst"], "margin": ["html", "typst"],
         "code": ["html"], "crossref": ["html", "typst"], "links": ["html", "typst"]}
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
    out = run_filter(name, fmt)
    if os.environ.get("BOOK_UPDATE_GOLDEN"):
        expected.write_text(out)
    assert out == expected.read_text()
