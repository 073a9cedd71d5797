"""The per-user cache of build products that depend only on their inputs, never on one clone: the
widget runtime and the packed Pyodide wasm (``widgets.bundle``), KaTeX's subset fonts
(``bookbuild.html.mathrender``), the editor bundle (``scripts/editor_bundle.py``). It sits below
everything that uses it, so ``widgets`` (below the build in the data flow) and ``bookbuild`` share it
without one importing the other. Standard library only."""
from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

__all__ = ["CACHE_ENV", "user_cache_dir", "shared_entry"]


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
