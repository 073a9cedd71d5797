"""Widget runtime benchmark: time to live (cold / warm / next page), update latency,
bytes on first visit (gzip, as served), memory, longest main-thread task.

    python benchmarks/widgets_bench.py [--runs 3]

Builds the fixture site of tests/browser (every widget on one page, a second
page with one widget), serves it on 127.0.0.1 with gzip and Cache-Control:
max-age=600 (GitHub Pages' default), and drives Debian's Chromium headless."""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "browser")]

from playwright.sync_api import sync_playwright  # noqa: E402
from site_fixture import Handler, make_site, serve  # noqa: E402
from webwatch import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

LIVE = "[...document.querySelectorAll('.widget')].every(w => w.dataset.state === 'live')"
LONGTASKS = """
window.__longtasks = [];
new PerformanceObserver(l => l.getEntries().forEach(e => window.__longtasks.push([e.startTime, e.duration])))
  .observe({type: 'longtask', buffered: true});
"""


DRAWN = "document.querySelectorAll('.widget').length === Object.keys(BookWidgets.stats.drawnAt).length"


def visit(page, url):
    page.goto(url)
    page.wait_for_function(LIVE, timeout=30_000)
    page.wait_for_function(DRAWN, timeout=30_000)
    page.wait_for_timeout(300)
    return page.evaluate("""() => ({
        live: BookWidgets.stats.liveAt, drawn: BookWidgets.stats.drawnAt, marks: {...BookWidgets.stats.marks, started: BookWidgets.stats.startedAt,
                 bootAt: BookWidgets.stats.marks.epoch - performance.timeOrigin, readyAt: BookWidgets.stats.readyAt},
        longest: Math.max(0, ...window.__longtasks.filter(([t]) => t >= BookWidgets.stats.startedAt).map(([, d]) => d)),
        pageLoad: Math.max(0, ...window.__longtasks.filter(([t]) => t < BookWidgets.stats.startedAt).map(([, d]) => d)),
        apply: Math.max(0, ...BookWidgets.stats.applyMs),
        heap: performance.memory ? performance.memory.usedJSHeapSize : null})""")


def updates(page, name, selector, keys):
    root = page.locator(f'.widget[data-widget="{name}"]')
    page.evaluate("BookWidgets.stats.updates.length = 0; BookWidgets.stats.renderMs.length = 0")
    root.locator(selector).focus()
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(30)
    page.wait_for_timeout(300)
    return page.evaluate("[BookWidgets.stats.updates.slice(), BookWidgets.stats.renderMs.slice()]")


