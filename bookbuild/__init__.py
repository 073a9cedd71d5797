"""bookbuild: builds a Quarto book (HTML site + typst PDF) with the engines Quarto
orchestrates — Pandoc, Jupyter and typst — for machines where Quarto is not installed.

    python -m bookbuild build      # HTML + PDF into _book/
    python -m bookbuild check      # lint the sources without building
    python -m bookbuild preview    # serve, rebuild on save, reload the browser

The folders, in the order data flows: each imports only from the lines before it (and its own),
and no output format imports another (tests/build/test_import_graph.py checks both):

    errors.py, cache.py, typst_markup.py   helpers any stage or format may use
    project/    _quarto.yml and the .qmd sources, read; pre- and post-render scripts
    execute/    the chapters' cells run in a Jupyter kernel; Quarto's freeze (cache, replay)
    pandoc/     ASTs, cross-references, citations; Quarto's features as Lua filters (lua/)
    editions/   what every edition states (version, licence, citation), its pictures and file names
    html/       the site: pages, KaTeX math, reader furniture, search, the Editions page
    pdf/        the book's PDF and a PDF per chapter, with the kept typst compiler
    epub/       the EPUB 3
    build.py    the pipeline, top to bottom; check.py, preview.py and __main__.py: the commands

A new output format is a package beside html/, pdf/ and epub/, called from build.py; a new Quarto
feature is a Lua filter in pandoc/lua/, listed in pandoc's ``internal_filters`` (and, for
``bookbuild check``, its classes in check.py).
"""
from .build import build
from .errors import BuildError

__all__ = ["build", "BuildError"]
