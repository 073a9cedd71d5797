"""The book's widgets while a reader uses them (issue #34), in Chromium on the built book: a pinned
figure never covers the control in use and pins no caption; hidden controls stay hidden; dragging a
figure selects nothing; a message or a new figure never moves the controls."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from webwatch import watch  # noqa: E402

pytestmark = pytest.mark.browser

DESKTOP, PHONE = {"width": 1440, "height": 900}, {"width": 390, "height": 844}
ALL_LIVE = "[...document.querySelectorAll('.widget[data-widget]')].every(w => w.dataset.state === 'live')"


def open_live(chromium, base, page_path, viewport):
    phone = viewport is PHONE
    ctx = chromium.new_context(viewport=viewport, is_mobile=phone, has_touch=phone,
                               device_scale_factor=2 if phone else 1)
    web = watch(ctx, allow=("http://127.0.0.1",))
    web.page.goto(base + page_path)
    web.page.wait_for_function(ALL_LIVE, timeout=60_000)
    return web


# Where a slider is and whether a tap at its middle reaches it; the caption's box; the pinned
# drawing's scale (its drawn width over its laid-out width) when the figure is pinned.
STATE = """([root, name]) => {
  const input = root.querySelector(`input[name="${name}"]`);
  const r = input.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  const svg = root.querySelector('.widget-svg');
  const s = svg.getBoundingClientRect();
  const cap = root.querySelector('figcaption');
  return {top: r.top, reached: !!hit && (hit === input || input.parentElement.contains(hit)),
          pinned: root.classList.contains('widget-peek'), scale: s.width / svg.offsetWidth,
          svgBottom: s.bottom, caption: cap ? cap.getBoundingClientRect().top : null, focused: document.activeElement === input};
}"""


def sliders(root):
    return [n for n in root.locator('input[type="range"]').evaluate_all(
        "els => els.filter(e => e.getClientRects().length).map(e => e.name)")]


@pytest.mark.parametrize("page_path,widget", [("chapters/serving.html", "memory-budget"),
                                              ("chapters/attention.html", "attention-runner"),
                                              ("chapters/communication.html", "collective-stepper"),
                                              ("chapters/communication.html", "parallel-planner")])
def test_a_pinned_figure_never_covers_the_control_in_use(chromium, book_url_gz, page_path, widget):
    """Phone: a tap on any slider, with the slider high or low on the screen, leaves that slider
    reachable (nothing drawn over it); the caption scrolls with the page; a pinned drawing is at
    least three quarters of its size (its text stays readable)."""
    web = open_live(chromium, book_url_gz, page_path, PHONE)
    page = web.page
    root = page.locator(f'.widget[data-widget="{widget}"]').first
    handle = root.element_handle()
    names = sliders(root)
    assert names
    for name in names:
        for y in (300, 440, 600):
            page.evaluate("([root, name, y]) => { const r = root.querySelector(`input[name=\"${name}\"]`)"
                          ".getBoundingClientRect(); scrollTo(0, scrollY + r.top - y); }", [handle, name, y])
            page.wait_for_function("([root, name, y]) => Math.abs(root.querySelector(`input[name=\"${name}\"]`)"
                                   ".getBoundingClientRect().top - y) < 2 || scrollY === 0", arg=[handle, name, y])
            before = page.evaluate(STATE, [handle, name])
            page.touchscreen.tap(200, before["top"] + 12)      # returns once the page has handled it
            state = page.evaluate(STATE, [handle, name])
            assert state["reached"], (widget, name, y, state)
            if state["pinned"]:
                assert state["scale"] >= 0.75, (widget, name, y, state)
                assert state["svgBottom"] <= state["top"], (widget, name, y, state)
            # the caption is never pinned: it moves with the page
            if state["caption"] is not None:
                page.evaluate("scrollBy(0, 120)")
                page.wait_for_function("([root, top]) => Math.abs(root.querySelector('figcaption')"
                                       ".getBoundingClientRect().top - top) > 1", arg=[handle, state["caption"]],
                                       timeout=2_000)
                after = page.evaluate(STATE, [handle, name])
                assert abs(after["caption"] - (state["caption"] - 120)) < 2, (widget, name, y, state, after)
                if after["pinned"]:
                    assert after["svgBottom"] <= after["top"] or after["top"] < 0, (widget, name, y, after)
            # done with it: the reader touches the page elsewhere
            page.evaluate("document.querySelector('main p').dispatchEvent(new PointerEvent('pointerdown', {bubbles: true}))")
    assert web.errors == []
    web.context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440px", "390px"])
def test_controls_that_do_not_apply_stay_hidden(chromium, book_url_gz, viewport):
    """A control its widget hides (show_if) takes no room at either width."""
    web = open_live(chromium, book_url_gz, "chapters/attention.html", viewport)
    shown = web.page.evaluate("""[...document.querySelectorAll('.widget-controls [hidden]')]
        .filter(e => e.getClientRects().length).map(e => e.closest('.widget').dataset.widget + ':' + e.textContent.trim().slice(0, 20))""")
    assert web.page.evaluate("document.querySelectorAll('.widget-controls [hidden]').length") > 0
    assert shown == []
    web.context.close()


def test_dragging_the_3d_grid_selects_nothing_and_offers_no_suggestion(chromium, book_url_gz):
    """Desktop: a mouse drag across the 3D block grid turns it and selects no text; a selection
    inside a widget offers no "Suggest a change" (one in the prose does)."""
    web = open_live(chromium, book_url_gz, "chapters/cuda-threads.html", DESKTOP)
    page = web.page
    grids = page.locator('.widget[data-widget="blockgrid"]')
    three_d = next(i for i in range(grids.count()) if grids.nth(i).locator('input[value="3d"]').is_checked())
    root = grids.nth(three_d)
    root.locator(".widget-svg").scroll_into_view_if_needed()
    box = root.locator(".widget-svg").bounding_box()
    svg_before = root.locator(".widget-svg > svg").evaluate("s => s.outerHTML")
    # from the left of the figure (where its text is) to its right
    page.mouse.move(box["x"] + 4, box["y"] + 20)
    page.mouse.down()
    for i in range(1, 11):
        page.mouse.move(box["x"] + 4 + i * (box["width"] - 8) / 10, box["y"] + 20 + i * 8)
    page.mouse.up()
    page.wait_for_function("([el, svg]) => el.querySelector('.widget-svg > svg').outerHTML !== svg",
                           arg=[root.element_handle(), svg_before])
    assert page.evaluate("getSelection().toString()") == ""
    suggest = page.locator(".fb-suggest")
    # a selection in the prose offers the button; one inside a widget takes it away again
    page.evaluate("""() => { const p = document.querySelector('main p'); const r = document.createRange();
        r.selectNodeContents(p); getSelection().removeAllRanges(); getSelection().addRange(r); }""")
    suggest.wait_for(state="visible")
    page.evaluate("""el => { const r = document.createRange(); r.selectNodeContents(el.querySelector('.widget-readouts'));
        getSelection().removeAllRanges(); getSelection().addRange(r); }""", root.element_handle())
    suggest.wait_for(state="hidden")
    assert web.errors == []
    web.context.close()


# A slider's place on the page (not on the screen: a phone's pinned figure does not count).
WHERE = "([root, name]) => root.querySelector(`input[name=\"${name}\"]`).getBoundingClientRect().top + scrollY"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440px", "390px"])
@pytest.mark.parametrize("page_path,widget,name,moved", [
    # the batch to its largest: "Out of memory" appears
    ("chapters/serving.html", "memory-budget", "batch", "el => !el.querySelector('.widget-message').hidden"),
    # N to its largest: the matrices grow
    ("chapters/attention.html", "attention-runner", "n", "el => /16×/.test(el.querySelector('.widget-readouts').textContent)"),
    # TP to its largest: the plan cannot run, and says so
    ("chapters/communication.html", "parallel-planner", "tp", "el => !el.querySelector('.widget-message').hidden"),
    # p to 16: the ring all-reduce takes 30 steps
    ("chapters/communication.html", "collective-stepper", "p", "el => /of 30/.test(el.querySelector('.widget-readouts').textContent)"),
])
def test_the_controls_stay_put_while_in_use(chromium, book_url_gz, viewport, page_path, widget, name, moved):
    web = open_live(chromium, book_url_gz, page_path, viewport)
    page = web.page
    root = page.locator(f'.widget[data-widget="{widget}"]').first
    slider = root.locator(f'input[name="{name}"]')
    slider.scroll_into_view_if_needed()
    before = page.evaluate(WHERE, [root.element_handle(), name])
    slider.focus()
    page.keyboard.press("End")
    page.wait_for_function(moved, arg=root.element_handle())
    page.wait_for_function("el => !el.querySelector('.widget-svg > svg[data-layout]') && BookWidgets.stats.updates.length", arg=root.element_handle())
    after = page.evaluate(WHERE, [root.element_handle(), name])
    assert abs(after - before) < 1, (widget, name, before, after)
    assert web.errors == []
    web.context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1440px", "390px"])
def test_small_ones_turn_and_tilt_only_in_3d_labels_11px_styled_buttons(chromium, book_url_gz, viewport):
    """#34, 17: the block grid shows Turn and Tilt only in its 3D view (they do nothing in 2D); every
    widget control's text is at least 11 CSS px ("Projection" was 10.9); "Change my answer" is
    styled like the book's buttons, not the browser's."""
    web = open_live(chromium, book_url_gz, "chapters/cuda-threads.html", viewport)
    page = web.page
    views = page.evaluate("""() => [...document.querySelectorAll('.widget[data-widget="blockgrid"]')].map(w => ({
        view: w.querySelector('input[name=view]:checked').value,
        shown: ['yaw', 'pitch'].filter(n => w.querySelector(`input[name=${n}]`).getClientRects().length)}))""")
    assert {v["view"] for v in views} == {"2d", "3d"}
    for v in views:
        assert v["shown"] == (["yaw", "pitch"] if v["view"] == "3d" else []), views
    small = page.evaluate("""() => [...document.querySelectorAll('.widget-controls *')].filter(e =>
        e.getClientRects().length && [...e.childNodes].some(n => n.nodeType === 3 && n.data.trim())
        && parseFloat(getComputedStyle(e).fontSize) < 11).map(e => e.textContent.trim() + ' ' + getComputedStyle(e).fontSize)""")
    assert small == []
    web.context.close()
    web = open_live(chromium, book_url_gz, "chapters/roofline.html", viewport)
    change = web.page.locator(".predict-change").first
    style = change.evaluate("b => { const s = getComputedStyle(b); return [s.borderTopColor, s.backgroundColor, s.borderRadius]; }")
    default = web.page.evaluate("""() => { const b = document.createElement('button'); document.body.append(b);
        const s = getComputedStyle(b); const r = [s.borderTopColor, s.backgroundColor, s.borderRadius]; b.remove(); return r; }""")
    assert style != default and style[2] != "0px", (style, default)
    web.context.close()


def test_on_a_phone_the_stepper_shows_the_ring_and_the_step_above_its_slider(chromium, book_url_gz):
    """Issue #47: the stepper's drawing is too tall to pin on a phone, and the ring and "step x of 6"
    were about 900 px above the slider being dragged. With the slider low on the screen, as a
    thumb holds it, the step's heading and every GPU of the ring are in view above it."""
    web = open_live(chromium, book_url_gz, "chapters/communication.html", PHONE)
    try:
        page = web.page
        root = page.locator('.widget[data-widget="collective-stepper"]')
        slider = root.locator('input[name="step"]')
        slider.scroll_into_view_if_needed()
        page.evaluate("(y) => window.scrollBy(0, y - innerHeight * 0.8)", slider.bounding_box()["y"])
        box = slider.bounding_box()
        page.touchscreen.tap(box["x"] + box["width"] * 0.7, box["y"] + box["height"] / 2)
        page.wait_for_function("(r) => r.querySelector('input[name=step]').value !== '1'", arg=root.element_handle())
        seen = root.evaluate("""(w) => {
            const bar = document.querySelector('.topbar').getBoundingClientRect().bottom;
            const top = w.querySelector('input[name=step]').getBoundingClientRect().top;
            const inView = (r) => r.top >= bar && r.bottom <= top;
            const head = [...w.querySelectorAll('.widget-svg text')].find((t) => /[Ss]tep \\d+( of |\\/)\\d+/.test(t.textContent));
            return { head: !!head && inView(head.getBoundingClientRect()),
                     ring: [...w.querySelectorAll('.widget-svg circle')].map((c) => inView(c.getBoundingClientRect())) };
        }""")
        assert seen["head"] and seen["ring"] and all(seen["ring"]), seen
        assert not web.errors, web.errors
    finally:
        web.context.close()
