"""An exercise's roofline and the reader's measured device (issue 30), in Chromium on the built book.

After a Check, the roofline chapter's Horner exercise draws the reader's kernel on the A100's
datasheet roofs and, beside them, on the device the probe measured in this browser (labelled so),
with a choice between "Your GPU" and "Your CPU" when both are stored; with none stored, a line leads
to the probe. A measurement made or deleted after the Check redraws the figures. With an injected
result (made-up figures, so the ridge points are known) at 1440 px and at 390 px with touch,
keyboard-reachable and axe-clean; and once with the real probe on SwiftShader, whose software
adapter leaves only the CPU. Also the other places the measurement reaches: the memory-budget
widget (measured roofs, the memory the reader types) and the data-movement chapter's threshold."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from a11y_site import AXE, CONFIGS  # noqa: E402  (same folder)

pytestmark = pytest.mark.browser
PAGE = "chapters/roofline.html"
EX = "#ex-roofline-horner"
REFERENCE = """from numba import cuda


@cuda.jit
def horner(X, Y, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        x = X[i]
        y = c[7]
        for k in range(6, -1, -1):
            y = y * x + c[k]
        Y[i] = y
"""


def fig(median, unit="B/s", n=9):
    return {"median": median, "lo": median * 0.9, "hi": median * 1.1, "n": n, "unit": unit}


# A hardware GPU (best stream 200 GB/s, FP32 5 TFLOP/s: ridge 25 FLOP/B) and one CPU core
# (best stream 20 GB/s, 50 GFLOP/s: ridge 2.5 FLOP/B), as the probe stores them.
RESULT = {
    "version": 1, "date": "2026-11-26T10:00:00.000Z", "browser": "test", "quick": False, "gpuStatus": "ok",
    "elapsedMs": 14200,
    "gpu": {"adapter": {"description": "Test Adapter 9000"}, "software": False, "bytes": 1 << 28,
            "read": fig(200e9), "write": fig(150e9), "copy": fig(180e9), "fma32": fig(5e12, "FLOP/s"), "strided": []},
    "cpu": {"bytes": 1 << 28, "read": fig(20e9), "write": fig(12e9), "copy": fig(15e9),
            "fma": {**fig(50e9, "FLOP/s"), "fused": True}},
}
STORE = f"localStorage.setItem('bytes-not-flops/measured-device/v1', {json.dumps(json.dumps(RESULT))});"


def open_page(browser, url, config, stored):
    context = browser.new_context(**CONFIGS[config])
    context.set_default_timeout(90000)           # the first Check boots Python (seconds on 2 loaded cores)
    if stored:
        context.add_init_script(STORE)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url, wait_until="load")
    return context, page, errors


def check_reference(page, touch, ex=EX, code=REFERENCE):
    page.locator(ex).scroll_into_view_if_needed()
    page.wait_for_selector(f"{ex} .cm-content")
    page.wait_for_function(f"!document.querySelector('{ex} .exercise-check').disabled")
    content = page.locator(f"{ex} .cm-content")
    content.tap() if touch else content.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)
    page.wait_for_function(f"""(code) => [...document.querySelectorAll('{ex} .cm-line')]
        .map((l) => l.textContent).join('\\n').trim() === code.trim()""", arg=code)
    page.evaluate(f"document.querySelector('{ex} .exercise-message').dataset.old = '1'")
    button = page.locator(f"{ex} .exercise-check")
    button.tap() if touch else button.click()
    if touch:   # a tap right after typing was now and then not a click on the loaded machine (notes/old/29.md)
        try:
            page.wait_for_function(f"!document.querySelector('{ex} .exercise-message').dataset.old", timeout=10000)
        except Exception:
            button.tap()
    page.wait_for_function(f"/^Passed/.test(document.querySelector('{ex} .exercise-message')?.textContent)")


def labels(page, ex=EX):
    return page.locator(f"{ex} .exercise-roof svg").evaluate_all("(s) => s.map((x) => x.getAttribute('aria-label'))")


def captions(page, ex=EX):
    return page.locator(f"{ex} .exercise-roof figcaption").all_inner_texts()


def axe(page, where=EX):
    page.add_script_tag(path=str(AXE))
    return page.evaluate(f"""async () => (await axe.run('{where}', {{runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa',
        'wcag22aa', 'best-practice'], resultTypes: ['violations']}})).violations
        .map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', '))""")


@pytest.mark.parametrize("config", ["desktop-light", "phone-dark"])
def test_the_exercise_roofline_offers_the_readers_measured_device(chromium, book_url, config):
    touch = config.startswith("phone")
    context, page, errors = open_page(chromium, book_url + PAGE, config, stored=True)
    try:
        check_reference(page, touch)
        caps = captions(page)
        assert caps[0] == "NVIDIA A100 SXM4 40GB: the datasheet's roofs"
        assert caps[1].startswith("Your GPU: Test Adapter 9000 (measured in this browser). ")
        first, yours = labels(page)
        assert first.startswith("Roofline of NVIDIA A100 SXM4 40GB (fp32): your kernel at 1.75 FLOP per HBM byte")
        # the same kernel under the reader's roofs: 200 GB/s and 5 TFLOP/s (made-up figures)
        assert yours.startswith("Roofline of Your GPU: Test Adapter 9000 (measured in this browser) (fp32): "
                                "your kernel at 1.75 FLOP per HBM byte, 350 GFLOP/s at best")
        assert yours.endswith("The ridge is at 25 FLOP/B.")
        # both devices stored: a choice, reached by the keyboard from the Check button
        pick = page.locator(f"{EX} .exercise-roof-pick select")
        assert pick.locator("option").all_inner_texts() == ["Your GPU: Test Adapter 9000 (measured in this browser)",
                                                           "Your CPU, one core (measured in this browser)"]
        page.locator(f"{EX} .exercise-check").focus()
        for _ in range(40):
            page.keyboard.press("Tab")
            if page.evaluate(f"document.activeElement === document.querySelector('{EX} .exercise-roof-pick select')"):
                break
        else:
            pytest.fail("Tab from Check never reached the device choice")
        pick.select_option(label="Your CPU, one core (measured in this browser)")
        cpu = labels(page)[1]
        assert "your kernel at 1.75 FLOP per HBM byte, 35 GFLOP/s at best" in cpu and cpu.endswith("The ridge is at 2.5 FLOP/B.")
        assert page.locator(f"{EX} .exercise-roof-invite").count() == 0
        if touch:
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert axe(page) == []
        # deleted after the Check: the reader's figure goes, a line leads to the probe
        page.evaluate("window.BookDevice.clear()")
        page.wait_for_function(f"document.querySelector('{EX} .exercise-roof-invite')")
        assert len(labels(page)) == 1
        link = page.locator(f"{EX} .exercise-roof-invite a")
        assert link.inner_text() == "Measure this device"
        assert link.get_attribute("href").endswith("chapters/roofline.html#sec-roofline-yours")
        # measured again (as the probe saves): the same points on the new roofs, no new Check
        page.evaluate(f"window.BookDevice.save({json.dumps(RESULT)})")
        page.wait_for_function(f"document.querySelectorAll('{EX} .exercise-roof svg').length === 2")
        assert labels(page)[1].endswith("The ridge is at 25 FLOP/B.")
    finally:
        context.close()
    assert not errors, errors


def test_with_nothing_measured_the_exercise_invites_the_probe(chromium, book_url):
    context, page, errors = open_page(chromium, book_url + PAGE, "desktop-light", stored=False)
    try:
        check_reference(page, False)
        assert captions(page) == ["NVIDIA A100 SXM4 40GB: the datasheet's roofs"]
        page.locator(f"{EX} .exercise-roof-invite a").click()
        page.wait_for_function("location.hash === '#sec-roofline-yours'")
        assert page.locator("#sec-roofline-yours").is_visible() and page.locator(".device-probe").count() == 1
    finally:
        context.close()
    assert not errors, errors


def test_the_real_probe_on_swiftshader_puts_the_cpu_under_the_exercise(chromium_webgpu, book_url):
    """SwiftShader is a CPU emulating a GPU: the probe stores the CPU as "your device" and not the
    GPU, and the exercise draws the kernel on that CPU's measured roofs."""
    context, page, errors = open_page(chromium_webgpu, book_url + PAGE + "?probe=quick", "desktop-light", stored=False)
    try:
        page.wait_for_function("document.querySelector('.device-probe')?.dataset.wired === '1'")
        page.get_by_role("button", name="Measure this device").click()
        page.wait_for_function("!document.querySelector('.device-probe').dataset.running && window.BookDevice.get()",
                               timeout=120_000)
        dev = page.evaluate("() => window.BookDevice.devices()")
        assert [d["name"] for d in dev] == ["yours-cpu"]
        check_reference(page, False)
        assert captions(page)[1].startswith("Your CPU, one core (measured in this browser). ")
        assert page.locator(f"{EX} .exercise-roof-pick").count() == 0
        ridge = dev[0]["peaks"]["fp32"]["value"] / dev[0]["specs"]["mem_bw"]["value"]
        shown = float(labels(page)[1].rsplit("The ridge is at ", 1)[1].split(" ")[0])
        assert shown == pytest.approx(ridge, rel=5e-3)
    finally:
        context.close()
    assert not errors, errors


