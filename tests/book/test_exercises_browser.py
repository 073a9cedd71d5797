"""Exercises in the built book_url, in Chromium at 1440 px and at 390 px with touch (issue #29): the
editor loads only when the reader reaches an exercise; a wrong kernel is told what is wrong and
where; the reference passes with its budgets, counts and roofline/bytes figure; a reload keeps the
code and the solved state; Stop ends a `while True: pass` kernel and the page stays usable;
hints open one at a time, Start over hides them, the solution waits for a confirmation; the index
page's progress line counts what this browser solved; axe finds nothing on a checked exercise."""
from __future__ import annotations

import re

import pytest

from a11y_site import AXE, CONFIGS  # noqa: E402  (same folder)

pytestmark = pytest.mark.browser
CHAPTER = "chapters/gpu.html"
EX = "#ex-coalesced-copy"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]

WRONG = """from numba import cuda


@cuda.jit
def copy(A, B, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n - 1:
        B[i] = A[i]
"""
OUT_OF_BOUNDS = """from numba import cuda


@cuda.jit
def copy(A, B, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    B[i] = A[i]
"""
REFERENCE = """from numba import cuda


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


def gpu_exercises(built_book) -> int:
    """How many exercises the GPU chapter has, counted in its built page (not a number to keep in step)."""
    return (built_book / "chapters" / "gpu.html").read_text(encoding="utf-8").count('<section class="exercise"')


def open_page(chromium, url, config):
    context = chromium.new_context(**CONFIGS[config])
    context.set_default_timeout(60000)          # the first Check boots Python (seconds on 2 loaded cores)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url, wait_until="load")
    return context, page, errors, requests


def press(page, locator, touch):
    if touch:
        locator.tap()
    else:
        locator.click()


def reach(page):
    page.locator(EX).scroll_into_view_if_needed()
    page.wait_for_selector(f"{EX} .cm-content")
    page.wait_for_function(f"!document.querySelector('{EX} .exercise-check').disabled")


def type_code(page, code, touch):
    content = page.locator(f"{EX} .cm-content")
    press(page, content, touch)
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)
    page.wait_for_function("""(code) => [...document.querySelectorAll('#ex-coalesced-copy .cm-line')]
        .map((l) => l.textContent).join('\\n').trim() === code.trim()""", arg=code)


def editor_text(page):
    return page.evaluate(f"[...document.querySelectorAll('{EX} .cm-line')].map((l) => l.textContent).join('\\n')")


def message(page):
    return page.locator(f"{EX} .exercise-message").inner_text()


def check(page, touch, expect):
    # each answer is a new message element: mark the old one, wait for one that is not it
    page.evaluate(f"document.querySelector('{EX} .exercise-message').dataset.old = '1'")
    press(page, page.locator(f"{EX} .exercise-check"), touch)
    if touch:
        # On the loaded 2-core test machine, a tap on Check right after typing in the editor was now
        # and then not turned into a click (3 of 8 runs; never on desktop, never by hand): give the
        # reader's second tap if the first started nothing within 10 s (see /work/notes/29.md).
        try:
            page.wait_for_function(f"!document.querySelector('{EX} .exercise-message').dataset.old", timeout=10000)
        except Exception:
            press(page, page.locator(f"{EX} .exercise-check"), touch)
    page.wait_for_function(f"""(() => {{ const m = document.querySelector('{EX} .exercise-message');
        return !m.dataset.old && /^(Passed|Not yet)/.test(m.textContent); }})()""")
    text = message(page)
    assert text.startswith(expect), text
    return text


@pytest.mark.parametrize("config", ["desktop-light", "phone-light"])
def test_wrong_then_right_then_reload(chromium, book_url, config, built_book):
    touch = config.startswith("phone")
    context, page, errors, requests = open_page(chromium, book_url + CHAPTER, config)
    try:
        # nothing of the editor or of Python before the reader comes near the exercise
        assert not [u for u in requests if re.search(r"editor\.js|exercises\.js|pyodide|widgets-worker", u)], requests
        reach(page)
        assert "def copy" in editor_text(page)
        # a kernel that misses the last element: the element, expected and got, the size
        type_code(page, WRONG, touch)
        text = check(page, touch, "Not yet")
        assert re.search(r"size 1: B\[0\] was never written, expected -?\d", text), text
        # an unguarded one: the reader's own line, and the editor marks it
        type_code(page, OUT_OF_BOUNDS, touch)
        text = check(page, touch, "Not yet")
        assert "line 7" in text and "outside global array A" in text, text
        assert page.locator(f"{EX} .cm-line.exercise-bad-line").inner_text().strip() == "B[i] = A[i]"
        # the starter: correct, but its budget says which figure is wrong and where
        press(page, page.locator(f"{EX} .exercise-reset"), touch)
        text = check(page, touch, "Not yet")
        assert "sectors_per_request is 32 at size 4,096, the budget is <= 4" in text and "line 7" in text, text
        rows = page.locator(f"{EX} .exercise-results table").first.locator("tbody tr")
        assert rows.first.locator("td").nth(1).inner_text() == "32"
        # the reference passes, with budgets, per-line counts and the bytes figure
        type_code(page, REFERENCE, touch)
        check(page, touch, "Passed")
        budgets = page.locator(f"{EX} .exercise-results table").first
        assert budgets.locator("tbody tr").first.locator("td").nth(1).inner_text() == "4"
        assert budgets.locator("td.no").count() == 0
        lines = page.locator(f"{EX} .exercise-results table").nth(1)
        assert "B[i] = A[i]" in lines.inner_text()
        fig = page.locator(f"{EX} .exercise-roof svg")
        assert "HBM bytes: yours 32,768, reference 32,768, least possible 32,768" in fig.get_attribute("aria-label")
        assert page.locator(f"{EX}.solved").count() == 1
        # the reader's screen: nothing wider than the phone
        if touch:
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.reload(wait_until="load")
        reach(page)
        assert editor_text(page).strip() == REFERENCE.strip()
        assert page.locator(f"{EX}.solved").count() == 1
        # the index page counts it
        page.goto(book_url + "index.html", wait_until="load")
        page.wait_for_function("document.querySelector('.exercise-progress-count').textContent.includes('solved')")
        assert f"Inside a GPU: 1 of {gpu_exercises(built_book)} solved" in page.locator(
            ".exercise-progress li", has_text="Inside a GPU").inner_text()     # then the problems' count
    finally:
        context.close()
    assert not errors, errors


def test_on_a_widget_page_the_exercises_wait_for_the_widgets_runtime_then_check(chromium, book_url):
    """Landing on the roofline widget with an exercise just above it: the exercises' script (the
    editor's 370 kB) and their own Python start only once the widgets' runtime has started and
    stored its snapshot, so they do not take the CPU the widget's start needs; the exercise then
    works, its Python from exercises-py.zip, which only the exercises' worker fetches."""
    ex = "#ex-roofline-horner"
    context, page, errors, requests = open_page(chromium, book_url + "chapters/roofline.html#sec-roofline-widget",
                                                "desktop-light")
    try:
        page.wait_for_function("document.querySelector('[data-widget=roofline]').dataset.state === 'live'")
        page.wait_for_function("window.BookWidgets.runtimeSettled")
        page.wait_for_selector(f"{ex} .cm-content")
        started = page.evaluate("""() => {
            const e = performance.getEntriesByType('resource').find((r) => /exercises\\.js$/.test(r.name));
            return [e && e.startTime, BookWidgets.stats.runtimeSettledAt, BookWidgets.stats.liveAt.roofline]; }""")
        assert started[0] is not None and started[0] >= started[1] >= started[2] - 1, started
        page.wait_for_function(f"!document.querySelector('{ex} .exercise-check').disabled")
        solution = page.evaluate(f"document.querySelector('{ex}-solution pre code').textContent")
        content = page.locator(f"{ex} .cm-content")
        content.click()
        page.keyboard.press("Control+A")
        page.keyboard.press("Delete")
        page.keyboard.insert_text(solution)
        page.locator(f"{ex} .exercise-check").click()
        page.wait_for_function(f"/^(Passed|Not yet)/.test(document.querySelector('{ex} .exercise-message').textContent)")
        assert page.locator(f"{ex} .exercise-message").inner_text().startswith("Passed")
        assert [u for u in requests if "exercises-py.zip" in u], "the exercises' worker fetched its archive"
    finally:
        context.close()
    assert not errors, errors


