"""build_runtime: the files the browser needs, made once per key in the per-user cache, and a
no-op rebuild."""
import gzip
import io
import re
import shutil
import time
import zipfile
from pathlib import Path

from widgets.bundle import EXERCISE_MODULES, build_runtime, content_key, pyodide_dir

ROOT = Path(__file__).resolve().parents[2]


def counting_node(tmp_path: Path) -> tuple[str, Path]:
    """A `node` that logs each run of the prep script, then is the real node."""
    log = tmp_path / "node-runs"
    script = tmp_path / "node"
    script.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec node "$@"\n')
    script.chmod(0o755)
    return str(script), log


def test_build_runtime_writes_trimmed_precompiled_runtime(tmp_path):
    node, runs = counting_node(tmp_path)
    cache, made = tmp_path / "user-cache", []
    files = build_runtime(tmp_path, ROOT, node=node, cache_dir=cache, made=made)
    assert made == ["wasm", "runtime"] and len(runs.read_text().splitlines()) == 1
    assert {"pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip.gz", "book-py.zip.gz",
            "exercises-py.zip.gz", "book-runtime.mjs"} <= set(files)
    full = (ROOT / "node_modules/pyodide/python_stdlib.zip").stat().st_size
    assert files["python_stdlib.zip.gz"] < full / 3
    stdlib = zipfile.ZipFile(io.BytesIO(gzip.decompress((tmp_path / "pyodide/python_stdlib.zip.gz").read_bytes())))
    assert "typing.pyc" in stdlib.namelist() and "typing.py" not in stdlib.namelist()
    assert {i.compress_type for i in stdlib.infolist()} == {zipfile.ZIP_STORED}
    # Pyodide's package loader imports these at start-up; ours only when installing a wheel.
    assert not {"shutil.pyc", "tempfile.pyc", "zipfile/__init__.pyc", "lzma.pyc"} & set(stdlib.namelist())
    loader = stdlib.read("pyodide/_package_loader.pyc")
    assert b"NamedTemporaryFile" in loader and b"ZipFile" in loader
    packed = (tmp_path / "pyodide/python_stdlib.zip.gz").read_bytes()
    assert len(packed) < len(gzip.compress(gzip.decompress(packed), 9)) * 0.98     # libdeflate
    names = zipfile.ZipFile(io.BytesIO(gzip.decompress((tmp_path / "pyodide/book-py.zip.gz").read_bytes()))).namelist()
    assert "calc/kernels.pyc" in names and "widgets/steps.pyc" in names
    assert not any(n.endswith(".py") for n in names) and "widgets/bundle.pyc" not in names
    # the exercises' Python (checks, simulator) ships apart: a widget page never fetches it
    exercises = zipfile.ZipFile(io.BytesIO(gzip.decompress((tmp_path / "pyodide/exercises-py.zip.gz").read_bytes())))
    assert sorted(exercises.namelist()) == sorted(m + "c" for m in EXERCISE_MODULES)
    assert not set(exercises.namelist()) & set(names)
    # and a module that builds on the simulator ships with it, not in the widgets' archive
    simulator = re.compile(r"^\s*from \.(?:\s+import\s+[\w, ]*\b)?(?:sim|exercises)\b", re.M)
    in_widget_archive = [n for n in names if n.startswith("calc/") and simulator.search((ROOT / n[:-1]).read_text())]
    assert "calc/sim/lang.pyc" in exercises.namelist() and not any(n.startswith("calc/sim/") for n in names)
    assert not in_widget_archive, f"{in_widget_archive} import the simulator: add them to EXERCISE_MODULES"
    wasm = (ROOT / "node_modules/pyodide/pyodide.asm.wasm").read_bytes()
    packed = (tmp_path / "pyodide/pyodide.asm.wasm.gz").read_bytes()
    assert gzip.decompress(packed) == wasm
    assert len(packed) < len(gzip.compress(wasm, 6)) * 0.97      # tighter than a host's gzip
    config = (tmp_path / "pyodide/book-runtime.mjs").read_text()
    assert "LOCK" in config and 'PACKED = ".gz"' in config
    mtime = (tmp_path / "pyodide/pyodide.asm.wasm").stat().st_mtime_ns
    t0 = time.perf_counter()
    build_runtime(tmp_path, ROOT, node=node, cache_dir=cache, made=made)
    assert time.perf_counter() - t0 < 2
    assert (tmp_path / "pyodide/pyodide.asm.wasm").stat().st_mtime_ns == mtime
    # another clone's site, same key: everything comes from the per-user cache, Node does not run
    other, made = tmp_path / "other-clone" / "_book", []
    assert build_runtime(other, ROOT, node=node, cache_dir=cache, made=made) == files
    assert made == [] and len(runs.read_text().splitlines()) == 1
    for name in files:
        assert (other / "pyodide" / name).read_bytes() == (tmp_path / "pyodide" / name).read_bytes()


def test_the_key_covers_calc_and_widgets_sources(tmp_path):
    for pkg in ("calc", "widgets"):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    src = pyodide_dir(ROOT)
    key = content_key(src, tmp_path)
    assert key == content_key(src, ROOT)                      # the same sources, the same key
    specs = tmp_path / "calc" / "specs.py"
    specs.write_text(specs.read_text() + "\n# an edit\n")
    calc_edited = content_key(src, tmp_path)
    assert calc_edited != key
    (tmp_path / "widgets" / "newwidget.py").write_text("X = 1\n")
    assert content_key(src, tmp_path) not in (key, calc_edited)
