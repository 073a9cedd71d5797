"""bookbuild.html.reader: the reader's furniture is in the page the build writes, so that no script
moves laid-out text (the browser tests check that nothing moves; these check the markup)."""
from pathlib import Path

from bs4 import BeautifulSoup

from bookbuild.html import reader as reader_html


def listing(cb: str, lines: int, width: int = 20) -> str:
    body = "\n".join(f'<span id="{cb}-{i}"><a href="#{cb}-{i}" aria-hidden="true" tabindex="-1"></a>'
                     f'<span class="kw">x</span>{"y" * (width - 1)}</span>' for i in range(1, lines + 1))
    return (f'<div class="sourceCode" id="{cb}"><pre\nclass="sourceCode python"><code class="sourceCode python">'
            f"{body}</code></pre></div>")


def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def test_every_listing_gets_a_copy_button_inside_its_block():
    page = soup(reader_html.listings(listing("cb1", 3) + '<pre class="cell-output"><code>42</code></pre>'))
    blocks = page.select("div.sourceCode, pre.cell-output")
    assert len(blocks) == 2
    for block in blocks:
        assert "has-copy" in block["class"]
        assert block.select_one("button.copy-code")["aria-label"] == "Copy code to clipboard"


def test_code_copy_false_writes_no_buttons():
    page = soup(reader_html.listings(listing("cb1", 3), copy=False))
    assert not page.select("button.copy-code") and "has-copy" not in page.div["class"]


def test_a_long_listing_is_folded_with_its_button_after_it():
    fold = reader_html.FOLD + 6
    page = soup(reader_html.listings(listing("cb1", fold) + listing("cb2", fold + 1)))
    short, long = page.select("div.sourceCode")
    assert "folded" not in short["class"]
    assert "folded" in long["class"]
    button = long.find_next_sibling()
    assert button.name == "button" and "unfold" in button["class"]
    assert button.get_text() == f"Show all {fold + 1} lines" and button["aria-expanded"] == "false"


def test_a_listing_in_a_widget_is_not_folded():
    html = '<div class="widget" data-widget="x"><div class="inner">' + listing("cb1", 90) + "</div></div>"
    page = soup(reader_html.listings(html))
    assert "folded" not in page.select_one("div.sourceCode")["class"]
    assert not page.select("button.unfold")


def test_a_listing_wider_than_the_column_takes_the_margin():
    cols = reader_html.LISTING_COLUMNS
    page = soup(reader_html.listings(listing("cb1", 3, cols) + listing("cb2", 3, cols + 1)))
    fits, wide = page.select("div.sourceCode")
    assert "wide-listing" not in fits["class"] and "wide-listing" in wide["class"]


def test_tables_scroll_in_a_box_except_a_widgets_and_the_hardware_tables():
    html = ("<table><tr><td>a</td></tr></table>"
            '<div class="cell hw-table"><div><table><tr><td>b</td></tr></table></div></div>'
            '<div class="widget" data-widget="x"><table><tr><td>c</td></tr></table></div>')
    page = soup(reader_html.tables(html))
    boxed = [t.get_text() for t in page.select("div.table-scroll > table")]
    assert boxed == ["a"]


SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="300pt" height="200pt">'
       '<text style="font-size: 8px">a</text><text style="font-size: 10px">b</text></svg>')


def test_a_figure_is_as_wide_as_its_smallest_text_needs(tmp_path: Path):
    (tmp_path / "f.svg").write_text(SVG)
    html = '<figure id="fig-a" class="quarto-float"><p><img src="f.svg" alt="A" width="400" height="267" /></p>'
    page = soup(reader_html.figures(html, tmp_path))
    img = page.select_one("figure span.figure-scroll > img")
    width = 300 * reader_html.MIN_TEXT_PX / 8        # the 8 px text shown at 11 px
    assert img["style"] == f"width:{round(width + 0.4999)}px;max-width:none"
    assert abs(float(img["data-min-text"]) - 8 / 300) < 1e-6
    assert "wide-listing" not in page.figure["class"]  # 413 px: fits the column
    assert img["width"] == "400" and img["height"] == "267"   # the box is known before the file arrives


def test_a_figure_wider_than_the_column_takes_the_margin(tmp_path: Path):
    (tmp_path / "f.svg").write_text(SVG.replace("8px", "4px"))          # 825 px at 11 px text
    html = '<figure id="fig-a" class="quarto-float"><p><img src="f.svg" alt="A" /></p></figure>'
    page = soup(reader_html.figures(html, tmp_path))
    assert "wide-listing" in page.figure["class"]


def test_a_figure_that_fits_stays_in_the_column_and_a_missing_file_is_left_alone(tmp_path: Path):
    (tmp_path / "f.svg").write_text(SVG.replace("8px", "12px").replace("10px", "12px"))
    html = '<figure id="fig-a" class="quarto-float"><p><img src="f.svg" alt="A" /></p></figure>'
    page = soup(reader_html.figures(html, tmp_path))
    assert page.select_one("img")["style"] == "width:400px;max-width:none"   # natural size: 300 pt
    assert "wide-listing" not in page.figure["class"]
    missing = '<figure><p><img src="gone.svg" alt="B" /></p></figure>'
    assert reader_html.figures(missing, tmp_path) == missing


def test_section_headings_get_a_named_permalink_left_out_of_search():
    html = ('<section id="sec-a" class="level2"><h2 id="sec-a-title"><span class="header-section-number">2.1</span> '
            'A &amp; B</h2><p>x</p></section>')
    a = soup(reader_html.permalinks(html)).select_one("h2 > a.anchor")
    assert a["href"] == "#sec-a" and a.get_text() == "#"
    assert a["aria-label"] == "Link to this section: 2.1 A & B"
    assert a.has_attr("data-pagefind-ignore")


def test_images_with_a_known_box_load_as_the_reader_nears_them():
    html = ('<p><img src="a.svg" alt="A"\nwidth="513" height="302" /></p>'
            '<p><img src="b.png" alt="no box: it would grow as it loads" /></p>'
            '<p><img src="c.svg" loading="eager" width="1" height="1" alt="the author said eager" /></p>')
    a, b, c = soup(reader_html.lazy_images(html)).select("img")
    assert (a["loading"], a["decoding"]) == ("lazy", "async")
    assert not b.has_attr("loading")
    assert c["loading"] == "eager" and not c.has_attr("decoding")


def test_search_indexes_each_formula_once_as_its_tex():
    """The search index (Pagefind) sees a formula as its TeX, once: not KaTeX's drawing, nor its
    MathML, whose text runs the parts together ("I∗=Ppeakβ" for I* = P_peak / β, #34)."""
    import re as _re

    from bookbuild.html.mathrender import _indexed_once
    rendered = ('<span class="katex"><span class="katex-mathml"><math><semantics><mrow><msup><mi>I</mi><mo>∗</mo>'
                '</msup></mrow><annotation encoding="application/x-tex">I^*</annotation></semantics></math></span>'
                '<span class="katex-html" aria-hidden="true">I∗</span></span>')
    out = _indexed_once(rendered)
    kept = _re.sub(r"<(\w+)[^>]*data-pagefind-ignore[^>]*>.*?</\1>", "", out)
    assert _re.sub(r"<[^>]+>", "", kept) == "I^*"
    single = _indexed_once('<math><semantics><mi>I</mi><annotation encoding="application/x-tex">I</annotation></semantics></math>')
    assert _re.sub(r"<[^>]+>", "", _re.sub(r"<(\w+)[^>]*data-pagefind-ignore[^>]*>.*?</\1>", "", single)) == "I"
