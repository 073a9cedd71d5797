"""The real book, built for the tests outside the repository and reused only while its content
is the same.

The tests never build into the repository's ``_book/``. They copy everything the build can read
(every file git sees, tracked or not, except tests/, .ci/ and node_modules, which is linked) into
a folder of their own, keyed by a hash of those files' paths and bytes, and build there. The copy's
``.bookcache`` stays between sessions: bookbuild's caches are themselves keyed on content
(bookbuild/cache.py), so a warm copy rebuilds quickly and never serves an old page. A session
whose sources hash as the last build's did reuses that build; any changed byte (a calc module, a
kernel the attention chapter prints, matplotlibrc, a filter) syncs into the copy and builds again.

Where: ``$BOOK_TEST_BUILD_DIR``, else ``$XDG_CACHE_HOME`` (or ``~/.cache``)
``/bookbuild-tests/<hash of the clone's path>`` so two clones never share (or fight over) one."""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

LEFT_OUT = {"tests", ".ci", "node_modules", ".git"}          # top-level entries the build never reads
WALK_SKIP = {"_book", ".bookcache", "node_modules", ".git", "__pycache__", ".pytest_cache", ".hypothesis",
             ".venv"}
KEPT = {"_book", ".bookcache", "node_modules", ".testbuild.json", ".testbuild.lock"}  # the copy's own


def source_files(root: Path) -> list[str]:
    """The project's files as the build sees them, relative, sorted: git's view (tracked and
    untracked, less what .gitignore ignores), or a walk of the folder outside a git clone."""
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root,
                             capture_output=True, check=True).stdout.decode()
        rels = [r for r in out.split("\0") if r]
    except (OSError, subprocess.CalledProcessError):
        rels = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in WALK_SKIP]
            rels += [os.path.relpath(os.path.join(dirpath, f), root) for f in filenames if not f.endswith(".pyc")]
    return sorted(r for r in rels if r.split("/", 1)[0] not in LEFT_OUT and (root / r).is_file())


def content_key(root: Path, files: list[str] | None = None) -> str:
    """A hash of every source file's path, executable bit and bytes."""
    h = hashlib.sha256()
    for rel in files if files is not None else source_files(root):
        path = root / rel
        h.update(rel.encode() + b"\0" + (b"x" if os.access(path, os.X_OK) else b"-") + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def default_dir(root: Path) -> Path:
    env = os.environ.get("BOOK_TEST_BUILD_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "bookbuild-tests" / hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]


class BookCopy:
    """``root``'s sources mirrored into ``dest`` and built there on demand."""

    def __init__(self, root: Path, dest: Path):
        self.root, self.dest = Path(root).resolve(), Path(dest)
        self.stamp = self.dest / ".testbuild.json"

    def _read_stamp(self) -> dict:
        try:
            return json.loads(self.stamp.read_text())
        except (FileNotFoundError, ValueError):
            return {}

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.dest.mkdir(parents=True, exist_ok=True)
        with open(self.dest / ".testbuild.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)   # two sessions of one clone take turns
            yield

    def sync(self) -> str:
        """Mirror the sources into the copy (only when their key changed); returns the key."""
        files = source_files(self.root)
        key = content_key(self.root, files)
        stamp = self._read_stamp()
        if stamp.get("key") == key:
            return key
        self.stamp.unlink(missing_ok=True)          # a half-synced copy is never taken for a built one
        wanted = set(files)
        for dirpath, dirnames, filenames in os.walk(self.dest, topdown=True):
            rel_dir = os.path.relpath(dirpath, self.dest)
            if rel_dir == ".":
                dirnames[:] = [d for d in dirnames if d not in KEPT]
                filenames = [f for f in filenames if f not in KEPT]
            for f in filenames:
                rel = os.path.normpath(os.path.join(rel_dir, f))
                if rel not in wanted:
                    os.unlink(os.path.join(dirpath, f))
        for rel in files:
            src, dst = self.root / rel, self.dest / rel
            data = src.read_bytes()
            if not dst.is_file() or dst.read_bytes() != data:
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.unlink(missing_ok=True)
                dst.write_bytes(data)
            shutil.copymode(src, dst)
        cache = self.dest / ".bookcache"
        if not cache.exists() and (self.root / ".bookcache" / "exec").is_dir():
            # a first copy starts from the clone's build cache (read, never written): its entries
            # are keyed on content, so they only save time
            shutil.copytree(self.root / ".bookcache", cache, ignore=shutil.ignore_patterns("lock", "*.lock", "*.tmp*"))
        modules = self.dest / "node_modules"
        if not modules.exists() and (self.root / "node_modules").exists():
            modules.symlink_to((self.root / "node_modules").resolve())
        self.stamp.write_text(json.dumps({"key": key, "built": []}))
        return key

    def ensure(self, formats: tuple[str, ...], build: Callable[..., object] | None = None,
               search: bool = False) -> Path:
        """The copy's ``_book/``, with ``formats`` built from the current sources."""
        with self._locked():
            self.sync()
            stamp = self._read_stamp()
            want = sorted(set(formats) | ({"search"} if search else set()))
            if not set(want) <= set(stamp["built"]):
                if build is None:
                    from bookbuild import build
                build(self.dest, formats=formats, search=search)
                stamp["built"] = sorted(set(stamp["built"]) | set(want))
                self.stamp.write_text(json.dumps(stamp))
        return self.dest / "_book"
