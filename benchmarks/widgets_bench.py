"""Widget runtime benchmark, on the built book first, then on a fixture page.

    python benchmarks/widgets_bench.py [--runs 3] [--book _book] [--no-book] [--no-fixture]

The built book (``python3 -m bookbuild build --to html`` first), served on 127.0.0.1 with gzip and
Cache-Control: max-age=600 (GitHub Pages' default), in Debian's Chromium headless:
  * landing on each widget (scrolled into view as the page loads; the roofline by its link
    chapters/roofline.html#sec-roofline-widget): ms from navigation start until it is live, cold
    (new profile) and on a next visit (after 1.5 s on another chapter), and until every widget of
    the page is live;
  * layout shift with a widget in view (the page's second widget scrolled to as it loads, as
    /work/shared/tools/book-vitals.py does) at 1440x900 and 390x844, and the same with the page's
    other scripts blocked (what the widgets themselves shift);
  * a phone (390x844, touch) with the CPU slowed 4x (CDP Emulation.setCPUThrottlingRate): landing
    on the roofline cold and next, and one-step moves;
  * one-step moves of every widget (a slider's arrow key, or the figure's): input event to the new
    figure in the DOM, p50/p95; and the runner jumped to its largest N.
Then the fixture site of tests/browser (every widget on one page, a second page with one widget):
time to live (cold / warm / next page), update latency, bytes on first visit (gzip, as served),
memory, longest main-thread task."""
from __future__ import annotations

import argparse
import re
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


def launch(p):
    """Chromium with every host name but 127.0.0.1 unresolvable. (Playwright's request routing
    would guarantee the same, but stops every request in this script's process first, about
    30 ms on a cold visit that a reader's browser does not pay.)"""
    return p.chromium.launch(executable_path=CHROMIUM, args=[
        *CHROMIUM_ARGS, "--enable-precise-memory-info", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])


# --------------------------------------------------------------------------------- the built book

DESKTOP, PHONE = {"width": 1440, "height": 900}, {"width": 390, "height": 844}
# Before the page's scripts: layout shifts summed (not those right after an input), and the widget
# window.__target picked at DOMContentLoaded scrolled into view.
SHIFTS = """window.__cls = 0;
new PerformanceObserver(l => l.getEntries().forEach(e => { if (!e.hadRecentInput) window.__cls += e.value; }))
  .observe({type: 'layout-shift', buffered: true});
document.addEventListener('DOMContentLoaded', () => {
  const all = document.querySelectorAll('.widget[data-widget]');
  const t = all[Math.min(all.length - 1, window.__target ?? (all.length > 1 ? 1 : 0))];
  if (t && !location.hash) t.scrollIntoView({block: 'center'});
});"""
TARGET_LIVE = "i => { const w = document.querySelectorAll('.widget[data-widget]')[i]; return !!w && w.dataset.state === 'live'; }"
ALL_LIVE = "[...document.querySelectorAll('.widget[data-widget]')].every(w => w.dataset.state === 'live')"
OTHER_SCRIPTS = ("**/book.js", "**/feedback.js", "**/predict.js")


def widget_pages(book: Path) -> dict[str, list[str]]:
    """Built pages with widgets -> the names of their widgets, in page order."""
    out = {}
    for page in sorted(book.rglob("*.html")):
        rel = page.relative_to(book).as_posix()
        if "pagefind" in rel or "pyodide" in rel:
            continue
        names = re.findall(r'<div class="widget[^"]*" data-widget="([^"]+)"', page.read_text(errors="replace"))
        if names:
            out[rel] = names
    return out


def land(browser, url, index, viewport, other=None, throttle=1, phone=False):
    """ms from navigation start until widget ``index`` is live and until every widget is, on a cold
    visit and (with ``other``, a page read for 1.5 s in between) on the next visit."""
    ctx = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
    ctx.add_init_script(f"window.__target = {index};\n{SHIFTS}")
    page = ctx.new_page()
    if throttle > 1:
        ctx.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": throttle})
    times = []
    for visit in ((url,) if other is None else (url, other, url)):
        page.goto(visit)
        if visit == other:
            page.wait_for_timeout(1500)
            continue
        page.wait_for_function(TARGET_LIVE, arg=index, timeout=60_000, polling=10)
        target = page.evaluate("performance.now()")
        page.wait_for_function(ALL_LIVE, timeout=60_000, polling=10)
        times.append((target, page.evaluate("performance.now()")))
    return ctx, page, times


