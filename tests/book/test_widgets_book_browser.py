"""The widgets on the real book's pages in Chromium: the box a figure takes before it goes live is
the box it takes live (no layout shift), and the drawing covers none of the widget's other parts,
at a desktop's width and a phone's; the 3D view takes a
finger's drag and nothing else does; a reader who saves data downloads nothing until a widget is
near."""
import re
import sys
from pathlib import Path

import pytest
expect = pytest.importorskip("playwright.sync_api").expect

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from webwatch import NEXT_FRAMES, SCROLL_STILL, watch  # noqa: E402

pytestmark = pytest.mark.browser

DESKTOP, PHONE = {"width": 1440, "height": 900}, {"width": 390, "height": 844}
ALL_LIVE = "[...document.querySelectorAll('.widget[data-widget]')].every(w => w.dataset.state === 'live')"
# Python has drawn every widget once in the browser (one answer each).
DRAWN = "BookWidgets.stats.renderMs.length >= document.querySelectorAll('.widget[data-widget]').length"
# The page has settled: every widget live and drawn, the background redraws and the warm-up done,
# nothing in flight (widgets-host.js says so once, in stats.settledAt and a widgets:settled event).
SETTLED = "BookWidgets.stats.settledAt != null"
# Each widget's box and its figure's box, and which of the build's drawings shows.
BOXES = """() => [...document.querySelectorAll('.widget[data-widget]')].map(w => {
  const svg = [...w.querySelectorAll('.widget-svg > svg')].filter(s => s.getBoundingClientRect().height > 0);
  return {name: w.dataset.widget, widget: w.getBoundingClientRect().height,
          figure: w.querySelector('.widget-svg').getBoundingClientRect().height,
          shown: svg.map(s => s.dataset.layout || 'live'),
          parts: [...w.children].map(c => `${c.className} ${Math.round(c.getBoundingClientRect().height)}`).join(', '),
          // what the drawing is drawn over: nothing (a phone's drawing once sat 3.2rem below its box)
          under: (() => { const d = w.querySelector('.widget-svg').getBoundingClientRect();
            return [...w.querySelectorAll('figcaption, .widget-controls, .widget-message, .widget-readouts, .widget-status')]
              .filter(e => { const r = e.getBoundingClientRect(); return r.height > 0
                && Math.min(r.bottom, d.bottom) - Math.max(r.top, d.top) > 0.5 && Math.min(r.right, d.right) - Math.max(r.left, d.left) > 0.5; })
              .map(e => e.className || e.tagName); })()};
})"""


def widget_pages(book: Path) -> list[str]:
    return sorted(p.relative_to(book).as_posix() for p in (book / "chapters").glob("*.html")
                  if "data-widget=" in p.read_text(encoding="utf-8"))


def context(chromium, viewport, **extra):
    phone = viewport is PHONE
    ctx = chromium.new_context(viewport=viewport, is_mobile=phone, has_touch=phone, **extra)
    return watch(ctx, allow=("http://127.0.0.1",))


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440px", "390px"])
def test_the_static_figure_takes_the_live_widgets_box(chromium, book_url_gz, built_book, viewport):
    """Every widget of the book: its box with the runtime blocked (the build's figure, for this
    width) and once live and drawn by Python are the same, to a pixel's fraction."""
    base, pages = book_url_gz, widget_pages(built_book)
    assert pages, "no widget pages in the built book"
    for page in pages:
        static = context(chromium, viewport)
        static.context.route(re.compile(r".*/widgets-host\.js$"), lambda r: r.abort())
        static.page.goto(base + page)
        before = static.page.evaluate(BOXES)
        static.context.close()
        live = context(chromium, viewport)
        live.page.goto(base + page)
        live.page.wait_for_function(ALL_LIVE, timeout=60_000)
        live.page.wait_for_function(DRAWN, timeout=60_000)
        live.page.wait_for_function(SETTLED, timeout=60_000)   # no background redraw still to land
        live.page.evaluate(NEXT_FRAMES)                         # and its layout done
        after = live.page.evaluate(BOXES)
        assert live.errors == [] and live.outside == []
        live.context.close()
        layout = "340" if viewport is PHONE else "640"
        assert [b["shown"] for b in before] == [[layout]] * len(before), page    # one drawing, this width's
        assert [b["shown"] for b in after] == [["live"]] * len(after), page       # the build's others gone
        for b, a in zip(before, after):
            assert b["under"] == [] and a["under"] == [], (page, b, a)
            assert abs(b["figure"] - a["figure"]) < 0.5, (page, b, a)
            assert abs(b["widget"] - a["widget"]) < 0.5, (page, b, a)


