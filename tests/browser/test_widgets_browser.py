"""The widgets in a real browser: live, keyboard, clicks, failure modes, nothing off-site."""
import json
import math
import re
from pathlib import Path

import widgets
from webwatch import watch
from calc import kernels

ROOT = Path(__file__).resolve().parents[2]
PAGE = "chapters/widgets.html"
LIVE = "[...document.querySelectorAll('.widget')].every(w => w.dataset.state === 'live')"
DRAWN = "document.querySelectorAll('.widget').length === Object.keys(BookWidgets.stats.drawnAt).length"


def open_live(web, site_url, page=PAGE):
    """The page with every widget live and drawn once by Python in the browser."""
    web.page.goto(site_url + page)
    web.page.wait_for_function(LIVE, timeout=25_000)
    web.page.wait_for_function(DRAWN, timeout=25_000)
    return web.page


# Counts every visible change Python's drawings make to each widget's figure, from the first parse
# on: not the box's tabindex and label (the host's), nor data-* attributes (numbers for scripts,
# which may differ from the build's in the last bits: the browser's libm is not the build's).
COUNT_FIGURE_CHANGES = """
window.__figureChanges = {};
document.addEventListener("DOMContentLoaded", () => {
  for (const el of document.querySelectorAll(".widget")) {
    const box = el.querySelector(".widget-svg");
    window.__figureChanges[el.dataset.widget] = [];
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.target === box || (r.type === "attributes" && r.attributeName.startsWith("data-"))) continue;
        window.__figureChanges[el.dataset.widget].push(
          r.type === "characterData" ? `${r.oldValue} -> ${r.target.nodeValue}` : `${r.type} ${r.target.nodeName} ${r.attributeName}`);
      }
    }).observe(box, { subtree: true, childList: true, attributes: true, characterData: true, characterDataOldValue: true });
  }
});
"""


def test_controls_work_on_the_builds_figure_and_python_draws_the_same(web, site_url):
    """At the default width the page's figure is what the build drew: the controls come alive on
    it, and the browser's first drawing (the same calc in Pyodide) changes nothing in it."""
    web.context.add_init_script(COUNT_FIGURE_CHANGES)
    page = open_live(web, site_url)
    stats = page.evaluate("BookWidgets.stats")
    for name in ("roofline", "blockgrid", "attention-runner", "steps", "memory-budget", "collective-stepper",
                 "parallel-planner"):
        assert stats["liveAt"][name] < stats["drawnAt"][name]
    changes = page.evaluate("window.__figureChanges")
    # The runner shows floating-point residuals (Σ P − 1, O − O_ref): exp() in the browser's libm may
    # differ from the build's in the last bit, so there only numbers may change, in text.
    runner = changes.pop("attention-runner")
    number = re.compile(r"-?\d+(?:\.\d+)?(?: × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?")
    for change in runner:
        old, arrow, new = change.partition(" -> ")
        assert arrow and number.sub("#", old) == number.sub("#", new), change
    assert changes == {"roofline": [], "blockgrid": [], "steps": [], "memory-budget": [], "collective-stepper": [],
                       "parallel-planner": []}
    assert web.errors == []


def test_a_move_the_moment_the_controls_come_alive(web, site_url):
    """A reader faster than Python's background drawing still gets calc's numbers."""
    web.page.goto(site_url + PAGE)
    web.page.wait_for_function(LIVE, timeout=25_000, polling=5)
    web.page.evaluate("""() => {
        const slider = document.querySelector('.widget[data-widget="roofline"] input[name="size"]');
        slider.value = 13; slider.dispatchEvent(new Event('input', {bubbles: true}));
    }""")
    root = web.page.locator('.widget[data-widget="roofline"]')
    expected = dict(widgets.render("roofline", {"size": 8192})["readouts"])
    web.page.wait_for_function("([el, v]) => [...el.querySelectorAll('dd')].some(d => d.textContent === v)",
                               arg=[root.element_handle(), expected["Arithmetic intensity"]])
    web.page.wait_for_function(DRAWN)
    # the move's answer is on screen and no later drawing of this widget is in flight or queued
    web.page.wait_for_function("el => !BookWidgets.busy(el)", arg=root.element_handle())
    assert readouts(root.locator(".widget-readouts")) == expected
    assert root.locator('input[name="size"]').input_value() == "13"
    assert web.errors == []


