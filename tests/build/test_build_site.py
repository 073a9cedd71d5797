"""The fixture book built once (tests/fixtures/book, every feature): its HTML pages read with
BeautifulSoup, every local link followed, nothing fetched from elsewhere."""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest
from bs4 import BeautifulSoup

PAGES = ["index.html", "chapters/one.html", "chapters/two.html", "references.html", "chapters/appendix.html"]


@pytest.fixture(scope="module")
def site(built_fixture) -> Path:
    return built_fixture[0] / "_book"


@cache
def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


@pytest.fixture(scope="module")
def soup(site):
    return lambda page: _soup(site / page)


def text_of(el) -> str:
    return " ".join(el.get_text(" ").split())


def test_every_chapter_becomes_a_page(built_fixture, site):
    _root, report = built_fixture
    assert sorted(report.html_pages) == sorted(PAGES)
    for page in PAGES:
        assert (site / page).is_file()
    assert (site / "pagefind" / "pagefind.js").is_file()
    assert report.pdf and report.pdf.is_file()


def test_page_title_names_number_chapter_and_book(soup):
    assert soup("chapters/one.html").title.string == "1 Chapter one – Fixture Book"
    assert soup("index.html").title.string == "Preface – Fixture Book"


def test_sidebar_has_parts_and_numbered_chapters(soup):
    nav = soup("chapters/two.html").find("nav", id="sidebar")
    assert [text_of(p) for p in nav.select("p.part-title")] == ["Foundations", "Appendices"]
    entries = [(text_of(a.find(class_="chapter-number")) if a.find(class_="chapter-number") else "",
                a["href"]) for a in nav.select("li a")]
    assert entries == [("", "../index.html"), ("1", "../chapters/one.html"), ("2", "../chapters/two.html"),
                       ("", "../references.html"), ("A", "../chapters/appendix.html")]
    # the Foundations part holds chapters one and two
    part = nav.find("p", string="Foundations").find_next_sibling("ol")
    assert [text_of(a) for a in part.select("a")] == ["1 Chapter one", "2 Chapter two"]
    current = nav.select('a[aria-current="page"]')
    assert [a["href"] for a in current] == ["../chapters/two.html"]


def test_headings_are_numbered_by_chapter(soup):
    one = soup("chapters/one.html")
    assert text_of(one.find("h1").find(class_="header-section-number")) == "1"
    assert one.find("section", id="sec-figs")["data-number"] == "1.1"
    # as Quarto titles an appendix (formatChapterTitle in src/project/types/book/book-chapters.ts)
    assert text_of(soup("chapters/appendix.html").find("h1")) == "Appendix A — Extra tables"
    # the text itself, as search, copy and a screen reader get it, has the gap before the dash
    # (text_of joins elements with a space, which hid "Appendix A— Extra tables")
    assert " ".join(soup("chapters/appendix.html").find("h1").get_text().split()) == "Appendix A — Extra tables"
    assert soup("index.html").find("h1").find(class_="header-section-number") is None


def test_on_page_contents_lists_sections_that_exist(soup):
    for page, expected in [("chapters/one.html", ["1.1 Figures"]), ("chapters/two.html", ["2.1 Second tabset"])]:
        s = soup(page)
        toc = s.find("nav", class_="toc")
        links = toc.select("a")
        assert [text_of(a) for a in links] == expected
        for a in links:
            assert s.find(id=a["href"][1:]) is not None


def test_a_callout_title_heading_is_not_a_section(soup):
    assert soup("index.html").find("nav", class_="toc") is None


def test_previous_and_next_links_follow_reading_order(soup):
    def nav(page):
        n = soup(page).find("nav", class_="page-nav")
        return {a["rel"][0]: a["href"] for a in n.find_all("a")}
    assert nav("index.html") == {"next": "chapters/one.html"}
    assert nav("chapters/one.html") == {"prev": "../index.html", "next": "../chapters/two.html"}
    assert nav("chapters/appendix.html") == {"prev": "../references.html"}
    assert "2 Chapter two" in text_of(soup("chapters/one.html").find("a", rel="next"))


def test_figure_is_numbered_with_caption_and_alt_text(soup, site):
    fig = soup("chapters/one.html").find("figure", id="fig-line")
    assert "float-fig" in fig["class"]
    assert text_of(fig.figcaption) == "Figure 1.1: A straight line."
    img = fig.find("img")
    assert img["alt"] == "A line rising from left to right."
    assert img["src"].endswith(".svg") and (site / "chapters" / img["src"]).resolve().is_file()
    # sized by the first build for its smallest text (reader_html), in the box it scrolls in on a phone
    assert img.parent.name == "span" and "figure-scroll" in img.parent["class"]
    assert re.fullmatch(r"width:\d+px;max-width:none", img["style"]) and float(img["data-min-text"]) > 0


