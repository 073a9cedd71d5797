"""A bare page that loads Pyodide (from node_modules/pyodide) with calc/ on its path.

Used by tests/browser/test_warpsim_browser.py and benchmarks/warpsim_bench.py to run calc in
Pyodide in Chromium without the book's widget runtime: ``window.run(code)`` runs Python code in
the page and returns the value of its last expression (``runPython``); ``window.ready`` is true
once Pyodide and calc are loaded."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")

PAGE = """<!doctype html><html lang="en"><meta charset="utf-8"><link rel="icon" href="data:,">
<title>calc in Pyodide</title>
<script type="module">
import { loadPyodide } from "./pyodide/pyodide.mjs";
const py = await loadPyodide({ indexURL: "./pyodide/" });
const files = await (await fetch("./calc-files.json")).json();
py.FS.mkdirTree("/book/calc");
for (const f of files) {
  const dir = f.includes("/") ? "/book/calc/" + f.slice(0, f.lastIndexOf("/")) : null;
  if (dir) py.FS.mkdirTree(dir);                       // calc's packages (calc/sim/)
  py.FS.writeFile("/book/calc/" + f, await (await fetch("./calc/" + f)).text());
}
py.runPython("import sys; sys.path.insert(0, '/book')");
window.run = (code) => py.runPython(code);
window.ready = true;
</script></html>"""


def make_pyodide_site(where: Path, calc_dir: Path = ROOT / "calc") -> Path:
    """Write the page (index.html), Pyodide's files and calc's modules, its packages' too (from
    ``calc_dir``), into ``where``;
    returns it."""
    pyo = ROOT / "node_modules" / "pyodide"
    (where / "pyodide").mkdir(parents=True, exist_ok=True)
    for name in PYODIDE_FILES:
        shutil.copy(pyo / name, where / "pyodide" / name)
    (where / "calc").mkdir(exist_ok=True)
    files = sorted(p.relative_to(calc_dir).as_posix() for p in calc_dir.rglob("*.py")
                   if "__pycache__" not in p.parts)          # calc/sim/ too
    for name in files:
        (where / "calc" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(calc_dir / name, where / "calc" / name)
    (where / "calc-files.json").write_text(json.dumps(files))
    (where / "index.html").write_text(PAGE)
    return where


def available() -> bool:
    return all((ROOT / "node_modules" / "pyodide" / name).exists() for name in PYODIDE_FILES)