def readouts(root):
    return dict(zip(root.locator("dt").all_inner_texts(), root.locator("dd").all_inner_texts()))


def after_render(page, root, action):
    """Run ``action`` and wait until the widget has drawn with the new params."""
    page.evaluate("el => { el.__renders = 0; el.addEventListener('widget:render', () => el.__renders++) }",
                  root.element_handle())
    action()
    # drawn at least once since, and nothing more in flight or queued (the latest value has landed)
    page.wait_for_function("el => el.__renders > 0 && !BookWidgets.busy(el)", arg=root.element_handle())


def test_every_widget_becomes_live_without_errors_or_outside_requests(web, site_url):
    page = open_live(web, site_url)
    for root in page.locator(".widget").all():
        assert root.locator("fieldset").first.is_enabled()
        assert root.locator(".widget-status").inner_text().startswith("Interactive")
    assert web.outside == [] and web.errors == []
    wasm = [u.split("?")[0].rsplit("/", 1)[-1] for u in web.requests if ".wasm" in u]
    assert wasm == ["pyodide.asm.wasm"]     # this host gzips it in transit, as GitHub Pages does


def test_a_host_that_sends_the_wasm_uncompressed_over_a_network_gets_the_packed_copy(browser, site_dir):
    """On a real network a 9.2 MB wasm sent as is costs more than un-gzipping the 3.3 MB copy in the
    worker; the site here is named book.test (not a loopback address) and sends every file as it is."""
    context = browser.new_context()
    web = watch(context, allow=("http://book.test/",))

    def plain_host(route):               # registered last, so it answers before watch()'s own handler
        web.requests.append(route.request.url)
        path = site_dir / route.request.url.split("?")[0].removeprefix("http://book.test/")
        if not path.is_file():
            return route.fulfill(status=404)
        types = {".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript",
                 ".html": "text/html", ".css": "text/css"}
        route.fulfill(body=path.read_bytes(), content_type=types.get(path.suffix, "application/octet-stream"))
    context.route("http://book.test/**", plain_host)
    try:
        web.page.goto("http://book.test/" + PAGE)
        web.page.wait_for_function(LIVE, timeout=25_000)
        assert web.page.evaluate("BookWidgets.stats.marks.wasmGzipped") is True
        wasm = [u.split("?")[0].rsplit("/", 1)[-1] for u in web.requests if ".wasm" in u]
        assert wasm == ["pyodide.asm.wasm", "pyodide.asm.wasm.gz"]   # the first only as far as its headers
        assert web.outside == [] and web.errors == []
    finally:
        context.close()


def test_a_widget_goes_live_on_a_page_as_quarto_writes_it(web, site_url):
    """No site-root meta, the host and its stylesheet from the head that filters/widget.lua asks
    Quarto for: the host finds the runtime from its own address (assets/js/ under the root)."""
    page = web.page
    page.goto(site_url + "chapters/as-quarto.html")
    page.wait_for_function("document.querySelector('.widget').dataset.state === 'live'", timeout=60000)
    assert page.locator(".widget fieldset").first.is_enabled()
    assert web.outside == [] and web.errors == []


def assert_next_page_draws_with_python(page):
    """On chapters/next.html (an A100's roofline): two steps of the size slider give Python's numbers."""
    root = page.locator('.widget[data-widget="roofline"]')
    slider = root.locator('input[name="size"]')
    after_render(page, root, lambda: (slider.focus(), page.keyboard.press("ArrowRight"), page.keyboard.press("ArrowRight")))
    page.wait_for_function("el => el.querySelector('dd').textContent.includes('8,192')", arg=root.element_handle())
    expected = dict(widgets.render("roofline", {"size": 8192, "device": "a100-sxm-80gb"})["readouts"])
    got = readouts(root.locator(".widget-readouts"))
    assert got["Attainable"] == expected["Attainable"] and got["Regime"] == expected["Regime"]


