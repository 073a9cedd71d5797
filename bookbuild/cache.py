"""Content keys and kept build products, shared by every stage and format: the digest of text
and files a cache entry is keyed by, text kept under a key (``cached_text``), and the per-user
cache of products that depend only on their inputs (``usercache``, re-exported here). The execution
cache (Quarto's ``freeze``) is ``execute/freeze.py``."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

from usercache import CACHE_ENV, shared_entry, user_cache_dir  # noqa: F401  (the build's modules import them from here)


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