def test_every_chapter_draws_with_the_project_matplotlibrc(soup, site):
    """The kernel is shared: a later chapter must still get matplotlibrc (svg.fonttype: none
    keeps text as <text>), not matplotlib's bare defaults."""
    two = soup("chapters/two.html").find("figure", id="fig-two-bars")
    assert text_of(two.figcaption) == "Figure 2.1: Two bars."
    for page, fig in (("chapters/one.html", "fig-line"), ("chapters/two.html", "fig-two-bars")):
        src = soup(page).find("figure", id=fig).find("img")["src"]
        svg = (site / "chapters" / src).resolve().read_text()
        assert "<text" in svg, f"{fig} was drawn without the project's matplotlibrc"


def test_cross_references_carry_number_link_and_preview_title(soup):
    one = soup("chapters/one.html")
    refs = {text_of(a): a for a in one.select("a.xref")}
    assert refs["Figure 1.1"]["href"] == "#fig-line"
    assert refs["Figure 1.1"]["data-xref-title"] == "A straight line."
    assert refs["Table 1.1"]["href"] == "#tbl-small"
    assert refs["Table 1.1"]["data-xref-title"] == "A small table."     # the preview drops the citation
    assert refs["Equation 1.1"]["href"] == "#eq-ridge"
    two = soup("chapters/two.html")
    refs = {text_of(a): a["href"] for a in two.select("a.xref")}
    assert refs == {"Section 1.1": "../chapters/one.html#sec-figs",
                    "Figure 1.1": "../chapters/one.html#fig-line",
                    "Table 1.1": "../chapters/one.html#tbl-small",
                    "Equation 1.1": "../chapters/one.html#eq-ridge",
                    "Figure 2.1": "#fig-two-bars", "Table 2.1": "#tbl-two-md", "Listing 2.1": "#lst-two-loop",
                    "Equation 2.1": "#eq-two-a", "Equation 2.2": "#eq-two-b"}
    chapter = soup("index.html").find("a", class_="xref")
    assert (text_of(chapter), chapter["href"]) == ("Chapter 1", "chapters/one.html#sec-one")
    assert text_of(soup("chapters/appendix.html").find("a", class_="xref")) == "Chapter 1"


def test_table_and_equation_are_numbered(soup):
    one = soup("chapters/one.html")
    tbl = one.find("figure", id="tbl-small")
    assert text_of(tbl.figcaption).startswith("Table 1.1: A small table ( Williams et al. 2009 )")
    assert [text_of(th) for th in tbl.select("table th")] == ["a", "b"]
    eq = one.find(id="eq-ridge")
    assert eq.find(class_="katex-display") is not None
    assert eq.select_one(".katex-html .tag").get_text("") == "(1.1)"
    assert "{#eq-ridge}" not in one.get_text()


def test_math_is_rendered_by_katex_at_build_time(soup, site):
    for page in ("chapters/one.html", "chapters/two.html"):
        s = soup(page)
        assert s.select("span.katex .katex-html"), page
        assert not s.select("span.math"), "raw TeX left for a script to render"
        assert s.find("link", href=re.compile(r"katex\.min\.css$")) is not None
        assert not s.find("script", src=re.compile("katex"))
    inline = soup("chapters/two.html").select("p span.katex:not(.katex-display span)")
    assert inline and inline[0].find("annotation").string == "I"
    assert (site / "assets" / "katex" / "fonts" / "KaTeX_Main-Regular.woff2").is_file()
    # pages without math do not load KaTeX's stylesheet
    assert soup("references.html").find("link", href=re.compile("katex")) is None


def test_callouts_of_every_kind_with_titles_and_collapse(soup):
    two = soup("chapters/two.html")
    kinds = {}
    for box in two.select(".callout"):
        kind = next(c for c in box["class"] if c.startswith("callout-"))
        kinds[kind] = (box.name, text_of(box.find(class_="callout-title")), box.has_attr("open"))
    assert kinds == {
        "callout-warning": ("div", "Warning", False),
        "callout-tip": ("div", "A quick tip", False),
        "callout-important": ("div", "Try it", False),
        "callout-caution": ("details", "Open caution", True),
        "callout-note": ("div", "Plain note", False),
    }
    assert text_of(two.select_one(".callout-warning .callout-body")) == "Mind the units."
    folded = soup("index.html").select_one("details.callout-note")
    assert folded is not None and not folded.has_attr("open")
    assert folded.summary is not None and text_of(folded.summary) == "Conventions"
    assert "Conventions" not in [text_of(h) for h in soup("index.html").find_all("h2")]


