"""The fixture book (tests/fixtures/book): copies of it, and one build of it per test session,
shared by tests/build and tests/site (both conftests import this module, so it is built once)."""
from __future__ import annotations

import shutil
from pathlib import Path

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "book"
_built: dict[str, object] = {}


def copy_fixture(dest: Path, source: Path = FIXTURE, keep_cache: bool = False) -> Path:
    ignore = ["_book"] if keep_cache else ["_book", ".bookcache"]
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*ignore, "__pycache__", "lock"))
    return dest


def append(path: Path, text: str) -> int:
    """Append ``text`` to a file; return the 1-based line where it starts."""
    old = path.read_text()
    if not old.endswith("\n"):
        old += "\n"
    path.write_text(old + "\n" + text)
    return old.count("\n") + 2


def built_once(tmp_path_factory):
    """(root, report) of the fixture book built once (HTML + PDF + search index)."""
    if "root" not in _built:
        from bookbuild import build
        root = copy_fixture(tmp_path_factory.mktemp("built") / "book")
        _built["report"] = build(root)
        _built["root"] = root
    return _built["root"], _built["report"]
