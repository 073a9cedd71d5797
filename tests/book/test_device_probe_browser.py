"""The device probe on the real book (issue 30), in Chromium: with WebGPU on SwiftShader it measures
the GPU and the CPU, its figures are positive and consistent, the result persists, becomes "your
device" in the roofline widget and the hardware appendix, and delete removes it; without WebGPU,
or with Save-Data, it says so and measures the CPU only; axe finds nothing in the probe's box.

The probe runs in its quick mode (``?probe=quick``: small arrays, short batches), which is the
same code with smaller numbers; benchmarks/device_probe_bench.py runs the full one."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(Path(__file__).parent))
from webwatch import watch  # noqa: E402
from a11y_site import AXE  # noqa: E402

pytestmark = pytest.mark.browser

PAGE = "chapters/roofline.html?probe=quick"
APPENDIX = "appendices/hardware.html"
WIDGET = "#fig-roofline-explorer .widget, .widget[data-widget=roofline]"
STORED = "() => window.BookDevice.get()"
DEVICE_OPTIONS = """() => [...document.querySelector('.widget[data-widget=roofline] select[name=device]').options]
  .map(o => o.value).filter(v => v.startsWith('yours-'))"""


def open_page(browser, url, viewport=None, init=None):
    ctx = browser.new_context(viewport=viewport or {"width": 1440, "height": 900})
    if init:
        ctx.add_init_script(init)
    w = watch(ctx, allow=("http://127.0.0.1",))
    w.page.goto(url)
    w.page.wait_for_function("window.BookDevice && document.querySelector('.device-probe')?.dataset.wired === '1'")
    return w


def measure(page):
    page.get_by_role("button", name="Measure this device").click()
    page.wait_for_function("!document.querySelector('.device-probe').dataset.running && window.BookDevice.get()",
                           timeout=120_000)
    return page.evaluate(STORED)


def positive(f):
    return f["median"] > 0 and 0 < f["lo"] <= f["median"] <= f["hi"] and f["n"] >= 1


def test_probe_on_swiftshader_measures_persists_and_becomes_your_device(chromium_webgpu, book_url_gz):
    w = open_page(chromium_webgpu, book_url_gz + PAGE)
    page = w.page
    probe = page.locator(".device-probe")
    assert "GPU through WebGPU" in probe.locator(".device-probe-plan").inner_text()
    assert page.evaluate(STORED) is None and page.evaluate(DEVICE_OPTIONS) == []
    r = measure(page)

    # The GPU: SwiftShader, found out as a software adapter; every figure positive and consistent.
    assert r["gpuStatus"] == "ok", r.get("gpuError")
    gpu = r["gpu"]
    assert gpu["software"] is True
    for k in ("read", "write", "copy", "fma32"):
        assert positive(gpu[k]), (k, gpu[k])
    assert gpu["copy"]["median"] <= gpu["read"]["hi"] + gpu["write"]["hi"]
    assert [s["stride"] for s in gpu["strided"]] == [1, 2, 4, 8, 16, 32, 64]
    assert all(positive(s) for s in gpu["strided"])
    # The CPU through WebAssembly SIMD.
    cpu = r["cpu"]
    for k in ("read", "write", "copy", "fma"):
        assert positive(cpu[k]), (k, cpu[k])
    assert cpu["copy"]["median"] <= cpu["read"]["hi"] + cpu["write"]["hi"]
    assert cpu["fma"]["fused"] is True          # Chromium has relaxed SIMD

    # What the reader reads: the software adapter named as a CPU emulation, not offered as a GPU.
    text = probe.inner_text()
    assert "software one" in text and "not a GPU's" in text and "FP32 FMA" in text
    assert "stride 64" in text and "H100 SXM" in text
    assert page.evaluate(DEVICE_OPTIONS) == ["yours-cpu"]

    # "Your CPU" drawn by the roofline widget, its numbers the stored ones.
    widget = page.locator(".widget[data-widget=roofline]").first
    page.wait_for_function("[...document.querySelectorAll('.widget[data-widget=roofline]')].every(w => w.dataset.state === 'live')",
                           timeout=60_000)
    widget.locator("select[name=device]").select_option("yours-cpu")
    page.wait_for_function("document.querySelector('.widget[data-widget=roofline] svg title').textContent.startsWith('Roofline of your CPU')",
                           timeout=30_000)
    readouts = dict(widget.locator(".widget-readouts div").evaluate_all("rows => rows.map(r => [r.firstChild.textContent, r.lastChild.textContent])"))
    dev = page.evaluate("() => BookDevice.device('yours-cpu')")
    from calc import fmt
    assert readouts["Memory bandwidth"] == fmt.si(dev["specs"]["mem_bw"]["value"], "B/s")
    assert readouts["Peak"] == fmt.si(dev["peaks"]["fp32"]["value"], "FLOP/s")
    assert "no measured BF16 peak" in widget.locator(".widget-message").inner_text()
    assert w.errors == [] and w.outside == []

    # Reload: still there, in the probe's box and the widget's list.
    page.reload()
    page.wait_for_function("document.querySelector('.device-probe')?.dataset.wired === '1'")
    assert page.evaluate(STORED) == r
    assert page.evaluate(DEVICE_OPTIONS) == ["yours-cpu"]
    assert probe.get_by_role("button", name="Delete the measurement").is_visible()

    # The hardware appendix: a row labelled as measured, not as a specification.
    page.goto(book_url_gz + APPENDIX)
    row = page.locator("#tbl-hardware-summary tr.measured-row")
    row.first.wait_for()                     # measured-device.js comes after the page's parse
    assert row.count() == 1
    assert "measured in this browser" in row.inner_text() and "not a specification" in row.inner_text()

    # Delete: gone from storage, the widget's list and the appendix.
    page.goto(book_url_gz + PAGE)
    page.wait_for_function("document.querySelector('.device-probe')?.dataset.wired === '1'")
    page.get_by_role("button", name="Delete the measurement").click()
    assert page.evaluate(STORED) is None
    assert page.evaluate(DEVICE_OPTIONS) == []
    assert "deleted" in probe.locator(".device-probe-status").inner_text()
    page.goto(book_url_gz + APPENDIX)                 # nothing stored: measured-device.js is not even fetched
    page.wait_for_function("document.readyState === 'complete'")
    assert page.locator("tr.measured-row").count() == 0 and page.evaluate("!window.BookDevice")
    assert w.errors == [] and w.outside == []
    w.context.close()


def test_deleting_the_device_a_widget_draws_puts_back_its_default(chromium_webgpu, book_url_gz):
    w = open_page(chromium_webgpu, book_url_gz + PAGE, init="navigator.connection && Object.defineProperty(navigator.connection, 'saveData', {value: true});")
    page = w.page
    assert "Save-Data is on" in page.locator(".device-probe-plan").inner_text()
    r = measure(page)
    assert r["gpuStatus"] == "save-data" and "gpu" not in r      # nothing asked of the GPU
    assert "Save-Data is on, so only the CPU was measured" in page.locator(".device-probe").inner_text()
    widget = page.locator(".widget[data-widget=roofline]").first
    widget.locator("select[name=device]").focus()              # Save-Data: the runtime loads when touched
    page.wait_for_function("document.querySelector('.widget[data-widget=roofline]').dataset.state === 'live'", timeout=60_000)
    widget.locator("select[name=device]").select_option("yours-cpu")
    page.wait_for_function("document.querySelector('.widget[data-widget=roofline] svg title').textContent.startsWith('Roofline of your CPU')",
                           timeout=30_000)
    page.get_by_role("button", name="Delete the measurement").click()
    page.wait_for_function("document.querySelector('.widget[data-widget=roofline] svg title').textContent.startsWith('Roofline of the NVIDIA H100')",
                           timeout=30_000)
    assert widget.locator("select[name=device]").input_value() == "h100-sxm"
    assert w.errors == [] and w.outside == []
    w.context.close()


def test_without_webgpu_the_probe_measures_the_cpu_only(chromium, book_url_gz):
    """The suite's Chromium has --disable-gpu: WebGPU gives no adapter. With navigator.gpu removed
    too, the page says before the click that it will measure the CPU only."""
    w = open_page(chromium, book_url_gz + PAGE)
    r = measure(w.page)
    assert r["gpuStatus"] == "no-adapter" and "gpu" not in r and positive(r["cpu"]["read"])
    assert "WebGPU gave no adapter" in w.page.locator(".device-probe").inner_text()
    assert "Only the CPU was measured" in w.page.locator(".device-probe").inner_text()
    w.page.get_by_role("button", name="Delete the measurement").click()
    w.context.close()

    w = open_page(chromium, book_url_gz + PAGE, init="delete Navigator.prototype.gpu;")
    assert "This browser has no WebGPU, so the probe will measure the CPU only" in w.page.locator(".device-probe-plan").inner_text()
    r = measure(w.page)
    assert r["gpuStatus"] == "none" and positive(r["cpu"]["fma"])
    assert "this browser has no WebGPU" in w.page.locator(".device-probe").inner_text()
    assert w.errors == [] and w.outside == []
    w.context.close()


@pytest.mark.parametrize("viewport", [{"width": 1440, "height": 900}, {"width": 390, "height": 844}], ids=["1440px", "390px"])
def test_the_probe_is_keyboard_usable_and_axe_clean(chromium_webgpu, book_url_gz, viewport):
    w = open_page(chromium_webgpu, book_url_gz + PAGE, viewport=viewport)
    page = w.page
    run = page.get_by_role("button", name="Measure this device")
    run.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("!document.querySelector('.device-probe').dataset.running && window.BookDevice.get()", timeout=120_000)
    box = page.locator(".device-probe")
    if viewport["width"] == 390:   # nothing wider than the phone's screen but the tables' own scroll boxes
        assert box.evaluate("b => b.scrollWidth <= b.clientWidth + 1")
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => (await axe.run('.device-probe', {resultTypes: ['violations']}))
        .violations.map(v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', '))""")
    assert found == []
    page.get_by_role("button", name="Delete the measurement").click()
    assert w.errors == [] and w.outside == []
    w.context.close()