def touch_drag(page, x, y, dx, dy, steps=8):
    """A one-finger drag, as a touch screen sends it (CDP), from (x, y) by (dx, dy)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for i in range(1, steps + 1):
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove",
                                              "touchPoints": [{"x": x + dx * i / steps, "y": y + dy * i / steps}]})
        page.evaluate(NEXT_FRAMES)        # the page has handled this move and drawn a frame
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def test_the_3d_view_turns_with_a_finger_and_no_other_figure_takes_the_page(chromium, book_url_gz, built_book):
    base = book_url_gz
    web = context(chromium, PHONE)
    page = web.page
    page.goto(base + "chapters/cuda-threads.html")
    page.wait_for_function(ALL_LIVE, timeout=60_000)
    grids = page.locator('.widget[data-widget="blockgrid"]')
    touch = [grids.nth(i).locator(".widget-svg > svg").evaluate("s => getComputedStyle(s).touchAction")
             for i in range(grids.count())]
    three_d = next(i for i in range(grids.count()) if grids.nth(i).locator('input[value="3d"]').is_checked())
    assert touch[three_d] == "none"
    assert [t for i, t in enumerate(touch) if i != three_d] == ["auto"] * (grids.count() - 1)

    root = grids.nth(three_d)
    root.locator(".widget-svg").scroll_into_view_if_needed()
    box = root.locator(".widget-svg").bounding_box()
    before = page.evaluate("el => [JSON.stringify(BookWidgets.stats.liveAt), scrollY, "
                           "el.querySelector('.widget-svg > svg').outerHTML]", root.element_handle())
    touch_drag(page, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, 60, 40)
    page.wait_for_function("([el, svg]) => el.querySelector('.widget-svg > svg').outerHTML !== svg",
                           arg=[root.element_handle(), before[2]], timeout=10_000)
    after = page.evaluate("el => [JSON.stringify(BookWidgets.stats.liveAt), scrollY, "
                          "el.querySelector('.widget-svg > svg').outerHTML]", root.element_handle())
    assert after[1] == before[1]                 # the page did not scroll
    assert after[2] != before[2]                 # the view turned
    assert web.errors == [] and web.outside == []
    web.context.close()


SAVE_DATA = """Object.defineProperty(Navigator.prototype, 'connection',
  {get: () => ({saveData: true, effectiveType: '4g', addEventListener() {}})});"""


def test_save_data_downloads_nothing_until_a_widget_is_near(chromium, book_url_gz, built_book):
    base = book_url_gz
    web = context(chromium, DESKTOP)
    web.context.add_init_script(SAVE_DATA)
    page = web.page
    page.goto(base + "chapters/roofline.html")
    page.wait_for_load_state("load")
    root = page.locator('.widget[data-widget="roofline"]')
    # Settled: the host has mounted the widget as a static figure (its decision not to download),
    # the network has been quiet (Playwright's networkidle: no request for 500 ms) and the page's
    # idle callbacks have run; only then is "nothing downloaded" a fact and not an early look.
    page.wait_for_function("el => el.dataset.state === 'static'", arg=root.element_handle(), timeout=10_000)
    page.wait_for_load_state("networkidle")
    page.evaluate("() => new Promise(done => requestIdleCallback(() => done(true)))")
    runtime = [u for u in web.requests if "/pyodide/" in u or "widgets-worker" in u]
    assert runtime == []
    assert root.get_attribute("data-state") == "static"
    assert "tap" in root.locator(".widget-status").inner_text()
    root.scroll_into_view_if_needed()
    page.wait_for_function("el => el.dataset.state !== 'static'", arg=root.element_handle(), timeout=10_000)
    assert root.get_attribute("data-state") in ("loading", "live")
    page.wait_for_function(ALL_LIVE, timeout=60_000)
    assert any("/pyodide/" in u for u in web.requests)
    assert web.errors == [] and web.outside == []
    web.context.close()


def test_without_save_data_the_runtime_starts_with_the_page(chromium, book_url_gz, built_book):
    """A reader far from any widget still gets the runtime (it is ready when they arrive)."""
    base = book_url_gz
    web = context(chromium, DESKTOP)
    page = web.page
    page.goto(base + "chapters/roofline.html")     # the widget is screens below the top
    page.wait_for_function("BookWidgets.phase !== 'idle'", timeout=10_000)
    assert page.evaluate("scrollY") == 0
    page.wait_for_function(ALL_LIVE, timeout=60_000)
    assert web.errors == [] and web.outside == []
    web.context.close()


# Layout shifts not caused by the reader, summed (the Layout Instability API, as book-vitals counts
# them), on a page scrolled to its second widget as it loads.
SHIFTS_NEAR_A_WIDGET = """window.__cls = 0; window.__shifts = [];
new PerformanceObserver((l) => l.getEntries().forEach((e) => { if (e.hadRecentInput) return;
  window.__cls += e.value;
  window.__shifts.push([Math.round(e.startTime), e.value, e.sources.map((s) => s.node?.nodeName + '.' + (s.node?.className || ''))]); }))
  .observe({type: 'layout-shift', buffered: true});
document.addEventListener('DOMContentLoaded', () => { const w = document.querySelectorAll('[data-widget]');
  const t = w[w.length > 1 ? 1 : 0]; if (t) t.scrollIntoView({block: 'center'}); });"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440px", "390px"])