def test_the_shared_worker_outlives_its_page_and_serves_the_next(web_shared, site_url):
    """The book's SharedWorker (extendedLifetime) keeps Python running while the reader follows a
    link: the next page's widgets go live on the interpreter the first page started, with no boot
    and no snapshot to restore, and its renders are Python's."""
    page = open_live(web_shared, site_url)
    assert page.evaluate("BookWidgets.stats.reused") is False            # this page booted Python
    open_live(web_shared, site_url, "chapters/next.html")
    assert page.evaluate("BookWidgets.stats.reused") is True
    assert page.evaluate("BookWidgets.stats.readyMs") == 0
    assert_next_page_draws_with_python(page)
    assert web_shared.errors == []


def test_a_quarto_page_joins_the_same_shared_worker(web_shared, site_url):
    """A page as Quarto writes it (no site-root meta: the host finds the runtime from its own
    address) names the worker as the fixture's pages do, so it shares their interpreter."""
    open_live(web_shared, site_url)
    page = web_shared.page
    page.goto(site_url + "chapters/as-quarto.html")
    page.wait_for_function("document.querySelector('.widget').dataset.state === 'live'", timeout=60000)
    assert page.evaluate("BookWidgets.stats.reused") is True
    assert web_shared.errors == []


def test_slider_by_keyboard_gives_calc_numbers(web, site_url):
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="roofline"]')
    slider = root.locator('input[name="size"]')
    after_render(page, root, lambda: (slider.focus(), page.keyboard.press("ArrowRight"), page.keyboard.press("ArrowRight")))
    expected = dict(widgets.render("roofline", {"size": 8192})["readouts"])
    # the slider's own readout and what a screen reader hears: the size, formatted (two steps up from 2,048 = 2^11)
    assert slider.evaluate("el => [el.parentElement.querySelector('output').textContent, "
                           "el.getAttribute('aria-valuetext')]") == ["8,192", "8,192"]
    page.wait_for_function("el => el.querySelector('dd').textContent.includes('8,192')", arg=root.element_handle())
    got = readouts(root.locator(".widget-readouts"))
    for key in ("Arithmetic intensity", "Attainable", "Regime", "MFU upper bound (dense peak)"):
        assert got[key] == expected[key]
    assert web.errors == []


def test_a_focused_slider_has_two_steps_either_way_drawn_ahead(web, site_url):
    """While the reader reaches for the key, Python draws the focused slider two steps either way:
    two presses in quick succession (here in one task, faster than any round trip to the worker)
    both redraw at once, with calc's numbers, either way."""
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="roofline"]')
    slider = root.locator('input[name="size"]')
    start = float(slider.input_value())               # log2 of the size, in steps of 0.5
    for sign in (1, -1):
        slider.focus()
        # the focused slider's neighbours are drawn: the worker has answered every step ahead
        page.wait_for_function("el => BookWidgets.aheadReady(el)", arg=root.element_handle(), timeout=20_000)
        drawn = page.evaluate("""([el, sign]) => {
            const slider = el.querySelector('input[name="size"]');
            const from = BookWidgets.stats.renderMs.length;
            for (let i = 0; i < 2; i++) {
                slider.value = Number(slider.value) + sign * Number(slider.step);
                slider.dispatchEvent(new Event('input', {bubbles: true}));
            }
            return BookWidgets.stats.renderMs.slice(from);
        }""", [root.element_handle(), sign])
        assert drawn == [0, 0]                         # 0: drawn from what the worker computed ahead
        size = round(2 ** (start + (sign > 0)))        # two half steps up, then two back
        assert readouts(root.locator(".widget-readouts")) == dict(widgets.render("roofline", {"size": size})["readouts"])
        slider.blur()
    assert float(slider.input_value()) == start
    assert web.errors == []