def test_a_gpu_part_stopped_at_its_cap_keeps_what_it_measured(chromium_webgpu, book_url_gz):
    """The GPU part's time cap (7 s in full; 1 ms here, through the quick mode's probe-gpu-cap) ends
    it after its first step (read, write and copy, measured in turn): those are kept and shown, the reader is told the rest is missing,
    a GPU without its FMA figure is no device of the book_url_gz, and the CPU is measured all the same."""
    w = open_page(chromium_webgpu, book_url_gz + PAGE + "&probe-gpu-cap=1")
    r = measure(w.page)
    gpu = r["gpu"]
    assert r["gpuStatus"] == "ok" and positive(gpu["read"]) and positive(gpu["copy"])
    assert "fma32" not in gpu and gpu["strided"] == []
    assert gpu["stopped"] == "the GPU part reached its 0.001 s cap before FP32 FMA"
    text = w.page.locator(".device-probe").inner_text()
    assert "The GPU part stopped early: it reached its 0.001 s cap before FP32 FMA" in text   # said once (#47)
    assert "GPU strided read" not in text
    assert positive(r["cpu"]["copy"]) and w.page.evaluate(DEVICE_OPTIONS) == ["yours-cpu"]
    assert w.errors == [] and w.outside == []
    w.context.close()


