"""calc.sim's speed: the issue's two cases in CPython and in Pyodide in Chromium.

    python benchmarks/warpsim_bench.py [--runs 5] [--no-browser] [--against main] [--cases "copy 4096,..."]
                                       [--collector on|off]

Cases (issue #28's goal: each checked in at most 300 ms in Pyodide in Chromium):
  * copy 4096: ``calc.sim.kernels.run_copy(4096)``: a 4,096-element FP32 vector kernel, 16 blocks of 256;
  * matmul 64 (T=16) and (T=32): ``calc.sim.kernels.run_matmul(64, T)``: a 64×64 tiled matmul;
  * matmul 32 (T=16), for comparison (not a goal case): 8 times less work.
Each run launches the kernel and derives the totals, the per-line table and the HBM bytes
(``report.totals``, ``report.table()``, ``report.hbm_bytes``), as a check would.

The browser run serves Pyodide from node_modules/pyodide and calc/ on 127.0.0.1, loads Pyodide in a
page of Debian's Chromium (headless, the suite's flags), warms up once, then times the same
workload with ``time.perf_counter`` inside Pyodide. Prints min and median per case, ms.

``--against REF`` (default ``main``; ``--against ''`` for none) also times ``calc/`` as it is at the git
ref REF, in the same run (a CPython subprocess and a second page in the same Chromium), and prints
the ratio new / old of CPU times beside the absolute figures, with the load average: on a shared,
loaded machine the ratio is the figure to trust, and the quiet-machine projection (the ratio times
the last quiet figures of the old code, ``QUIET_OLD``) is printed as such. ``--collector off`` times
each check with Python's cyclic garbage collector off, as the exercises' page checks a reader's
kernel (``calc.exercises.handle``); the collection is made before each check, outside its time.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the old executor's CPU times on a quiet machine (ms per check; CPython 3.11, Pyodide 0.29 in
#: Chromium), measured in issue #28's first session (/work/notes/old/28.md), for the projection
QUIET_OLD = {"copy 4096": (16, 21), "matmul 64 (T=16)": (450, 1114)}
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "browser")]

WORKLOAD = """
import time
try:
    from calc.sim import kernels as sk
except ImportError:                      # calc/ of a ref from before the package (--against)
    from calc import simkernels as sk

CASES = {
    "copy 4096": lambda: sk.run_copy(4096, 1),
    "matmul 64 (T=16)": lambda: sk.run_matmul(64, 16),
    "matmul 64 (T=32)": lambda: sk.run_matmul(64, 32),
    "matmul 32 (T=16)": lambda: sk.run_matmul(32, 16),     # not the goal's size: what fits in it
}


def check(make):
    r = make()
    r.totals, r.table(), r.hbm_bytes
    return r


def warm_up():
    for make in CASES.values():
        check(make)                          # imports, code caches


def prepare(collector):
    # collector=False: no cyclic garbage collection during a check, as the exercises' page runs one
    # (calc.exercises.handle; its worker collects after answering, this bench before each check)
    import gc
    gc.enable()
    if not collector:
        gc.collect()
        gc.disable()


def one(name):
    # one check of case `name`: wall ms
    t0 = time.perf_counter()
    check(CASES[name])
    return (time.perf_counter() - t0) * 1e3


def measure(name, runs, collector=True):
    # wall times of `runs` checks of case `name` (ms) and their CPU time (time.process_time; in
    # the browser the bench reads Chromium's main-thread CPU time around each check instead)
    times, cpu = [], 0.0
    for _ in range(runs):
        prepare(collector)
        c0 = time.process_time()
        times.append(one(name))
        cpu += time.process_time() - c0
    prepare(True)
    return times, cpu * 1e3
