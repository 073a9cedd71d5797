"""The back matter: chapter map (one node per chapter, edges from prerequisites), hardware
reference (every product, sourced values, ridge points) and the references page (every
cited entry)."""
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from bookfigs import backmatter
from calc import specs

ROOT = Path(__file__).resolve().parents[2]


def soup_of(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


# -------------------------------------------------------------------------- chapter map

def test_prerequisites_become_edges(tiny_book):
    chapters = backmatter.book_chapters(tiny_book.root)
    edges = [(a.source, b.source) for a, b in backmatter.prerequisite_edges(chapters)]
    assert edges == [("chapters/a.qmd", "chapters/b.qmd")]
    assert [c.number for c in backmatter.map_chapters(chapters)] == ["1", "2"]


def test_unknown_prerequisite_is_an_error(tiny_book):
    tiny_book.write("chapters/b.qmd", "---\nprerequisites: [chapters/nope.qmd]\n---\n# Beta {#sec-b}\n")
    with pytest.raises(ValueError, match="chapters/nope.qmd"):
        backmatter.prerequisite_edges(backmatter.book_chapters(tiny_book.root))


def test_map_svg_has_a_linked_node_per_chapter_and_an_edge_per_prerequisite(tiny_book):
    svg = backmatter.chapter_map_svg(tiny_book.root)
    assert svg.count('class="node"') == 2 and svg.count('class="edge"') == 1
    assert 'xlink:href="../chapters/a.html"' in svg


def test_map_leaves_out_implied_arrows(tiny_book):
    tiny_book.write("chapters/c.qmd", "---\nprerequisites: [chapters/a.qmd, chapters/b.qmd]\n---\n# Gamma {#sec-c}\n")
    cfg = tiny_book.root / "_quarto.yml"
    cfg.write_text(cfg.read_text().replace("        - chapters/b.qmd\n", "        - chapters/b.qmd\n        - chapters/c.qmd\n"))
    svg = backmatter.chapter_map_svg(tiny_book.root)
    assert svg.count('class="node"') == 3 and svg.count('class="edge"') == 2  # a->b, b->c; not a->c


def test_every_declared_prerequisite_is_a_chapter():
    backmatter.prerequisite_edges(backmatter.book_chapters(ROOT))  # raises on an unknown one


@pytest.mark.slow
def test_built_chapter_map_has_one_node_per_chapter(built_book):
    soup = soup_of(built_book / "appendices/chapter-map.html")
    img = soup.select_one(".chapter-map img")
    assert img and img.get("alt"), "the map is a figure with alt text"
    svg = (built_book / "appendices" / img["src"]).resolve().read_text(encoding="utf-8")
    chapters = backmatter.map_chapters(backmatter.book_chapters(ROOT))
    assert svg.count('class="node"') == len(chapters)
    for ch in chapters:
        target = ch.source.replace(".qmd", ".html")
        assert f'xlink:href="../{target}"' in svg and (built_book / target).exists()
    rows = soup.select("#tbl-chapter-map tbody tr")
    assert len(rows) == len(chapters)


# -------------------------------------------------------------------- hardware reference

def test_exact_keeps_the_source_digits():
    assert backmatter.exact(494.7) == "494.7"
    assert backmatter.exact(1978.9) == "1,978.9"
    assert backmatter.exact(312.0) == "312"
    assert backmatter.exact(2039) == "2,039"


def test_device_tables_keep_dense_and_sparse_apart():
    md = backmatter.device_markdown(specs.device("h100-sxm"))
    fp16 = next(line for line in md.splitlines() if line.startswith("| FP16 |"))
    cells = [c.strip() for c in fp16.strip("|").split("|")]
    assert cells[1] == "989.4 TFLOP/s" and cells[2] == "1,978.9 TFLOP/s"
    assert cells[3] == backmatter.fmt.num(specs.device("h100-sxm").ridge_point("fp16")) + " FLOP/B"


def test_computed_dense_peaks_are_marked():
    md = backmatter.device_markdown(specs.device("l4"))   # its datasheet prints only sparse peaks
    assert "| FP16 | 121 TFLOP/s † |" in md and "Not printed in the source" in md


def test_h200_dense_peaks_are_the_h100_sxm5s():
    md = backmatter.device_markdown(specs.device("h200-sxm"))
    assert "| BF16 | 989.4 TFLOP/s | 1,979 TFLOP/s |" in md and "†" not in md.split("| BF16 |")[1].split("\n")[0]


def tables(md: str) -> list[list[dict]]:
    """The pipe tables in ``md`` as lists of {header: cell} rows."""
    out, head = [], None
    for line in md.splitlines():
        if not line.startswith("|"):
            head = None
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        if head is None:
            head = cells
            out.append([])
        elif not set("".join(cells)) <= set(":-"):
            out[-1].append(dict(zip(head, cells)))
    return out


def test_every_value_names_its_source():
    for dev in specs.products():
        md = backmatter.device_markdown(dev)
        letters = set(re.findall(r"^- \*\*([a-z])\*\*: ", md, re.M))
        for table in tables(md):
            for row in table:
                used = set(row["Source"].replace(",", " ").split())
                assert used and used <= letters, (dev.name, row)
        for key in {r["key"] for r in dev.spec_table() if r["key"]}:
            assert f"[@{key}]" in md


@pytest.mark.slow
def test_built_hardware_page_lists_every_product(built_book):
    soup = soup_of(built_book / "appendices/hardware.html")
    tabs = [t.get_text(" ", strip=True) for t in soup.select('[role="tab"]')]
    for dev in specs.products():
        assert dev.label.removeprefix("NVIDIA ") in tabs, dev.label
    assert "nan" not in soup.get_text().split()
    assert soup.select("#tbl-hardware-summary table") and soup.select("#tbl-hardware-limits table")


# ------------------------------------------------------------------------- references

@pytest.mark.slow
def test_references_page_lists_every_cited_entry(built_book):
    refs = soup_of(built_book / "references.html")
    entries = {el["id"] for el in refs.select("#refs [id^=ref-]")}
    cited = set()
    for html in built_book.rglob("*.html"):
        if "pagefind" in html.parts:
            continue
        for a in soup_of(html).select("a[href*='#ref-']"):
            cited.add(a["href"].split("#", 1)[1])
    assert cited, "the book cites something"
    assert cited <= entries, sorted(cited - entries)
    assert all(refs.select_one(f"#{e}").get_text(strip=True) for e in entries)


@pytest.mark.slow
@pytest.mark.browser
def test_chapter_map_boxes_are_links_in_the_browser(built_book, chromium):
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(built_book)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{server.server_port}/appendices/chapter-map.html")
        page.wait_for_selector(".chapter-map svg")
        chapters = backmatter.map_chapters(backmatter.book_chapters(ROOT))
        links = page.locator(".chapter-map svg a")
        assert links.count() == len(chapters)
        assert page.locator(".chapter-map svg").get_attribute("aria-label")
        links.first.click()
        page.wait_for_load_state()
        assert page.url.endswith(chapters[0].source.replace(".qmd", ".html"))
    finally:
        context.close()
        server.shutdown()
