"""The fixture book's PDF (typst), read back with pdftotext."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

# every test here reads the PDF back with poppler
pytestmark = pytest.mark.skipif(not shutil.which("pdftotext"), reason="pdftotext not installed (apt-get install -y poppler-utils)")


@pytest.fixture(scope="module")
def pdf(built_fixture):
    path = built_fixture[1].pdf
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    return path, " ".join(text.split()), text.split("\f"), pages


def test_title_page_and_contents(pdf):
    _path, _text, pages, _n = pdf
    assert "Fixture Book" in pages[0] and "Test Author" in pages[0]
    assert "©" in pages[1], "the copyright and licence page follows the title page"
    contents = " ".join(pages[2].split())
    assert contents.startswith("Contents"), "the contents follow the copyright page, with no blank page between"
    for entry in ("Preface", "1 Chapter one", "1.1 Figures", "2 Chapter two", "References", "A Extra tables"):
        assert entry in contents


def test_chapters_parts_and_numbers(pdf):
    _path, text, _pages, _n = pdf
    for heading in ("1 Chapter one", "1.1 Figures", "2 Chapter two", "2.1 Second tabset", "A Extra tables",
                    "Foundations", "Appendices"):
        assert heading in text


def test_floats_cross_references_and_inline_values(pdf):
    _path, text, _pages, _n = pdf
    text = text.replace("\u00a0", " ")             # "Figure 1.1" has a no-break space (Quarto's nbspString)
    assert "Figure 1.1: A straight line." in text
    assert "Table 1.1: A small table (Williams" in text
    assert "(1.1)" in text
    assert "see Figure 1.1 and Table 1.1 and Equation 1.1" in text
    assert "Back to Section 1.1 and Figure 1.1" in text
    assert "See Chapter 1." in text and "refers back to Chapter 1" in text
    assert "The ridge point is 4.0 FLOP/byte" in text
    assert "Printed markdown with the hidden value 42." in text
    assert "41 + 1" not in text


def test_callouts_code_footnotes_and_filters(pdf):
    _path, text, _pages, _n = pdf
    for title in ("Conventions", "Warning", "A quick tip", "Try it", "Open caution", "Plain note"):
        assert title in text
    assert "Mind the units." in text
    assert "__global__ void saxpy(float a" in text
    assert "__shared__ float tile[32][32];" in text
    assert "A footnote shown as a sidenote." in text
    assert "A margin note." in text and "QUIET WORDS" in text
    # tabsets become their tabs in turn
    assert "Pseudocode" in text and "Kernel words." in text


def test_citation_and_bibliography(pdf):
    _path, text, _pages, _n = pdf
    assert "Williams et al. (2009)" in text
    assert text.count("Williams, Samuel, Andrew Waterman, and David Patterson. 2009.") == 1, \
        "the bibliography appears once, on the references page"
    assert "Communications of the ACM" in text


def test_nothing_unresolved_and_page_count_sane(pdf):
    _path, text, _pages, n = pdf
    assert "??" not in text and "?@" not in text and "{python}" not in text
    assert 6 <= n <= 20


def test_cross_references_and_citations_are_links_in_the_pdf(built_fixture):
    """The numbers in the PDF are links to their targets (one document: labels are local)."""
    typ = (built_fixture[0] / ".bookcache" / "typst" / "book.typ").read_text()
    for link in ("#link(<fig-line>)[Figure~1.1]", "#link(<sec-figs>)[Section~1.1]",
                 "#link(<eq-ridge>)[Equation~1.1]", "#link(<ref-williams2009roofline>)[2009]"):
        assert link in typ
    assert "<ref-williams2009roofline>" in typ.replace("#link(<ref-williams2009roofline>)", "")


def test_table_captions_sit_above_their_tables(pdf):
    _path, _text, pages, _n = pdf
    [page] = [p for p in pages if "Table 1.1: A small table" in p.replace("\u00a0", " ")]
    lines = [line.split() for line in page.splitlines()]
    caption = next(i for i, words in enumerate(lines) if words[:2] == ["Table", "1.1:"])
    header = next(i for i, words in enumerate(lines) if words == ["a", "b"])
    assert caption < header


def typeset_pages(built_fixture, stem, body: str) -> list:
    """``body`` typeset under the book's own typst preamble (book.typ up to its title page), as
    ``stem``.typ and .pdf: the text of each page, as pdftotext -layout gives it."""
    import typst
    preamble = (built_fixture[0] / ".bookcache" / "typst" / "book.typ").read_text().split("// Title page")[0]
    stem.with_suffix(".typ").write_text(preamble + body, encoding="utf-8")
    typst.compile(str(stem.with_suffix(".typ")), output=str(stem.with_suffix(".pdf")))
    return subprocess.run(["pdftotext", "-layout", str(stem.with_suffix(".pdf")), "-"], capture_output=True,
                          text=True, check=True).stdout.split("\f")


def test_a_short_table_never_splits_and_a_long_one_does(built_fixture, tmp_path):
    """The book's own typst rules, under tables as pandoc writes them (a captioned figure around a
    figure of kind table), pushed down the page a little more each time: a three-row table moves to
    the next page whole (it once left its caption, header and a row on one page and the rest
    overleaf), and a sixty-row table still runs on over two pages rather than leave one blank."""
    table = ("#let tbl(n) = block(block[#set figure.caption(position: top)\n"
             "#figure([#figure(align(center)[#table(columns: (50%, 50%), table.header([Head], [Value]),"
             " table.hline(), ..range(n).map(i => ([row #i], [#i])).flatten())], kind: table)],"
             " caption: [Table: #n rows])])\n")
    gaps = range(560, 700, 12)
    body = "".join(f"#v({gap}pt)\nBefore.\n#tbl(3)\n#pagebreak()\n" for gap in gaps) + "#tbl(60)\n"
    pages = typeset_pages(built_fixture, tmp_path / "t", table + body)
    short = [(p.count("row "), "Table: 3 rows" in p) for p in pages if "Table: 3 rows" in p or "row 0 " in p
             and "Table: 60" not in p]
    assert len([s for s in short if s[1]]) == len(gaps)
    assert all(s == (3, True) for s in short), f"a three-row table split: (rows, caption) per page {short}"
    long = [p.count("row ") for p in pages if p.count("row ") and "Table: 3 rows" not in p]
    assert len(long) >= 2 and sum(long) == 60, f"the sixty-row table should run over pages: {long}"


def test_a_section_heading_keeps_a_few_lines_below_it(built_fixture, tmp_path):
    """A heading, a one-line lead-in ("Its reference kernel:") and a long paragraph, pushed down the
    page a little more each time: the heading never ends a page with only the lead-in under it (typst
    keeps a heading with the next block only; the Solutions appendix's D.4 once ended page 181 so)."""
    gaps = range(560, 700, 8)
    body = "".join(f"#v({gap}pt)\n== Heading {k}\nIts reference kernel:\n\n#lorem(150)\n#pagebreak()\n"
                   for k, gap in enumerate(gaps))
    pages = typeset_pages(built_fixture, tmp_path / "h", body)
    below = {}
    for page in pages:
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        for i, line in enumerate(lines):
            if re.fullmatch(r"Heading \d+", line):
                # the lines under the heading on its page, less the page number
                below[line] = len([x for x in lines[i + 1:] if not x.isdigit()])
    assert len(below) == len(gaps)
    assert all(n >= 3 for n in below.values()), f"lines under each heading on its page: {below}"


def test_a_callout_title_never_ends_a_page(built_fixture, tmp_path):
    """A callout (the book's own, from book.typ) pushed down the page a little more each time: its
    title is never the last line of a page with the body overleaf (it was, for eight callouts of
    the book: "Takeaway" at the foot of page 11, "Solution" of page 39, …)."""
    gaps = range(600, 700, 6)
    body = "".join(f'#v({gap}pt)\nBefore.\n#callout(kind: "tip", title: [Takeaway {k}])[#lorem(60)]\n#pagebreak()\n'
                   for k, gap in enumerate(gaps))
    pages = typeset_pages(built_fixture, tmp_path / "c", body)
    below = {}
    for page in pages:
        lines = [line.strip() for line in page.splitlines() if line.strip() and not line.strip().isdigit()]
        for i, line in enumerate(lines):
            if re.fullmatch(r"Takeaway \d+", line):
                below[line] = len(lines) - i - 1
    assert len(below) == len(gaps)
    assert all(n >= 1 for n in below.values()), f"lines under each callout title on its page: {below}"


def test_a_cell_without_output_leaves_no_empty_block(built_fixture):
    """A code cell whose code is hidden and which prints nothing is an empty div; in typst that was
    an empty #block[], laid out as a paragraph's gap of blank space (116 in the book)."""
    typ = (built_fixture[0] / ".bookcache" / "typst" / "book.typ").read_text()
    assert not re.search(r"#block\[\s*\]", typ), "an empty block in the PDF's typst source"


def test_a_bold_title_paragraph_stays_with_what_follows(built_fixture):
    """A paragraph of bold text alone is a run-in title (a printed tab's, an exercise's): in typst it
    is a sticky block, kept on the page of the block after it, as a heading is (the hardware
    appendix's tab titles ended pages 168-173 with their table overleaf)."""
    typ = (built_fixture[0] / ".bookcache" / "typst" / "book.typ").read_text()
    assert "#block(sticky: true)[#strong[Pseudocode]]" in typ, "the fixture's printed tab title"
    assert not re.search(r"(?m)^#strong\[[^\]]*\]\n\n", typ), "a bold title left as a plain paragraph"


def test_a_glossary_entry_is_never_split(built_fixture, tmp_path):
    """A glossary entry (a term list of one item, in its own block) pushed down the page a little
    more each time: its term never ends a page with the definition overleaf (the book's
    "output-stationary" did, on page 159)."""
    gaps = range(600, 700, 8)
    body = "".join(f"#v({gap}pt)\nBefore.\n#block[\n/ term{k}: #block[\n#lorem(40)\n]\n]\n#pagebreak()\n"
                   for k, gap in enumerate(gaps))
    pages = typeset_pages(built_fixture, tmp_path / "g", body)
    below = {}
    for page in pages:
        lines = [line.strip() for line in page.splitlines() if line.strip() and not line.strip().isdigit()]
        for i, line in enumerate(lines):
            found = re.match(r"(term\d+)\b", line)
            if found:
                below[found.group(1)] = len(lines) - i - 1 + (len(line.split()) > 1)
    assert len(below) == len(gaps)
    assert all(n >= 1 for n in below.values()), f"definition lines with each term on its page: {below}"
