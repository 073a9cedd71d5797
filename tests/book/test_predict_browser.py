"""Predict-then-reveal and glossary popovers in Chromium: a page made by the book's predict filter
and the build's own callout filter from Quarto markup, with the site's styles, the head's inline
script, assets/js/predict.js and book.js."""
import functools
import http.server
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from webwatch import NEXT_FRAMES  # noqa: E402  (tests/ is on sys.path)

expect = pytest.importorskip("playwright.sync_api").expect
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.browser

SOURCE = """
::: {.callout-tip .predict title="Predict"}
Which limits this kernel?

- arithmetic
- memory bandwidth
- launch overhead
:::

::: {.callout-note collapse="true" title="Reveal"}
Memory bandwidth: the answer.
:::

Some prose with a [roofline](glossary.html#term-roofline){.term data-term="roofline" data-definition="A plot of attainable throughput." title="A plot of attainable throughput."}.

::: {.callout-tip .predict title="Predict"}
How many bytes does it move?
:::

::: {.callout-note collapse="true" title="Reveal"}
Twelve.
:::
"""

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>predict</title>
<link rel="stylesheet" href="book.css"><link rel="stylesheet" href="glossary.css">
<script>document.documentElement.classList.add("js")</script>
<script defer src="book.js"></script><script defer src="predict.js"></script></head><body><main>{body}</main></body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from bookbuild import pandoc
    folder = tmp_path_factory.mktemp("predict")
    body = subprocess.run([pandoc.binary(), "-f", "markdown", "-t", "html5",
                           "--lua-filter", str(ROOT / "filters/predict.lua"),
                           "--lua-filter", str(ROOT / "bookbuild/pandoc/lua/callout.lua")], input=SOURCE, capture_output=True,
                          text=True, check=True).stdout
    (folder / "index.html").write_text(PAGE.format(body=body), encoding="utf-8")
    shutil.copy(ROOT / "assets/js/predict.js", folder)
    shutil.copy(ROOT / "assets/js/book.js", folder)   # glossary popovers
    shutil.copy(ROOT / "assets/css/glossary.css", folder)
    shutil.copy(ROOT / "assets/css/book.css", folder)
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/index.html"
    server.shutdown()


@pytest.fixture
def page(chromium, site):
    context = chromium.new_context(viewport={"width": 900, "height": 900})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(site)
    pg.wait_for_selector(".predict-choices")
    yield pg
    assert not errors, errors
    context.close()


def reveal(pg, n=0):
    return pg.locator("details.callout").nth(n)


def lock_note(summary):
    """The lock note the stylesheet draws after a locked reveal's title ('' when none)."""
    content = summary.evaluate("s => getComputedStyle(s, '::after').content")
    return "" if content in ("none", "normal") else content.strip('"')


def test_reveal_is_locked_until_a_choice_is_committed(page):
    summary = reveal(page).locator("summary")
    assert "Choose an answer first" in lock_note(summary)
    assert summary.get_attribute("aria-disabled") == "true"
    summary.click()
    assert reveal(page).evaluate("d => d.open") is False
    commit = page.locator(".predict-commit").first
    assert commit.is_disabled()
    page.get_by_label("memory bandwidth").check()
    assert reveal(page).evaluate("d => d.open") is False  # choosing alone does not reveal
    commit.click()
    assert reveal(page).evaluate("d => d.open") is True
    assert lock_note(summary) == ""
    chosen = page.locator(".predict-choice.chosen")
    assert chosen.count() == 1 and "memory bandwidth" in chosen.inner_text()
    assert page.locator(".predict-choice input:disabled").count() == 3


def test_choices_work_from_the_keyboard(page):
    page.locator(".predict-choice input").first.focus()
    page.keyboard.press("ArrowDown")  # radio groups move with the arrow keys
    assert page.locator(".predict-choice input").nth(1).is_checked()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert reveal(page).evaluate("d => d.open") is True


def test_choice_is_remembered_on_reload(page):
    page.get_by_label("launch overhead").check()
    page.locator(".predict-commit").first.click()
    page.reload()
    page.wait_for_selector(".predict-choice.chosen")
    assert "launch overhead" in page.locator(".predict-choice.chosen").inner_text()
    summary = reveal(page).locator("summary")
    assert lock_note(summary) == ""
    summary.click()
    assert reveal(page).evaluate("d => d.open") is True


def test_predict_without_a_list_takes_a_written_prediction(page):
    box = page.locator(".callout.predict").nth(1)
    field = box.get_by_label("Your prediction")
    button = box.get_by_role("button", name="Commit")
    button.click()  # empty: refused
    assert reveal(page, 1).evaluate("d => d.open") is False
    field.fill("about a megabyte")
    button.click()
    assert reveal(page, 1).evaluate("d => d.open") is True
    assert field.evaluate("i => i.readOnly") is True


