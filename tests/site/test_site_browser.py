"""The built fixture book in Debian's Chromium: what only a browser shows."""
from __future__ import annotations

import pytest

WIDE = {"width": 1400, "height": 900}   # the default of the `web` fixture (conftest.py)
PHONE = {"width": 400, "height": 800}

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api").expect
from webwatch import ANIMATIONS_DONE  # noqa: E402  (tests/ is on sys.path)


def box(page, selector):
    return page.locator(selector).first.bounding_box()


def test_sidebar_and_next_link_navigate(web):
    page = web.goto("index.html")
    page.locator("#sidebar a", has_text="Chapter two").click()
    page.wait_for_url("**/chapters/two.html")
    assert page.locator("h1").inner_text().replace("\n", " ") == "2 Chapter two"
    assert page.locator('#sidebar a[aria-current="page"]').inner_text().replace("\n", " ") == "2 Chapter two"
    page.locator("a.next").click()
    page.wait_for_url("**/references.html")
    page.locator("a.prev").click()
    page.wait_for_url("**/chapters/two.html")


def test_search_finds_a_word_from_chapter_two(web):
    page = web.goto("chapters/one.html")
    page.locator(".search-open").click()
    dialog = page.locator("dialog.search-dialog")
    assert dialog.is_visible()
    dialog.locator("input").fill("zeppelin")
    first = dialog.locator(".search-results li a").first
    first.wait_for()
    assert "chapters/two.html" in first.get_attribute("href")
    assert "1 result" in dialog.locator(".search-status").inner_text()
    # a result links to the sections the words are in (Pagefind's sub-results need headings with ids)
    assert dialog.locator('.search-subs a[href*="chapters/two.html"][href*="#sec-two"]').count() >= 1
    assert dialog.locator(".search-results mark").first.inner_text().lower() == "zeppelin"
    excerpt = dialog.locator(".search-results p").first.inner_text()
    assert "III" not in excerpt, "math is indexed once, not as MathML + TeX + HTML"
    first.click()
    page.wait_for_url("**/chapters/two.html?highlight=zeppelin")
    assert page.locator("main mark.search-hit").first.inner_text().lower() == "zeppelin"   # marked on arrival


def test_keyboard_slash_opens_search(web):
    page = web.goto("chapters/two.html")
    page.keyboard.press("/")
    assert page.locator("dialog.search-dialog input").evaluate("el => el === document.activeElement")


def test_tabsets_keep_in_step_and_are_remembered_across_pages(web):
    page = web.goto("chapters/two.html")
    sets = page.locator("div.panel-tabset")
    assert sets.count() == 2
    sets.nth(0).get_by_role("tab", name="CUDA").click()
    for i in range(2):
        assert sets.nth(i).get_by_role("tab", name="CUDA").get_attribute("aria-selected") == "true"
        assert sets.nth(i).locator('[role="tabpanel"]').nth(1).is_visible()
        assert not sets.nth(i).locator('[role="tabpanel"]').nth(0).is_visible()
    assert page.evaluate("localStorage.getItem('book-tabset-lang')") == "CUDA"
    page = web.goto("chapters/one.html")
    ts = page.locator("div.panel-tabset").first
    assert ts.get_by_role("tab", name="CUDA").get_attribute("aria-selected") == "true"
    assert ts.locator("pre.cuda").is_visible()
    # keyboard: arrow keys move between tabs and keep the group in step
    ts.get_by_role("tab", name="CUDA").focus()
    page.keyboard.press("ArrowLeft")
    assert ts.get_by_role("tab", name="Pseudocode").get_attribute("aria-selected") == "true"
    assert page.evaluate("localStorage.getItem('book-tabset-lang')") == "Pseudocode"


def test_sidenotes_sit_in_the_margin_on_a_wide_screen(web):
    page = web.goto("chapters/one.html")
    note, text = box(page, "span.sidenote"), box(page, "main p")
    assert page.locator("span.sidenote").is_visible()
    assert note["x"] >= text["x"] + text["width"], "the sidenote is right of the text column"
    assert note["x"] + note["width"] <= WIDE["width"]
    margin = box(page, "aside.column-margin")
    assert margin["x"] >= text["x"] + text["width"]
    toc = box(page, "nav.toc")
    assert toc["x"] >= note["x"] + note["width"] - 1, "the sidenote must not cover the on-page contents"


@pytest.mark.parametrize("web", [PHONE], indirect=True)
def test_sidenotes_fold_inline_and_open_on_a_phone(web):
    page = web.goto("chapters/one.html")
    note = page.locator("span.sidenote")
    assert not note.is_visible()
    page.locator("label.sidenote-ref").click()
    assert note.is_visible()
    b, main = note.bounding_box(), box(page, "main")
    assert b["x"] >= main["x"] - 1 and b["x"] + b["width"] <= main["x"] + main["width"] + 1
    page.locator("label.sidenote-ref").click()
    assert not note.is_visible()
    # by keyboard and screen reader: the note's toggle is a named tab stop with a visible ring
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('sidenote-toggle')"):
            break
    else:
        raise AssertionError("Tab never reaches the footnote's toggle: a keyboard cannot open the note")
    toggle = page.locator("input.sidenote-toggle")
    expect(toggle).to_have_accessible_name("Footnote 1")
    ring = page.locator("label.sidenote-ref").evaluate("(l) => getComputedStyle(l).outlineStyle")
    assert ring != "none", "the focused toggle shows its ring on the number"
    page.keyboard.press("Space")
    assert note.is_visible()