# After every redraw: is the figure in the page the tree that parsing Python's answer gives, and is
# its root element still the one the page had (focus and listeners stay with it)?
WATCH_REDRAWS = """() => {
  window.__redraws = [];
  for (const el of document.querySelectorAll(".widget")) {
    const box = el.querySelector(".widget-svg"), root = box.firstElementChild;
    el.addEventListener("widget:render", (e) => {
      const fresh = document.createElement("template");
      fresh.innerHTML = e.detail.svg;
      window.__redraws.push([el.dataset.widget, box.firstElementChild.isEqualNode(fresh.content.firstElementChild),
                             box.firstElementChild === root]);
    });
  }
}"""


def test_each_redraw_leaves_exactly_pythons_figure(web, site_url):
    """The figure is patched in place: attribute by attribute, or its parts rebuilt when their
    number changes (the runner's N).  Either way the result is Python's figure, in the same root."""
    page = open_live(web, site_url)
    page.evaluate(WATCH_REDRAWS)
    moves = {"roofline": ('input[name="size"]', ["ArrowRight", "ArrowRight", "ArrowLeft"]),
             "blockgrid": ('input[name="sel_x"]', ["ArrowUp", "ArrowUp", "ArrowDown"]),
             "attention-runner": ('input[name="n"]', ["ArrowRight", "ArrowRight", "ArrowLeft", "ArrowLeft", "ArrowLeft"]),
             "steps": (".widget-svg", ["ArrowRight", "ArrowRight", "ArrowLeft"]),
             "collective-stepper": (".widget-svg", ["ArrowRight", "ArrowRight", "ArrowLeft"]),
             "parallel-planner": ('input[name="tp"]', ["ArrowRight", "ArrowLeft", "ArrowLeft"])}
    for name, (selector, keys) in moves.items():
        root = page.locator(f'.widget[data-widget="{name}"]')
        root.locator(selector).focus()
        for key in keys:
            after_render(page, root, lambda: page.keyboard.press(key))
    redraws = page.evaluate("window.__redraws")
    assert {name for name, _, _ in redraws} == set(moves)
    assert [r for r in redraws if not (r[1] and r[2])] == []
    assert web.errors == []


def test_select_dtype_and_compare_device(web, site_url):
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="roofline"]')
    root.locator('select[name="compare"]').select_option("a100-sxm-80gb")
    page.wait_for_function("el => el.querySelectorAll('polyline.wg-roof').length === 2", arg=root.element_handle())
    root.locator('select[name="dtype"]').select_option("fp32")
    expected = dict(widgets.render("roofline", {"compare": "a100-sxm-80gb", "dtype": "fp32"})["readouts"])
    page.wait_for_function("([el, v]) => [...el.querySelectorAll('dd')].some(d => d.textContent === v)",
                           arg=[root.element_handle(), expected["Ridge point"]])
    assert readouts(root.locator(".widget-readouts")) == expected


def test_2d_3d_switch_and_keyboard_rotation(web, site_url):
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="blockgrid"]')
    root.get_by_role("radio", name="3D").check()
    page.wait_for_function("el => el.querySelectorAll('.widget-svg polygon').length > 0", arg=root.element_handle())
    before = root.locator(".widget-svg").inner_html()
    root.locator(".widget-svg").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("el => el.querySelector('input[name=yaw]').value === '45'", arg=root.element_handle())
    page.wait_for_function("([el, b]) => el.querySelector('.widget-svg').innerHTML !== b",
                           arg=[root.element_handle(), before])
    root.get_by_role("radio", name="2D").check()
    page.wait_for_function("el => el.querySelectorAll('.widget-svg polygon').length === 0", arg=root.element_handle())
    assert web.errors == []


