"""Ship the widgets' Python to the browser.

``build_runtime(site_dir, project_root)`` writes ``site_dir/pyodide/``:

* ``pyodide.mjs``, ``pyodide.asm.mjs``, ``pyodide.asm.wasm`` from ``node_modules/pyodide``;
* ``pyodide.asm.wasm.gz``: the same wasm gzipped by Zopfli, 4% smaller than a host's gzip
  (3.41 MB against 3.56 MB at level 6); the worker fetches it and un-gzips it as it streams
  into the compiler.  Compressed once per Pyodide release (about 13 s), kept in
  ``.bookcache/pyodide/wasm-<version>/``; without the ``zopfli`` package, gzip level 9;
* ``python_stdlib.zip.gz``: only the standard-library modules the widgets touch,
  precompiled to ``.pyc`` by Pyodide's own interpreter (run under Node), Zopfli-gzipped;
* ``book-py.zip.gz``: ``calc`` and ``widgets`` as ``.pyc`` (line numbers kept, column tables dropped);
  both are zips of stored entries, gzipped whole (the worker un-gzips them);
* ``book-runtime.mjs``: the content key (cache busting), ``PACKED`` (".gz" or "")
  and an empty package lockfile, so the worker never fetches Pyodide's 120 kB package index.

The Node step takes a few seconds; its output is cached in
``.bookcache/pyodide/<key>/``, keyed on the Pyodide version and the sources, so
a rebuild with nothing changed only compares files.  Without Node, a plain
fallback (``FALLBACK_MODULES`` as ``.py``) keeps the book buildable.
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

WASM = "pyodide.asm.wasm"
RUNTIME_FILES = ("pyodide.mjs", "pyodide.asm.mjs", WASM)
ARCHIVES = ("python_stdlib.zip", "book-py.zip")
ARCHIVE_EXTS = (".gz", "")      # gzipped whole by the Node step; plain zips from the fallback
PACKAGES = ("calc", "widgets")
HERE = Path(__file__).resolve().parent
PREP = HERE / "prep_runtime.mjs"


def build_runtime(site_dir: Path, project_root: Path, *, node: str = "node") -> dict:
    """Write ``site_dir/pyodide/``; returns {file name: bytes} of what is there."""
    site_dir, project_root = Path(site_dir), Path(project_root)
    src = project_root / "node_modules" / "pyodide"
    if not (src / "pyodide.asm.wasm").exists():
        raise FileNotFoundError(f"{src}: Pyodide is missing; run `npm ci` in {project_root}")
    out = site_dir / "pyodide"
    out.mkdir(parents=True, exist_ok=True)
    for name in RUNTIME_FILES:
        _copy_if_changed(src / name, out / name)
    _copy_if_changed(_packed_wasm(src, project_root), out / (WASM + ".gz"))

    key = _content_key(src, project_root)
    cache = project_root / ".bookcache" / "pyodide" / key
    if not any((cache / f"book-py.zip{ext}").exists() for ext in ARCHIVE_EXTS):
        _prepare(src, project_root, cache, node)
    ext = next(e for e in ARCHIVE_EXTS if (cache / f"book-py.zip{e}").exists())
    for name in ARCHIVES:
        _copy_if_changed(cache / (name + ext), out / (name + ext))
        for other in ARCHIVE_EXTS:             # a variant left by an earlier build
            if other != ext and (out / (name + other)).exists():
                (out / (name + other)).unlink()

    lock = json.loads((src / "pyodide-lock.json").read_text())
    config = (f"export const KEY = {json.dumps(key)};\n"
              f"export const PACKED = {json.dumps(ext)};\n"
              f"export const LOCK = {json.dumps({'info': lock['info'], 'packages': {}})};\n")
    _write_if_changed(out / "book-runtime.mjs", config)
    return {p.name: p.stat().st_size for p in sorted(out.iterdir())}


def _packed_wasm(src: Path, project_root: Path) -> Path:
    """The wasm gzipped as tightly as we can, cached per Pyodide release."""
    version = json.loads((src / "package.json").read_text())["version"]
    packed = project_root / ".bookcache" / "pyodide" / f"wasm-{version}" / (WASM + ".gz")
    if packed.exists():
        return packed
    _write_atomic(packed, _gzip_tight((src / WASM).read_bytes()))
    return packed


def _gzip_tight(data: bytes) -> bytes:
    try:
        import zopfli.gzip
        return zopfli.gzip.compress(data, numiterations=1)   # more iterations: 0.1% for 3x the time
    except ImportError:
        return gzip.compress(data, 9, mtime=0)


def _repack_tight(archive: Path, project_root: Path) -> None:
    """Re-gzip ``archive`` with Zopfli (3.5% smaller than zlib's best), keyed on its content:
    the standard-library archive stays byte-identical while only calc or widgets change,
    so its 6 s of Zopfli are paid once per set of modules."""
    raw = gzip.decompress(archive.read_bytes())
    done = project_root / ".bookcache" / "pyodide" / "zopfli" / (hashlib.sha256(raw).hexdigest()[:24] + ".gz")
    if not done.exists():
        _write_atomic(done, _gzip_tight(raw))
    shutil.copyfile(done, archive)


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _content_key(src: Path, project_root: Path) -> str:
    h = hashlib.sha256()
    h.update((src / "package.json").read_bytes())
    h.update(PREP.read_bytes())
    for pkg in PACKAGES:
        for f in sorted((project_root / pkg).glob("*.py")):
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def _prepare(src: Path, project_root: Path, cache: Path, node: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="pyodide-", dir=cache.parent if cache.parent.exists() else None))
    try:
        try:
            subprocess.run([node, str(PREP), str(src), str(project_root), str(tmp)],
                           check=True, capture_output=True, text=True, timeout=300)
            _repack_tight(tmp / "python_stdlib.zip.gz", project_root)
        except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            print(f"widgets.bundle: Node step failed, shipping .py fallback: {detail[-400:]}", file=sys.stderr)
            _fallback(src, project_root, tmp)
        cache.parent.mkdir(parents=True, exist_ok=True)
        if cache.exists():
            shutil.rmtree(cache)
        tmp.rename(cache)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


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
    with zipfile.ZipFile(out / "book-py.zip", "w", zipfile.ZIP_DEFLATED) as zout:
        for pkg in PACKAGES:
            for f in sorted((project_root / pkg).glob("*.py")):
                zout.write(f, f"{pkg}/{f.name}")


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