def test_stop_ends_a_runaway_kernel_and_the_page_stays_usable(chromium, book_url):
    context, page, errors, _ = open_page(chromium, book_url + CHAPTER, "desktop-light")
    try:
        reach(page)
        type_code(page, FOREVER, False)
        page.locator(f"{EX} .exercise-run").click()
        page.wait_for_function(f"!document.querySelector('{EX} .exercise-stop').disabled")
        page.wait_for_function(f"document.querySelector('{EX} .exercise-message').textContent.startsWith('Running')")
        # the page answers while the kernel spins (the worker, not the page, is busy)
        assert page.evaluate("1 + 1") == 2
        # a plain static host: not cross-origin isolated, so Stop terminates the worker and starts
        # another (tests/book/test_isolation_browser.py: in place where the page is isolated)
        assert page.evaluate("[crossOriginIsolated, window.BookExercises.interruptible]") == [False, False]
        page.locator(f"{EX} .exercise-stop").click()
        assert message(page).startswith("Stopped") and "Python restarted" in message(page)
        assert page.evaluate("window.BookExercises.workersStarted") == 2
        assert page.locator(f"{EX} .exercise-run").is_enabled()
        type_code(page, REFERENCE, False)
        page.locator(f"{EX} .exercise-run").click()
        page.wait_for_function(f"document.querySelector('{EX} .exercise-message').textContent.startsWith('Ran at size')")
        assert "B = [" in page.locator(f"{EX} .exercise-results pre").inner_text()
    finally:
        context.close()
    assert not errors, errors