def test_clicking_a_thread_shows_its_indices(web, site_url):
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="blockgrid"]')
    cell = root.locator('.widget-svg rect[data-set*="\\"sel_x\\":18,"][data-set*="\\"sel_y\\":6,"]').last
    cell.click()
    page.wait_for_function("el => el.querySelector('input[name=sel_x]').value === '18'", arg=root.element_handle())
    expected = dict(widgets.render("blockgrid", {"sel_x": 18, "sel_y": 6})["readouts"])
    page.wait_for_function("([el, v]) => el.querySelector('.widget-readouts dd:nth-of-type(1)') && "
                           "[...el.querySelectorAll('dd')].some(d => d.textContent === v)",
                           arg=[root.element_handle(), expected["Computes"]])
    got = readouts(root.locator(".widget-readouts"))
    for key in ("blockIdx", "threadIdx", "Linear index", "Warp, lane", "Computes"):
        assert got[key] == expected[key]


def test_number_inputs_show_the_broken_limit(web, site_url):
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="blockgrid"]')
    root.locator('input[name="block_z"]').fill("128")
    message = root.locator(".widget-message")
    message.wait_for(state="visible")
    page.wait_for_function("el => el.querySelector('.widget-message').textContent.includes('blockDim.z')",
                           arg=root.element_handle())
    assert re.search(r"blockDim\.z = 128 exceeds the limit of 64", message.inner_text())
    assert root.get_attribute("data-state") == "live" and web.errors == []


def test_blocked_runtime_keeps_static_figure_with_message(web, site_url):
    web.context.route(re.compile(r".*/pyodide/.*"), lambda r: r.abort())
    web.page.goto(site_url + PAGE)
    web.page.wait_for_function("[...document.querySelectorAll('.widget')].every(w => w.dataset.state === 'failed')",
                               timeout=25_000)
    for root in web.page.locator(".widget").all():
        assert root.locator(".widget-svg > svg >> visible=true").count() == 1   # the build's, for this width
        assert root.locator(".widget-svg > svg >> visible=true").locator(":scope > title").count() == 1
        assert root.locator(".widget-status").inner_text().startswith("Static figure")
        assert root.locator("input, select").first.is_disabled()
    assert [e for e in web.errors if "Failed to load resource" not in e] == []


def test_a_shared_worker_that_cannot_start_says_so_at_once(web_shared, site_url):
    """The shared worker's boot fails (Pyodide's files are missing): each page connected to it is
    told at once (not after the 20 s timeout) and keeps the build's figure with a message; the
    next page to ask is told too."""
    page = web_shared.page
    failed = "document.querySelector('.widget').dataset.state === 'failed'"
    for _ in range(2):
        page.goto(site_url + "chapters/no-runtime.html")
        page.wait_for_function(failed, timeout=10_000)
        root = page.locator(".widget")
        assert "failed to start" in root.locator(".widget-status").inner_text()
        assert root.locator(".widget-svg > svg >> visible=true").count() == 1
        assert root.locator("input, select").first.is_disabled()


def test_phone_width_fits_and_goes_live(web, site_url):
    web.page.set_viewport_size({"width": 360, "height": 740})
    page = open_live(web, site_url)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    width = page.locator('.widget[data-widget="roofline"] .widget-svg svg').get_attribute("width")
    assert int(width) < 400          # re-laid out for the phone, not shrunk from 640


def svg_values(root):
    return json.loads(root.locator(".widget-svg > svg").get_attribute("data-values"))


def close(a, b, ulps=8):
    """Equal within a few units in the last place of 1.0 (|O| is about 1): Pyodide's libm
    (musl) rounds exp() differently from glibc, and sums carry the difference along."""
    assert len(a) == len(b) and all(len(ra) == len(rb) for ra, rb in zip(a, b))
    worst = max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))
    return worst <= ulps * math.ulp(1.0)


