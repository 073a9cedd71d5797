"""Text made safe for typst source: a string literal, or plain text inside markup. For whatever
writes typst (the PDFs' template, the editions' pictures)."""
from __future__ import annotations

import re


def typst_str(value: object) -> str:
    """A Python value as a typst string literal."""
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def typst_text(value: object) -> str:
    """Plain text made safe inside typst markup."""
    return re.sub(r'([\\#\[\]*_$@<>`~])', r'\\\1', str(value))


LENGTH = re.compile(r"-?\d+(\.\d+)?(pt|mm|cm|in|em)")
MARGIN_SIDES = ("x", "y", "top", "bottom", "left", "right", "inside", "outside", "rest")


def typst_length(value: object) -> str:
    """A length from _quarto.yml (`fontsize: 10.5pt`, a margin) as typst source; anything else
    is refused rather than pasted into the template."""
    text = str(value).strip()
    if not LENGTH.fullmatch(text):
        raise ValueError(f"{value!r} is not a typst length (a number with pt, mm, cm, in or em)")
    return text


def typst_margin(value: object) -> str:
    """`format: typst: margin:` as Quarto's page.typ writes it, `(x: 2.2cm, y: 2.4cm,)`; a single
    length for every side; the book's own margins when it is not set."""
    if value is None:
        return "(x: 2.2cm, y: 2.4cm)"
    if not isinstance(value, dict):
        return typst_length(value)
    unknown = [k for k in value if k not in MARGIN_SIDES]
    if unknown:
        raise ValueError(f"margin side {unknown[0]!r}: typst's are {', '.join(MARGIN_SIDES)}")
    return "(" + ", ".join(f"{k}: {typst_length(v)}" for k, v in value.items()) + ")"