# One-step moves: a slider's arrow key, or the figure's (the widgets whose figure takes keys).
# A blockgrid turns its 3D view with the yaw slider; in 2D (the slider disabled) it steps the
# selected thread, a number field, which takes the up and down arrows.
MOVES = {"roofline": ('input[name="size"]', ["ArrowRight"] * 6 + ["ArrowLeft"] * 6),
         "blockgrid": ('input[name="yaw"]:enabled', ["ArrowRight"] * 6 + ["ArrowLeft"] * 6,
                       'input[name="sel_x"]', ["ArrowUp"] * 6 + ["ArrowDown"] * 6),
         "attention-runner": ('input[name="n"]', ["ArrowRight"] * 3 + ["ArrowLeft"] * 3),
         "steps": (".widget-svg", ["ArrowRight"] * 6 + ["ArrowLeft"] * 6),
         "memory-budget": ('input[name="batch"]', ["ArrowRight"] * 6 + ["ArrowLeft"] * 6),
         "collective-stepper": (".widget-svg", ["ArrowRight"] * 6 + ["ArrowLeft"] * 6),
         "parallel-planner": ('input[name="gpus"]', ["ArrowRight"] * 6 + ["ArrowLeft"] * 6)}


def moves(page, names):
    """Update latencies (ms, input event -> new figure in the DOM) of one-step moves on each widget."""
    out = []
    page.wait_for_function(ALL_LIVE, timeout=60_000)
    page.wait_for_timeout(1500)                     # idle: the first moves are computed ahead
    for i, name in enumerate(names):
        root = page.locator(".widget[data-widget]").nth(i)
        choices = MOVES[name]
        for selector, keys in zip(choices[::2], choices[1::2]):
            target = root.locator(selector).first
            if target.count() and target.is_visible():
                break
        else:
            continue                                # folded away at this width
        page.evaluate("BookWidgets.stats.updates.length = 0")
        target.focus()
        for key in keys:
            page.keyboard.press(key)
            page.wait_for_timeout(60)
        page.wait_for_timeout(300)
        ups = page.evaluate("BookWidgets.stats.updates.slice()")
        if len(ups) < len(keys) // 2:               # a move that draws nothing is not a fast move
            sys.exit(f"{page.url}: widget {i + 1} ({name}): {len(keys)} presses on {selector} redrew {len(ups)} times")
        out += ups
    return out


RUNNER_JUMP = """() => new Promise((resolve) => {
    const slider = document.querySelector('.widget[data-widget="attention-runner"] input[name="n"]');
    BookWidgets.stats.updates.length = 0;
    slider.value = slider.max; slider.dispatchEvent(new Event('input', {bubbles: true}));
    const poll = () => BookWidgets.stats.updates.length ? resolve([BookWidgets.stats.updates[0], Number(slider.max)]) : setTimeout(poll, 1);
    poll();
})"""


def fmt_ms(values):
    return f"{statistics.median(values):5.0f}" if values else "    -"