def test_the_data_movement_chapter_invites_the_measurement_and_shows_the_readers_threshold(chromium, book_url):
    """The first chapter's threshold (FLOP per byte) of its illustrative laptop, beside the reader's own."""
    context, page, errors = open_page(chromium, book_url + "chapters/data-movement.html", "desktop-light", stored=False)
    try:
        box = page.locator(".measured-ridge")
        assert box.count() == 1 and "can measure it in this browser" in box.inner_text()
        assert box.locator("a").get_attribute("href").endswith("#sec-roofline-yours")
        assert page.locator(".measured-ridge-yours").count() == 0
        # the reader measures in another tab (the roofline chapter's probe stores the result)
        other = context.new_page()
        other.goto(book_url + "index.html", wait_until="load")
        other.evaluate(STORE)
        page.wait_for_function("document.querySelector('.measured-ridge-yours')")
        other.close()
        assert page.locator(".measured-ridge-yours").inner_text().strip() == (
            "Measured in this browser on 2026-11-26 (FP32, not a specification): Your GPU: Test Adapter 9000, "
            "25.0 FLOP per byte; Your CPU, one core, 2.50 FLOP per byte.")
        page.reload(wait_until="load")
        page.wait_for_function("document.querySelector('.measured-ridge-yours')")
        page.evaluate("window.BookDevice.clear()")
        assert page.locator(".measured-ridge-yours").count() == 0
    finally:
        context.close()
    assert not errors, errors