def test_the_result_says_each_thing_once_and_what_the_strided_curve_shows(chromium, book_url_gz):
    """Issue #47: "Done in 12.5 s" twice (the status and the result's first line); "The GPU part
    stopped early: the GPU part reached its 7 s cap"; "the fall with the stride is what coalescing
    saves" above figures that rise (SwiftShader: stride 1 at 110-160 MB/s, stride 2 at 159-210)."""
    w = open_page(chromium, book_url_gz + PAGE)
    page = w.page
    r = measure(page)                                    # the CPU part (this Chromium has no WebGPU)
    status = page.locator(".device-probe-status").inner_text()
    assert status.startswith("Done") and " s" not in status.split(":")[0], status
    assert page.locator(".device-probe").inner_text().count(f"{r['elapsedMs'] / 1000:.1f} s") == 1
    f = lambda v: {"median": v, "lo": v * 0.9, "hi": v * 1.1, "n": 5, "unit": "B/s"}
    for rising, says in ((True, "Here it does not fall (stride 1: 110 MB/s; stride 32: 210 MB/s): this adapter runs on the CPU"),
                         (False, "the fall with the stride is what coalescing saves")):
        speeds = (110e6, 160e6, 210e6) if rising else (300e9, 40e9, 10e9)
        r["gpu"] = {"adapter": {"description": "SwiftShader"}, "software": rising, "bytes": 2**20, "read": f(1e9),
                    "write": f(1e9), "copy": f(1e9), "fma32": {**f(1e9), "unit": "FLOP/s"},
                    "stopped": "the GPU part reached its 7 s cap before FP16 FMA",
                    "strided": [{**f(v), "stride": s} for v, s in zip(speeds, (1, 2, 32))]}
        page.evaluate("(r) => window.BookDevice.save(r)", r)
        text = page.locator(".device-probe").inner_text()
        assert says in text, text
        assert "The GPU part stopped early: it reached its 7 s cap before FP16 FMA." in text
        assert ("the fall with the stride is what coalescing saves" in text) is not rising
    page.get_by_role("button", name="Delete the measurement").click()
    assert w.errors == [] and w.outside == []
    w.context.close()
