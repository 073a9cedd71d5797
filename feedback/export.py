"""JSON and CSV exports of stored suggestions."""

from __future__ import annotations

import csv
import io
import json

from feedback.storage import COLUMNS

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def to_json(records: list[dict]) -> str:
    return json.dumps(records, ensure_ascii=False, indent=2) + "\n"


def to_csv(records: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for r in records:
        writer.writerow([_cell(r[c]) for c in COLUMNS])
    return out.getvalue()


def _cell(value) -> str:
    """A spreadsheet must not run what a reader typed: a cell that would start a formula gets a leading quote."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_START) else text
