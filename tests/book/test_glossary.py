"""The glossary: filters/glossary.lua on a tiny book (links, hover text, the "Terms
in this chapter" box at the chapter's end, errors), then the real book's built pages (every term defined once,
every term link resolving, a box on every chapter that declares terms)."""
import re
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from bookfigs import backmatter

ROOT = Path(__file__).resolve().parents[2]


def html_of(book, rel, **kw):
    proc = book.render(rel, "html", **kw)
    assert proc.returncode == 0, proc.stderr
    return BeautifulSoup(proc.stdout, "html.parser")


# ------------------------------------------------------------------ the filter, tiny book

def test_term_becomes_link_to_glossary_entry_with_definition(tiny_book):
    soup = html_of(tiny_book, "chapters/a.qmd", meta={"book-page": "chapters/a.html", "book-root": "../"})
    link = soup.select("p a.term")[0]
    assert link["href"] == "../appendices/glossary.html#term-arithmetic-intensity"
    assert link["data-definition"] == "The FLOPs a kernel performs per byte it moves."
    assert link["title"] == link["data-definition"]
    assert link.text == "arithmetic intensity"


def test_key_attribute_plural_and_case_resolve(tiny_book):
    soup = html_of(tiny_book, "chapters/a.qmd")
    hrefs = {a.text: a["href"].split("#")[1] for a in soup.select("p a.term")}
    assert hrefs == {"arithmetic intensity": "term-arithmetic-intensity", "rooflines": "term-roofline",
                     "intensities": "term-arithmetic-intensity", "ridge point": "term-ridge-point"}
    soup = html_of(tiny_book, "chapters/b.qmd")
    assert [a["href"].split("#")[1] for a in soup.select("p a.term")] == ["term-ridge-point", "term-roofline"]


def test_terms_of_other_chapters_are_known(tiny_book):
    # chapter a uses "ridge point", which chapter b defines
    soup = html_of(tiny_book, "chapters/a.qmd")
    link = [a for a in soup.select("p a.term") if a.text == "ridge point"][0]
    assert link["data-definition"].startswith("The arithmetic intensity at which")


def test_page_path_without_build_meta_comes_from_the_input_file(tiny_book):
    # as under Quarto, which does not pass book-page: the relative root comes from the file's folder
    soup = html_of(tiny_book, "chapters/b.qmd")
    assert soup.select("p a.term")[0]["href"].startswith("../appendices/glossary.html#")
    # on the glossary page itself (book-page, as the build passes it) a term links within the page
    tiny_book.write("appendices/glossary.qmd", "# Glossary {#sec-glossary}\n\nSee [roofline]{.term}.\n")
    soup = html_of(tiny_book, "appendices/glossary.qmd", meta={"book-page": "appendices/glossary.html"})
    assert soup.select("p a.term")[0]["href"] == "#term-roofline"
    tiny_book.write("index.qmd", "# Preface {.unnumbered}\n\nA [roofline]{.term}.\n")
    soup = html_of(tiny_book, "index.qmd")
    assert soup.select("a.term")[0]["href"] == "appendices/glossary.html#term-roofline"


def test_box_comes_last_and_lists_the_chapters_terms(tiny_book):
    # the opening stays the chapter's question (issue #43): the box follows the chapter's last block
    soup = html_of(tiny_book, "chapters/a.qmd")
    blocks = [el for el in soup.children if getattr(el, "name", None)]
    assert blocks[0].name == "h1" and "terms-box" not in " ".join(blocks[1].get("class", []))
    box = blocks[-1]
    assert "terms-box" in box["class"] and len(soup.select(".terms-box")) == 1
    assert box["title"] == "Terms in this chapter"
    assert [a.text for a in box.select("a.term")] == ["arithmetic intensity", "Roofline"]
    assert "per byte it moves" in box.text


def test_box_comes_last_without_learning_goals(tiny_book):
    soup = html_of(tiny_book, "chapters/b.qmd")
    blocks = [el for el in soup.children if getattr(el, "name", None)]
    assert blocks[0].name == "h1" and "terms-box" in blocks[-1]["class"]


def test_no_box_without_terms(tiny_book):
    tiny_book.write("index.qmd", "# Preface {.unnumbered}\n\nA [roofline]{.term}.\n")
    assert not html_of(tiny_book, "index.qmd").select(".terms-box")


def test_unknown_term_stops_the_build_naming_it(tiny_book):
    tiny_book.write("chapters/b.qmd", "# Beta\n\nA [memory wall]{.term}.\n")
    proc = tiny_book.render("chapters/b.qmd")
    assert proc.returncode != 0
    assert 'unknown term "memory wall"' in proc.stderr


def test_unknown_key_stops_the_build(tiny_book):
    tiny_book.write("chapters/b.qmd", '# Beta\n\nThe [roofs]{.term key="roof line"}.\n')
    proc = tiny_book.render("chapters/b.qmd")
    assert proc.returncode != 0 and 'unknown term "roof line"' in proc.stderr


