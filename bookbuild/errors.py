"""One error type for everything that stops a build: it always names a file and a line."""
from __future__ import annotations

from pathlib import Path


class BuildError(Exception):
    """A problem in the book's sources, reported as ``file:line: message`` plus what to do."""

    def __init__(self, message: str, file: Path | str | None = None, line: int | None = None,
                 hint: str | None = None, detail: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.hint = hint
        self.detail = detail

    def located(self, file: Path | str, line: int | None = None) -> "BuildError":
        """Fill in the location if the raiser did not know it."""
        if self.file is None:
            self.file = str(file)
        if self.line is None:
            self.line = line
        return self

    def __str__(self) -> str:
        where = self.file or "<book>"
        if self.line is not None:
            where += f":{self.line}"
        text = f"{where}: {self.message}"
        if self.detail:
            text += "\n" + self.detail.rstrip()
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


def line_of(text: str, needle: str, start: int = 0) -> int | None:
    """1-based line number of the first occurrence of ``needle`` in ``text`` (or None)."""
    pos = text.find(needle, start)
    if pos < 0:
        return None
    return text.count("\n", 0, pos) + 1
