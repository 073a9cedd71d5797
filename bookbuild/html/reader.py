"""The reader's furniture, written into a page's HTML at build time.

Copy buttons, folded long listings, wrappers that let wide tables and figures scroll sideways,
the width a figure needs for its smallest text to stay readable, and heading permalinks were
once added by ``assets/js/book.js`` after the page had been laid out. Each of them moved the text
below it while the reader was already looking (a layout shift of 0.05-0.7 on the widget chapters).
Written here, they are in the first layout; the script only wires behaviour to them.

Pandoc's HTML for these elements is regular (``--section-divs``; a highlighted listing is
``<div class="sourceCode" id="cbN"><pre ...><code ...>…</code></pre></div>``), so each pass is a
regular expression over the body and none parses the whole page.
"""
from __future__ import annotations

import html
import math
import re
from pathlib import Path
from typing import Callable

COPY = '<button type="button" class="copy-code" aria-label="Copy code to clipboard">Copy</button>'
# A listing longer than FOLD + 6 lines shows its first FOLD lines (book.css: max-height 32rem).
FOLD = 34
# Static figures: wide enough that their smallest text is at least this many CSS px.
MIN_TEXT_PX = 11
# The text column (palette.css --text-width: 42rem at 16 px) less a listing's padding (2 x 1rem),
# and the advance of the monospace font at a listing's .86em: how many characters fit on a line
# before a listing scrolls sideways, and so takes the margin column on a wide screen.
COLUMN_PX = 42 * 16
LISTING_COLUMNS = math.floor((COLUMN_PX - 32) / (0.86 * 16 * 0.6))

SOURCE_CODE = re.compile(r'<div class="sourceCode"([^>]*)>(<pre\b.*?</pre>)</div>', re.S)
PLAIN_PRE = re.compile(r'<pre\b(?![^>]*\bclass="[^"]*\bsourceCode\b)([^>]*)>(.*?)</pre>', re.S)
TABLE = re.compile(r"<table\b.*?</table>", re.S)
FIGURE_IMG = re.compile(r'(<figure\b[^>]*>)(\s*<p>)?(\s*<img\b[^>]*?\ssrc="([^"]+\.svg)"[^>]*>)', re.S)
HEADING = re.compile(r'(<section id="([^"]+)"[^>]*>\s*<(h[2-4])\b[^>]*>)(.*?)(</h[2-4]>)', re.S)
DIV_TAG = re.compile(r"<(/?)div\b")
SVG_WIDTH = re.compile(r'<svg[^>]*?\swidth="([\d.]+)pt"')
SVG_FONT = re.compile(r"font-size:\s*([\d.]+)px")
TAGS = re.compile(r"<[^>]+>")
IMG = re.compile(r"<img\b[^>]*>")
LOADING, BOX_WIDTH, BOX_HEIGHT = (re.compile(rf"\s{a}=") for a in ("loading", "width", "height"))


def apply(body: str, source: Callable[[str], Path], copy: bool = True) -> str:
    """The body of one page with its furniture; ``source`` gives the file behind an image's
    ``src`` (bookbuild.html.site.figure_source); ``copy`` is false under ``format.html.code-copy: false``."""
    body = listings(body, copy)
    body = tables(body)
    body = figures(body, source)
    body = lazy_images(body)
    return permalinks(body)


def _spans(body: str, opener: re.Pattern) -> list[tuple[int, int]]:
    """Where each ``<div>`` whose start tag ``opener`` matches begins and ends."""
    spans = []
    for m in opener.finditer(body):
        depth, pos = 0, m.start()
        for tag in DIV_TAG.finditer(body, pos):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                spans.append((m.start(), tag.end()))
                break
    return spans


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


WIDGET = re.compile(r'<div\b[^>]*\bdata-widget=')
HW_TABLE = re.compile(r'<div class="[^"]*\bhw-table\b')


def _text(fragment: str) -> str:
    return html.unescape(TAGS.sub("", fragment))