def test_tabsets_are_accessible_and_grouped(soup):
    two = soup("chapters/two.html")
    sets = two.select("div.panel-tabset")
    assert len(sets) == 2
    for ts in sets:
        assert ts["data-group"] == "lang"
        tabs = ts.select('[role="tablist"] > button[role="tab"]')
        assert [t["data-tab"] for t in tabs] == ["Pseudocode", "CUDA"]
        assert [t["aria-selected"] for t in tabs] == ["true", "false"]
        panels = [two.find(id=t["aria-controls"]) for t in tabs]
        assert all(p is not None and p["role"] == "tabpanel" for p in panels)
        assert [p.has_attr("hidden") for p in panels] == [False, True]
    ids = [el["id"] for el in two.find_all(id=True)]
    assert len(ids) == len(set(ids)), "ids must be unique on a page"
    # tab titles are not sections: the page's only numbered h2 is the real one
    assert [h.get("data-number") for h in two.find_all("h2")] == ["2.1"]


def test_margin_content_and_footnotes_as_sidenotes(soup):
    one = soup("chapters/one.html")
    assert text_of(one.select_one("aside.column-margin")) == "A margin note."
    note = one.select_one("span.sidenote")
    assert text_of(note) == "1. A footnote shown as a sidenote."
    ref = one.select_one("label.sidenote-ref")
    toggle = one.find("input", id=ref["for"])
    assert toggle is not None and "sidenote-toggle" in toggle["class"]
    assert not one.select("section.footnotes, a.footnote-ref"), "footnotes must become sidenotes"
    assert text_of(soup("chapters/two.html").select_one("span.sidenote")).startswith("1. A second sidenote")


def test_code_blocks_are_highlighted_including_cuda(soup):
    one = soup("chapters/one.html")
    cuda = one.select_one("div.sourceCode pre.sourceCode.cuda code")
    assert cuda is not None
    tokens = {(span["class"][0], span.get_text()) for span in cuda.select("span[class]")}
    assert {("kw", "__global__"), ("dt", "float"), ("bu", "threadIdx"), ("bu", "blockIdx")} <= tokens
    py = one.select_one("pre.sourceCode.python code")
    assert ("cf", "for") in {(s["class"][0], s.get_text()) for s in py.select("span[class]")}
    fold = one.select_one("details.code-fold")
    assert text_of(fold.summary) == "Code" and "folded code ran" in fold.get_text()
    assert text_of(one.select_one("pre.cell-output-stdout code")) == "folded code ran"
    # every code block has its copy button in the page (book.js only wires it)
    blocks = one.select("main div.sourceCode, main pre.cell-output-stdout")
    assert len(blocks) >= 3 and all(b.select_one("button.copy-code") for b in blocks)


def test_cells_inline_values_and_user_filters(soup):
    one = soup("chapters/one.html")
    assert "The ridge point is 4.0 FLOP/byte" in text_of(one)
    assert "The value again: 5." in text_of(soup("chapters/two.html"))
    assert text_of(one.select_one("div.shout")) == "QUIET WORDS"
    assert "import fixturecalc" not in one.get_text(), "echo: false from _quarto.yml"


def test_cell_options_include_eval_and_asis(soup):
    two = soup("chapters/two.html")
    printed = next(p for p in two.find_all("p") if "Printed" in p.get_text())
    assert text_of(printed) == "Printed markdown with the hidden value 42."
    assert printed.find("strong").string == "markdown", "output: asis prints markdown, not a code block"
    assert "41 + 1" not in two.get_text(), "include: false shows neither code nor output"
    shown = [pre.get_text() for pre in two.select("pre.python")]
    assert 'print("never runs")' in shown, "eval: false still shows the code (echo: true)"
    assert not [p for p in two.select("pre.cell-output") if "never runs" in p.get_text()]


def test_citations_link_to_the_bibliography(soup):
    cite = soup("chapters/one.html").select_one("span.citation")
    assert cite["data-cites"] == "williams2009roofline"
    assert text_of(cite).startswith("Williams et al.") and "2009" in text_of(cite)
    assert cite.find("a")["href"] == "../references.html#ref-williams2009roofline"
    entry = soup("references.html").find(id="ref-williams2009roofline")
    assert "csl-entry" in entry["class"]
    assert "Roofline: An Insightful Visual Performance Model" in text_of(entry)
    assert not soup("chapters/one.html").select(".csl-entry"), "the list belongs to the references page"


def test_reading_time_and_source_link(soup):
    for page in PAGES:
        meta = soup(page).select_one("main p.page-meta")
        assert re.fullmatch(r"\d+ min read", text_of(meta.select_one(".reading-time")))
        src = page.replace(".html", ".qmd")
        assert meta.select_one("a.source-link")["href"] == \
            f"https://github.com/example/fixture-book/blob/main/{src}"


