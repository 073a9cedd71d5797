// Build step run by widgets/bundle.py under Node: boots the same Pyodide the
// browser will run, imports and exercises the widgets, records which standard
// library modules that touched, and writes
//   <out>/python_stdlib.zip.gz  those modules only, compiled to .pyc by Pyodide's own Python
//   <out>/book-py.zip.gz        calc + widgets as .pyc, less the exercises' modules
//   <out>/exercises-py.zip.gz   the exercises' modules (calc.exercises, the simulator), as .pyc
// (zip archives with stored entries, each gzipped as a whole).
// The standard library gets widgets/runtime_site.py as its sitecustomize (asyncio on first use).
// Every .pyc keeps line numbers but drops column positions (a third of its size).
// Usage: node prep_runtime.mjs <pyodide dir> <project root> <out dir> <exercise modules, comma-separated:
//        calc/exercises.py,...; widgets/bundle.py's EXERCISE_MODULES>
import path from "node:path";
import { pathToFileURL } from "node:url";

const [pyodideDir, projectRoot, outDir] = process.argv.slice(2, 5).map((p) => path.resolve(p));
const exerciseFiles = (process.argv[5] || "").split(",").filter(Boolean);
const exerciseModules = exerciseFiles.map((f) => f.replace(/\.py$/, "").replaceAll("/", "."));
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, "pyodide.mjs")).href);
const lock = JSON.parse(await (await import("node:fs/promises")).readFile(path.join(pyodideDir, "pyodide-lock.json"), "utf8"));
const py = await loadPyodide({ indexURL: pyodideDir + "/", lockFileContents: { info: lock.info, packages: {} } });
const FS = py.FS;
for (const [dir, mnt] of [[projectRoot, "/project"], [outDir, "/out"]]) {
  FS.mkdirTree(mnt);
  FS.mount(FS.filesystems.NODEFS, { root: dir }, mnt);
}
// What the page will do: import the widgets and draw every one of them with defaults, every
// choice, both booleans and the extremes, format a traceback (a render's error message), and
// check an exercise's kernel (calc.exercises).
// Afterwards, _stdlib_used() lists the standard-library files that were loaded.
const EXERCISE = `
import sys, json
sys.path.insert(0, "/project")
import widgets, traceback
for name in widgets.NAMES:
    for case in widgets.states(name):
        json.loads(widgets.render_json(name, json.dumps(case)))
# The exercises' modules ship apart (exercises-py.zip), which only the exercises' worker fetches.
_drawn_with = [m for m in ${JSON.stringify(exerciseModules)} if m in sys.modules]
assert not _drawn_with, f"drawing the widgets imported {_drawn_with}: take them out of EXERCISE_MODULES in widgets/bundle.py"
try:
    raise ValueError("x")
except ValueError:
    traceback.format_exc()
# The exercises' checks (calc.exercises, run by the same worker): one small check, run and miss.
import calc.exercises
calc.exercises._selftest()

def _stdlib_used():
    stdlib = sys.path[[p.endswith(".zip") for p in sys.path].index(True)]
    used = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None) or ""
        frozen = getattr(getattr(mod, "__spec__", None), "origin", None) == "frozen"
        if f.startswith(stdlib + "/") and not frozen:      # frozen ones live in the wasm already
            used.add(f[len(stdlib) + 1:].removesuffix("c"))  # .pyc in our archive -> its .py
    return sorted(used)
`;
py.runPython(EXERCISE);
py.runPython(`
import sys, os, zipfile, marshal, importlib.util, json, types, ast

STDLIB = sys.path[[p.endswith(".zip") for p in sys.path].index(True)]
zin = zipfile.ZipFile(STDLIB)
names = set(zin.namelist())

def with_packages(files):
    """The files plus every enclosing package's __init__."""
    out = set(files)
    for rel in files:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            init = "/".join(parts[:i]) + "/__init__.py"
            if init in names:
                out.add(init)
    return out

keep = with_packages(_stdlib_used())

# Pyodide's package loader imports shutil, tempfile and zipfile at start-up (and through them
# bz2, lzma, zstd, random...), for installing wheels, which the book never does.  Ours imports
# them on first use.  If Pyodide changes these lines, the build says so here.
NO_SSL = ("try:\\n    import ssl\\nexcept ImportError:  # pragma: no cover\\n    ssl = None\\n",
          "ssl = None  # book runtime: no sockets in a browser, so no TLS\\n")
LAZY = {
    "pyodide/_package_loader.py": (
        ("import shutil\\n", ""),
        ("from tempfile import NamedTemporaryFile\\n", ""),
        ("from zipfile import ZipFile\\n", ""),
        ("if IN_PYODIDE:\\n    shutil.register_archive_format(",
         "def _register_wheel_format() -> None:\\n    shutil.register_archive_format("),
    ),
    "pyodide/common.py": (
        ("import shutil\\n", ""),
        ("shutil.copy2(", "__import__('shutil').copy2("),
    ),
    # asyncio, which Pyodide's core imports at start-up, loads ssl (for TLS over sockets, which a
    # browser does not have), logging (for its debug messages) and, through subprocess, locale.
    "asyncio/base_events.py": (NO_SSL,),
    "asyncio/selector_events.py": (NO_SSL,),
    "asyncio/sslproto.py": (NO_SSL,),
    "asyncio/log.py": (
        ("import logging\\n", ""),
        ("logger = logging.getLogger(__package__)\\n", ""),
    ),
    "asyncio/futures.py": (
        ("import logging\\n", ""),
        ("STACK_DEBUG = logging.DEBUG - 1", "STACK_DEBUG = 9"),
    ),
    "concurrent/futures/_base.py": (
        ("import logging\\n", ""),
        ('LOGGER = logging.getLogger("concurrent.futures")\\n', ""),
    ),
    "subprocess.py": (
        ("import locale\\n", ""),
        ("return locale.getencoding()", "return __import__('locale').getencoding()"),
    ),
    # traceback needs _colorize (and its dataclass themes) only to format a traceback.
    "traceback.py": (
        ("import _colorize\\n", ""),
    ),
}

def stand_in(name, why, load):
    """Source for a module global 'name' that runs 'load' (which binds the real 'name') the
    first time one of its attributes is asked for.  (No backticks here: this is a JS template.)"""
    load = "\\n        ".join(load.splitlines())
    return f"""


class _Lazy_{name}:
    # Book runtime: {why}
    def __getattr__(self, attr):
        global {name}
        {load}
        return getattr({name}, attr)


{name} = _Lazy_{name}()
"""

LAZY_TAIL = {
    "asyncio/log.py": stand_in("logger", "logging is imported when asyncio first logs.",
                               "import logging\\nlogger = logging.getLogger(__package__)"),
    "concurrent/futures/_base.py": stand_in("LOGGER", "logging is imported when a future's callback first fails.",
                                            'import logging\\nLOGGER = logging.getLogger("concurrent.futures")'),
    "traceback.py": stand_in("_colorize", "_colorize is imported when a traceback is first formatted.",
                             "import _colorize"),
    "pyodide/_package_loader.py": """


# Book runtime: shutil, tempfile and zipfile are imported when a package is first installed.
def NamedTemporaryFile(*args, **kwargs):
    from tempfile import NamedTemporaryFile
    return NamedTemporaryFile(*args, **kwargs)


def ZipFile(*args, **kwargs):
    from zipfile import ZipFile
    return ZipFile(*args, **kwargs)
""" + stand_in("shutil", "shutil is imported, and taught the wheel format, when a package is first installed.",
               "import shutil\\nif IN_PYODIDE:\\n    _register_wheel_format()"),
}

def source(rel):
    text = zin.read(rel)
    if rel in LAZY:
        text = text.decode()
        for old, new in LAZY[rel]:
            if old not in text:
                raise SystemExit(f"prep_runtime: {rel} no longer has {old!r}; update LAZY in widgets/prep_runtime.mjs")
            text = text.replace(old, new, 1)
        text = (text + LAZY_TAIL.get(rel, "")).encode()
    return text

def _svarint(v):
    v = (v << 1) if v >= 0 else ((-v) << 1) | 1
    out = bytearray()
    while v >= 64:
        out.append(0x40 | (v & 0x3F))
        v >>= 6
    out.append(v)
    return out

def lines_only(co):
    """The code object with its location table cut to line numbers: column ranges are a third
    of a .pyc and only serve the ^^^ markers of tracebacks (CPython's locations.md format)."""
    table, line = bytearray(), co.co_firstlineno
    for start, end, ln in co.co_lines():
        units = (end - start) // 2
        while units > 0:
            n = min(units, 8)
            if ln is None:
                table.append(0x80 | (15 << 3) | (n - 1))          # no location
            else:
                table.append(0x80 | (13 << 3) | (n - 1))          # line only, delta from the last
                table += _svarint(ln - line)
                line = ln
            units -= n
    consts = tuple(lines_only(c) if isinstance(c, types.CodeType) else c for c in co.co_consts)
    return co.replace(co_linetable=bytes(table), co_consts=consts)

def without_function_docstrings(source, filename):
    """The module's AST minus module and function docstrings.  Class docstrings stay: a
    dataclass without one builds it from inspect.signature at import time, which is slow."""
    tree = ast.parse(source, filename)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body[0:1] = [] if len(node.body) > 1 else [ast.copy_location(ast.Pass(), first)]
    return tree

def pyc(source, filename, optimize=0):
    if optimize == "book":
        source, optimize = without_function_docstrings(source, filename), 0
    code = lines_only(compile(source, filename, "exec", dont_inherit=True, optimize=optimize))
    # PEP 552 unchecked-hash pyc: zipimport loads it without looking for a source
    return importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") + bytes(8) + marshal.dumps(code)

def write(zout, name, data):
    info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED     # the whole archive is gzipped below
    zout.writestr(info, data)

# Our start-up module (widgets/runtime_site.py): asyncio and Pyodide's event loop load on first use.
SITE = "sitecustomize.py"

def write_stdlib(files):
    with zipfile.ZipFile("/out/python_stdlib.zip", "w") as zout:
        write(zout, SITE + "c", pyc(open("/project/widgets/runtime_site.py", "rb").read(), SITE, 2))
        for rel in sorted(set(files) - {SITE}):
            if rel.endswith(".py"):
                # Docstrings dropped (-OO) except in Pyodide's own modules, which read theirs.
                opt = 0 if rel.startswith(("_pyodide/", "pyodide/")) else 2
                write(zout, rel + "c", pyc(source(rel), rel, opt))
            else:
                write(zout, rel, zin.read(rel))

write_stdlib(keep)

EXERCISE_FILES = set(${JSON.stringify(exerciseFiles)})
with zipfile.ZipFile("/out/book-py.zip", "w") as book, zipfile.ZipFile("/out/exercises-py.zip", "w") as exercises:
    for rel in sorted(os.path.relpath(os.path.join(d, fn), "/project") for top in ("calc", "widgets")
                      for d, _, files in os.walk("/project/" + top) if "__pycache__" not in d for fn in files):
        fn = os.path.basename(rel)
        if fn.endswith(".py") and fn not in ("bundle.py", "__main__.py", "runtime_site.py"):
            src = open(f"/project/{rel}", "rb").read()     # .pyc only: nothing reads the source
            archive = "exercises-py.zip" if rel in EXERCISE_FILES else "book-py.zip"
            write(exercises if archive == "exercises-py.zip" else book, f"{rel}c",
                  pyc(src, f"/lib/{archive}/{rel}", "book"))
assert not EXERCISE_FILES - {n[:-1] for n in exercises.namelist()}, "an exercise module is missing"

# The archives as the workers use them (widgets-worker.js): the widgets from book-py.zip alone,
# then the exercises with exercises-py.zip added to calc's path.
for _m in [m for m in sys.modules if m.split(".")[0] in ("calc", "widgets")]:
    del sys.modules[_m]
sys.path[:] = ["/out/book-py.zip"] + [p for p in sys.path if p != "/project"]
import widgets as _w
assert "<svg" in _w.render_json("roofline", "{}")
import calc as _calc
try:
    import calc.exercises
    raise SystemExit("prep_runtime: calc.exercises imported from book-py.zip alone")
except ImportError:
    pass
_calc.__path__.append("/out/exercises-py.zip/calc")
import calc.exercises
calc.exercises._selftest()

_ns = {}
exec(lines_only(compile("def f(x):\\n    y = 1\\n    return 1 / x\\n", "t.py", "exec")), _ns)
try:
    _ns["f"](0)
except ZeroDivisionError as e:
    assert e.__traceback__.tb_next.tb_lineno == 3, "rewritten line table is wrong"
`);

