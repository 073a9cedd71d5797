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