"""

def browser_times(runs: int, calc_dirs: dict, cases: list, collector: bool = True) -> tuple[str, dict]:
    """{label: {case: (wall times, cpu ms)}} for each calc/ folder, one page each in one Chromium,
    the pages taking turns case by case."""
    from playwright.sync_api import sync_playwright
    from pyodide_page import make_pyodide_site
    from site_fixture import serve
    from webwatch import CHROMIUM, CHROMIUM_ARGS

    with tempfile.TemporaryDirectory() as tmp:
        servers = {label: serve(make_pyodide_site(Path(tmp) / label, d)) for label, d in calc_dirs.items()}
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                pages = {}
                for label, (url, _) in servers.items():
                    page = browser.new_page()
                    page.goto(url + "index.html")
                    page.wait_for_function("window.ready === true", timeout=120_000)
                    page.evaluate("(code) => window.run(code)", WORKLOAD)
                    cdp = page.context.new_cdp_session(page)
                    cdp.send("Performance.enable")
                    page.evaluate("window.run('warm_up()')")
                    pages[label] = (page, cdp)
                version = next(iter(pages.values()))[0].evaluate("window.run('import sys; sys.version.split()[0]')")

                def thread_time(cdp) -> float:   # CPU seconds of the page's main thread
                    metrics = cdp.send("Performance.getMetrics")["metrics"]
                    return next(m["value"] for m in metrics if m["name"] == "ThreadTime")

                result: dict = {label: {} for label in pages}
                for name in cases:
                    for label, (page, cdp) in pages.items():
                        wall, cpu = [], 0.0
                        for _ in range(runs):
                            page.evaluate("(code) => window.run(code)", f"prepare({collector!r})")
                            c0 = thread_time(cdp)
                            wall.append(page.evaluate("(code) => window.run(code)", f"one({name!r})"))
                            cpu += thread_time(cdp) - c0
                        page.evaluate("(code) => window.run(code)", "prepare(True)")
                        result[label][name] = (wall, cpu * 1e3)
                browser.close()
        finally:
            for _, server in servers.values():
                server.shutdown()
    return version, result


def cpython_times(runs: int, cases: list, collector: bool = True) -> dict:
    ns: dict = {}
    exec(WORKLOAD, ns)
    ns["warm_up"]()
    return {name: ns["measure"](name, runs, collector) for name in cases}


def old_calc(ref: str, where: Path) -> Path:
    """calc/ as it is at git ref ``ref``, written under ``where``."""
    import io
    import subprocess
    import tarfile
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "calc"], check=True, capture_output=True).stdout
    tarfile.open(fileobj=io.BytesIO(tar)).extractall(where)
    return where / "calc"


def cpython_times_of(calc_parent: Path, runs: int, cases: list, collector: bool = True) -> dict:
    """cpython_times in a fresh interpreter that imports calc from ``calc_parent``."""
    import subprocess
    code = (f"import sys, json; sys.path.insert(0, {str(calc_parent)!r}); "
            f"sys.argv = ['x']; ns = {{}}; exec({WORKLOAD!r}, ns); ns['warm_up'](); "
            f"print(json.dumps({{n: ns['measure'](n, {runs}, {collector!r}) for n in {cases!r}}}))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--against", default="main", help="git ref whose calc/ to time beside this one ('' for none)")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--collector", choices=("on", "off"), default="on",
                    help="off: no cyclic GC during a check, as the exercises' page checks (calc.exercises.handle)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    ns: dict = {}
    exec(WORKLOAD, ns)
    cases = [c for c in args.cases.split(",") if c] or list(ns["CASES"])
    loads = [load_average()]
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {"new": ROOT / "calc"}
        if args.against:
            dirs["old"] = old_calc(args.against, Path(tmp))
        collector = args.collector == "on"
        runs = {"new": {name: {"cpython": ts} for name, ts in cpython_times(args.runs, cases, collector).items()}}
        if "old" in dirs:
            runs["old"] = {name: {"cpython": ts} for name, ts in
                           cpython_times_of(dirs["old"].parent, args.runs, cases, collector).items()}
        loads.append(load_average())
        version = None
        if not args.no_browser:
            version, br = browser_times(args.runs, dirs, cases, collector)
            for label, res in br.items():
                for name, ts in res.items():
                    runs[label][name]["chromium"] = ts
        loads.append(load_average())
    print(f"cyclic garbage collector during a check: {args.collector}")
    for label, rows in runs.items():
        print(f"\n== {label}: calc/ of " + ("this checkout" if label == "new" else f"git ref {args.against}"))
        table(rows, args.runs, version)
    if "old" in runs:
        ratios(runs, args.runs, args.against, collector)
    print(f"load average (1, 5, 15 min) at the start, after CPython, at the end: {' | '.join(loads)}")
    print(f"(wall {time.perf_counter() - t0:.0f} s)")


def ratios(runs: dict, n: int, ref: str, collector: bool = True) -> None:
    print(f"\n== new / old (CPU time per check, same run); projection = ratio × the old code's quiet figure")
    print(f"{'case':<18} {'CPython':>22} {'Chromium':>24}   projected quiet Chromium (goal 300 ms)")
    for name, new in runs["new"].items():
        old = runs["old"][name]
        c_new, c_old = new["cpython"][1] / n, old["cpython"][1] / n
        line = f"{name:<18} {c_new:6.0f} / {c_old:5.0f} = {c_new / c_old:4.2f}"
        if "chromium" in new:
            b_new, b_old = new["chromium"][1] / n, old["chromium"][1] / n
            r = b_new / b_old
            line += f"   {b_new:6.0f} / {b_old:5.0f} = {r:4.2f}"
            if name in QUIET_OLD and collector:
                proj = r * QUIET_OLD[name][1]
                line += f"   {proj:5.0f} ms (projection: {r:.2f} × {QUIET_OLD[name][1]:,} ms)"
        print(line)


def table(rows: dict, runs: int, version) -> None:
    args = argparse.Namespace(runs=runs)
    print(f"calc.sim, {args.runs} runs per case after one warm-up; ms per check")
    print(f"CPython {sys.version.split()[0]}" + (f"; Pyodide (Python {version}) in Debian's Chromium, headless"
                                                   if version else ""))
    print("wall: min / median of perf_counter; cpu: process CPU time (CPython) or the page's main-thread "
          "CPU time (Chromium, CDP ThreadTime), per check")
    print(f"{'case':<18} {'CPython wall':>14} {'cpu':>6}   {'Chromium wall':>15} {'cpu':>6} {'cpu ratio':>9}"
          f"  goal 300 ms")
    for name, r in rows.items():
        wall, cpu = r["cpython"]
        cpu /= args.runs
        line = f"{name:<18} {min(wall):6.0f} / {statistics.median(wall):5.0f} {cpu:6.0f}"
        if "chromium" in r:
            bwall, bcpu = r["chromium"]
            bcpu /= args.runs
            met = "met" if statistics.median(bwall) <= 300 else ("met in CPU time" if bcpu <= 300 else "missed")
            line += (f"   {min(bwall):7.0f} / {statistics.median(bwall):5.0f} {bcpu:6.0f} {bcpu / cpu:8.1f}x"
                     f"  {met}")
        print(line)


if __name__ == "__main__":
    main()