// Second pass: boot a fresh interpreter on the archive just written (lazy imports in place),
// run the same exercise, and keep only what it loaded.  A module the widgets need but the
// archive lacks fails here, at build time.
const stdLibURL = path.join(outDir, "python_stdlib.zip");
const py2 = await loadPyodide({ indexURL: pyodideDir + "/", stdLibURL, lockFileContents: { info: lock.info, packages: {} },
                                _makeSnapshot: true });
py2.FS.mkdirTree("/project");
py2.FS.mount(py2.FS.filesystems.NODEFS, { root: projectRoot }, "/project");
py2.runPython(EXERCISE);
// The widgets drew everything without asyncio: it is still the stand-in of runtime_site.py.
// Then a coroutine, awaited as Pyodide does (its core's get_event_loop), loads the real one.
py2.runPython(`
import sys
assert type(sys.modules["asyncio"]).__name__ == "_Later", "asyncio was loaded at start-up"
assert not [m for m in sys.modules if m.startswith("asyncio.")], "asyncio was loaded at start-up"
`);
// The page saves a memory snapshot of such an interpreter for the next page (widgets-worker.js),
// and Pyodide checks the JavaScript objects its start-up took: one made and restored here.
const snapshot = py2.makeMemorySnapshot();
const py3 = await loadPyodide({ indexURL: pyodideDir + "/", stdLibURL, lockFileContents: { info: lock.info, packages: {} },
                                _loadSnapshot: snapshot });
