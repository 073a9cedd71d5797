"""Quarto's ``freeze`` idea: a chapter runs again only when its source, the build's
execution settings, the project Python it imported or a project file its cells read have
changed."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

VERSION = "5"  # bump when the executed-markdown format or what the key covers changes


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
        path = self._path(stem)
        if not path.exists():
            return None
        entry = json.loads(path.read_text())
        if entry.get("source") != digest(VERSION, source_text, json.dumps(settings, sort_keys=True)):
            return None
        for rel, old in entry.get("modules", {}).items():
            if file_digest(self.root / rel) != old:
                return None
        fig_dir = self.root / ".bookcache" / "figures" / stem
        if any(not (fig_dir / f).exists() for f in entry.get("figures", [])):
            return None
        return entry

    def store(self, stem: str, source_text: str, settings: dict[str, Any], markdown: str,
              modules: list[str], figures: list[str]) -> None:
        rels = {}
        for m in modules:
            p = Path(m)
            try:
                rel = p.relative_to(self.root).as_posix()
            except ValueError:
                continue
            rels[rel] = file_digest(p)
        entry = {"source": digest(VERSION, source_text, json.dumps(settings, sort_keys=True)),
                 "modules": rels, "figures": figures, "markdown": markdown}
        self._path(stem).write_text(json.dumps(entry))


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