def test_dark_mode_persists_across_pages(web):
    page = web.goto("chapters/one.html")
    light = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.locator(".theme-toggle").click()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert dark != light
    page = web.goto("chapters/two.html")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == dark
    page.locator(".theme-toggle").click()
    assert page.evaluate("localStorage.getItem('book-theme')") == "light"


def test_cross_reference_preview_on_hover_and_focus(web):
    page = web.goto("chapters/two.html")
    link = page.locator("a.xref", has_text="Figure 1.1")
    link.hover()
    tip = page.locator(".xref-preview")
    tip.locator("figure").wait_for()               # the figure itself, not only its caption
    assert "A straight line." in tip.inner_text()
    tb, lb = tip.bounding_box(), link.bounding_box()
    assert tb["y"] >= lb["y"] + lb["height"] - 1, "below the link"
    page.mouse.move(5, 5)
    # it lingers briefly, so the pointer can reach it, then goes
    expect(page.locator(".xref-preview")).to_have_count(0)
    page.locator("a.xref", has_text="Section 1.1").focus()
    assert page.locator(".xref-preview").inner_text() == "Section\u00a01.1: Figures"   # a no-break space, as Quarto writes it (#34)


def test_copy_button_copies_the_code(web):
    web.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=web.base.rstrip("/"))
    page = web.goto("chapters/one.html")
    assert page.locator("div.sourceCode > button.copy-code").count() == page.locator("div.sourceCode").count() == 3
    block = page.locator("div.sourceCode", has=page.locator("pre.python")).first
    block.hover()
    block.locator("button.copy-code").click()
    expect(block.locator("button.copy-code")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "for i in range(n): y[i] = a * x[i]"


def test_every_page_loads_without_errors_or_outside_requests(web):
    for path in ("index.html", "chapters/one.html", "chapters/two.html", "references.html",
                 "chapters/appendix.html"):
        page = web.goto(path)
        # one chapter heading; the index page also has the book's title block above it, as Quarto's
        assert page.locator("main h1:not(.title)").count() == 1
        assert page.locator("main h1.title").count() == (path == "index.html")
        # KaTeX fonts and styles came from the site: a rendered fraction has height
    page = web.goto("chapters/one.html")
    assert page.locator(".katex-display .mfrac").bounding_box()["height"] > 20
    assert page.evaluate("document.fonts.check('16px KaTeX_Main')")


@pytest.mark.parametrize("web", [PHONE], indirect=True)
def test_phone_layout_hides_the_sidebar_behind_a_button(web):
    page = web.goto("chapters/one.html")
    button = page.locator(".sidebar-toggle")
    assert button.is_visible()
    side = box(page, "#sidebar")
    assert side["x"] + side["width"] <= 0, "the sidebar is off screen"
    assert not page.locator("nav.toc").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], "no sideways scrolling"
    button.click()
    assert button.get_attribute("aria-expanded") == "true"
    page.evaluate(ANIMATIONS_DONE, page.locator("#sidebar").element_handle())   # the slide-in transition
    side = box(page, "#sidebar")
    assert side["x"] >= 0 and side["width"] <= PHONE["width"]
    page.locator("#sidebar a", has_text="Chapter two").click()
    page.wait_for_url("**/chapters/two.html")
    main = box(page, "main")
    assert main["x"] >= 0 and main["x"] + main["width"] <= PHONE["width"]
    # A wide table with math in its header scrolls inside itself (KaTeX's hidden MathML included).
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_system_dark_mode_styles_figures_and_code_until_the_reader_chooses(web):
    web.page.emulate_media(color_scheme="dark")
    page = web.goto("chapters/one.html")
    img = page.locator("figure#fig-line img")
    assert img.evaluate("el => getComputedStyle(el).filter") != "none", "a dark page inverts the light SVG"
    keyword = page.locator("pre.python span.cf").first
    dark_kw = keyword.evaluate("el => getComputedStyle(el).color")
    page.locator(".theme-toggle").click()  # the system is dark, so the first click chooses light
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    assert img.evaluate("el => getComputedStyle(el).filter") == "none"
    assert keyword.evaluate("el => getComputedStyle(el).color") != dark_kw


@pytest.mark.parametrize("web", [PHONE], indirect=True)
def test_copy_button_has_its_own_strip_above_code_on_a_phone(web):
    page = web.goto("chapters/one.html")
    blocks = page.locator("main div.sourceCode.has-copy:visible")
    assert blocks.count() >= 1
    for i in range(blocks.count()):
        block = blocks.nth(i)
        block.scroll_into_view_if_needed()
        button, code = block.locator(".copy-code").bounding_box(), block.locator("code").bounding_box()
        assert button["y"] + button["height"] <= code["y"] + 1, "the button covers the first line"