def test_hints_one_at_a_time_start_over_and_a_confirmed_solution(chromium, book_url):
    context, page, errors, _ = open_page(chromium, book_url + CHAPTER, "desktop-light")
    try:
        reach(page)
        hints = page.locator(f"{EX} .exercise-hint")
        assert hints.count() == 2 and not hints.nth(0).is_visible()
        nxt = page.locator(f"{EX} .exercise-hint-next")
        nxt.click()
        assert hints.nth(0).is_visible() and not hints.nth(1).is_visible()
        nxt.click()
        assert hints.nth(1).is_visible() and nxt.is_disabled()
        type_code(page, "def copy(A, B, n):\n    pass\n", False)
        page.locator(f"{EX} .exercise-reset").click()
        assert not hints.nth(0).is_visible() and not hints.nth(1).is_visible() and nxt.is_enabled()
        assert "cuda.threadIdx.x * cuda.gridDim.x" in editor_text(page)
        solution = page.locator(f"{EX} .exercise-solution")
        page.once("dialog", lambda d: d.dismiss())
        page.locator(f"{EX} .exercise-show-solution").click()
        assert not solution.is_visible()
        page.once("dialog", lambda d: d.accept())
        page.locator(f"{EX} .exercise-show-solution").click()
        assert solution.is_visible()
        # keyboard: Escape then Tab leaves the editor for the next control
        page.locator(f"{EX} .cm-content").click()
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.classList.contains('cm-content')")
        page.keyboard.press("Escape")
        page.keyboard.press("Tab")
        assert not page.evaluate("document.activeElement.classList.contains('cm-content')")
    finally:
        context.close()
    assert not errors, errors


