"""What the book's PDF and the per-chapter PDFs share: the typst template (``templates/book.typ``,
filled by Jinja) and the fix every compiled PDF gets."""
from __future__ import annotations

from pathlib import Path

import jinja2

from ..typst_markup import typst_length, typst_margin

TEMPLATES = Path(__file__).parent / "templates"


def template_env() -> jinja2.Environment:
    """Jinja for typst sources: ``{#`` starts typst code, so comments are ``{#! ... !#}``."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=False,
                             variable_start_string="{{", variable_end_string="}}",
                             block_start_string="{%", block_end_string="%}", comment_start_string="{#!",
                             comment_end_string="!#}")
    env.globals.update(typst_length=typst_length, typst_margin=typst_margin)
    return env


SUSPECTS = b"/Suspects false"


def drop_false_suspects(pdf_path: Path) -> None:
    """Blank typst's ``/Suspects false`` in the catalog's /MarkInfo. It is valid PDF (and the
    default), but poppler (Debian 12's pdftotext, pdfinfo) reports "Suspects object is wrong type
    (boolean)" for it on every run. Spaces of the same length keep every byte offset, so the
    cross-reference table stays right."""
    data = pdf_path.read_bytes()
    if data.count(SUSPECTS) == 1 and b"/MarkInfo<</Marked true" + SUSPECTS in data:
        pdf_path.write_bytes(data.replace(SUSPECTS, b" " * len(SUSPECTS)))
