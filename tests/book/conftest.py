"""Fixtures for the tests of the book itself: the real book built once per session (HTML only)
into a copy outside the repository, reused while its content hash is unchanged (bookcopy.py), and
a tiny book project for the glossary filter."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bookcopy import BookCopy, default_dir  # noqa: E402  (same folder)


@pytest.fixture(scope="session")
def book_copy() -> BookCopy:
    """The book's sources mirrored outside the repository, where the tests build it."""
    return BookCopy(ROOT, default_dir(ROOT))


@pytest.fixture(scope="session")
def built_book(book_copy) -> Path:
    """The copy's _book/ folder, built (HTML) from the current sources unless a build of exactly
    these sources is already there."""
    return book_copy.ensure(("html",))


# The built book served, once per session for every module that reads it, by the two kinds of
# server the tests need: a plain static host (a11y_site.serve: files as they are) and one that
# gzips ahead and says what it sent, as a CDN would (tests/browser/site_fixture.serve).
@pytest.fixture(scope="session")
def book_url(built_book) -> str:
    """The built book on a plain static server: its base URL, ending in '/'."""
    from a11y_site import serve
    server = serve(built_book)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="session")
def book_url_gz(built_book) -> str:
    """The built book on a server that sends it gzipped with cache headers: its base URL."""
    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from site_fixture import serve
    url, server = serve(built_book)
    yield url
    server.shutdown()


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
    return make_tiny_book(tmp_path)


def make_tiny_book(tmp_path: Path) -> TinyBook:
    """The tiny book in ``tmp_path`` (also used by tests/update_golden.py)."""
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
