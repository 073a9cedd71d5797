"""The editions of the fixture book: the PDF's metadata, bookmarks, title and licence pages and
running heads (read back with poppler), a PDF per chapter linked from each page, the EPUB, the
Editions page and the citation, licence and link-preview parts of every page."""
from __future__ import annotations

import json
import re
import subprocess
import zipfile

import pytest
import needs  # noqa: E402  (tests/ is on sys.path)
from bs4 import BeautifulSoup

def poppler(*args: str) -> subprocess.CompletedProcess:
    """A poppler-utils command; without poppler only the tests that read the PDF back skip."""
    return needs.poppler(*args)


@pytest.fixture(scope="module")
def book(built_fixture):
    root, report = built_fixture
    return root, root / "_book", report


def test_pdf_metadata_and_no_poppler_complaint(book):
    _root, out, report = book
    info = poppler("pdfinfo", str(report.pdf))
    assert re.search(r"^Title:\s+Fixture Book$", info.stdout, re.M)
    assert re.search(r"^Author:\s+Test Author$", info.stdout, re.M)
    assert re.search(r"^Subject:\s+\S", info.stdout, re.M), "typst's description becomes the PDF's Subject"
    assert b"/Lang(en)" in report.pdf.read_bytes(), "the document's language is declared"
    text = poppler("pdftotext", str(report.pdf), "-")
    # typst writes /Suspects false, which Debian 12's poppler reports as malformed; the build blanks it
    assert "Suspects" not in info.stderr + text.stderr and "Syntax Error" not in info.stderr + text.stderr


def test_pdf_outline_lists_chapters_and_sections(book):
    _root, _out, report = book
    xml = poppler("pdftohtml", "-xml", "-i", "-stdout", "-f", "1", "-l", "1", str(report.pdf)).stdout
    outline = re.findall(r'<item page="(\d+)">([^<]+)</item>', xml)
    titles = [t for _p, t in outline]
    for title in ("Preface", "1 Chapter one", "1.1 Figures", "2 Chapter two", "A Extra tables"):
        assert title in titles, f"{title!r} missing from the PDF's bookmarks {titles}"
    pages = [int(p) for p, _t in outline]
    assert pages == sorted(pages), "bookmarks are in page order"


def test_title_page_copyright_page_and_running_heads(book):
    root, _out, report = book
    pages = poppler("pdftotext", "-layout", str(report.pdf), "-").stdout.split("\f")
    title = " ".join(pages[0].split())
    assert "Fixture Book" in title and "Test Author" in title and "Version" in title and "edition" in title
    rights = " ".join(pages[1].split())
    assert "©" in rights and "How to cite this book" in rights and "Fixture Book" in rights
    # a page that continues chapter 2 is headed by its number and title, and the book's title;
    # the page it starts on has no running head
    heads = [p.strip().splitlines()[0] for p in pages if p.strip()]
    assert any(h.startswith("2 Chapter two") and h.endswith("Fixture Book") for h in heads), \
        "no page carries the running head '2 Chapter two … Fixture Book'"
    start = next(p for p in pages if re.search(r"^\s*2 Chapter two\s*$", p, re.M))
    assert not start.strip().splitlines()[0].endswith("Fixture Book")


def test_a_pdf_per_page_linked_from_its_page(book):
    root, out, _report = book
    from bookbuild.editions.files import pdf_href
    for page in ("index.html", "chapters/one.html", "chapters/two.html", "chapters/appendix.html"):
        html = BeautifulSoup((out / page).read_text(encoding="utf-8"), "html.parser")
        link = html.select_one("a.chapter-pdf-link")
        assert link is not None, f"{page} has no link to its PDF"
        depth = page.count("/")
        assert link["href"] == "../" * depth + pdf_href(page)
        pdf = out / pdf_href(page)
        assert pdf.exists() and pdf.read_bytes().startswith(b"%PDF")
        info = poppler("pdfinfo", str(pdf)).stdout
        assert "– Fixture Book" in info
    one = " ".join(poppler("pdftotext", str(out / pdf_href("chapters/one.html")), "-").stdout.split())
    assert "Chapter one" in one and "Cite as:" in one
    assert "2.1 Second tabset" not in one, "a chapter's PDF holds that chapter only"


def test_editions_page_and_manifest(book):
    _root, out, report = book
    manifest = json.loads((out / "editions.json").read_text())
    hrefs = {e["href"]: e for e in manifest["editions"] + manifest["chapters"]}
    assert report.pdf.name in hrefs and report.epub.name in hrefs and "index.html" in hrefs
    for href, e in hrefs.items():
        if href != "index.html":
            assert e["bytes"] == (out / href).stat().st_size
    assert len(manifest["chapters"]) == 5
    page = BeautifulSoup((out / "editions.html").read_text(encoding="utf-8"), "html.parser")
    links = {a["href"] for a in page.select("table a")}
    assert set(hrefs) <= links
    assert manifest["version"] in page.get_text()


def test_epub_structure(book):
    _root, out, report = book
    assert report.epub and report.epub.exists()
    with zipfile.ZipFile(report.epub) as z:
        names = z.namelist()
        assert names[0] == "mimetype" and z.read("mimetype") == b"application/epub+zip"
        opf = z.read(next(n for n in names if n.endswith(".opf"))).decode()
        text = "".join(z.read(n).decode() for n in names if n.endswith(".xhtml"))
    assert "<dc:title" in opf and "Fixture Book" in opf and "<dc:language>en</dc:language>" in opf
    assert 'properties="cover-image"' in opf
    assert "<math" in text, "math is MathML"
    assert 'class="sourceCode' in text, "code is highlighted"
    # a no-break space, as Quarto's cross-references (a character or an entity in the XHTML)
    assert any(f"Figure{nbsp}1.1" in text for nbsp in ("\u00a0", "&#160;", "&nbsp;"))


