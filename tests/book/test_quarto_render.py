"""The book rendered by a real Quarto (issue #44): `quarto render --to html` and `--to typst` of a
clean copy of the sources, against our build of the same sources. Quarto's pages number their
figures, tables, listings and equations as ours do; its PDF has as many pages as ours to within
10 %, keeps every word inside the page's text block (the margins _quarto.yml sets; the running head
and the page number in the margins above and below it, one page number a page) and prints no word
over another; on its HTML pages the roofline widget goes live and an exercise checks a kernel.

Quarto cannot be installed from a registry here; ../shared/tools/quarto/build-quarto.sh builds
1.10.18 from its source (docs/building.md, "The same book under real Quarto"). Without `quarto` on PATH the
tests that need it are skipped (the reading of our own PDF and the reading's own test run
everywhere). Each render takes minutes: one per format for the whole module."""
from __future__ import annotations

import html as htmllib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "build"))
from bookcopy import source_files  # noqa: E402  (same folder)
from test_numbering import captions_html  # noqa: E402

needs_quarto = pytest.mark.skipif(shutil.which("quarto") is None,
                                reason="quarto is not on PATH (it cannot be installed here; "
                                       "../shared/tools/quarto/build-quarto.sh builds one)")

RENDER_TIMEOUT = 3600          # a cold render of the whole book on two loaded cores: 5-10 minutes
PAGE_SLACK = 0.10
# typst hangs punctuation and hyphens a little into the margin (up to 2 pt in our own PDF)
OVERHANG_PT = 5.0
CM = 72 / 2.54


def clean_copy(dest: Path) -> Path:
    """The sources as git sees them (tracked and untracked, not ignored: no _book, no caches),
    with node_modules linked, as an author's checkout would be."""
    for rel in source_files(ROOT):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    (dest / "node_modules").symlink_to((ROOT / "node_modules").resolve())
    return dest


def quarto_render(tmp_path_factory, to: str) -> Path:
    book = clean_copy(tmp_path_factory.mktemp(f"quarto-{to}"))
    proc = subprocess.run(["quarto", "render", "--to", to], cwd=book, capture_output=True, text=True,
                          timeout=RENDER_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if line.startswith("ERROR")]
    assert errors == [], errors
    return book / "_book"


@pytest.fixture(scope="module")
def quarto_html(tmp_path_factory) -> Path:
    return quarto_render(tmp_path_factory, "html")


@pytest.fixture(scope="module")
def quarto_pdf(tmp_path_factory) -> Path:
    pdfs = list(quarto_render(tmp_path_factory, "typst").glob("*.pdf"))
    assert len(pdfs) == 1, pdfs
    return pdfs[0]


@pytest.fixture(scope="module")
def ours(book_copy) -> Path:
    return book_copy.ensure(("html", "pdf"))


# ------------------------------------------------------------------ reading a PDF's words

