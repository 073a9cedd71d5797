"""Glyphs every font draws, in the built book (#34): a transpose is a real superscript (<sup>, or
^T in plain-text hovers), never U+1D40 (ᵀ), which serif fonts without it draw as ˢ. Code listings
(monospace fonts carry it) and a figure's hidden title and description are left alone."""
import re

HIDDEN = re.compile(r"<(pre|code|title|desc|script|style)\b.*?</\1>", re.S)
TAG = re.compile(r"<[^>]+>")


def test_no_modifier_letter_t_in_the_text_of_the_book(built_book):
    pages = sorted(built_book.glob("chapters/*.html")) + sorted(built_book.glob("appendices/*.html"))
    assert pages
    for page in pages:
        html = page.read_text(encoding="utf-8")
        text = TAG.sub("", HIDDEN.sub("", html))
        assert "ᵀ" not in text, (page.name, text[max(0, text.index("ᵀ") - 60):text.index("ᵀ") + 20])
        for definition in re.findall(r'data-definition="([^"]*)"', html):
            assert "ᵀ" not in definition, (page.name, definition)
    glossary = (built_book / "appendices" / "glossary.html").read_text(encoding="utf-8")
    assert "QK<sup>T</sup>" in glossary


def test_typography_of_references_titles_and_footer(built_book):
    """#34: a cross-reference never breaks between its name and number (a no-break space, as
    Quarto's nbspString); an appendix title is "Appendix B — Chapter map" with one gap before the
    dash and no break before it; the footer names the licence once, as the link."""
    chapter = (built_book / "chapters" / "roofline.html").read_text(encoding="utf-8")
    refs = re.findall(r'class="xref"[^>]*>([^<]+)</a>', chapter)
    named = [r for r in refs if re.match(r"(Figure|Table|Section|Equation|Chapter|Appendix)\W", r)]
    assert named and all("\u00a0" in r and " " not in r for r in named), named[:5]
    appendix = (built_book / "appendices" / "chapter-map.html").read_text(encoding="utf-8")
    h1 = re.sub(r"[ \n]+", " ", TAG.sub("", re.search(r"<h1[^>]*>(.*?)</h1>", appendix, re.S).group(1)))
    # the gap before the dash is a character, so search, copy and screen readers get it too; a line
    # may break after the dash (a no-break space there made "Appendix A — Glossary" one run wider
    # than a phone's screen, which cut "Glossary" off at 390 px)
    assert h1 == "Appendix\u00a0B\u00a0— Chapter map", repr(h1)
    footer = TAG.sub("", re.search(r'<p class="license">(.*?)</p>', chapter, re.S).group(1))
    assert footer.count("CC BY 4.0") == 1, footer
