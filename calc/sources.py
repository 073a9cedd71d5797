"""Where a number comes from: ``Source`` (a document) and ``Spec`` (a sourced value).

Shared by ``specs``, ``hierarchy`` and ``energy``. Every ``Source`` carries the
BibTeX key of its entry in ``references.bib`` (None only for illustrations).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional, Union


@dataclass(frozen=True)
class Source:
    """A document and the place in it where a value is printed."""

    title: str
    publisher: str
    year: int
    key: Optional[str]  # BibTeX key in references.bib; None for illustrations
    where: str = ""  # table, page or section
    url: str = ""
    note: str = ""

    def at(self, where: str, note: str = "") -> "Source":
        """The same document, a different place in it."""
        return replace(self, where=where, note=note)

    def cite(self) -> str:
        """Short human-readable citation: title (publisher, year), where."""
        text = f"{self.title} ({self.publisher}, {self.year})"
        return f"{text}, {self.where}" if self.where else text


Value = Union[int, float, str, bool, tuple]


@dataclass(frozen=True)
class Spec:
    """A value, its unit, and the source it was read from.

    ``value`` is stored in base units where the unit says so (``FLOP/s``,
    ``B/s``, ``B``); ``unit`` names the unit of ``value`` exactly.
    ``note`` records a caveat (rounding, a disagreement between sources, a
    figure the primary document does not print).
    """

    value: Value
    unit: str
    source: Source
    note: str = field(default="")
