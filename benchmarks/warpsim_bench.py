"""calc.warpsim's speed: the issue's two cases in CPython and in Pyodide in Chromium.

    python benchmarks/warpsim_bench.py [--runs 5] [--no-browser]

Cases (issue #28's goal: each checked in at most 300 ms in Pyodide in Chromium):
  * copy 4096: ``simkernels.run_copy(4096)``: a 4,096-element FP32 vector kernel, 16 blocks of 256;
  * matmul 64 (T=16) and (T=32): ``simkernels.run_matmul(64, T)``: a 64×64 tiled matmul;
  * matmul 32 (T=16), for comparison (not a goal case): 8 times less work.
Each run launches the kernel and derives the totals, the per-line table and the HBM bytes
(``report.totals``, ``report.table()``, ``report.hbm_bytes``), as a check would.

The browser run serves Pyodide from node_modules/pyodide and calc/ on 127.0.0.1, loads Pyodide in a
page of Debian's Chromium (headless, the suite's flags), warms up once, then times the same
workload with ``time.perf_counter`` inside Pyodide. Prints min and median per case, ms.
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
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "browser")]

WORKLOAD = """
import time
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


def measure(name, runs):
    # wall times of `runs` checks of case `name` (ms) and the CPU time of all of them
    # (time.process_time; in the browser the bench reads Chromium's main-thread CPU time instead)
    make = CASES[name]
    times = []
    c0 = time.process_time()
    for _ in range(runs):
        t0 = time.perf_counter()
        check(make)
        times.append((time.perf_counter() - t0) * 1e3)
    return times, (time.process_time() - c0) * 1e3
"""

def browser_times(runs: int) -> tuple[str, dict]:
    from playwright.sync_api import sync_playwright
    from pyodide_page import make_pyodide_site
    from site_fixture import serve
    from webwatch import CHROMIUM, CHROMIUM_ARGS

    with tempfile.TemporaryDirectory() as tmp:
        url, server = serve(make_pyodide_site(Path(tmp)))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page()
                page.goto(url + "index.html")
                page.wait_for_function("window.ready === true", timeout=120_000)
                page.evaluate("(code) => window.run(code)", WORKLOAD)
                version = page.evaluate("window.run('import sys; sys.version.split()[0]')")
                cdp = page.context.new_cdp_session(page)
                cdp.send("Performance.enable")

                def thread_time() -> float:   # CPU seconds of the page's main thread
                    metrics = cdp.send("Performance.getMetrics")["metrics"]
                    return next(m["value"] for m in metrics if m["name"] == "ThreadTime")

                page.evaluate("window.run('warm_up()')")
                result = {}
                for name in json.loads(page.evaluate("window.run('import json; json.dumps(list(CASES))')")):
                    c0 = thread_time()
                    code = f"import json; json.dumps(measure({name!r}, {runs}))"
                    wall, _ = json.loads(page.evaluate("(code) => window.run(code)", code))
                    result[name] = (wall, (thread_time() - c0) * 1e3)
                browser.close()
        finally:
            server.shutdown()
    return version, result


def cpython_times(runs: int) -> dict:
    ns: dict = {}
    exec(WORKLOAD, ns)
    ns["warm_up"]()
    return {name: ns["measure"](name, runs) for name in ns["CASES"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()
    t0 = time.perf_counter()
    cpy = cpython_times(args.runs)
    rows = {name: {"cpython": ts} for name, ts in cpy.items()}
    version = None
    if not args.no_browser:
        version, br = browser_times(args.runs)
        for name, ts in br.items():
            rows[name]["chromium"] = ts
    print(f"calc.warpsim, {args.runs} runs per case after one warm-up; ms per check")
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
    print(f"(wall {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
