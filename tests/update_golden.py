"""Regenerate the golden files the tests compare against (tests never write them):

    make golden        # or: python3 -m tests.update_golden

Then read `git diff tests/` and commit only what an intended change explains. Refuses to run under
CI (CI=true), where a golden file must be compared, never rewritten."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def write(path: Path, text: str, changed: list[str]) -> None:
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        changed.append(str(path.relative_to(HERE.parent)))


def main() -> int:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        print("update_golden: not under CI; golden files are compared there, never rewritten", file=sys.stderr)
        return 2
    sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE / "build"), str(HERE / "book")]
    changed: list[str] = []

    import test_filters                       # tests/build: the build's Lua filters
    for name, fmts in test_filters.CASES.items():
        for fmt in fmts:
            write(test_filters.HERE / name / f"expected.{test_filters.EXT[fmt]}", test_filters.run_filter(name, fmt), changed)

    import importlib.util                      # tests/book: the glossary filter on the tiny book
    spec = importlib.util.spec_from_file_location("book_conftest", HERE / "book" / "conftest.py")
    book_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(book_conftest)
    import test_glossary
    for fmt, ext in test_glossary.GOLDEN_FORMATS:
        with tempfile.TemporaryDirectory() as tmp:
            book = book_conftest.make_tiny_book(Path(tmp))
            write(test_glossary.GOLDEN / f"chapter-a.{ext}", test_glossary.golden_output(book, fmt), changed)

    print("update_golden: " + (f"rewrote {', '.join(changed)}; read `git diff tests/`" if changed else "all golden files are current"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
