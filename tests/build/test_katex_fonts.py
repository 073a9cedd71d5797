"""KaTeX's woff2 fonts are cut down to the glyphs the book's math uses."""
from bookbuild.html.mathrender import used_characters
from bookbuild.html.npm import node_modules


def test_fonts_keep_the_glyphs_the_math_uses_and_drop_the_rest(built_fixture):
    from fontTools.ttLib import TTFont
    root, _ = built_fixture
    full = node_modules(root) / "katex" / "dist" / "fonts" / "KaTeX_Main-Regular.woff2"
    cut = root / "_book" / "assets" / "katex" / "fonts" / "KaTeX_Main-Regular.woff2"
    assert cut.stat().st_size < full.stat().st_size * 0.7
    used = used_characters(root)
    assert "=" in used and "F" in used          # from $$ I = \frac{F}{B} $$ in chapter one
    full_cmap, cut_cmap = TTFont(full).getBestCmap(), TTFont(cut).getBestCmap()
    kept = {c for c in used if ord(c) in full_cmap}
    assert kept and all(ord(c) in cut_cmap for c in kept)
    dropped = [cp for cp in full_cmap if chr(cp) not in used]
    assert dropped and not any(cp in cut_cmap for cp in dropped)
    # the woff/ttf fallbacks are still there for browsers without woff2
    assert (cut.parent / "KaTeX_Main-Regular.woff").exists()


def test_a_page_preloads_the_faces_its_math_classes_name_in_katex_stylesheet():
    from pathlib import Path
    from bookbuild.html.mathrender import katex_fonts
    css = (node_modules(Path(__file__).resolve().parents[2]) / "katex" / "dist" / "katex.min.css").read_text()
    page = ('<span class="katex"><span class="mord mathnormal">x</span><span class="mord mathsf">A</span>'
            '<span class="delimsizing size1">(</span><span class="sizing reset-size6 size3">2</span></span>')
    assert katex_fonts(page, css) == ["KaTeX_Main-Regular", "KaTeX_Math-Italic", "KaTeX_SansSerif-Regular",
                                      "KaTeX_Size1-Regular"]   # "size3" here is a text size, not .delimsizing.size3
    assert katex_fonts('<p class="x">no math</p>', css) == []
