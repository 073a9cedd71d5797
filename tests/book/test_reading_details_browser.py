"""Details a new reader hit on the built book (issue #34), in Chromium: cross-reference previews
that fit the screen, listings that stay in their tab box, glyphs every font draws, cross-references
that do not break across lines, the page's width used at 1440 px."""
from __future__ import annotations

import pytest

from a11y_site import CONFIGS, serve  # noqa: E402  (same folder)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(built_book):
    server = serve(built_book)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def open_page(chromium, base, config, path):
    context = chromium.new_context(**CONFIGS[config])
    context.set_default_timeout(15000)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + path, wait_until="load")
    return context, page, errors


# The preview's box, the viewport, and how far its content reaches past it (images, drawings).
PREVIEW = """() => { const b = document.querySelector('.xref-preview'); const r = b.getBoundingClientRect();
  const over = [...b.querySelectorAll('img, svg')].map(e => e.getBoundingClientRect().right - r.right);
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width,
          over: Math.max(0, ...over), vw: innerWidth, vh: innerHeight}; }"""


@pytest.mark.parametrize("low", [False, True], ids=["link-high", "link-low"])
def test_cross_reference_previews_fit_the_screen(chromium, base, low):
    """Every figure and table preview of the serving chapter, its link near the top or the bottom
    of the screen: the preview stays inside the screen and its images inside the preview."""
    context, page, errors = open_page(chromium, base, "desktop-light", "chapters/serving.html")
    seen = set()
    links = page.locator("a.xref[data-xref-kind='fig'], a.xref[data-xref-kind='tbl']")
    for i in range(links.count()):
        a = links.nth(i)
        href = a.get_attribute("href")
        if href in seen or a.locator("xpath=ancestor::*[contains(@class,'xref-preview')]").count():
            continue
        seen.add(href)
        y = 820 if low else 120
        page.mouse.move(5, 5)
        page.keyboard.press("Escape")
        a.evaluate("(a, y) => scrollTo(0, scrollY + a.getBoundingClientRect().top - y)", y)
        page.wait_for_function("([a, y]) => Math.abs(a.getBoundingClientRect().top - y) < 2 || scrollY === 0 "
                               "|| scrollY + innerHeight >= document.documentElement.scrollHeight - 1",
                               arg=[a.element_handle(), y])
        a.hover()
        page.locator(".xref-preview figure, .xref-preview table, .xref-preview .quarto-float").first.wait_for()
        page.locator(".xref-preview img, .xref-preview svg, .xref-preview table").first.wait_for()
        page.wait_for_function("() => { const i = [...document.querySelectorAll('.xref-preview img')]; "
                               "return i.every(x => x.complete); }")
        box = page.evaluate(PREVIEW)
        assert box["top"] >= 0 and box["bottom"] <= box["vh"] + 0.5, (href, box)
        assert box["left"] >= 0 and box["right"] <= box["vw"] + 0.5, (href, box)
        assert box["over"] <= 0.5, (href, box)
    assert len(seen) >= 3
    context.close()
    assert not errors, errors


# For each tab box on the page, the right edge of its box and of what each of its panels holds.
TABS = """() => [...document.querySelectorAll('.panel-tabset')].flatMap(t => {
  const right = t.getBoundingClientRect().right;
  return [...t.querySelectorAll('[role=tabpanel]')].map(p => {
    const was = p.hidden; p.hidden = false;
    // what scrolls inside a box of the panel (a listing's lines in its <pre>) is clipped by it
    const clipped = (e) => { for (let a = e.parentElement; a && a !== p; a = a.parentElement)
      if (getComputedStyle(a).overflowX !== 'visible') return true; return false; };
    const reach = Math.max(0, ...[...p.querySelectorAll('*')].filter(e => e.getClientRects().length && !clipped(e))
      .map(e => e.getBoundingClientRect().right));
    p.hidden = was;
    return {panel: p.getAttribute('aria-labelledby') || p.id, right, reach};
  });
})"""


@pytest.mark.parametrize("config", ["desktop-light", "desktop-dark", "phone-light"])
def test_listings_stay_inside_their_tab_box(chromium, base, config):
    """Every tab box of the attention chapter (pseudocode and CUDA): nothing in a panel reaches
    past the box's right edge (a wide listing scrolls inside it or the box takes the width)."""
    context, page, errors = open_page(chromium, base, config, "chapters/attention.html")
    tabs = page.evaluate(TABS)
    assert tabs
    assert [t for t in tabs if t["reach"] > t["right"] + 0.5] == []
    context.close()
    assert not errors, errors