def test_attention_runner_runs_the_chosen_kernel_in_pyodide(web, site_url):
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="attention-runner"]')
    tile = root.locator('input[name="block_rows"]')
    assert tile.is_hidden()
    root.locator('select[name="kernel"]').select_option("flash")
    page.wait_for_function("el => el.querySelector('dd').textContent.startsWith('attention_flash')",
                           arg=root.element_handle())
    assert tile.is_visible() and root.locator('input[name="tile"]').is_hidden()
    slider = root.locator('input[name="n"]')
    after_render(page, root, lambda: (slider.focus(), page.keyboard.press("ArrowRight"), page.keyboard.press("ArrowRight")))
    page.wait_for_function("el => el.querySelector('dd:nth-of-type(1)') && "
                           "[...el.querySelectorAll('dd')].some(d => d.textContent.startsWith('Q, K, V: 8×4'))",
                           arg=root.element_handle())
    params = {"kernel": "flash", "n": 8}
    Q, K, V = kernels.random_inputs(8, 4, 1)
    assert close(svg_values(root), kernels.attention_flash(Q, K, V, 2, 3))
    got = readouts(root.locator(".widget-readouts"))
    expected = dict(widgets.render("attention-runner", params)["readouts"])
    assert got["Kernel"] == expected["Kernel"] and got["Agrees with the reference"].startswith("yes")
    assert got["Rows of the reference P sum to 1"].startswith("max |Σ − 1| = ")
    assert web.errors == []


def test_steps_slider_keys_and_play(web, site_url):
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="steps"]')
    slider = root.locator('input[name="step"]')
    assert slider.get_attribute("max") == str(widgets.render("steps", {})["ranges"]["step"][1])
    root.locator(".widget-svg").focus()
    for _ in range(2):
        page.keyboard.press("ArrowRight")
    page.wait_for_function("el => el.querySelector('input[name=step]').value === '3'", arg=root.element_handle())
    expected = dict(widgets.render("steps", {"step": 3})["readouts"])
    page.wait_for_function("([el, v]) => [...el.querySelectorAll('dd')].some(d => d.textContent === v)",
                           arg=[root.element_handle(), expected["Elements loaded so far"]])
    assert readouts(root.locator(".widget-readouts")) == expected
    assert root.locator(".widget-live").text_content().startswith("Step 3 of 18. Output tile (0, 1)")
    page.keyboard.press("End")
    page.wait_for_function("el => el.querySelector('input[name=step]').value === el.querySelector('input[name=step]').max",
                           arg=root.element_handle())
    slider.focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("el => +el.querySelector('input[name=step]').value === +el.querySelector('input[name=step]').max - 1",
                           arg=root.element_handle())
    # Systolic: the size controls swap, the step range follows calc's frame count.
    root.locator('select[name="animation"]').select_option("systolic")
    page.wait_for_function("el => el.querySelector('input[name=step]').max === '7'", arg=root.element_handle())
    assert root.locator('input[name="rows"]').is_visible() and root.locator('input[name="tile"]').is_hidden()
    play = root.locator("button.wc-play")
    play.click()
    assert play.get_attribute("aria-pressed") == "true"
    page.wait_for_function("el => +el.querySelector('input[name=step]').value >= 3", arg=root.element_handle(),
                           timeout=10_000)
    play.click()
    assert play.inner_text() == "Play"
    assert web.errors == []


SNAPSHOTS = """async () => {
    const cache = await caches.open('book-widgets-snapshot');
    return Promise.all((await cache.keys()).map(async (k) => [k.url, (await (await cache.match(k)).arrayBuffer()).byteLength]));
}"""


# The worker says when it has stored the snapshot (its "snapshot" message: stats.marks).
STORED = "BookWidgets.stats.marks && BookWidgets.stats.marks.snapshotStored != null"


def saved_snapshots(page, timeout_s=15):
    """The snapshot cache's entries [(url, bytes)], once the worker says it stored one (after a
    second of quiet)."""
    page.wait_for_function(STORED, timeout=timeout_s * 1000)
    return page.evaluate(SNAPSHOTS)


