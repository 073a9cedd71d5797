""""Run on an NVIDIA GPU" in the built book, in Chromium (issue #41): at 1440 px by keyboard (Tab to the
button, Enter) and at 390 px by touch (a tap), after a Check of the reference: the page saves one
Python script (a Blob download, nothing fetched), which runs under Numba's CUDA simulator here and
prints PASS, the Nsight Compute command and the page's figures beside it. The button is labelled,
axe-clean, and at 390 px covers nothing and widens nothing. Screenshots go to $SHOTS_DIR when set."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from a11y_site import AXE, CONFIGS, serve  # noqa: E402  (same folder)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernels"))
from numba_dialect import SOLUTIONS  # noqa: E402

pytestmark = pytest.mark.browser
CHAPTER = "chapters/gpu.html"
EX = "#ex-coalesced-copy"
BUTTON = f"{EX} .exercise-gpu"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


@pytest.fixture(scope="module")
def book(built_book):
    server = serve(built_book)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def put_code(page, code, touch):
    content = page.locator(f"{EX} .cm-content")
    content.tap() if touch else content.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)
    page.wait_for_function(f"""(code) => [...document.querySelectorAll('{EX} .cm-line')]
        .map((l) => l.textContent).join('\\n').trim() === code.trim()""", arg=code)


def wait_message(page, pattern):
    page.wait_for_function(f"""(p) => new RegExp(p).test(document.querySelector('{EX} .exercise-message').textContent)""",
                           arg=pattern)
    return page.locator(f"{EX} .exercise-message").inner_text()


def overlaps(a, b) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


@pytest.mark.parametrize("config", ["desktop-light", "phone-light"])
def test_the_gpu_script_downloads_and_runs_under_numbas_simulator(chromium, book, config, tmp_path):
    pytest.importorskip("numba", reason="numba (requirements.txt, tests) runs the saved script")
    touch = config.startswith("phone")
    context = chromium.new_context(accept_downloads=True, **CONFIGS[config])
    context.set_default_timeout(60000)
    page = context.new_page()
    errors, requests = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(book + CHAPTER, wait_until="load")
        page.locator(EX).scroll_into_view_if_needed()
        page.wait_for_selector(f"{EX} .cm-content")
        page.wait_for_function(f"!document.querySelector('{BUTTON}').disabled")
        button = page.locator(EX).get_by_role("button", name="Run on an NVIDIA GPU")
        assert button.count() == 1
        assert "saves a Python script" in page.evaluate(
            f"document.getElementById(document.querySelector('{BUTTON}').getAttribute('aria-describedby')).textContent")
        # the reference, checked: its figures go into the script
        reference = page.evaluate(f"document.querySelector('{EX}-solution pre code').textContent")
        put_code(page, reference, touch)
        check = page.locator(f"{EX} .exercise-check")
        check.tap() if touch else check.click()
        assert wait_message(page, "^(Passed|Not yet)").startswith("Passed")
        # the kernel a GPU runs: the page's own once it is Numba CUDA, until then the same kernel by hand
        kernel = reference if "cuda." in reference else SOLUTIONS["ex-coalesced-copy"]
        put_code(page, kernel, touch)
        page.on("request", lambda r: requests.append(r.url))
        with page.expect_download() as got:
            if touch:
                button.tap()
            else:                                   # the keyboard: Tab from the button before it, Enter
                page.locator(f"{EX} .exercise-show-solution").focus()
                page.keyboard.press("Tab")
                assert page.evaluate("document.activeElement.classList.contains('exercise-gpu')")
                page.keyboard.press("Enter")
        download = got.value
        assert download.suggested_filename == "ex-coalesced-copy.py"
        path = tmp_path / download.suggested_filename
        download.save_as(path)
        assert not [u for u in requests if u.startswith("http")], requests   # made in the page, no server
        said = wait_message(page, "^Saved ")
        assert "python3 ex-coalesced-copy.py" in said and "beside its counters" in said
        # at 390 px: nothing wider than the phone, and the button covers none of its neighbours
        if touch:
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
        box = button.bounding_box()
        for other in page.locator(f"{EX} .exercise-actions button, {EX} .exercise-gpu-note, {EX} .exercise-status").all():
            if other.evaluate("(e) => e.classList.contains('exercise-gpu')"):
                continue
            assert not overlaps(box, other.bounding_box()), other.evaluate("(e) => e.outerHTML.slice(0, 80)")
        centre = page.evaluate("""(b) => document.elementFromPoint(b.x + b.width / 2, b.y + b.height / 2)
            .classList.contains('exercise-gpu')""", box)
        assert centre, "something covers the button"
        if os.environ.get("SHOTS_DIR"):
            page.locator(f"{EX} .exercise-actions").scroll_into_view_if_needed()
            page.screenshot(path=str(Path(os.environ["SHOTS_DIR"]) / f"gpu-button-{config}.png"))
        page.add_script_tag(path=str(AXE))
        found = page.evaluate("""async (tags) => {
          const r = await axe.run(document.querySelector('#ex-coalesced-copy'),
                                  { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
          return r.violations.map((v) => v.id + ": " + v.nodes.map((n) => n.target.join(" ")).join(", "));
        }""", TAGS)
        assert found == []
    finally:
        context.close()
    assert not errors, errors
    text = path.read_text()
    assert kernel.strip() in text
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**env, "NUMBA_ENABLE_CUDASIM": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS ex-coalesced-copy" in proc.stdout
    assert "ncu --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum," in proc.stdout
    assert "the page's last Check, size 4,096" in proc.stdout
    sectors = next(ln for ln in proc.stdout.splitlines() if ln.strip().startswith("global load sectors"))
    assert re.search(r"\s512\s*$", sectors), sectors         # 4,096 FP32 values: 16 KiB, 512 sectors of 32 B
