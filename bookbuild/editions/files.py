"""Where each edition's files go in the output folder, for the format that writes them and the
pages that link to them: the book's PDF is ``cfg.pdf_name`` (``_quarto.yml``), a page's own PDF
is under ``pdf/``."""
from __future__ import annotations

FOLDER = "pdf"


def pdf_href(output: str) -> str:
    """Where a page's own PDF goes, relative to the site's root: chapters/roofline.html ->
    pdf/chapters-roofline.pdf."""
    return f"{FOLDER}/{output.removesuffix('.html').replace('/', '-')}.pdf"
