"""build_runtime: the files the browser needs, and a no-op rebuild."""
import gzip
import io
import time
import zipfile
from pathlib import Path

from widgets.bundle import build_runtime

ROOT = Path(__file__).resolve().parents[2]


def test_build_runtime_writes_trimmed_precompiled_runtime(tmp_path):
    files = build_runtime(tmp_path, ROOT)
    assert {"pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip.gz", "book-py.zip.gz",
            "book-runtime.mjs"} <= set(files)
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
    assert len(packed) < len(gzip.compress(gzip.decompress(packed), 9)) * 0.98     # Zopfli
    names = zipfile.ZipFile(io.BytesIO(gzip.decompress((tmp_path / "pyodide/book-py.zip.gz").read_bytes()))).namelist()
    assert "calc/kernels.pyc" in names and "widgets/steps.pyc" in names
    assert not any(n.endswith(".py") for n in names) and "widgets/bundle.pyc" not in names
    wasm = (ROOT / "node_modules/pyodide/pyodide.asm.wasm").read_bytes()
    packed = (tmp_path / "pyodide/pyodide.asm.wasm.gz").read_bytes()
    assert gzip.decompress(packed) == wasm
    assert len(packed) < len(gzip.compress(wasm, 6)) * 0.97      # tighter than a host's gzip
    config = (tmp_path / "pyodide/book-runtime.mjs").read_text()
    assert "LOCK" in config and 'PACKED = ".gz"' in config
    mtime = (tmp_path / "pyodide/pyodide.asm.wasm").stat().st_mtime_ns
    t0 = time.perf_counter()
    build_runtime(tmp_path, ROOT)
    assert time.perf_counter() - t0 < 2
    assert (tmp_path / "pyodide/pyodide.asm.wasm").stat().st_mtime_ns == mtime