def pdf_pages(pdf: Path) -> list[tuple[float, float, list[tuple[float, float, float, float, str]]]]:
    """(width, height, words) for each page; a word is (x0, y0, x1, y1, text) in points, y down."""
    out = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    pages = []
    for m in re.finditer(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', out, re.S):
        words = [(float(a), float(b), float(c), float(d), htmllib.unescape(t)) for a, b, c, d, t in re.findall(
            r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">(.*?)</word>', m.group(3))]
        pages.append((float(m.group(1)), float(m.group(2)), words))
    return pages


def page_count(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def length_pt(value: str) -> float:
    m = re.fullmatch(r"(-?[\d.]+)(pt|mm|cm|in)", str(value).strip())
    assert m, f"margin {value!r}: expected a length in pt, mm, cm or in"
    return float(m.group(1)) * {"pt": 1, "mm": CM / 10, "cm": CM, "in": 72}[m.group(2)]


def margins() -> tuple[float, float]:
    """(x, y) in points from _quarto.yml's `format: typst: margin:`."""
    margin = yaml.safe_load((ROOT / "_quarto.yml").read_text())["format"]["typst"]["margin"]
    return length_pt(margin["x"]), length_pt(margin["y"])


MATH = re.compile(r"[\U0001D400-\U0001D7FF∑∫√()\[\]{}|⌈⌉⌊⌋]")


def overlapping(words) -> list[tuple[str, str]]:
    """Pairs of words whose boxes share more than a quarter of the smaller one: one printed over
    the other. Math is left out (pdftotext boxes a tall bracket over the symbols it encloses)."""
    found = []
    ws = sorted((w for w in words if not MATH.search(w[4])), key=lambda w: w[1])
    for i, a in enumerate(ws):
        for b in ws[i + 1:]:
            if b[1] >= a[3]:
                break
            ix, iy = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
            small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
            if ix > 0 and iy > 0 and small > 0 and ix * iy > 0.25 * small:
                found.append((a[4], b[4]))
    return found


def layout_faults(pdf: Path) -> list[str]:
    """Every word outside the text block (left and right: the margins; above and below: the
    running head and the page number may sit in the margin, but not in its outer quarter), page
    numbers printed twice, and words printed over others, as 'page N: ...'."""
    mx, my = margins()
    faults = []
    for n, (w, h, words) in enumerate(pdf_pages(pdf), 1):
        out = [t for x0, y0, x1, y1, t in words
               if x0 < mx - OVERHANG_PT or x1 > w - mx + OVERHANG_PT or y0 < my / 4 or y1 > h - my / 4]
        if out:
            faults.append(f"page {n}: outside the text block: {out[:8]}")
        numbers = [t for x0, y0, x1, y1, t in words if (y1 < my or y0 > h - my) and t == str(n)]
        if len(numbers) > 1:
            faults.append(f"page {n}: page number printed {len(numbers)} times")
        body_in_foot = [t for x0, y0, x1, y1, t in words if y0 > h - my and t != str(n)]
        if body_in_foot:
            faults.append(f"page {n}: text in the bottom margin: {body_in_foot[:8]}")
        over = overlapping(words)
        if over:
            faults.append(f"page {n}: printed over each other: {over[:4]}")
    return faults


# ------------------------------------------------------------------ the tests

@needs_quarto
def test_quartos_html_numbers_every_caption_as_ours(quarto_html, ours):
    chapters = sorted(p.relative_to(ours).as_posix() for p in (ours / "chapters").glob("*.html"))
    chapters += sorted(p.relative_to(ours).as_posix() for p in (ours / "appendices").glob("*.html"))
    assert chapters
    total = 0
    for rel in chapters:
        theirs_path = quarto_html / rel
        assert theirs_path.is_file(), f"Quarto wrote no {rel}"
        mine = captions_html((ours / rel).read_text(encoding="utf-8"))
        assert captions_html(theirs_path.read_text(encoding="utf-8")) == mine, rel
        total += len(mine)
    assert total > 50, f"only {total} numbered captions read: the reading is broken"


@needs_quarto
def test_quartos_pdf_has_as_many_pages_as_ours(quarto_pdf, ours):
    theirs, mine = page_count(quarto_pdf), page_count(next(ours.glob("*.pdf")))
    assert abs(theirs - mine) <= PAGE_SLACK * mine, f"Quarto's PDF {theirs} pages, ours {mine}"


@needs_quarto
def test_quartos_pdf_keeps_its_text_in_the_text_block(quarto_pdf):
    assert layout_faults(quarto_pdf) == []


@needs_quarto
def test_quartos_pdf_leaves_out_the_web_only_text(quarto_pdf, ours):
    theirs = subprocess.run(["pdftotext", str(quarto_pdf), "-"], capture_output=True, text=True, check=True).stdout
    mine = subprocess.run(["pdftotext", str(next(ours.glob("*.pdf"))), "-"], capture_output=True, text=True,
                          check=True).stdout
    for web_only in ("Things to try", "Change the device, number format"):
        assert web_only not in mine and web_only not in theirs, web_only
    assert "Printed: the opening settings" in " ".join(theirs.split()), "the print-only caption is printed"


def test_our_pdf_keeps_its_text_in_the_text_block(ours):
    """The same reading of our own PDF: the reading passes a PDF that is right."""
    assert layout_faults(next(ours.glob("*.pdf"))) == []


def test_the_layout_reading_finds_text_in_the_margin_and_a_second_page_number(tmp_path):
    """A page with a word past the right margin, a number in the header and at the foot, and two
    words on top of each other: each is found."""
    typst = pytest.importorskip("typst")
    mx, my = margins()
    src = tmp_path / "bad.typ"
    src.write_text(f'#set page(paper: "a4", margin: (x: {mx}pt, y: {my}pt), numbering: "1", header: align(right)[1])\n'
                   f'Body text. #place(dx: 100% + 1cm)[outside]\n\n#place(dx: 3cm, dy: 3cm)[DRAM;]'
                   f'#place(dx: 3cm, dy: 3cm)[Horowitz]\n')
    typst.compile(str(src), output=str(tmp_path / "bad.pdf"))
    faults = " ".join(layout_faults(tmp_path / "bad.pdf"))
    assert "outside the text block: ['outside']" in faults
    assert "page number printed 2 times" in faults
    assert "printed over each other" in faults and "DRAM;" in faults


# ------------------------------------------------------------------ Quarto's HTML, live

@pytest.fixture(scope="module")
def quarto_site(quarto_html):
    from a11y_site import serve
    server = serve(quarto_html)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@needs_quarto
@pytest.mark.browser
def test_the_roofline_widget_goes_live_on_quartos_page(chromium, quarto_site):
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(120_000)       # Pyodide boots in the widget's worker
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(quarto_site + "chapters/roofline.html", wait_until="load")
        widget = page.locator(".widget[data-widget='roofline']").first
        widget.scroll_into_view_if_needed()
        page.wait_for_function("[...document.querySelectorAll('.widget[data-widget=\"roofline\"]')]"
                               ".some(w => w.dataset.state === 'live')")
        # a control changes the drawing: the FP32 roof is drawn from calc in the browser
        before = widget.locator(".widget-readouts").inner_text()
        widget.locator("select[name='dtype']").select_option("fp32")
        page.wait_for_function("(before) => document.querySelector('.widget[data-widget=\"roofline\"] .widget-readouts')"
                               ".innerText !== before", arg=before)
        assert errors == []
    finally:
        context.close()


@needs_quarto
@pytest.mark.browser
def test_an_exercise_checks_a_kernel_on_quartos_page(chromium, quarto_site):
    from test_exercises_browser import EX, REFERENCE, WRONG, check, open_page, reach, type_code
    context, page, errors, _ = open_page(chromium, quarto_site + "chapters/gpu.html", "desktop-light")
    try:
        reach(page)
        type_code(page, WRONG, False)
        assert "never written" in check(page, False, "Not yet")
        type_code(page, REFERENCE, False)
        check(page, False, "Passed")
        assert page.locator(f"{EX}.solved").count() == 1
        assert errors == []
    finally:
        context.close()