def test_cite_box_licence_and_link_preview(book):
    _root, out, _report = book
    html = BeautifulSoup((out / "chapters" / "one.html").read_text(encoding="utf-8"), "html.parser")
    box = html.select_one("section.cite-this")
    assert box is not None
    bibtex = [pre.get_text() for pre in box.select("pre.cite-bibtex")]
    assert any(b.startswith("@incollection{") and "Chapter one" in b and "chapter   = {1}" in b for b in bibtex)
    assert any(b.startswith("@book{") for b in bibtex)
    assert "Chapter one" in box.select_one("p.cite-plain").get_text()
    meta = {m.get("property") or m.get("name"): m.get("content") for m in html.select("meta")}
    for key in ("og:title", "og:description", "og:image", "twitter:card", "twitter:image", "description"):
        assert meta.get(key), f"no {key}"
    assert (out / "chapters" / meta["og:image"]).resolve().exists()
    icons = [link["href"] for link in html.select("link[rel~=icon]")]
    assert icons and all((out / "chapters" / href).resolve().exists() for href in icons)


def test_epub_pages_fit_a_phone_reader(book, chromium, tmp_path):
    """At a phone's width (390 px) no chapter of the EPUB is wider than the screen: a reader turns
    pages and cannot scroll the book sideways. The fixture's five-column table and its one-line
    saxpy kernel are wider than that; the table scrolls inside its own box, the code wraps."""
    _root, _out, report = book
    with zipfile.ZipFile(report.epub) as z:
        z.extractall(tmp_path)
    chapters = [p for p in sorted(tmp_path.rglob("*.xhtml")) if p.name.startswith("ch")]
    assert chapters
    page = chromium.new_page(viewport={"width": 390, "height": 844})
    try:
        seen = set()
        for xhtml in chapters:
            page.goto(xhtml.as_uri())
            seen |= set(page.evaluate("() => [...document.querySelectorAll('table, pre')].map(e => e.tagName.toLowerCase())"))
            width = page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= 390, f"{xhtml.name} is {width} px wide at a 390 px screen"
            code = page.evaluate("""() => [...document.querySelectorAll('pre > code.sourceCode')]
                .map(c => c.scrollWidth <= c.parentElement.clientWidth)""")
            assert all(code), f"{xhtml.name}: a code line runs past its block"
        assert seen == {"table", "pre"}, "the fixture's chapters hold a table and a code block"
    finally:
        page.close()


def test_epub_key_frames_take_the_whole_width_on_a_phone(chromium, tmp_path):
    """widget.lua prints an animation's key frames two to a row (an inline width of 48%); with the
    EPUB's stylesheet a phone (390 px) shows each one across the column, a tablet two to a row."""
    from bookbuild.epub.book import STYLE
    svg = "data:image/svg+xml," + "%3Csvg xmlns='http://www.w3.org/2000/svg' width='300' height='200'/%3E"
    (tmp_path / "page.xhtml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head>'
        f'<link rel="stylesheet" type="text/css" href="{STYLE.as_uri()}"/></head><body>'
        f'<figure class="widget-static"><img src="{svg}" style="width:48.0%" alt="Step 1"/>'
        f'<img src="{svg}" style="width:48.0%" alt="Step 2"/></figure></body></html>', encoding="utf-8")
    page = chromium.new_page()
    try:
        for width, share in ((390, 1.0), (800, 0.48)):
            page.set_viewport_size({"width": width, "height": 800})
            page.goto((tmp_path / "page.xhtml").as_uri())
            shares = page.evaluate("""() => [...document.querySelectorAll('img')].map(i =>
                i.getBoundingClientRect().width / i.parentElement.clientWidth)""")
            assert all(abs(s - share) < 0.02 for s in shares), (width, shares)
    finally:
        page.close()


def test_epub_chapters_are_titled_by_their_headings_and_margin_notes_are_footnotes(book):
    """Issue #47: every chapter's <title> was its file name ("ch002.xhtml"), and a margin note fell
    into the flow as a stray paragraph. Each chapter file is titled by its first heading; a margin
    note after a paragraph is that paragraph's footnote."""
    _root, _out, report = book
    with zipfile.ZipFile(report.epub) as z:
        names = z.namelist()
        assert names[0] == "mimetype" and z.getinfo("mimetype").compress_type == zipfile.ZIP_STORED
        chapters = {n: z.read(n).decode() for n in names if re.fullmatch(r"EPUB/text/ch\d+\.xhtml", n)}
    titles = {n: re.search(r"<title>([^<]*)</title>", t)[1] for n, t in chapters.items()}
    assert not [t for t in titles.values() if t.endswith(".xhtml")], titles
    for n, text in chapters.items():
        h1 = re.search(r"<h1\b[^>]*>(.*?)</h1>", text, re.S)
        if h1:
            assert titles[n] == " ".join(re.sub(r"<[^>]+>", " ", h1[1]).split()), (n, titles[n])
    # the fixture's margin note follows a tab box, not a paragraph: an aside, styled as one
    assert "A margin note." in "".join(chapters.values())
    from bookbuild.epub.book import STYLE, _for_epub
    assert ".column-margin" in STYLE.read_text()
    para = {"t": "Para", "c": [{"t": "Str", "c": "PCIe."}]}
    note = {"t": "Div", "c": [["", ["column-margin"], []], [{"t": "Para", "c": [{"t": "Str", "c": "31.5 GB/s."}]}]]}
    assert _for_epub([para, note]) == [{"t": "Para", "c": [{"t": "Str", "c": "PCIe."},
                                                          {"t": "Note", "c": note["c"][1]}]}]