# A reader who moves the roofline's size slider the moment the controls come alive: ms from the
# input event to the new figure in the DOM (Python is still drawing the page's figures then).
FIRST_MOVE = """() => new Promise((resolve) => {
    const root = document.querySelector('.widget[data-widget="roofline"]');
    const slider = root.querySelector('input[name="size"]');
    BookWidgets.stats.updates.length = 0;
    slider.value = Number(slider.value) + 1;
    slider.dispatchEvent(new Event('input', {bubbles: true}));
    const poll = () => BookWidgets.stats.updates.length ? resolve(BookWidgets.stats.updates[0]) : setTimeout(poll, 1);
    poll();
})"""


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--widgets", default="roofline,blockgrid,attention-runner,steps",
                    help="widgets on the first page (the second page always has one roofline)")
    args = ap.parse_args()
    runs, names = args.runs, args.widgets.split(",")
    site = make_site(Path(tempfile.mkdtemp(prefix="widgets-bench-")),
                     {"chapters/widgets.html": [(n, {}) for n in names],
                      "chapters/next.html": [("roofline", {"device": "a100-sxm-80gb"})]})
    base, server = serve(site)
    page1, page2 = base + "chapters/widgets.html", base + "chapters/next.html"
    rows = {"cold": [], "warm": [], "next": []}
    drawn = {"cold": [], "warm": [], "next": []}
    first_moves = []
    sent, longest, heap, marks, applies, page_load = [], [], [], {}, [], []
    with sync_playwright() as p:
        # Nothing leaves 127.0.0.1: other host names do not resolve. (Playwright's request routing
        # would guarantee the same, but stops every request in this script's process first, about
        # 30 ms on a cold visit that a reader's browser does not pay.)
        outside = []
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            *CHROMIUM_ARGS, "--enable-precise-memory-info", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        for _ in range(runs):
            ctx = browser.new_context(viewport={"width": 900, "height": 1000})
            ctx.add_init_script(LONGTASKS)
            ctx.on("request", lambda r: None if r.url.startswith(("http://127.0.0.1", "data:", "blob:")) else outside.append(r.url))
            page = ctx.new_page()
            Handler.sent.clear()
            r = visit(page, page1)
            sent.append(sum(n for _, n in Handler.sent))
            first_files = {}
            for path, n in Handler.sent:
                first_files[path.split("?")[0]] = first_files.get(path.split("?")[0], 0) + n
            rows["cold"].append(r["live"]); drawn["cold"].append(r["drawn"]); longest.append(r["longest"]); marks["cold"] = r["marks"]
            page_load.append(r["pageLoad"])
            applies.append(r["apply"])
            heap.append((r["heap"], r["marks"]["heapBytes"]))
            page.wait_for_timeout(2500)                # idle: the worker saves its snapshot (after 1 s quiet)
            r = visit(page, page1)
            rows["warm"].append(r["live"]); drawn["warm"].append(r["drawn"]); longest.append(r["longest"]); marks["warm"] = r["marks"]
            r = visit(page, page2)
            rows["next"].append(r["live"]); drawn["next"].append(r["drawn"]); longest.append(r["longest"]); marks["next"] = r["marks"]
            ctx.close()
        for _ in range(runs):
            ctx = browser.new_context(viewport={"width": 900, "height": 1000})
            page = ctx.new_page()
            page.goto(page1)
            page.wait_for_function(LIVE, timeout=30_000, polling=5)
            first_moves.append(page.evaluate(FIRST_MOVE))
            ctx.close()
        static, static_heap = [], []                   # the same cold visit with the widget runtime blocked
        for _ in range(runs):
            ctx = browser.new_context(viewport={"width": 900, "height": 1000})
            ctx.add_init_script(LONGTASKS)
            ctx.route("**/widgets-host.js", lambda r: r.abort())
            page = ctx.new_page()
            page.goto(page1)
            page.wait_for_timeout(1500)
            static.append(page.evaluate("Math.max(0, ...window.__longtasks.map(([, d]) => d))"))
            static_heap.append(page.evaluate("performance.memory.usedJSHeapSize"))
            ctx.close()
        ctx = browser.new_context(viewport={"width": 900, "height": 1000})
        ctx.add_init_script(LONGTASKS)
        page = ctx.new_page()
        visit(page, page1)
        page.wait_for_timeout(2500)                    # the snapshot is saved: measure a quiet page
        lat = {
            "roofline": updates(page, "roofline", 'input[name="size"]', ["ArrowRight"] * 8 + ["ArrowLeft"] * 8 + ["ArrowRight"] * 8),
            "blockgrid": updates(page, "blockgrid", 'input[name="sel_x"]', ["ArrowUp"] * 12 + ["ArrowDown"] * 12),
        }
        page.select_option('.widget[data-widget="blockgrid"] select[name="kernel"]', "vecadd")
        page.locator('.widget[data-widget="blockgrid"]').get_by_role("radio", name="3D").check()
        lat["blockgrid 3D"] = updates(page, "blockgrid", ".widget-svg", ["ArrowRight"] * 12 + ["ArrowUp"] * 6)
        if "attention-runner" in names:
            lat["runner"] = updates(page, "attention-runner", 'input[name="n"]', ["ArrowRight"] * 8 + ["ArrowLeft"] * 8)
        if "steps" in names:
            lat["steps"] = updates(page, "steps", ".widget-svg", ["ArrowRight"] * 12 + ["ArrowLeft"] * 6)
        cached = page.evaluate("BookWidgets.stats.cached || 0")
        applies.append(page.evaluate("Math.max(0, ...BookWidgets.stats.applyMs)"))
        longest.append(page.evaluate("Math.max(0, ...window.__longtasks.filter(([t]) => t >= BookWidgets.stats.startedAt).map(([, d]) => d))"))
        browser.close()
    server.shutdown()

    print(f"Widget runtime benchmark ({runs} runs, median; headless Chromium, 127.0.0.1, gzip)")
    for title, table in (("Time to live, ms from navigation start (controls enabled on the build's figure):", rows),
                         ("First drawn by Python in the browser, ms from navigation start:", drawn)):
        print("\n" + title)
        print(f"  {'widget':<16} {'cold':>7} {'warm':>7} {'next page':>10}")
        for name in names:
            cells = []
            for kind in ("cold", "warm", "next"):
                vals = [r[name] for r in table[kind] if name in r]
                cells.append(f"{statistics.median(vals):.0f}" if vals else "-")
            print(f"  {name:<16} {cells[0]:>7} {cells[1]:>7} {cells[2]:>10}")
    print(f"A move the moment the controls come alive (cold, roofline slider): {statistics.median(first_moves):.0f} ms "
          f"to the new figure (runs: {', '.join(f'{x:.0f}' for x in first_moves)})")
    print("\nWorker start (ms after navigation) and boot phases (ms after worker start), last run:")
    for kind, m in marks.items():
        print(f"  {kind:<5} " + ", ".join(f"{k} {v:.0f}" for k, v in m.items() if k not in ("snapshot", "heapBytes", "epoch"))
              + f", snapshot {'restored' if m.get('snapshot') else 'none'}")
    print("\nUpdate latency, input event -> new SVG and readouts in the DOM (ms):")
    for name, (ups, renders) in lat.items():
        print(f"  {name:<13} p50 {pct(ups, .5):5.1f}  p95 {pct(ups, .95):5.1f}  (Python render p50 "
              f"{pct(renders, .5):.1f}, p95 {pct(renders, .95):.1f}; n={len(ups)})")
    all_ups = [u for ups, _ in lat.values() for u in ups]
    print(f"  all           p50 {pct(all_ups, .5):5.1f}  p95 {pct(all_ups, .95):5.1f}  (n={len(all_ups)}; "
          f"{cached} answered from the worker's cache of predicted params)")
    print(f"\nRequests that tried to leave 127.0.0.1: {len(outside)}" + (f" ({', '.join(sorted(set(outside))[:3])})" if outside else ""))
    print(f"First visit transfer (gzip as served): {statistics.median(sent) / 1e6:.2f} MB")
    for path, n in sorted(first_files.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {n / 1e6:6.3f} MB  {path}")
    live_heap = statistics.median(h[0] for h in heap) / 1e6
    blocked_heap = statistics.median(static_heap) / 1e6
    print(f"Memory: page JS heap {live_heap:.1f} MB live, {blocked_heap:.1f} MB with the runtime blocked "
          f"(+{live_heap - blocked_heap:.1f} MB); worker wasm heap {heap[0][1] / 1e6:.1f} MB")
    print(f"Longest widget redraw on the main thread (JSON.parse + DOM patch): {max(applies):.1f} ms")
    print(f"Longest main-thread task once the widget runtime has started: {max(longest):.0f} ms "
          f"(0 = none over 50 ms); per visit: {', '.join(f'{x:.0f}' for x in longest)}")
    print(f"  before it starts (the page's own first parse, style and layout), cold visits: "
          f"{', '.join(f'{x:.0f}' for x in page_load)}; the same page with the runtime blocked: "
          f"{', '.join(f'{x:.0f}' for x in static)}")


if __name__ == "__main__":
    main()