@pytest.mark.parametrize("config", list(CONFIGS))
def test_no_axe_violations_on_a_checked_exercise(chromium, book_url, config):
    context, page, errors, _ = open_page(chromium, book_url + CHAPTER, config)
    try:
        reach(page)
        page.locator(f"{EX} .exercise-hint-next").click()
        check(page, False, "Not yet")
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


def test_index_progress_export_reset_import(chromium, book_url, tmp_path, built_book):
    context, page, errors, _ = open_page(chromium, book_url + "index.html", "phone-light")
    try:
        page.evaluate("""localStorage.setItem('book-exercises', JSON.stringify(
            {'ex-coalesced-copy': {code: 'def copy(A, B, n):\\n    pass\\n', solved: true, updated: '2026-01-01T00:00:00Z'}}))""")
        page.reload(wait_until="load")
        line = page.locator(".exercise-progress li", has_text="Inside a GPU")
        page.wait_for_function("document.querySelector('.exercise-progress-count').textContent.includes('solved')")
        assert line.locator(".exercise-progress-count").inner_text() == f"1 of {gpu_exercises(built_book)} solved"
        with page.expect_download() as dl:
            page.locator(".exercise-export").tap()
        saved = tmp_path / "progress.json"
        dl.value.save_as(saved)
        assert '"ex-coalesced-copy"' in saved.read_text() and '"solved": true' in saved.read_text()
        page.once("dialog", lambda d: d.accept())
        page.locator(".exercise-reset-all").tap()
        assert line.locator(".exercise-progress-count").inner_text() == f"0 of {gpu_exercises(built_book)} solved"
        assert page.evaluate("localStorage.getItem('book-exercises')") is None
        with page.expect_file_chooser() as fc:
            page.locator(".exercise-import-open").tap()
        fc.value.set_files(str(saved))
        page.wait_for_function("document.querySelector('.exercise-progress-status').textContent.startsWith('Imported')")
        assert line.locator(".exercise-progress-count").inner_text() == f"1 of {gpu_exercises(built_book)} solved"
    finally:
        context.close()
    assert not errors, errors


ROOF_CLASHES = """(ex) => {
    const svg = document.querySelector(`${ex} .exercise-roof svg`);
    const box = (e) => e.getBBox();
    const meet = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
    const axis = [...svg.querySelectorAll('line')].find((l) => l.getAttribute('x1') === l.getAttribute('x2'));
    const ax = Number(axis.getAttribute('x1'));
    const texts = [...svg.querySelectorAll('text')];
    const names = texts.filter((t) => ['your kernel', 'reference'].includes(t.textContent));
    const path = svg.querySelector('path');
    const roof = Array.from({ length: 200 }, (_, i) => path.getPointAtLength(path.getTotalLength() * i / 199));
    const overlaps = [];
    names.forEach((t, i) => {
      const b = box(t);
      for (const u of names.slice(i + 1)) if (meet(b, box(u))) overlaps.push(`${t.textContent} / ${u.textContent}`);
      for (const c of svg.querySelectorAll('circle')) if (meet(b, box(c))) overlaps.push(`${t.textContent} / a dot`);
      if (roof.some((p) => p.x > b.x && p.x < b.x + b.width && p.y > b.y && p.y < b.y + b.height)) overlaps.push(`${t.textContent} / the roof`);
    });
    return { axis: texts.filter((t) => { const b = box(t); return b.x < ax && b.x + b.width > ax; }).map((t) => t.textContent),
             overlaps };
}"""


@pytest.mark.parametrize("config,chapter,ex", [("desktop-light", "roofline", "#ex-roofline-fuse"),
                                               ("phone-light", "gpu", "#ex-gpu-divergence")])