const ASYNC_CHECK = `
import asyncio, pyodide.webloop
await asyncio.sleep(0)
assert isinstance(asyncio.get_event_loop(), pyodide.webloop.WebLoop)
`;
await py3.runPythonAsync(ASYNC_CHECK);
if (!py3.runPython("widgets.render_json('roofline', '{}')").includes("<svg")) throw new Error("restored interpreter cannot draw");
await py2.runPythonAsync(ASYNC_CHECK);
// asyncio's lazy stand-ins, used before the archive is cut so that what they import stays in it
// (asyncio logs an error in a task nobody awaited).
py2.runPython(`
import sys, asyncio, asyncio.base_events, asyncio.futures, subprocess, traceback
assert "ssl" not in sys.modules and asyncio.base_events.ssl is None
assert "logging" not in sys.modules and "locale" not in sys.modules, [m for m in ("logging", "locale") if m in sys.modules]
asyncio.log.logger.debug("book runtime: the lazy asyncio logger works")
import logging
assert asyncio.log.logger is logging.getLogger("asyncio") and asyncio.futures.STACK_DEBUG == logging.DEBUG - 1
assert subprocess._text_encoding()
import concurrent.futures._base as cf
cf.LOGGER.debug("book runtime: the lazy concurrent.futures logger works")
assert cf.LOGGER is logging.getLogger("concurrent.futures")
`);
const used = py2.runPython("json.dumps(_stdlib_used())");
py2.runPython(`
# The lazy stand-ins still do their job when a wheel is installed.
import io, zipfile, pyodide._package_loader as loader
with loader.NamedTemporaryFile() as f:
    f.write(b"x")
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    z.writestr("a", "b")
assert loader.ZipFile(io.BytesIO(buf.getvalue())).namelist() == ["a"]
assert loader.get_format("whl") == "whl"            # shutil, taught the wheel format on first use
import os, tempfile, pyodide.common
src, dst = tempfile.mkdtemp(), tempfile.mkdtemp()
open(os.path.join(src, "f"), "w").write("x")
pyodide.common.install_files(src, dst)
assert open(os.path.join(dst, "f")).read() == "x"
`);
py.globals.set("used_json", used);
py.runPython(`
final = with_packages(json.loads(used_json)) - {SITE}
assert final <= keep, sorted(final - keep)
write_stdlib(final)
with open("/out/modules.txt", "w") as f:
    f.write("\\n".join(sorted(final)) + "\\n")
`);
FS.unmount("/out");
// Each archive is stored uncompressed inside and gzipped as a whole: smaller than deflating
// file by file, no inflating at every import, and the same size on any static host.
const { gzipSync, constants } = await import("node:zlib");
const fsp = await import("node:fs/promises");
for (const name of ["python_stdlib.zip", "book-py.zip", "exercises-py.zip"]) {
  const file = path.join(outDir, name);
  await fsp.writeFile(file + ".gz", gzipSync(await fsp.readFile(file), { level: constants.Z_BEST_COMPRESSION }));
  await fsp.unlink(file);
}
