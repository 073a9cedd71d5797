"""build_runtime: the files the browser needs, and a no-op rebuild."""
import time
import zipfile
from pathlib import Path

from widgets.bundle import build_runtime

ROOT = Path(__file__).resolve().parents[2]


def test_build_runtime_writes_trimmed_precompiled_runtime(tmp_path):
    files = build_runtime(tmp_path, ROOT)
    assert {"pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "book-py.zip",
            "book-runtime.mjs"} <= set(files)
    full = (ROOT / "node_modules/pyodide/python_stdlib.zip").stat().st_size
    assert files["python_stdlib.zip"] < full / 2
    names = zipfile.ZipFile(tmp_path / "pyodide/book-py.zip").namelist()
    assert "calc/roofline.py" in names and "widgets/roofline.pyc" in names and "widgets/bundle.py" not in names
    assert "LOCK" in (tmp_path / "pyodide/book-runtime.mjs").read_text()
    mtime = (tmp_path / "pyodide/pyodide.asm.wasm").stat().st_mtime_ns
    t0 = time.perf_counter()
    build_runtime(tmp_path, ROOT)
    assert time.perf_counter() - t0 < 2
    assert (tmp_path / "pyodide/pyodide.asm.wasm").stat().st_mtime_ns == mtime