def test_results_show_their_figures_whole_tables_unscrolled_roofline_uncrossed(chromium, book_url, config, chapter, ex):
    """Issue #47: the per-line table's code column (trailing comments) pushed the counts out of a box
    that scrolled with no cue, clipped its "Code" header and, on a phone, its caption; the budgets
    table was 9 px too wide there. Every results table fits its box, caption and headers whole."""
    context, page, errors, _ = open_page(chromium, book_url + f"chapters/{chapter}.html", config)
    try:
        page.locator(ex).scroll_into_view_if_needed()
        page.wait_for_function(f"!document.querySelector('{ex} .exercise-check')?.disabled")
        press(page, page.locator(f"{ex} .exercise-check"), config.startswith("phone"))
        page.wait_for_function(f"/^(Passed|Not yet)/.test(document.querySelector('{ex} .exercise-message')?.textContent || '')")
        tables = page.evaluate(f"""[...document.querySelectorAll('{ex} .exercise-table-wrap')].map((w) => ({{
            caption: w.querySelector('caption').textContent, wide: w.scrollWidth - w.clientWidth,
            cut: [...w.querySelectorAll('caption, th:not(.src), td:not(.src)')].filter((c) => c.scrollWidth > c.clientWidth + 1)
                 .map((c) => c.textContent),
            figures: [...w.querySelectorAll('tbody tr:first-child td:not(.src)')].map((c) => {{
                const r = c.getBoundingClientRect(), b = w.getBoundingClientRect();
                return r.right <= b.right + 1 && r.left >= b.left - 1; }}) }}))""")
        assert [t["caption"].split(" at ")[0] for t in tables] == ["Budgets", "Counts per line"], tables
        for t in tables:
            assert t["wide"] <= 0 and not t["cut"] and all(t["figures"]), t
        src = page.locator(f"{ex} td.src").first     # the whole line, on hover (and read out on a phone)
        assert src.get_attribute("title") == src.text_content() and "[" in src.text_content()
        # the small roofline (#47 defect 7): the peak's label clear of the y axis ("19.5 TF|LOP/s"),
        # the points' names clear of each other, of the dots and of the roof
        clash = page.evaluate(ROOF_CLASHES, ex)
        assert clash == {"axis": [], "overlaps": []}, clash
        assert not errors, errors
    finally:
        context.close()


BEFORE_EDITOR = """(ex) => {   // focus what comes just before the editor in tab order, as a keyboard reader would be
    const cm = document.querySelector(`${ex} .cm-content`);
    const all = [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex], [contenteditable]')]
      .filter((e) => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length);
    const before = all.filter((e) => e.compareDocumentPosition(cm) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
    before.focus();
    return before.outerHTML.slice(0, 80);
}"""


def test_tab_moves_through_the_editor_until_the_reader_types(chromium, book_url):
    """Issue #47: a Tab from the statement entered the editor and the next indented line 1 (then
    "line 1: unexpected indent"). Tab indents only once the reader has typed; until then it moves
    on, and Escape then Tab always leaves. On a touch screen the Tab advice is not shown."""
    context, page, errors, _ = open_page(chromium, book_url + CHAPTER, "desktop-light")
    try:
        reach(page)
        starter = editor_text(page)
        page.evaluate(BEFORE_EDITOR, EX)
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.classList.contains('cm-content')")   # in the editor
        page.keyboard.press("Tab")
        assert not page.evaluate("document.activeElement.classList.contains('cm-content')")  # and out again
        assert editor_text(page) == starter                                                 # nothing indented
        page.keyboard.press("Shift+Tab")                                                    # back in
        assert page.evaluate("document.activeElement.classList.contains('cm-content')")
        page.keyboard.press("End")
        page.keyboard.type("x")
        page.keyboard.press("Tab")                                                          # typed: Tab indents
        assert page.evaluate("document.activeElement.classList.contains('cm-content')")
        assert editor_text(page) != starter and "x" in editor_text(page)
        assert page.locator(f"{EX} .exercise-keys-tab").is_visible()
    finally:
        context.close()
    assert not errors, errors
    context, page, errors, _ = open_page(chromium, book_url + CHAPTER, "phone-light")
    try:
        reach(page)
        keys = page.locator(f"{EX} .exercise-keys")
        assert keys.is_visible() and "Esc" not in keys.inner_text(), keys.inner_text()
    finally:
        context.close()
    assert not errors, errors