def listings(body: str, copy: bool = True) -> str:
    """Every listing gets its Copy button; a long one outside a widget is folded, with the button
    that unfolds it; one whose longest line overflows the column takes the margin column on a wide
    screen (``wide-listing``)."""
    widgets = _spans(body, WIDGET)
    button = COPY if copy else ""

    def fold_and_widen(holder_start: str, inner: str, at: int) -> tuple[str, str]:
        text = _text(inner)
        lines = text.count("\n") + 1
        classes, after = [], ""
        if max((len(line) for line in text.split("\n")), default=0) > LISTING_COLUMNS:
            classes.append("wide-listing")
        if lines > FOLD + 6 and not _inside(at, widgets):
            classes.append("folded")
            after = (f'<button type="button" class="unfold" aria-expanded="false">'
                     f"Show all {lines} lines</button>")
        return " ".join(classes), after

    def source_code(m: re.Match) -> str:
        extra, after = fold_and_widen("", m.group(2), m.start())
        cls = " ".join(filter(None, ["sourceCode", "has-copy" if copy else "", extra]))
        return f'<div class="{cls}"{m.group(1)}>{m.group(2)}{button}</div>{after}'

    body = SOURCE_CODE.sub(source_code, body)

    def plain(m: re.Match) -> str:
        attrs, inner = m.group(1), m.group(2)
        extra, after = fold_and_widen("", inner, m.start())
        add = " ".join(filter(None, ["has-copy" if copy else "", extra]))
        if not add:
            return m.group(0)
        if 'class="' in attrs:
            attrs = attrs.replace('class="', f'class="{add} ', 1)
        else:
            attrs = f' class="{add}"' + attrs
        return f"<pre{attrs}>{inner}{button}</pre>{after}"

    return PLAIN_PRE.sub(plain, body)


def tables(body: str) -> str:
    """A table (not one of a widget's or the hardware appendix's, which scroll themselves) sits
    in a ``table-scroll`` box, so that a wide one scrolls inside it instead of widening the page."""
    skip = _spans(body, WIDGET) + _spans(body, HW_TABLE)
    return TABLE.sub(lambda m: m.group(0) if _inside(m.start(), skip)
                     else f'<div class="table-scroll">{m.group(0)}</div>', body)


def figure_width(svg: str) -> tuple[int, float] | None:
    """The CSS width (px) at which a matplotlib SVG's smallest text is MIN_TEXT_PX, never less
    than its natural size, and that text's size per px of width; None without sizes."""
    w = SVG_WIDTH.search(svg)
    sizes = [float(s) for s in SVG_FONT.findall(svg)]
    if not w or not sizes:
        return None
    width = float(w.group(1))
    return math.ceil(max(width * MIN_TEXT_PX / min(sizes), width * 4 / 3)), min(sizes) / width


def figures(body: str, source: Callable[[str], Path] | Path) -> str:
    """A static SVG figure is shown at the width its smallest text needs (``figure_width``), in a
    ``figure-scroll`` box; wider than the column, the figure takes the margin column on a wide
    screen (``wide-listing``) and scrolls sideways on a phone. ``source``: the file behind a
    ``src``, or the folder ``src`` is relative to."""
    if isinstance(source, Path):
        folder = source
        source = lambda src: folder / src   # noqa: E731

    def one(m: re.Match) -> str:
        fig, para, img, src = m.group(1), m.group(2) or "", m.group(3), m.group(4)
        if "chapter-map" in fig:
            return m.group(0)
        path = source(html.unescape(src))
        try:
            sized = figure_width(path.read_text(encoding="utf-8"))
        except OSError:
            sized = None
        if sized is None:
            return m.group(0)
        width, per_px = sized
        img = img.replace("<img", f'<img style="width:{width}px;max-width:none" data-min-text="{per_px:.6g}"', 1)
        if width > COLUMN_PX:
            fig = fig.replace('class="', 'class="wide-listing ', 1) if 'class="' in fig \
                else fig.replace("<figure", '<figure class="wide-listing"', 1)
        return f'{fig}{para}<span class="figure-scroll">{img}</span>'

    return FIGURE_IMG.sub(one, body)


def lazy_images(body: str) -> str:
    """Images whose box is known before they load (width and height attributes) are fetched and
    drawn only as the reader nears them. A matplotlib SVG is parsed as a document of its own on the
    page's main thread (15-55 ms each on the 2-core machine); three of them, loaded at once, held
    up the start of the widgets' worker, which that thread relays."""
    def one(m: re.Match) -> str:
        tag = m.group(0)
        if LOADING.search(tag) or not (BOX_WIDTH.search(tag) and BOX_HEIGHT.search(tag)):
            return tag
        return tag.replace("<img", '<img loading="lazy" decoding="async"', 1)

    return IMG.sub(one, body)


def permalinks(body: str) -> str:
    """A permalink after each section heading (levels 2-4), named for screen readers and left out
    of the search index."""
    def one(m: re.Match) -> str:
        name = " ".join(_text(m.group(4)).split())
        label = html.escape(f"Link to this section: {name}")
        return (f'{m.group(1)}{m.group(4)} <a class="anchor" href="#{m.group(2)}" aria-label="{label}" '
                f'data-pagefind-ignore>#</a>{m.group(5)}')

    return HEADING.sub(one, body)