def test_term_defined_in_two_chapters_is_an_error(tiny_book):
    tiny_book.write("chapters/b.qmd", "---\nterms:\n  - term: roofline\n    def: again\n---\n# Beta\n")
    proc = tiny_book.render("chapters/b.qmd")
    assert proc.returncode != 0
    assert 'term "roofline" is defined twice: in chapters/a.qmd and in chapters/b.qmd' in proc.stderr
    with pytest.raises(ValueError, match="defined twice"):
        backmatter.glossary_terms(backmatter.book_chapters(tiny_book.root))


def test_typst_links_to_the_glossary_label_and_renders_the_box(tiny_book):
    proc = tiny_book.render("chapters/a.qmd", "typst", extra_filters=("callout.lua",))
    assert proc.returncode == 0, proc.stderr
    assert "#link(<term-arithmetic-intensity>)[arithmetic intensity]" in proc.stdout
    assert '#callout(kind: "note", title: [Terms in this chapter])' in proc.stdout
    assert "data-definition" not in proc.stdout


@pytest.mark.parametrize("name", ["FLOP/s", "2:4 sparsity", "L2 cache", "Tensor Core", "  HBM  ", "memory-bound"])
def test_lua_and_python_agree_on_anchors(tiny_book, name):
    tiny_book.write("chapters/b.qmd", f'---\nterms:\n  - term: "{name}"\n    def: d\n---\n# B\n\n[{name.strip()}]{{.term}}\n')
    soup = html_of(tiny_book, "chapters/b.qmd")
    assert soup.select("p a.term")[0]["href"].split("#")[1] == "term-" + backmatter.slug(name.strip())


def test_glossary_markdown_sorted_with_anchors_and_chapter_links(tiny_book):
    md = backmatter.glossary_markdown(tiny_book.root)
    ids = re.findall(r"\{#(term-[\w-]+) \.glossary-entry[^}]*\}", md)
    assert ids == ["term-arithmetic-intensity", "term-ridge-point", "term-roofline"]
    assert "Introduced in @sec-a, *Alpha*." in md and "Introduced in @sec-b, *Beta*." in md


# ------------------------------------------------------------------------ the real book

def chapters_with_terms():
    return [c for c in backmatter.book_chapters(ROOT) if c.terms]


def page(book: Path, rel: str) -> BeautifulSoup:
    return BeautifulSoup((book / rel).read_text(encoding="utf-8"), "html.parser")


def test_every_term_is_defined_once():
    backmatter.glossary_terms(backmatter.book_chapters(ROOT))  # raises on a duplicate


@pytest.mark.slow
def test_glossary_page_has_one_entry_per_term_in_order(built_book):
    terms = backmatter.glossary_terms(backmatter.book_chapters(ROOT))
    soup = page(built_book, "appendices/glossary.html")
    entries = soup.select(".glossary-entry")
    assert [e["id"] for e in entries] == ["term-" + backmatter.slug(t["term"]) for t in terms]
    for e, t in zip(entries, terms):
        assert " ".join(e.select_one("dt").get_text().split()) == t["term"]
        where = e.select_one(".glossary-where a")
        assert where and where["href"].startswith("../" + t["chapter"].source.replace(".qmd", ".html"))


@pytest.mark.slow
def test_every_term_link_resolves_to_a_glossary_entry(built_book):
    ids = {el["id"] for el in page(built_book, "appendices/glossary.html").select("[id]")}
    broken = []
    for html in sorted(built_book.rglob("*.html")):
        if "pagefind" in html.parts:
            continue
        for a in BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser").select("a.term"):
            target, _, anchor = a["href"].partition("#")
            resolved = (html.parent / target).resolve() if target else html.resolve()
            if resolved != (built_book / "appendices/glossary.html").resolve() or anchor not in ids:
                broken.append(f"{html.relative_to(built_book)}: {a.text!r} -> {a['href']}")
            if not a.get("data-definition"):
                broken.append(f"{html.relative_to(built_book)}: {a.text!r} has no definition")
    assert not broken, "\n".join(broken)


@pytest.mark.slow
def test_chapters_with_terms_have_the_box(built_book):
    for ch in backmatter.book_chapters(ROOT):
        soup = page(built_book, ch.source.replace(".qmd", ".html"))
        boxes = soup.select(".callout.terms-box")
        if not ch.terms:
            assert not boxes, ch.source
            continue
        assert len(boxes) == 1, ch.source
        assert [" ".join(a.get_text().split()) for a in boxes[0].select("a.term")] == [str(t["term"]) for t in ch.terms]


# ------------------------------------------------------------------------------ golden

GOLDEN = Path(__file__).parent / "golden"


GOLDEN_FORMATS = [("html", "html"), ("typst", "typ")]


def golden_output(book, fmt: str) -> str:
    """The tiny book's chapter a through the glossary and callout filters, as the build runs them."""
    proc = book.render("chapters/a.qmd", fmt, meta={"book-page": "chapters/a.html", "book-root": "../"},
                       extra_filters=("callout.lua",))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    return proc.stdout


@pytest.mark.parametrize("fmt,ext", GOLDEN_FORMATS)
def test_filter_output_matches_golden(tiny_book, fmt, ext):
    """The golden files are never written by a test run: after an intended change, regenerate them
    with `make golden` (python3 -m tests.update_golden) and read the diff."""
    assert golden_output(tiny_book, fmt) == (GOLDEN / f"chapter-a.{ext}").read_text()