def book_bench(book: Path, runs: int) -> None:
    pages = widget_pages(book)
    if not pages:
        sys.exit(f"{book}: no built pages with widgets (python3 -m bookbuild build --to html)")
    chapters = sorted(p.relative_to(book).as_posix() for p in (book / "chapters").glob("*.html"))
    base, server = serve(book)
    print(f"Widgets on the built book ({book}; {runs} runs, median; headless Chromium, 127.0.0.1, gzip;"
          " the machine may be shared: compare runs made together)")
    with sync_playwright() as p:
        browser = launch(p)
        print("\nLanding on a widget, ms from navigation start until it is live (and every widget of its page), 1440x900:")
        print(f"  {'page':<28} {'widget':<18} {'cold':>6} {'(all)':>6} {'next':>6} {'(all)':>6}")
        # The roofline by its link first (the book's headline figure), then every widget scrolled to.
        cases = [("chapters/roofline.html#sec-roofline-widget", "roofline", 0)] if "chapters/roofline.html" in pages else []
        cases += [(page, name, i) for page, names in pages.items() for i, name in enumerate(names)]
        for page, name, i in cases:
            other = next(c for c in chapters if c != page.split("#")[0])   # as book-vitals.py does
            cold, cold_all, nxt, nxt_all = [], [], [], []
            for _ in range(runs):
                ctx, _, times = land(browser, base + page, i, DESKTOP, base + other)
                (c, ca), (n, na) = times
                cold.append(c); cold_all.append(ca); nxt.append(n); nxt_all.append(na)
                ctx.close()
            print(f"  {page:<28} {f'{i + 1}. {name}':<18} {fmt_ms(cold):>6} {fmt_ms(cold_all):>6} {fmt_ms(nxt):>6} {fmt_ms(nxt_all):>6}")

        print("\nLayout shift with a widget in view (goal <= 0.01), all scripts / the page's other scripts blocked:")
        for page in pages:
            row = []
            for viewport in (DESKTOP, PHONE):
                for blocked in ((), OTHER_SCRIPTS):
                    values = []
                    for _ in range(runs):
                        ctx = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE, has_touch=viewport is PHONE)
                        for pattern in blocked:
                            ctx.route(pattern, lambda r: r.abort())
                        ctx.add_init_script(SHIFTS)
                        pg = ctx.new_page()
                        pg.goto(base + page)
                        pg.wait_for_function(ALL_LIVE, timeout=60_000)
                        pg.wait_for_timeout(3000)
                        values.append(pg.evaluate("window.__cls"))
                        ctx.close()
                    row.append(f"{max(values):.3f}")
            print(f"  {page:<28} 1440 px {row[0]} / {row[1]}   390 px {row[2]} / {row[3]}   (worst of {runs})")

        print("\nOne-step moves, input event -> new figure in the DOM, ms (goal p95 <= 16):")
        for label, viewport, throttle in (("1440x900", DESKTOP, 1), ("390x844, CPU 4x slower", PHONE, 4)):
            ups = []
            for page, names in pages.items():
                ctx = browser.new_context(viewport=viewport, is_mobile=viewport is PHONE, has_touch=viewport is PHONE)
                pg = ctx.new_page()
                if throttle > 1:
                    ctx.new_cdp_session(pg).send("Emulation.setCPUThrottlingRate", {"rate": throttle})
                pg.goto(base + page)
                ups += moves(pg, names)
                if "attention-runner" in names and throttle == 1:
                    jump, n = pg.evaluate(RUNNER_JUMP)
                    print(f"  {label}: the runner jumped to N = {n}: {jump:.0f} ms")
                ctx.close()
            print(f"  {label}: p50 {pct(ups, .5):5.1f}  p95 {pct(ups, .95):5.1f}  max {max(ups):5.1f}  (n={len(ups)})")

        if "chapters/roofline.html" in pages:
            print("\nA phone (390x844, touch) with the CPU 4x slower, landing on the roofline:")
            cold, nxt = [], []
            for _ in range(runs):
                other = next(c for c in chapters if c != "chapters/roofline.html")
                ctx, _, times = land(browser, base + "chapters/roofline.html#sec-roofline-widget", 0, PHONE,
                                     base + other, throttle=4, phone=True)
                cold.append(times[0][0]); nxt.append(times[1][0])
                ctx.close()
            print(f"  live after {fmt_ms(cold).strip()} ms cold, {fmt_ms(nxt).strip()} ms on a next visit "
                  f"(runs: {', '.join(f'{c:.0f}/{n:.0f}' for c, n in zip(cold, nxt))})")
        browser.close()
    server.shutdown()


# --------------------------------------------------------------------------------- the fixture

# ------------------------------------------------------------------ issue #45's table
#
# The reader's figures beside their anchors, for one built book or two (--against: main's site)
# alternating in one run: landing on the roofline widget (its link) cold and on the next visit,
# beside stock Pyodide (``loadPyodide()`` of node_modules/pyodide on a bare page, served the same
# way: gzip, max-age=600; until ``1 + 1`` has run), and key press to redrawn figure on the roofline,
# a stepper and the memory budget at 390 px (p95).
STOCK_PAGE = """<!doctype html><meta charset="utf-8"><title>stock Pyodide</title>
<script type="module">
import { loadPyodide } from "./pyodide/pyodide.mjs";
const py = await loadPyodide({ indexURL: new URL("./pyodide/", location.href).href });
py.runPython("1 + 1");
window.__ready = performance.now();
</script>"""
TABLE_MOVES = (("chapters/roofline.html", "roofline"), ("chapters/communication.html", "collective-stepper"),
               ("chapters/serving.html", "memory-budget"))


def stock_site(tmp: Path) -> Path:
    import shutil
    site = tmp / "stock"
    (site / "pyodide").mkdir(parents=True)
    for f in (ROOT / "node_modules" / "pyodide").iterdir():
        if f.is_file() and not f.name.endswith((".map", ".d.ts", ".md")):
            shutil.copyfile(f, site / "pyodide" / f.name)
    (site / "index.html").write_text(STOCK_PAGE)
    (site / "other.html").write_text("<!doctype html><title>other</title><p>Another page.")
    return site


