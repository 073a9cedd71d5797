"""bookbuild: builds a Quarto book (HTML site + typst PDF) with the engines Quarto
orchestrates — Pandoc, Jupyter and typst — for machines where Quarto is not installed.

    python -m bookbuild build      # HTML + PDF into _book/
    python -m bookbuild check      # lint the sources without building
    python -m bookbuild preview    # serve, rebuild on save, reload the browser
"""
from .build import build
from .errors import BuildError

__all__ = ["build", "BuildError"]
