"""Ship the widgets' Python to the browser.

``build_runtime(site_dir, project_root)`` writes ``site_dir/pyodide/``:

* ``pyodide.mjs``, ``pyodide.asm.mjs``, ``pyodide.asm.wasm`` from ``node_modules/pyodide``;
* ``pyodide.asm.wasm.gz``: the same wasm gzipped by libdeflate at its best level (PyPI
  ``deflate``): 3.39 MB against a host's 3.55 MB (gzip level 6), and smaller than Zopfli's
  3.42 MB, which took four times as long; the worker fetches it and un-gzips it as it streams
  into the compiler.  Packed once per Pyodide release and machine (about 3 s); without the
  ``deflate`` package, gzip level 9;
* ``python_stdlib.zip.gz``: only the standard-library modules the widgets touch,
  precompiled to ``.pyc`` by Pyodide's own interpreter (run under Node), packed the same way;
* ``book-py.zip.gz``: ``calc`` and ``widgets`` as ``.pyc`` (line numbers kept, column tables dropped),
  less ``EXERCISE_MODULES``;
* ``exercises-py.zip.gz``: ``EXERCISE_MODULES`` (the exercises' checks and the kernel simulator,
  a third of the Python), fetched only by the exercises' worker, so that a page landing on a widget
  does not download, unpack and index them;
  all three are zips of stored entries, gzipped whole (the worker un-gzips them);
* ``book-runtime.mjs``: the content key (cache busting), ``PACKED`` (".gz" or "")
  and an empty package lockfile, so the worker never fetches Pyodide's 120 kB package index.

What the Node step makes depends only on its inputs (the Pyodide release, the prep script, this
file, ``calc`` and ``widgets``), so it is kept in the per-user cache
(``usercache.user_cache_dir()``: ``$BOOKBUILD_CACHE_DIR``, else ``~/.cache/bookbuild``)
under ``widget-runtime/<key>/`` and made once per key for every clone on the machine; the packed
wasm under ``pyodide-wasm/<version>-<codec>/``.  A build with nothing changed only compares
files.  Without Node, a plain fallback (``FALLBACK_MODULES`` as ``.py``) keeps the book
buildable; it is not cached, so the next build tries Node again.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Callable


WASM = "pyodide.asm.wasm"
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", WASM)
ARCHIVES = ("python_stdlib.zip", "book-py.zip", "exercises-py.zip")
# Only the exercises import these (calc.exercises and the simulator under it); the prep step stops
# the build if drawing any widget imports one of them.
# calc.gpuscript writes the exercises' "Run on an NVIDIA GPU" script in the worker; calc.problems and
# calc.hwcounters are the build's (they reach the simulator through calc.exercises and calc.sim).
EXERCISE_MODULES = ("calc/exercises.py", "calc/gpuscript.py", "calc/hwcounters.py", "calc/problems.py") + tuple(sorted(
    f"calc/sim/{f.name}" for f in (Path(__file__).resolve().parent.parent / "calc" / "sim").glob("*.py")))
ARCHIVE_EXTS = (".gz", "")      # gzipped whole by the Node step; plain zips from the fallback
PACKAGES = ("calc", "widgets")
HERE = Path(__file__).resolve().parent
PREP = HERE / "prep_runtime.mjs"
LEVEL = 12                      # libdeflate's best; 10 is 0.1% larger in a third of the time


def build_runtime(site_dir: Path, project_root: Path, *, node: str = "node", cache_dir: Path | None = None,
                  made: list[str] | None = None) -> dict:
    """Write ``site_dir/pyodide/``; returns {file name: bytes} of what is there. ``made`` (if
    given) gets the names of the cache entries made now rather than found ("wasm", "runtime")."""
    site_dir, project_root = Path(site_dir), Path(project_root)
    from usercache import shared_entry, user_cache_dir   # here: a render without HTML needs neither
    cache_dir = Path(cache_dir) if cache_dir else user_cache_dir()
    made = made if made is not None else []
    src = pyodide_dir(project_root)
    out = site_dir / "pyodide"
    out.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME_FILES:
        _copy_if_changed(src / name, out / name)
    _copy_if_changed(_packed_wasm(src, cache_dir, made), out / (WASM + ".gz"))

    key = content_key(src, project_root)
    fallback = None
    try:
        entry, fresh = shared_entry(cache_dir / "widget-runtime" / key,
                                    lambda tmp: _prepare(src, project_root, tmp, node))
        if fresh:
            made.append("runtime")
    except NodeFailed as exc:
        print(f"widgets.bundle: Node step failed, shipping .py fallback: {exc}", file=sys.stderr)
        entry = fallback = Path(tempfile.mkdtemp(prefix="pyodide-fallback-"))
        _fallback(src, project_root, entry)
    try:
        ext = next(e for e in ARCHIVE_EXTS if (entry / f"book-py.zip{e}").exists())
        for name in ARCHIVES:
            _copy_if_changed(entry / (name + ext), out / (name + ext))
            for other in ARCHIVE_EXTS:             # a variant left by an earlier build
                if other != ext and (out / (name + other)).exists():
                    (out / (name + other)).unlink()
    finally:
        if fallback:
            shutil.rmtree(fallback, ignore_errors=True)

    lock = json.loads((src / "pyodide-lock.json").read_text())
    config = (f"export const KEY = {json.dumps(key)};\n"
              f"export const PACKED = {json.dumps(ext)};\n"
              f"export const LOCK = {json.dumps({'info': lock['info'], 'packages': {}})};\n")
    _write_if_changed(out / "book-runtime.mjs", config)
    return {p.name: p.stat().st_size for p in sorted(out.iterdir())}


def pyodide_dir(project_root: Path) -> Path:
    """``node_modules/pyodide``, found as Node finds packages (here or in a parent folder), else
    beside this file (a copy of a book built from elsewhere, e.g. a test's)."""
    for folder in (project_root, *project_root.parents, HERE.parent):
        if (folder / "node_modules" / "pyodide" / WASM).exists():
            return folder / "node_modules" / "pyodide"
    raise FileNotFoundError(f"{project_root}/node_modules/pyodide: Pyodide is missing; run `npm ci` in {project_root}")


def _packer() -> tuple[str, Callable[[bytes], bytes]]:
    """The tightest gzip we have, and its name (part of cache keys)."""
    try:
        import deflate
        return f"libdeflate-{LEVEL}", lambda data: deflate.gzip_compress(data, LEVEL)
    except ImportError:
        return "gzip-9", lambda data: gzip.compress(data, 9, mtime=0)


def _packed_wasm(src: Path, cache_dir: Path, made: list[str]) -> Path:
    """The wasm gzipped as tightly as we can, made once per Pyodide release (and packer)."""
    version = json.loads((src / "package.json").read_text())["version"]
    codec, pack = _packer()

    def make(tmp: Path) -> None:
        (tmp / (WASM + ".gz")).write_bytes(pack((src / WASM).read_bytes()))

    from usercache import shared_entry
    entry, fresh = shared_entry(cache_dir / "pyodide-wasm" / f"{version}-{codec}", make)
    if fresh:
        made.append("wasm")
    return entry / (WASM + ".gz")


def _repack(archive: Path) -> None:
    """Re-gzip an archive the Node step wrote with zlib's best: 3% smaller."""
    archive.write_bytes(_packer()[1](gzip.decompress(archive.read_bytes())))


def _package_files(project_root: Path, pkg: str) -> list:
    """A package's modules, its subpackages' (calc/sim/) included."""
    return sorted(f for f in (project_root / pkg).rglob("*.py") if "__pycache__" not in f.parts)


def content_key(src: Path, project_root: Path) -> str:
    """Everything the Node step's output depends on (this file is among the widgets' sources)."""
    h = hashlib.sha256(_packer()[0].encode())
    h.update((src / "package.json").read_bytes())
    h.update(PREP.read_bytes())
    for pkg in PACKAGES:
        for f in _package_files(project_root, pkg):
            h.update(str(f.relative_to(project_root)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


class NodeFailed(Exception):
    pass


def _prepare(src: Path, project_root: Path, out: Path, node: str) -> None:
    try:
        subprocess.run([node, str(PREP), str(src), str(project_root), str(out), ",".join(EXERCISE_MODULES)],
                       check=True, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        raise NodeFailed(detail[-400:]) from None
    for name in ARCHIVES:
        _repack(out / (name + ".gz"))


# What Pyodide itself imports at start-up plus what calc and widgets use.  Only
# used when Node is unavailable; the Node step measures the real list.
FALLBACK_MODULES = (
    "__future__", "_collections_abc", "_colorize", "_compat_pickle", "_opcode_metadata",
    "_py_warnings", "_pyodide", "_sitebuiltins", "_weakrefset", "abc", "annotationlib", "ast",
    "asyncio", "base64", "bisect", "codecs", "codeop", "collections", "colorsys", "concurrent",
    "contextlib", "contextvars", "copy", "copyreg", "dataclasses", "dis", "encodings/__init__",
    "encodings/aliases", "encodings/utf_8", "enum", "fnmatch", "functools", "genericpath",
    "glob", "heapq", "html", "importlib", "inspect", "io", "json", "keyword", "linecache",
    "locale", "logging", "ntpath", "opcode", "operator", "os", "pathlib", "posixpath",
    "pyodide", "random", "re", "reprlib", "selectors", "shutil", "signal", "site", "socket",
    "ssl", "stat", "string", "struct", "subprocess", "tempfile", "textwrap", "threading",
    "token", "tokenize", "traceback", "types", "typing", "warnings", "weakref", "zipfile",
)


def _fallback(src: Path, project_root: Path, out: Path) -> None:
    with zipfile.ZipFile(src / "python_stdlib.zip") as zin, \
            zipfile.ZipFile(out / "python_stdlib.zip", "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            if any(name == m + ".py" or name.startswith(m + "/") for m in FALLBACK_MODULES):
                zout.writestr(name, zin.read(name))
    with zipfile.ZipFile(out / "book-py.zip", "w", zipfile.ZIP_DEFLATED) as book, \
            zipfile.ZipFile(out / "exercises-py.zip", "w", zipfile.ZIP_DEFLATED) as exercises:
        for pkg in PACKAGES:
            for f in _package_files(project_root, pkg):
                name = str(f.relative_to(project_root))
                (exercises if name in EXERCISE_MODULES else book).write(f, name)


def _copy_if_changed(a: Path, b: Path) -> None:
    if b.exists() and b.stat().st_size == a.stat().st_size and b.read_bytes() == a.read_bytes():
        return
    shutil.copy2(a, b)


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def main(argv: list[str]) -> int:
    """``python -m widgets.bundle [SITE_DIR [PROJECT_ROOT]]``; with no arguments, as a Quarto
    post-render script: the site is ``$QUARTO_PROJECT_OUTPUT_DIR``, the project the working
    directory, and a render that wrote no HTML (``--to typst``) needs no runtime."""
    import os
    site = argv[0] if argv else os.environ.get("QUARTO_PROJECT_OUTPUT_DIR")
    if not site:
        print("usage: python -m widgets.bundle SITE_DIR [PROJECT_ROOT] (or as a Quarto post-render script)",
              file=sys.stderr)
        return 2
    outputs = os.environ.get("QUARTO_PROJECT_OUTPUT_FILES")
    if not argv and outputs is not None and not any(f.endswith(".html") for f in outputs.split("\n")):
        return 0
    root = Path(argv[1]) if len(argv) > 1 else Path.cwd()
    for name, size in build_runtime(Path(site), root).items():
        print(f"{size:>10,}  pyodide/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