def test_the_measured_device_script_is_fetched_only_where_a_page_shows_a_stored_measurement(chromium, book_url):
    """measured-device.js was on every page (_includes/head.html). Now the first page and a page
    whose parts could show a device (the hardware appendix's table) never fetch it with nothing
    stored; with a measurement stored the first page still does not, and the appendix fetches it
    and shows the measured rows."""
    def visit(path, stored):
        context, page, errors = open_page(chromium, book_url + path, "desktop-light", stored)
        try:
            page.wait_for_function("document.readyState === 'complete'")
            fetched = page.evaluate("performance.getEntriesByType('resource').some((e) => e.name.endsWith('/measured-device.js'))")
            rows = page.locator("#tbl-hardware-summary tr.measured-row")
            if fetched and page.locator("#tbl-hardware-summary").count():
                rows.first.wait_for()
            return fetched, rows.count(), page.evaluate("!!window.BookDevice")
        finally:
            context.close()
            assert not errors, errors

    assert visit("index.html", stored=False) == (False, 0, False)
    assert visit("appendices/hardware.html", stored=False) == (False, 0, False)
    assert visit("index.html", stored=True) == (False, 0, False)
    assert visit("appendices/hardware.html", stored=True) == (True, 2, True)      # Your GPU, Your CPU


def test_a_kernel_without_arithmetic_gets_its_time_bound_on_the_readers_device(chromium, book_url):
    """The GPU chapter's copy: no point on a roofline (no FLOPs), its bytes' time bound instead,
    on the datasheet's bandwidth and on each measured device's."""
    ex, code = "#ex-coalesced-copy", ("from numba import cuda\n\n\n@cuda.jit\ndef copy(A, B, n):\n"
                                      "    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x\n"
                                      "    if i < n:\n        B[i] = A[i]\n")
    context, page, errors = open_page(chromium, book_url + "chapters/gpu.html", "desktop-light", stored=True)
    try:
        check_reference(page, False, ex, code)
        assert captions(page, ex) == ["NVIDIA A100 SXM4 40GB, datasheet bandwidth"]
        lines = page.locator(f"{ex} .exercise-roof-yours").all_inner_texts()
        # 32,768 bytes at the injected 200 GB/s and 20 GB/s
        assert lines == ["On your GPU: Test Adapter 9000 (measured in this browser): time bound 164 ns, the same bytes at 200 GB/s.",
                         "On your CPU, one core (measured in this browser): time bound 1.64 µs, the same bytes at 20 GB/s."]
    finally:
        context.close()
    assert not errors, errors


@pytest.mark.parametrize("config", ["desktop-light", "phone-light"])
def test_the_memory_budget_offers_the_measured_device_with_the_memory_the_reader_sets(chromium, book_url, config):
    """The serving chapter's memory-budget widget: "Your GPU" in its device list; choosing it shows the
    memory control (hidden for a datasheet device), and the time bound uses the measured figures."""
    context, page, errors = open_page(chromium, book_url + "chapters/serving.html", config, stored=True)
    try:
        w = page.locator("#fig-serving-explore")
        w.scroll_into_view_if_needed()
        page.wait_for_function("document.querySelector('#fig-serving-explore select[name=device] option[value=yours-gpu]')")
        memory = w.locator("input[name=your_memory]")
        assert not memory.is_visible()
        w.locator("select[name=device]").select_option("yours-gpu")
        page.wait_for_function("document.querySelector('#fig-serving-explore svg title')?.textContent.includes('your GPU')")
        assert memory.is_visible()
        memory.fill("24")
        memory.press("Tab")
        page.wait_for_function("document.querySelector('#fig-serving-explore').textContent.includes('24.0 GiB, as you set it')")
        text = w.inner_text()
        assert "200 GB/s, 5.00 TFLOP/s FP32" in text and "not a measurement" in text
        if config.startswith("phone"):
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert axe(page, "#fig-serving-explore") == []
        w.locator("select[name=device]").select_option("h100-sxm")
        page.wait_for_function("!document.querySelector('#fig-serving-explore svg title')?.textContent.includes('your GPU')")
        assert not memory.is_visible()
    finally:
        context.close()
    assert not errors, errors
