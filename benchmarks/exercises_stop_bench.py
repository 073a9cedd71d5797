"""What an exercise's Stop costs the reader: in place (a cross-origin isolated page: Pyodide's
interrupt buffer, the same worker goes on) against by restart (a page that is not isolated: the
worker is terminated and a new one boots Python), side by side in one run, alternating.

    python3 benchmarks/exercises_stop_bench.py [site] [--rounds N]      (default: _book, 5 rounds)

The same built book is served twice on loopback: once with COOP and COEP (as ``feedback serve
--site`` and ``bookbuild preview`` send them), once without (a plain static host). Each round opens
the GPU chapter's coalesced-copy exercise in a fresh browser context, Runs a small kernel once (Python is
booted and warm), then Runs ``while True: pass`` and presses Stop. Measured on the page's clock:
- stopped: Stop pressed -> the "Stopped" state (the exercise's ``exercise:stopped`` event);
- ready again: Stop pressed -> the answer of the next Run of the same small kernel (what the reader
  waits for before trying again: by restart it includes a new Python's boot).
Prints medians and each round, their ratio, and the load average; asserts nothing."""
from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from webwatch import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

from playwright.sync_api import sync_playwright  # noqa: E402

ISOLATION = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}
EX = "#ex-coalesced-copy"
SMALL = """from numba import cuda


@cuda.jit
def copy(A, B, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        B[i] = A[i]
"""
FOREVER = """from numba import cuda


@cuda.jit
def copy(A, B, n):
    while True:
        pass
"""


def serve(folder: Path, isolated: bool) -> ThreadingHTTPServer:
    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def end_headers(self):
            if isolated:
                for k, v in ISOLATION.items():
                    self.send_header(k, v)
            super().end_headers()
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# In the page: put ``code`` into the exercise's editor (its CodeMirror view) and press Run (no
# typing: nothing but the Run is timed). RUN resolves with the page-clock time of its answer;
# START_AND_STOP presses Stop once it is running and resolves with when and how it stopped.
PUT_AND_RUN = """
  const ex = document.querySelector('#ex-coalesced-copy');
  const CM = await import(new URL('../assets/js/editor.js', location.href));   // the page's own module
  const view = CM.EditorView.findFromDOM(ex.querySelector('.cm-editor'));
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } });
  ex.querySelector('.exercise-run').click();
"""
RUN = """async (code) => {""" + PUT_AND_RUN + """  await new Promise((done) => { const o = new MutationObserver(() => {
    if (ex.getAttribute('aria-busy') === 'false') { o.disconnect(); done(); } });
    o.observe(ex, { attributes: true, attributeFilter: ['aria-busy'] }); });
  return { at: performance.now(), said: ex.querySelector('.exercise-message').textContent };
}"""
START_AND_STOP = """async (code) => {""" + PUT_AND_RUN + """  await new Promise((done) => { const t = () => /^Running/.test(ex.querySelector('.exercise-message').textContent)
    ? done() : requestAnimationFrame(t); t(); });
  const stopped = new Promise((done) => ex.addEventListener('exercise:stopped', (e) => done(e.detail), { once: true }));
  const t0 = performance.now();
  ex.querySelector('.exercise-stop').click();
  const detail = await stopped;
  return { t0, at: performance.now(), how: detail.how };
}"""


def one_round(browser, base: str) -> dict:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(120_000)
    page = context.new_page()
    try:
        page.goto(base + "chapters/gpu.html", wait_until="load")
        page.locator(EX).first.scroll_into_view_if_needed()
        page.wait_for_function("document.querySelector('#ex-coalesced-copy .cm-content') && "
                               "!document.querySelector('#ex-coalesced-copy .exercise-run').disabled")
        warm = page.evaluate(RUN, SMALL)
        assert warm["said"].startswith("Ran at size"), warm
        stop = page.evaluate(START_AND_STOP, FOREVER)
        again = page.evaluate(RUN, SMALL)
        assert again["said"].startswith("Ran at size"), again
        return {"how": stop["how"], "stopped": stop["at"] - stop["t0"], "ready": again["at"] - stop["t0"],
                "isolated": page.evaluate("crossOriginIsolated")}
    finally:
        context.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("site", nargs="?", default=str(ROOT / "_book"))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    site = Path(args.site)
    servers = {"in place": serve(site, True), "by restart": serve(site, False)}
    rows = {k: [] for k in servers}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for r in range(args.rounds):
                for kind, server in servers.items():
                    row = one_round(browser, f"http://127.0.0.1:{server.server_address[1]}/")
                    want = "interrupt" if kind == "in place" else "restart"
                    assert row["how"] == want and row["isolated"] == (kind == "in place"), (kind, row)
                    rows[kind].append(row)
                    print(f"round {r + 1} {kind:10s}: stopped {row['stopped']:8.1f} ms, ready again {row['ready']:8.1f} ms")
        finally:
            browser.close()
            for s in servers.values():
                s.shutdown()
    med = {k: {m: statistics.median(x[m] for x in v) for m in ("stopped", "ready")} for k, v in rows.items()}
    for k, m in med.items():
        print(f"median {k:10s}: stopped {m['stopped']:8.1f} ms, ready again {m['ready']:8.1f} ms ({args.rounds} rounds)")
    a, b = med["in place"], med["by restart"]
    print(f"in place / by restart: stopped {a['stopped'] / b['stopped']:.2f}x, ready again {a['ready'] / b['ready']:.3f}x "
          f"(by restart is {b['ready'] / a['ready']:.1f}x slower to be ready again)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
