"""Quarto's ``freeze`` idea: a chapter runs again only when its source, the build's
execution settings, the project Python it imported or a project file its cells read have
changed.

A chapter whose prose alone changed (the same cells and inline expressions, in the same order)
does not run again either: the kernel's answers to it are kept with the entry (``calls``) and
replayed into the new text (``Replay``), which is what the kernel would have answered, given
that each chapter starts from an empty namespace and nothing it imports or reads changed."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

VERSION = "6"  # bump when the executed-markdown format or what the key covers changes


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
        h.update(b"\0")
    return h.hexdigest()


def file_digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return "missing"


class ExecCache:
    def __init__(self, root: Path):
        self.root = root
        self.dir = root / ".bookcache" / "exec"
        self.dir.mkdir(parents=True, exist_ok=True)

    def _path(self, stem: str) -> Path:
        return self.dir / f"{stem}.json"

    def lookup(self, stem: str, source_text: str, settings: dict[str, Any]) -> dict[str, Any] | None:
        """The chapter's entry if the settings and what its execution read are unchanged (else
        None). Its ``markdown`` holds when ``entry["source"] == source_key(source_text, settings)``
        (and its figures are in place); otherwise its ``calls`` may be replayed."""
        path = self._path(stem)
        if not path.exists():
            return None
        entry = json.loads(path.read_text())
        if entry.get("settings") != _settings_key(settings):
            return None
        for rel, old in entry.get("modules", {}).items():
            if file_digest(self.root / rel) != old:
                return None
        return entry

    def figures_exist(self, stem: str, entry: dict[str, Any]) -> bool:
        fig_dir = self.root / ".bookcache" / "figures" / stem
        return all((fig_dir / f).exists() for f in entry.get("figures", []))

    def store(self, stem: str, source_text: str, settings: dict[str, Any], markdown: str,
              modules: dict[str, str] | list[str], figures: list[str], calls: list[list[Any]]) -> None:
        """``modules``: paths the kernel reported (digested here), or a stored entry's digests."""
        if isinstance(modules, list):
            rels = {}
            for m in modules:
                try:
                    rel = Path(m).relative_to(self.root).as_posix()
                except ValueError:
                    continue
                rels[rel] = file_digest(Path(m))
            modules = rels
        entry = {"source": source_key(source_text, settings), "settings": _settings_key(settings),
                 "modules": modules, "figures": figures, "markdown": markdown, "calls": calls}
        tmp = self._path(stem).with_suffix(".tmp")
        tmp.write_text(json.dumps(entry))
        tmp.replace(self._path(stem))


def _settings_key(settings: dict[str, Any]) -> str:
    return digest(VERSION, json.dumps(settings, sort_keys=True))


def source_key(source_text: str, settings: dict[str, Any]) -> str:
    return digest(VERSION, source_text, json.dumps(settings, sort_keys=True))


class Stale(Exception):
    """A replayed chapter asked the kernel something its recorded run did not."""


class Recorder:
    """A kernel (execute.Kernel) that keeps every answer it gave, in order, in ``calls``."""

    def __init__(self, kernel: Any):
        self.kernel, self.root, self.calls = kernel, kernel.root, []

    def start_document(self, cwd: Path) -> None:
        self.kernel.start_document(cwd)
        self.calls.append(["start", _relative(cwd, self.root)])

    def run_cell(self, cell: Any, path: Path) -> Any:
        result = self.kernel.run_cell(cell, path)
        self.calls.append(["cell", cell.code, result.outputs])
        return result

    def inline(self, items: list[Any], path: Path) -> list[str]:
        texts = self.kernel.inline(items, path)
        if items:
            self.calls.append(["inline", [i.expr for i in items], texts])
        return texts


def _relative(path: Path, root: Path) -> str:
    """Where a chapter runs, as the execution cache keys it: relative to the project (a copied or
    moved project keeps its cache, as it does for unchanged sources)."""
    return os.path.relpath(path, root)


class Replay:
    """Answers a chapter's questions from a recorded run; ``Stale`` at the first one that differs."""

    def __init__(self, root: Path, calls: list[list[Any]]):
        self.root, self.calls, self.at = root, calls, 0

    def _next(self, kind: str, question: Any) -> Any:
        if self.at >= len(self.calls) or self.calls[self.at][:2] != [kind, question]:
            raise Stale(kind)
        self.at += 1
        return self.calls[self.at - 1][2] if kind != "start" else None

    def start_document(self, cwd: Path) -> None:
        self._next("start", _relative(cwd, self.root))

    def run_cell(self, cell: Any, path: Path) -> Any:
        from .execute import CellResult
        return CellResult(cell, self._next("cell", cell.code))

    def inline(self, items: list[Any], path: Path) -> list[str]:
        return self._next("inline", [i.expr for i in items]) if items else []

    def done(self) -> bool:
        return self.at == len(self.calls)


def cached_text(path: Path, key: str, produce: Callable[[], str]) -> tuple[str, bool]:
    """The text kept in ``path`` for ``key``, or ``produce()``'s, stored there for next time.
    Returns the text and whether it was produced now."""
    if path.exists():
        cached = json.loads(path.read_text())
        if cached.get("key") == key and "text" in cached:
            return cached["text"], False
    text = produce()
    path.write_text(json.dumps({"key": key, "text": text}))
    return text, True


CACHE_ENV = "BOOKBUILD_CACHE_DIR"


def user_cache_dir() -> Path:
    """The per-user cache of build products that depend only on their inputs, never on one
    clone (the widget runtime, the packed Pyodide wasm): ``$BOOKBUILD_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/bookbuild``, else ``~/.cache/bookbuild``. Every clone of every book on the
    machine shares it; entries are content-addressed, so deleting it only costs time."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "bookbuild"


def shared_entry(final: Path, make: Callable[[Path], None]) -> tuple[Path, bool]:
    """The cache folder ``final``, made by ``make(tmp)`` into a fresh folder beside it when it
    does not exist yet. Returns the folder and whether it was made now.

    Safe for builds running at once (two clones, CI reruns): the maker holds a lock on the key,
    so a second build waits for the first instead of doing the work again, and the folder
    appears by one rename, so a reader sees all of an entry or none of it, even if a maker is
    killed half-way (its temporary folder is swept by the next maker of that key)."""
    if final.is_dir():
        return final, False
    final.parent.mkdir(parents=True, exist_ok=True)
    with open(final.parent / (final.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if final.is_dir():
            return final, False
        for stale in final.parent.glob(final.name + ".tmp-*"):   # left by a maker that died
            shutil.rmtree(stale, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=final.name + ".tmp-", dir=final.parent))
        try:
            make(tmp)
            os.rename(tmp, final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return final, True