def test_term_popover_is_hoverable_persistent_and_dismissible(page):
    """WCAG 1.4.13: the pointer can move onto the popover, it stays until the pointer leaves both,
    and Escape dismisses it without moving the pointer."""
    term = page.locator("a.term")
    assert term.get_attribute("title") is None  # the popover replaces the browser tooltip
    term.hover()
    pop = page.locator(".term-popover")
    assert pop.is_visible() and "A plot of attainable throughput." in pop.inner_text()
    box = pop.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=4)
    # Leaving the term schedules a hide (book.js marks the box data-leaving); reaching the popover
    # cancels it. With no hide pending nothing else removes it: it persists while hovered.
    page.wait_for_function("() => { const p = document.querySelector('.term-popover'); "
                           "return p && !p.hasAttribute('data-leaving'); }")
    assert pop.is_visible()                      # hoverable, and persistent while hovered
    page.keyboard.press("Escape")
    assert page.locator(".term-popover").count() == 0
    term.hover()
    assert page.locator(".term-popover").is_visible()
    page.mouse.move(0, 0)
    expect(page.locator(".term-popover")).to_have_count(0)      # gone once its short delay has run
    term.focus()
    assert page.locator(".term-popover").is_visible()
    assert term.get_attribute("aria-describedby") == "term-popover"


def test_term_click_defines_it_in_place(page):
    url = page.url
    # After the page's own click handlers: did one cancel the link's navigation?
    page.evaluate("document.addEventListener('click', e => { window.__prevented = e.defaultPrevented; })")
    page.locator("a.term").click()
    link = page.locator(".term-popover a", has_text="Open in the glossary")
    expect(link).to_be_visible()                 # the click was handled: the definition is pinned
    assert page.evaluate("window.__prevented") is True and page.url == url   # the reader stays
    assert link.is_visible() and link.get_attribute("href").endswith("glossary.html#term-roofline")
    page.keyboard.press("Tab")                   # the pinned popover is next in the Tab order
    assert page.evaluate("document.activeElement.textContent") == "Open in the glossary"
    page.keyboard.press("Escape")
    assert page.locator(".term-popover").count() == 0
    assert page.evaluate("document.activeElement.classList.contains('term')")


def test_an_answer_can_be_changed(page):
    page.get_by_label("arithmetic").check()
    page.locator(".predict-commit").first.click()
    change = page.get_by_role("button", name="Change my answer")
    change.click()
    assert page.locator(".predict-choice input:disabled").count() == 0
    page.get_by_label("launch overhead").check()
    page.locator(".predict-commit").first.click()
    assert "launch overhead" in page.locator(".predict-choice.chosen").inner_text()
    page.reload()
    page.wait_for_selector(".predict-choice.chosen")
    assert "launch overhead" in page.locator(".predict-choice.chosen").inner_text()
    box = page.locator(".callout.predict").nth(1)
    box.get_by_label("Your prediction").fill("a kilobyte")
    box.get_by_role("button", name="Commit").click()
    box.get_by_role("button", name="Change my prediction").click()
    assert box.get_by_label("Your prediction").evaluate("i => i.readOnly") is False


def test_print_shows_locked_reveals_without_the_lock_note(page):
    page.emulate_media(media="print")
    body = reveal(page).locator(".callout-body")
    assert body.is_visible()
    assert lock_note(reveal(page).locator("summary")) == ""
    assert not page.locator(".predict-actions").first.is_visible()


def geometry(pg):
    return pg.evaluate("""() => [...document.querySelectorAll('.callout, .predict-choice, .predict-actions, p')]
        .map(e => { const r = e.getBoundingClientRect(); return [Math.round(r.top), Math.round(r.height)]; })""")


@pytest.mark.parametrize("width", [900, 390])
def test_the_script_moves_nothing(chromium, site, width):
    """The controls are the filter's, in the first layout: the page with predict.js running has
    every box where the page without it has it (a script that built them moved the text below)."""
    seen = []
    for block in (True, False):
        context = chromium.new_context(viewport={"width": width, "height": 800})
        pg = context.new_page()
        if block:
            pg.route("**/predict.js", lambda r: r.abort())
        pg.goto(site)
        pg.wait_for_load_state("load")
        # the scripts have run; the fonts are in and two frames laid out with them
        pg.evaluate("document.fonts.ready.then(() => true)")
        pg.evaluate(NEXT_FRAMES)
        seen.append(geometry(pg))
        context.close()
    assert seen[0] == seen[1]
    assert len(seen[0]) > 6


def test_without_scripts_the_choices_are_a_list_with_no_dead_buttons(chromium, site):
    context = chromium.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(site)
    assert pg.locator(".predict-choice").count() == 3
    assert not pg.locator(".predict-commit").first.is_visible()
    summary = reveal(pg).locator("summary")
    assert lock_note(summary) == ""
    summary.click()
    assert reveal(pg).evaluate("d => d.open") is True
    context.close()
