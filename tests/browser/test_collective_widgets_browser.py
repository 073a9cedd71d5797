"""The collective stepper and the parallelism planner (issue 32) live in Chromium: keys step the
collective with calc's numbers, a screen reader hears each step, a configuration that cannot run
says so without moving the controls, and a finger drags a slider on a phone."""
import widgets
from webwatch import NEXT_FRAMES

from test_widgets_browser import PAGE, after_render, open_live, readouts


def test_the_stepper_steps_by_keyboard_with_calcs_numbers_and_says_each_step(web, site_url):
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="collective-stepper"]')
    slider = root.locator('input[name="step"]')
    assert slider.get_attribute("max") == str(widgets.render("collective-stepper", {})["ranges"]["step"][1])
    root.locator(".widget-svg").focus()
    for _ in range(2):
        after_render(page, root, lambda: page.keyboard.press("ArrowRight"))
    page.wait_for_function("el => el.querySelector('input[name=step]').value === '3'", arg=root.element_handle())
    expected = widgets.render("collective-stepper", {"step": 3})
    assert readouts(root.locator(".widget-readouts")) == dict(expected["readouts"])
    assert root.locator(".widget-live").text_content() == expected["summary"]
    # a switch reduces in two steps: the slider's range follows calc.collectives
    after_render(page, root, lambda: root.locator('input[name="algorithm"][value="switch"]').check())
    page.wait_for_function("el => el.querySelector('input[name=step]').max === '2'", arg=root.element_handle())
    root.locator(".widget-svg").focus()
    after_render(page, root, lambda: page.keyboard.press("End"))
    assert readouts(root.locator(".widget-readouts"))["Step"] == "2 of 2 (multicast)"
    # the buffer slider, moved, says its size as Python's static control does ("64 MiB", not
    # "65,536 KiB"): widgets-host.js's value format is widgets._format_value's
    size, spec = root.locator('input[name="size"]'), next(p for p in widgets.get("collective-stepper").PARAMS if p.name == "size")
    size.focus()
    for key, kib in (("ArrowRight", 131072), ("ArrowRight", 262144), ("Home", 1), ("End", 4194304)):
        after_render(page, root, lambda: page.keyboard.press(key))
        shown = widgets._format_value(spec, kib)
        assert root.locator('label:has(input[name="size"]) output').text_content() == shown == size.get_attribute("aria-valuetext")
    assert web.errors == []


def test_a_plan_that_cannot_run_says_so_and_the_controls_stay_put(web, site_url):
    page = open_live(web, site_url)
    root = page.locator('.widget[data-widget="parallel-planner"]')
    tp = root.locator('input[name="tp"]')
    tp.scroll_into_view_if_needed()
    where = "el => el.querySelector('input[name=tp]').getBoundingClientRect().top + scrollY"
    before = page.evaluate(where, root.element_handle())
    tp.focus()
    after_render(page, root, lambda: page.keyboard.press("End"))          # TP 64 on 64 GPUs: 64 heads, 8 KV heads
    message = root.locator(".widget-message")
    assert message.is_visible() and "cannot run" in message.inner_text()
    assert "does not divide" in message.inner_text()
    assert page.evaluate(where, root.element_handle()) == before
    # back to TP 8: the message goes, the numbers are calc's
    for _ in range(3):
        after_render(page, root, lambda: page.keyboard.press("ArrowLeft"))
    assert message.is_hidden()
    assert readouts(root.locator(".widget-readouts")) == dict(widgets.render("parallel-planner", {})["readouts"])
    assert web.errors == []


def test_a_finger_drags_the_planners_gpu_slider_on_a_phone(browser, site_url):
    from webwatch import watch
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                              device_scale_factor=2)
    web = watch(ctx, allow=("http://127.0.0.1",))
    try:
        page = open_live(web, site_url, PAGE)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        root = page.locator('.widget[data-widget="parallel-planner"]')
        slider = root.locator('input[name="gpus"]')
        slider.scroll_into_view_if_needed()
        page.evaluate(NEXT_FRAMES)
        box = slider.bounding_box()
        y = box["y"] + box["height"] / 2
        start = slider.input_value()
        cdp = ctx.new_cdp_session(page)
        thumb_x = box["x"] + (float(start) - 3) / (14 - 3) * box["width"]
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": thumb_x, "y": y}]})
        for i in range(1, 9):
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": thumb_x + 12 * i, "y": y}]})
            page.evaluate(NEXT_FRAMES)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        page.wait_for_function("([el, v]) => el.value !== v", arg=[slider.element_handle(), start])
        page.wait_for_function("el => !BookWidgets.busy(el)", arg=root.element_handle())
        gpus = 2 ** int(slider.input_value())
        assert gpus > 64
        assert readouts(root.locator(".widget-readouts"))["Degrees"].endswith(f"= {gpus:,} GPUs")
        assert web.errors == []
    finally:
        ctx.close()


# Each label's laid-out box (getBBox) against the figure's viewBox: SVG text does not wrap, and a
# label longer than its room is cut off at the figure's edge (the planner's heading was, at 340 px).
OUTSIDE = """() => { const svg = document.querySelector('svg'); const w = svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBBox()])
    .filter(([, b]) => b.x < -0.5 || b.x + b.width > w + 0.5).map(([s, b]) => [s, Math.round(b.x), Math.round(b.x + b.width), w]); }"""


def test_no_label_runs_off_the_figure(web):
    from pathlib import Path
    css = (Path(__file__).resolve().parents[2] / "assets" / "css" / "widgets.css").read_text()
    found = []
    for name in ("collective-stepper", "parallel-planner"):
        cases = widgets.states(name) + [dict(c, step=s) for c in widgets.states(name)[:8] for s in (0, 1, 10**6)
                                         if name == "collective-stepper"]
        for width in (300, 340, 640):
            for case in cases:
                svg = widgets.render(name, {**case, "_width": width})["svg"]
                # the book's body font (palette.css --font-body), which the figures' text inherits
                web.page.set_content(f"<style>{css} body{{font-family:Charter,'Bitstream Charter','Iowan Old Style',Georgia,serif}}</style>"
                                     f"<div class='widget-svg'>{svg}</div>")
                found += [(name, width, case, t) for t in web.page.evaluate(OUTSIDE)]
    assert found == [], "\n".join(map(str, found[:20]))