def test_nothing_moves_while_a_widget_page_loads_and_goes_live(chromium, book_url_gz, built_book, viewport):
    """Every chapter with widgets: from the first paint until the page has settled (every widget
    live, drawn, its background redraw and warm-up done: widgets-host.js's widgets:settled), the
    page moves by no more than 0.01 (the goal of #17). The page's own furniture (copy
    buttons, folds, figure widths, the contents list, Predict controls) is the build's."""
    base, pages = book_url_gz, widget_pages(built_book)
    for page in pages:
        web = context(chromium, viewport)
        web.context.add_init_script(SHIFTS_NEAR_A_WIDGET)
        web.page.goto(base + page)
        web.page.wait_for_function(ALL_LIVE, timeout=60_000)
        web.page.wait_for_function(SETTLED, timeout=60_000)
        web.page.evaluate(NEXT_FRAMES)             # the last redraw laid out, its shifts reported
        cls, shifts = web.page.evaluate("[window.__cls, window.__shifts]")
        assert cls <= 0.01, (page, shifts)
        assert web.errors == []
        web.context.close()


def test_the_next_chapter_finds_python_running(chromium, book_url_gz, built_book):
    """With the book's SharedWorker, a reader who goes on to another chapter with widgets finds the
    interpreter the first started: that page's widgets go live without booting Python. The page
    head's early script and widgets-host.js name the worker alike."""
    base, pages = book_url_gz, widget_pages(built_book)
    assert len(pages) >= 2
    ctx = chromium.new_context(viewport=DESKTOP)
    web = watch(ctx, allow=("http://127.0.0.1",), shared_worker=True)
    page = web.page
    page.goto(base + pages[0])
    page.wait_for_function(ALL_LIVE, timeout=60_000)
    assert page.evaluate("BookWidgets.stats.reused") is False
    assert page.evaluate("BookWidgetsEarly.name") == page.evaluate("BookWidgets.workerName")
    page.goto(base + pages[1])
    page.wait_for_function(ALL_LIVE, timeout=60_000)
    assert page.evaluate("BookWidgets.stats.reused") is True
    assert web.errors == []
    ctx.close()


def test_a_tall_figure_stays_in_view_while_its_controls_are_used_on_a_phone(chromium, book_url_gz, built_book):
    """390 px: a widget whose figure is too tall to stay above its controls (not widget-sticky) is
    pinned at the top, drawn within half the screen, once the reader touches a control; the control
    stays reachable (nothing covers it) and the page does not move; leaving the widget ends it.
    (A drawing that would need less than 3/4 of its size to fit is not pinned at all (#34): the
    widget tested is one that fits.)"""
    base, pages = book_url_gz, widget_pages(built_book)
    web = context(chromium, PHONE)
    page = web.page
    tall = None
    for p in pages:
        page.goto(base + p)
        page.wait_for_function(ALL_LIVE, timeout=60_000)
        fits = page.evaluate("""() => [...document.querySelectorAll('.widget[data-widget]:not(.widget-sticky)')]
            .map(w => w.querySelector('.widget-svg').getBoundingClientRect().height * 0.75 <= 0.45 * innerHeight)""")
        if True in fits:
            tall = page.locator(".widget[data-widget]:not(.widget-sticky)").nth(fits.index(True))
            break
    assert tall is not None, "no widget on the book's pages has a figure too tall to stick"
    figure = tall.locator(".widget-svg")      # the drawing is pinned, not its caption
    slider = tall.locator(".widget-controls input[type=range]").filter(visible=True).last   # not one hidden (show_if)
    page.evaluate("el => el.scrollIntoView({block: 'end'})", slider.element_handle())
    page.evaluate(SCROLL_STILL)                                      # the scroll has ended
    before = slider.bounding_box()
    slider.tap()
    expect(tall).to_have_class(re.compile(r"\bwidget-peek\b"))     # pinned by the tap's pointerdown
    page.evaluate(NEXT_FRAMES)                                       # and laid out so
    box, ctrl = figure.bounding_box(), slider.bounding_box()
    assert ctrl["y"] == before["y"]                                  # nothing moved under the finger
    assert 0 <= box["y"] <= 80                                       # pinned under the top bar
    assert box["height"] <= 0.46 * PHONE["height"] + 1              # drawn within the top half
    assert ctrl["y"] >= box["y"] + box["height"] - 1                 # the control is below it
    x, y = ctrl["x"] + ctrl["width"] / 2, ctrl["y"] + ctrl["height"] / 2
    assert page.evaluate("([x, y, el]) => el.contains(document.elementFromPoint(x, y))", [x, y, slider.element_handle()])
    page.evaluate("w => scrollBy(0, w.getBoundingClientRect().bottom - innerHeight / 2)", tall.element_handle())
    page.touchscreen.tap(195, PHONE["height"] * 3 // 4)              # the reader taps the text below it
    assert "widget-peek" not in tall.get_attribute("class")
    assert web.errors == []
    web.context.close()