def stock_land(browser, base: str) -> tuple[float, float]:
    ctx = browser.new_context(viewport=DESKTOP)
    page = ctx.new_page()
    times = []
    for url in (base + "index.html", base + "other.html", base + "index.html"):
        page.goto(url)
        if url.endswith("other.html"):
            page.wait_for_timeout(1500)
            continue
        page.wait_for_function("window.__ready", timeout=120_000, polling=10)
        times.append(page.evaluate("window.__ready"))
    ctx.close()
    return times[0], times[1]


def table_moves(browser, base: str, book: Path) -> list[float]:
    ups: list[float] = []
    pages = widget_pages(book)
    for page_name, widget in TABLE_MOVES:
        if widget not in pages.get(page_name, []):
            continue
        ctx = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
        ctx.add_init_script(LONGTASKS)
        page = ctx.new_page()
        page.goto(base + page_name)
        names = pages[page_name]
        page.locator(".widget[data-widget]").nth(names.index(widget)).scroll_into_view_if_needed()
        only = [n if n == widget else "-" for n in names]
        MOVES.setdefault("-", ("nothing-to-press", []))
        try:
            ups += moves(page, only)
        except SystemExit as e:                  # a move that drew nothing: said, and the others go on
            print(f"  ({e})", file=sys.stderr)
        ctx.close()
    return ups


def table(books: dict[str, Path], runs: int) -> None:
    import os
    tmp = Path(tempfile.mkdtemp(prefix="widgets-table-"))
    stock_base, stock_server = serve(stock_site(tmp))
    servers = {name: serve(book) for name, book in books.items()}
    got = {name: {"cold": [], "next": [], "moves": []} for name in books}
    stock = {"cold": [], "next": []}
    with sync_playwright() as p:
        browser = launch(p)
        for _ in range(runs):
            c, n = stock_land(browser, stock_base)
            stock["cold"].append(c); stock["next"].append(n)
            for name, book in books.items():
                base = servers[name][0]
                chapters = sorted(x.relative_to(book).as_posix() for x in (book / "chapters").glob("*.html"))
                other = next(c for c in chapters if c != "chapters/roofline.html")
                ctx, _, times = land(browser, base + "chapters/roofline.html#sec-roofline-widget", 0, DESKTOP, base + other)
                ctx.close()
                got[name]["cold"].append(times[0][0]); got[name]["next"].append(times[1][0])
        for name, book in books.items():
            got[name]["moves"] = table_moves(browser, servers[name][0], book)
        browser.close()
    for _, server in [*servers.values(), (None, stock_server)]:
        server.shutdown()
    med = statistics.median
    print(f"issue #45, widgets ({runs} runs, median; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}):")
    print(f"  stock loadPyodide() on a bare page: cold {med(stock['cold']):.0f} ms, next {med(stock['next']):.0f} ms")
    for name, g in got.items():
        cold, nxt = med(g["cold"]), med(g["next"])
        mv = g["moves"]
        print(f"  {name}: roofline live cold {cold:.0f} ms = {cold / med(stock['cold']):.2f}x stock (goal <= 0.25x), "
              f"next {nxt:.0f} ms = {nxt / med(stock['cold']):.2f}x stock cold (goal <= 0.05x)")
        if mv:
            print(f"  {name}: key press to redrawn figure (roofline, stepper, memory budget at 390 px): median "
                  f"{med(mv):.0f} ms, p95 {pct(mv, .95):.0f} ms, max {max(mv):.0f} ms (goal p95 <= 50 ms)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--book", type=Path, default=ROOT / "_book", help="the built book (default: _book)")
    ap.add_argument("--no-book", action="store_true", help="only the fixture page")
    ap.add_argument("--no-fixture", action="store_true", help="only the built book")
    ap.add_argument("--widgets", default="roofline,blockgrid,attention-runner,steps",
                    help="widgets on the fixture's first page (the second page always has one roofline)")
    ap.add_argument("--table", action="store_true", help="only issue #45's figures (beside stock Pyodide)")
    ap.add_argument("--against", type=Path, help="with --table: a second built book (main's), in the same run")
    args = ap.parse_args()
    if args.table:
        books = {"this book": args.book}
        if args.against:
            books = {"against": args.against, **books}
        table(books, args.runs)
        return
    if not args.no_book:
        book_bench(args.book, args.runs)
        print()
    if not args.no_fixture:
        fixture_bench(args.runs, args.widgets.split(","))


def fixture_bench(runs: int, names: list[str]) -> None:
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
        outside = []
        browser = launch(p)
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
            page.wait_for_timeout(2500)                # idle: the first moves are computed ahead
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
        page.wait_for_timeout(2500)                    # a quiet page: the snapshot is stored, moves predicted
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

    print(f"Widget runtime benchmark on the fixture page ({runs} runs, median; headless Chromium, 127.0.0.1, gzip)")
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