def test_no_unresolved_reference_or_leftover_source_syntax(site):
    for page in PAGES:
        html = (site / page).read_text(encoding="utf-8")
        text = BeautifulSoup(html, "html.parser").get_text()
        for bad in ("??", "?@", "{python}", "::: {", "{#fig-", "{#sec-", "@fig-", "@sec-", "@tbl-", "@eq-"):
            assert bad not in text, f"{bad!r} in {page}"


def _local_targets(site: Path):
    """(page, attribute value) for every href/src of every HTML page."""
    for path in sorted(site.rglob("*.html")):
        if "pagefind" in path.parts:
            continue
        s = _soup(path)
        for el in s.find_all(True):
            for attr in ("href", "src"):
                if el.has_attr(attr):
                    yield path, el, attr, el[attr]


def test_every_local_link_and_resource_resolves(site):
    checked = 0
    for path, el, attr, value in _local_targets(site):
        url = urlparse(value)
        if url.scheme in ("http", "https", "mailto", "data") or value.startswith("//"):
            continue
        target, frag = urldefrag(value)
        dest = path if not target else (path.parent / unquote(target)).resolve()
        assert dest.is_file(), f"{path.relative_to(site)}: {el.name} {attr}={value!r} does not exist"
        assert site.resolve() in dest.resolve().parents or dest == path, f"{value} leaves the site"
        if frag and dest.suffix == ".html":
            assert _soup(dest).find(id=unquote(frag)) is not None, \
                f"{path.relative_to(site)}: #{frag} not found in {dest.relative_to(site.resolve())}"
        checked += 1
    assert checked > 60


def test_nothing_is_loaded_from_another_host(site):
    for path, el, attr, value in _local_targets(site):
        if el.name == "a":
            continue  # links the reader may follow (source link, citations' URLs) are fine
        assert not re.match(r"(https?:)?//", value), f"{path.name}: <{el.name} {attr}={value}>"
    for css in site.rglob("*.css"):
        text = css.read_text(encoding="utf-8", errors="replace")
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", text), f"{css.name} loads from elsewhere"
        assert not re.search(r"@import\s+(url\()?['\"]?(https?:)?//", text), css.name
    for js in (site / "assets" / "js").glob("*.js"):
        text = js.read_text(encoding="utf-8")
        assert not re.search(r"""(import\(|src\s*=|fetch\()\s*['"`]https?://""", text), js.name


def test_print_stylesheet_hides_the_chrome(site):
    css = (site / "assets" / "css" / "book.css").read_text()
    block = css[css.index("@media print"):]
    for sel in (".topbar", ".sidebar", ".toc", ".page-nav"):
        assert sel in block.split("}")[0]


def test_tables_are_captioned_above_and_figures_below_as_in_quarto(soup):
    one = soup("chapters/one.html")
    assert "cap-top" in one.find("figure", id="tbl-small")["class"]
    assert "cap-top" not in one.find("figure", id="fig-line").get("class", [])


def test_caption_locations_follow_the_config(warm_book):   # a built copy: the page caches must notice
    book = warm_book
    from bookbuild import build
    config = book / "_quarto.yml"
    config.write_text(config.read_text() + "tbl-cap-location: bottom\nfig-cap-location: top\n")
    build(book, ("html",), search=False)
    one = BeautifulSoup((book / "_book/chapters/one.html").read_text(encoding="utf-8"), "html.parser")
    assert "cap-top" not in one.find("figure", id="tbl-small")["class"]
    assert "cap-top" in one.find("figure", id="fig-line")["class"]


def test_code_copy_false_turns_the_copy_buttons_off(warm_book):
    from bookbuild import build
    config = warm_book / "_quarto.yml"
    config.write_text(config.read_text().replace("  html:\n", "  html:\n    code-copy: false\n", 1))
    build(warm_book, ("html",), search=False)
    one = BeautifulSoup((warm_book / "_book/chapters/one.html").read_text(encoding="utf-8"), "html.parser")
    assert one.select("main div.sourceCode")
    assert not one.select("button.copy-code") and not one.select(".has-copy")


def test_the_page_template_is_compiled_once_and_read_back_from_the_build_cache(tmp_path, monkeypatch):
    import jinja2
    from bookbuild.html.site import template_env
    first = template_env(tmp_path)
    first.filters["site_relative"] = first.filters["after_first_h1"] = lambda html, *a: html
    first.get_template("page.html")
    assert any(tmp_path.glob("jinja-*/*.cache"))
    monkeypatch.setattr(jinja2.Environment, "compile", lambda *a, **k: (_ for _ in ()).throw(AssertionError("compiled again")))
    again = template_env(tmp_path)
    again.filters["site_relative"] = again.filters["after_first_h1"] = lambda html, *a: html
    again.get_template("page.html")
