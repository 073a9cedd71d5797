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
