// Run tests/calc inside Pyodide (Python compiled to WebAssembly) under Node, offline.
//
//   node tests/calc/pyodide_runner.mjs            # from the repository root
//   PYTHON=/path/to/python node tests/calc/pyodide_runner.mjs
//   node tests/calc/pyodide_runner.mjs tests/calc/test_warpsim.py   # only these test files
//
// Pyodide is loaded from node_modules/pyodide (no CDN). pytest, Hypothesis and their
// pure-Python dependencies are copied into Pyodide's in-memory file system from the
// host interpreter's installation (see pyodide_bundle.py); calc/, tests/calc/ and
// references.bib are copied next to them. The last line printed is
//   PYODIDE_RESULT {"exit": <pytest exit code>, "passed": n, "failed": n, ...}
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..", "..");
const pyodideDir = join(root, "node_modules", "pyodide");
const python = process.env.PYTHON || "python3";

const { loadPyodide } = await import(join(pyodideDir, "pyodide.mjs"));
const pyodide = await loadPyodide({ indexURL: pyodideDir + "/" });
const passThrough = (stream) => ({ write: (buf) => { stream.write(buf); return buf.length; } });
pyodide.setStdout(passThrough(process.stdout));
pyodide.setStderr(passThrough(process.stderr));
const FS = pyodide.FS;

function put(dest, bytes) {
  FS.mkdirTree(dirname(dest));
  FS.writeFile(dest, bytes);
}

// 1. test dependencies from the host interpreter
const deps = "/deps";
const manifest = JSON.parse(execFileSync(python, [join(here, "pyodide_bundle.py")], { maxBuffer: 64 << 20 }).toString());
for (const [src, rel] of manifest) put(join(deps, rel), readFileSync(src));

// 2. the code under test
const book = "/book";
function copyTree(dir) {
  for (const name of readdirSync(dir)) {
    if (name === "__pycache__" || name.startsWith(".")) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) copyTree(p);
    else if (/\.(py|bib|json)$/.test(name)) put(join(book, relative(root, p)), readFileSync(p));
  }
}
copyTree(join(root, "calc"));
copyTree(join(root, "tests", "calc"));
// the answer-reading cases tests/calc/test_problems.py shares with the page's module
put(join(book, "tests", "fixtures", "problem_units.json"), readFileSync(join(root, "tests", "fixtures", "problem_units.json")));
put(join(book, "references.bib"), readFileSync(join(root, "references.bib")));
// the chapters' exercises, whose references' counts test_sim_counts.py holds in Pyodide too
put(join(book, "_quarto.yml"), readFileSync(join(root, "_quarto.yml")));
for (const name of readdirSync(join(root, "chapters"))) {
  if (name.endsWith(".qmd")) put(join(book, "chapters", name), readFileSync(join(root, "chapters", name)));
}

// 3. run pytest and report counts
const targets = process.argv.slice(2).length ? process.argv.slice(2) : ["tests/calc"];
const result = await pyodide.runPythonAsync(`
import json, os, sys
sys.path.insert(0, ${JSON.stringify(deps)})
os.chdir(${JSON.stringify(book)})
sys.dont_write_bytecode = True
import pytest

class Counts:
    def __init__(self):
        self.c = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0, "error": 0, "collected": 0}
    def pytest_collection_finish(self, session):
        self.c["collected"] = len(session.items)
    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            key = {"passed": "passed", "failed": "failed", "skipped": "skipped"}[report.outcome]
            if report.when == "setup" and report.outcome == "failed":
                key = "error"
            if report.outcome == "skipped" and hasattr(report, "wasxfail"):
                key = "xfailed"   # a strict xfail (a known hole) that still fails, as under CPython
            self.c[key] += 1

counts = Counts()
code = pytest.main(["-q", "-p", "no:cacheprovider", *${JSON.stringify(targets)},
                    "--ignore=tests/calc/test_in_pyodide.py"], plugins=[counts])
json.dumps({"exit": int(code), "python": sys.version.split()[0], **counts.c})
`);
console.log("PYODIDE_RESULT " + result);
