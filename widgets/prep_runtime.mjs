// Build step run by widgets/bundle.py under Node: boots the same Pyodide the
// browser will run, imports and exercises the widgets, records which standard
// library modules that touched, and writes
//   <out>/python_stdlib.zip  those modules only, compiled to .pyc by Pyodide's own Python
//   <out>/book-py.zip        calc + widgets, .py sources plus .pyc
// Usage: node prep_runtime.mjs <pyodide dir> <project root> <out dir>
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, projectRoot, outDir] = process.argv.slice(2).map((p) => path.resolve(p));
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const lock = JSON.parse(await (await import("node:fs/promises")).readFile(path.join(pyodideDir, "pyodide-lock.json"), "utf8"));
const py = await loadPyodide({ indexURL: pyodideDir + "/", lockFileContents: { info: lock.info, packages: {} } });
const FS = py.FS;
for (const [dir, mnt] of [[projectRoot, "/project"], [outDir, "/out"]]) {
  FS.mkdirTree(mnt);
  FS.mount(FS.filesystems.NODEFS, { root: dir }, mnt);
}
py.runPython(`
import sys, os, zipfile, marshal, importlib.util, json
STARTUP = set(sys.modules)
sys.path.insert(0, "/project")
import widgets, traceback, linecache, tokenize

# Exercise every widget: defaults, every choice, both booleans, the extremes.
for name in widgets.NAMES:
    mod = widgets.get(name)
    cases = [{}]
    for p in mod.PARAMS:
        if p.type == "choice":
            cases += [{p.name: v} for v, _ in p.options]
        elif p.type == "bool":
            cases += [{p.name: True}, {p.name: False}]
        else:
            cases += [{p.name: p.min}, {p.name: p.max}]
    cases += list(getattr(mod, "EXAMPLES", []))
    for case in cases:
        json.loads(widgets.render_json(name, json.dumps(case)))
try:
    raise ValueError("x")
except ValueError:
    traceback.format_exc()

STDLIB = sys.path[[p.endswith(".zip") for p in sys.path].index(True)]
zin = zipfile.ZipFile(STDLIB)
names = set(zin.namelist())
keep = set()
for mod in list(sys.modules.values()):
    f = getattr(mod, "__file__", None) or ""
    frozen = getattr(getattr(mod, "__spec__", None), "origin", None) == "frozen"
    if f.startswith(STDLIB + "/") and not frozen:      # frozen ones live in the wasm already
        rel = f[len(STDLIB) + 1:]
        keep.add(rel)
        parts = rel.split("/")[:-1]          # every enclosing package's __init__
        for i in range(1, len(parts) + 1):
            init = "/".join(parts[:i]) + "/__init__.py"
            if init in names:
                keep.add(init)

def pyc(source, filename, optimize=0):
    code = compile(source, filename, "exec", dont_inherit=True, optimize=optimize)
    # PEP 552 unchecked-hash pyc: zipimport loads it without looking for a source
    return importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") + bytes(8) + marshal.dumps(code)

def write(zout, name, data):
    info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    zout.writestr(info, data, compresslevel=9)

with zipfile.ZipFile("/out/python_stdlib.zip", "w") as zout:
    for rel in sorted(keep):
        if rel.endswith(".py"):
            # Docstrings dropped (-OO) except in Pyodide's own modules, which read theirs.
            opt = 0 if rel.startswith(("_pyodide/", "pyodide/")) else 2
            write(zout, rel + "c", pyc(zin.read(rel), rel, opt))
        else:
            write(zout, rel, zin.read(rel))

with zipfile.ZipFile("/out/book-py.zip", "w") as zout:
    for pkg in ("calc", "widgets"):
        for fn in sorted(os.listdir("/project/" + pkg)):
            if fn.endswith(".py") and fn not in ("bundle.py", "__main__.py"):
                src = open(f"/project/{pkg}/{fn}", "rb").read()
                write(zout, f"{pkg}/{fn}", src)
                write(zout, f"{pkg}/{fn}c", pyc(src, f"/lib/book-py.zip/{pkg}/{fn}"))

with open("/out/modules.txt", "w") as f:
    f.write("\\n".join(sorted(keep)) + "\\n")
`);
FS.unmount("/out");