def test_next_page_restores_the_saved_interpreter(web, site_url):
    page = open_live(web, site_url)
    assert page.evaluate("BookWidgets.stats.marks.snapshot") == 0          # first visit: booted
    [(_, stored)] = saved_snapshots(page)
    heap = page.evaluate("BookWidgets.stats.marks.heapBytes")
    assert stored < heap * 0.6                                             # pages of zeros left out
    open_live(web, site_url, "chapters/next.html")
    assert page.evaluate("BookWidgets.stats.marks.snapshot") >= heap       # restored, unpacked
    assert_next_page_draws_with_python(page)
    assert web.errors == []


def test_an_unreadable_snapshot_means_a_fresh_boot_and_a_new_snapshot(web, site_url):
    page = open_live(web, site_url)
    [(key, _)] = saved_snapshots(page)
    page.evaluate("""async (key) => {
        const cache = await caches.open('book-widgets-snapshot');
        await cache.put(key, new Response('not a snapshot'));
    }""", key)
    open_live(web, site_url, "chapters/next.html")
    assert page.evaluate("BookWidgets.stats.marks.snapshot") == 0          # booted from scratch
    found = saved_snapshots(page)              # the worker drops the bad entry, then saves anew
    [(again, size)] = found
    assert again == key and size > 1_000_000                             # replaced by a good one
    assert web.errors == []


# Pairs of <text> elements whose boxes, as the browser lays them out, overlap (by more than a pixel
# across and two down: descenders may touch the next line's ascenders).
OVERLAPPING_LABELS = """() => {
  const t = [...document.querySelectorAll("svg text")].map((e) => [e.textContent, e.getBBox()]);
  const out = [];
  for (let i = 0; i < t.length; i++) for (let j = i + 1; j < t.length; j++) {
    const [a, p] = t[i], [b, q] = t[j];
    const across = Math.min(p.x + p.width, q.x + q.width) - Math.max(p.x, q.x);
    const down = Math.min(p.y + p.height, q.y + q.height) - Math.max(p.y, q.y);
    if (across > 1 && down > 2) out.push([a, b]);
  }
  return out;
}"""


def test_no_label_is_written_over_another(web):
    """Every widget, in every state widgets.states lists, at phone and desktop widths: no two
    labels overlap in the browser's own layout of the figure (the roofline's selected point keeps
    its label, crossing a roof line if it must)."""
    css = (ROOT / "assets" / "css" / "widgets.css").read_text()
    found = []
    for name in widgets.NAMES:
        for width in (300, 360, 640, 900):
            for case in widgets.states(name):
                svg = widgets.render(name, {**case, "_width": width})["svg"]
                web.page.set_content(f"<style>{css}</style><div class='widget-svg'>{svg}</div>")
                found += [(name, width, case, pair) for pair in web.page.evaluate(OVERLAPPING_LABELS)]
    assert found == [], "\n".join(map(str, found))
    assert web.errors == []


def test_a_worker_named_for_the_book_starts_python_before_any_page_asks(web, site_url):
    """The name says where Pyodide is, so the worker fetches it as soon as its script has run; the
    page's first message, relayed by a main thread busy laying out a chapter, comes later."""
    page = web.page
    page.goto(site_url)
    # the worker's request for Python's wasm, before any message from the page (10 s at most)
    with web.context.expect_event("request", lambda r: "pyodide.asm.wasm" in r.url, timeout=10_000) as fetched:
        page.evaluate("""root => {
            const base = new URL("pyodide/", root).href;
            window.__w = new Worker(new URL("assets/js/widgets-worker.js", root),
                                    {type: "module", name: `book-widgets test ${base}`});
        }""", site_url)
    assert fetched.value.url.startswith(site_url), "no init sent, and Python was fetched from the site"
    ready = page.evaluate("""root => new Promise(done => {
        __w.onmessage = (e) => done(e.data.type);
        __w.postMessage({type: "init", root, base: new URL("pyodide/", root).href});
    })""", site_url)
    assert ready == "ready" and web.errors == []
