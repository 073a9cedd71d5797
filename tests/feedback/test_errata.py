"""feedback/errata.py: text-fragment links from a TextQuoteSelector, and the errata page's markdown."""

import json
from urllib.parse import unquote

import pytest

from feedback.errata import load, page_markdown, text_fragment


def terms(fragment: str) -> list[str]:
    assert fragment.startswith(":~:text=")
    raw = fragment.removeprefix(":~:text=").split(",")
    for term in raw:  # '-', ',' and '&' inside a term are percent-encoded, so they are only syntax here
        assert "&" not in term and "-" not in term.strip("-")
    return [unquote(t) for t in raw]


def test_prefix_exact_suffix_in_order():
    assert terms(text_fragment("memory-bound", "A kernel is ", " when its arithmetic")) == \
        ["A kernel is-", "memory-bound", "-when its arithmetic"]


def test_syntax_characters_and_unicode_are_percent_encoded():
    fragment = text_fragment("a, b & c-d 🚀", "x ", " y")
    assert "%2C%20b%20%26%20c%2Dd%20%F0%9F%9A%80" in fragment
    assert terms(fragment) == ["x-", "a, b & c-d 🚀", "-y"]


def test_context_cut_by_the_selector_loses_its_partial_outer_word():
    prefix = "emory is slow, so the kernel is "  # 32 characters: "emory" may be a cut "memory"
    suffix = " once the data fits in the L2 cac"
    assert terms(text_fragment("bound", prefix, suffix)) == ["the kernel is-", "bound", "-once the data"]


def test_context_stops_at_a_line_break_and_inside_a_word():
    assert terms(text_fragment("Roofline", "Chapter 2\n", "s are drawn\nlater")) == ["Roofline"]


def test_long_passage_is_linked_by_its_first_and_last_words():
    exact = " ".join(f"w{i}" for i in range(100))
    assert terms(text_fragment(exact)) == ["w0 w1 w2 w3 w4", "w95 w96 w97 w98 w99"]


def write(tmp_path, entries):
    (tmp_path / "errata").mkdir(exist_ok=True)
    (tmp_path / "errata" / "errata.json").write_text(json.dumps({"format": 1, "entries": entries}))


def entry(**fields):
    base = {"id": "e1", "page": "/chapters/one.html", "section": "sec-one", "version": "abc1234",
            "exact": "Mind the units.", "prefix": "Bytes. ", "suffix": " Then", "note": "Units named: GB/s.",
            "resolved_at": "2026-11-20T10:00:00.000000Z"}
    return {**base, **fields}


def test_page_groups_by_build_newest_first_and_links_by_book_path(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "one.qmd").write_text("# Chapter *one* {#sec-one}\n")
    write(tmp_path, [entry(), entry(id="e2", version="def5678", page="/book/chapters/one.html", section="",
                                    note="Typo [fixed].", resolved_at="2026-11-22T10:00:00.000000Z"),
                     entry(id="e3", page="/gone.html", note="Page removed.")])
    md = page_markdown("errata/errata.json", root=tmp_path)
    assert md.index("## Build def5678") < md.index("## Build abc1234")
    assert "- [Chapter *one*](<../chapters/one.html#sec-one:~:text=Bytes.-,Mind%20the%20units.,-Then>)" in md
    assert "(<../chapters/one.html#:~:text=" in md  # hosted under /book/: found by its tail
    assert "Typo \\[fixed\\]\\." in md and "/gone\\.html" in md


def test_no_file_is_no_entries_and_a_bad_file_is_a_clear_error(tmp_path):
    assert page_markdown("errata/errata.json", root=tmp_path).startswith("No corrections")
    (tmp_path / "errata").mkdir()
    (tmp_path / "errata" / "errata.json").write_text('{"format": 1,\n "entries": [}')
    with pytest.raises(ValueError, match=r"errata\.json:2: not valid JSON"):
        load(tmp_path / "errata" / "errata.json")
    write(tmp_path, [{"id": "x"}])
    with pytest.raises(ValueError, match="entry 0 \\(x\\): missing page, version, note, resolved_at"):
        load(tmp_path / "errata" / "errata.json")
