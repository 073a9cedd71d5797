"""Fixtures for the tests of the book itself: the real book built once per session (HTML
only, reusing _book/ when nothing it is made from is newer), and a tiny book project for the
glossary filter."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ["_quarto.yml", "index.qmd", "references.qmd", "references.bib", "chapters", "appendices",
          "filters", "assets", "bookbuild", "bookfigs", "calc", "errata", "feedback/errata.py", "widgets"]


def newest_input(root: Path) -> float:
    stamps = []
    for name in INPUTS:
        p = root / name
        files = [p] if p.is_file() else [f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts]
        stamps += [f.stat().st_mtime for f in files]
    return max(stamps)


def book_is_fresh(root: Path) -> bool:
    pages = list((root / "_book").rglob("*.html"))
    return bool(pages) and min(p.stat().st_mtime for p in pages if "pagefind" not in p.parts) > newest_input(root)


@pytest.fixture(scope="session")
def built_book() -> Path:
    """The book's _book/ folder, built (HTML) unless it is already up to date."""
    if not book_is_fresh(ROOT):
        from bookbuild import build
        build(ROOT, formats=("html",), search=False)
    return ROOT / "_book"


def pandoc_bin() -> str:
    from bookbuild import pandoc
    return pandoc.binary()


class TinyBook:
    """A book project in a temporary folder with the glossary filter, for running pandoc on."""

    def __init__(self, root: Path):
        self.root = root

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def render(self, rel: str, fmt: str = "html", meta: dict | None = None,
               extra_filters: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
        args = [pandoc_bin(), "-f", "markdown", rel, "-t", fmt, "--wrap=none", "--lua-filter", "filters/glossary.lua"]
        for f in extra_filters:
            args += ["--lua-filter", str(ROOT / "bookbuild" / "pandoc" / "lua" / f)]
        for k, v in (meta or {}).items():
            args += ["-M", f"{k}={v}"]
        return subprocess.run(args, cwd=self.root, capture_output=True, text=True)


CONFIG = """project:
  type: book
book:
  title: Tiny
  chapters:
    - index.qmd
    - part: "One"
      chapters:
        - chapters/a.qmd
        - chapters/b.qmd
  appendices:
    - appendices/glossary.qmd
"""


@pytest.fixture
def tiny_book(tmp_path) -> TinyBook:
    book = TinyBook(tmp_path)
    (tmp_path / "filters").mkdir()
    for name in ("glossary.lua", "project.lua"):      # project.lua: where the project is, how to fail
        shutil.copy(ROOT / "filters" / name, tmp_path / "filters" / name)
    book.write("_quarto.yml", CONFIG)
    book.write("index.qmd", "# Preface {.unnumbered}\n")
    book.write("chapters/a.qmd", """---
prerequisites: []
terms:
  - term: arithmetic intensity
    def: "The FLOPs a kernel performs per *byte* it moves."
  - term: Roofline
    def: "A plot of attainable throughput against arithmetic intensity."
---
# Alpha {#sec-a}

::: {.callout-note title="Learning goals"}
- read a roofline
:::

Intro paragraph.

An [arithmetic intensity]{.term}, two [rooflines]{.term}, [intensities]{.term key="arithmetic intensity"}
and a [ridge point]{.term}.
""")
    book.write("chapters/b.qmd", """---
prerequisites: [chapters/a.qmd]
terms:
  - term: ridge point
    def: "The arithmetic intensity at which the memory roof meets the compute roof."
---
# Beta {#sec-b}

The [Ridge Point]{.term} of a [roofline]{.term}.
""")
    book.write("appendices/glossary.qmd", "# Glossary {#sec-glossary}\n")
    return book
