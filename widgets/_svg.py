"""Small SVG helpers shared by the widgets: escaping, elements, label placement.

Colours are never written into the figures: elements carry ``wg-*`` classes and
the page's ``assets/css/widgets.css`` colours them (light, dark, print).  A
figure saved on its own (PDF) gets ``PRINT_CSS`` instead.
"""
from __future__ import annotations

import json
import math

# For a figure outside the page (typst/PDF, exported file): black on white, two accents.
PRINT_CSS = (
    ".wg{color:#111;font-family:Helvetica,Arial,sans-serif;font-size:13px}"
    ".wg text{fill:currentColor}.wg .wg-muted{fill:#555}.wg .wg-small{font-size:11px}"
    ".wg .wg-strong{font-weight:bold}.wg .wg-controls-hint{display:none}"
    ".wg .wg-axis{stroke:#111;fill:none}.wg .wg-grid{stroke:#ccc;fill:none}"
    ".wg .wg-c1{stroke:#1d4ed8;fill:none;stroke-width:2.5}"
    ".wg .wg-c2{stroke:#c2410c;fill:none;stroke-width:2;stroke-dasharray:6 4}"
    ".wg .wg-ridge{stroke:#777;stroke-dasharray:3 3;fill:none}"
    ".wg .wg-pt{fill:#1d4ed8;stroke:#fff}.wg .wg-pt.wg-ghost{fill:#fff;stroke:#1d4ed8}"
    ".wg .wg-pt.wg-sel{fill:#c2410c;stroke:#111;stroke-width:1.5}"
    ".wg .wg-arrow{stroke:#555;fill:none;stroke-width:1.5}.wg .wg-arrowhead{fill:#555}"
    ".wg .wg-box{fill:none;stroke:#444}.wg .wg-box.wg-sel{stroke:#c2410c;stroke-width:2.5}"
    ".wg .wg-t0{fill:#bfdbfe;stroke:#fff}.wg .wg-t1{fill:#93c5fd;stroke:#fff}"
    ".wg .wg-idle{fill:#e5e5e5;stroke:#fff}.wg .wg-tsel,.wg circle.wg-sel{fill:#c2410c;stroke:#111}"
    ".wg .wg-cells{stroke:#fff;fill:none;stroke-width:.75}"
    ".wg .wg-face{fill:#dbeafe;fill-opacity:.7;stroke:#555;stroke-width:.75}.wg .wg-face.wg-top{fill:#eff6ff}"
    ".wg .wg-face.wg-side{fill:#bfdbfe}.wg .wg-face.wg-sel{fill:#fdba74;fill-opacity:1;stroke:#c2410c}"
    ".wg .wg-h0{fill:#f5f5f4}.wg .wg-h1{fill:#fde0c5}.wg .wg-h2{fill:#fbbf8a}.wg .wg-h3{fill:#f59e5b}"
    ".wg .wg-h4{fill:#ea7a32}.wg .wg-hn1{fill:#dbeafe}.wg .wg-hn2{fill:#b4d0fb}.wg .wg-hn3{fill:#86b1f5}"
    ".wg .wg-hn4{fill:#5b8fea}.wg .wg-pblock{fill:#eee}.wg .wg-blocks{stroke:#c2410c;stroke-width:2;fill:none}"
    ".wg .wg-mono{font-family:Courier,monospace}.wg .wg-cellnum{font-size:10.5px}.wg .wg-bad{fill:#c2410c}"
    ".wg .wg-load{fill:#fdba74;stroke:#fff}.wg .wg-cur{fill:#93c5fd;stroke:#1d4ed8;stroke-width:1.5}"
    ".wg .wg-done{fill:#bfdbfe;stroke:#fff}.wg .wg-pe{fill:#f5f5f5;stroke:#777}"
    ".wg .wg-pe.wg-cur{fill:#fdba74;stroke:#c2410c;stroke-width:2}"
)


_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"})


def esc(text) -> str:
    """Text or attribute value for XML/HTML (the ``html`` module would pull in 100 kB of entities)."""
    return str(text).translate(_ESCAPES)


def unesc(text: str) -> str:
    """The text ``esc`` escaped (``&amp;`` last, so that an escaped "&amp;lt;" stays "&lt;")."""
    for char, entity in _ESCAPES_BACK:
        text = text.replace(entity, char)
    return text


_ESCAPES_BACK = [(chr(c), e) for c, e in _ESCAPES.items() if c != ord("&")] + [("&", "&amp;")]


def num(x: float) -> str:
    """Coordinates with at most one decimal, no trailing zeros."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def svg_root(width: float, height: float, cls: str, title: str, desc: str, body: list[str],
             extra: str = "") -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="wg {cls}" viewBox="0 0 {num(width)} {num(height)}"'
        f' width="{num(width)}" height="{num(height)}" role="img"{extra}>'
        f"<title>{esc(title)}</title><desc>{esc(desc)}</desc>{''.join(body)}</svg>"
    )


# A transpose's superscript T as a real superscript: U+1D40 (ᵀ) is missing from many serif fonts
# (Debian without Charter or Georgia falls back to one that draws it as ˢ).
SUPER_T = '<tspan baseline-shift="super" font-size="75%">T</tspan>'


def text(x, y, content, cls="", anchor="start", extra="") -> str:
    c = f' class="{cls}"' if cls else ""
    a = f' text-anchor="{anchor}"' if anchor != "start" else ""
    return f'<text x="{num(x)}" y="{num(y)}"{c}{a}{extra}>{esc(content).replace("ᵀ", SUPER_T)}</text>'


def line(x1, y1, x2, y2, cls) -> str:
    return f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" class="{cls}"/>'


def polyline(points, cls) -> str:
    pts = " ".join(f"{num(x)},{num(y)}" for x, y in points)
    return f'<polyline points="{pts}" class="{cls}"/>'


def polygon(points, cls, extra="") -> str:
    pts = " ".join(f"{num(x)},{num(y)}" for x, y in points)
    return f'<polygon points="{pts}" class="{cls}"{extra}/>'


SMALL_CHAR_PX = 6.9     # advance of a wg-small character, with room to spare (SVG text does not wrap)
STRONG_CHAR_PX = 7.8    # ... of a wg-strong one


def wrap_px(content: str, width_px: float, char_px: float = SMALL_CHAR_PX) -> list[str]:
    """``content`` in lines that fit ``width_px`` at ``char_px`` per character."""
    return wrap(content, int(width_px / char_px))


def text_lines(x, y, lines, cls, leading=14) -> list[str]:
    """One <text> per line, the first on baseline ``y``."""
    return [text(x, y + leading * i, ln, cls) for i, ln in enumerate(lines)]


def wrap(content: str, width: int) -> list[str]:
    """Greedy word wrap to lines of at most ``width`` characters (SVG text does not wrap)."""
    lines, current = [], ""
    for word in str(content).split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    return lines + [current] if current else lines


def data_set(values: dict) -> str:
    """Attribute that makes an element clickable: the host merges ``values`` into the params."""
    return f" data-set='{esc(json.dumps(values, separators=(',', ':')))}'"


def decade_ticks(lo: float, hi: float) -> list[float]:
    """Powers of ten in [lo, hi]."""
    first, last = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    return [10.0 ** k for k in range(first, last + 1)]


def text_width(content: str, size: float = 13) -> float:
    """Rough advance width of sans-serif text: good enough to keep labels apart."""
    return 0.6 * size * len(str(content))


WIDE_CHAR_EXTRA_PX = 0.75   # capitals and digits are wider than the average a char_px stands for


def label_px(content, char_px: float = SMALL_CHAR_PX) -> float:
    """Advance width of a label in the book's sans-serif: ``char_px`` a character, more for capitals
    and digits (Chromium lays "GELU" out 30.4 px wide at 11.5 px, not 4 × 6.9)."""
    content = str(content)
    return char_px * len(content) + WIDE_CHAR_EXTRA_PX * sum(c.isupper() or c.isdigit() for c in content)


class LabelPlacer:
    """Greedy placement: each label takes the first candidate spot that overlaps none placed."""

    def __init__(self, bounds):
        self.bounds = bounds          # (x0, y0, x1, y1) the labels must stay inside
        self.boxes = []
        self.soft = []                # boxes a label may cover when there is no other place

    def reserve(self, box, soft=False):
        (self.soft if soft else self.boxes).append(box)

    def place(self, x, y, content, size=13, gap=8, char_px=SMALL_CHAR_PX, must=False):
        """A spot for ``content`` near (x, y): (x, baseline, anchor), or None.  ``char_px`` is the
        advance per character of the label's class (SMALL_CHAR_PX, STRONG_CHAR_PX); ``size`` sets
        its height.  A label that ``must`` be shown may cover soft boxes (a line) when no spot
        clear of them is left; it never covers another label."""
        w, h = label_px(content, char_px), size + 2
        x0, y0, x1, y1 = self.bounds
        candidates = []
        for dy in (-gap, gap + h * 0.8, -gap - h, gap + h * 1.8, -gap - 2 * h, gap + h * 2.8,
                   -gap - 3 * h, gap + h * 3.8):
            for anchor in ("start", "end", "middle"):
                left = x + gap * 0.5 if anchor == "start" else x - gap * 0.5 - w if anchor == "end" else x - w / 2
                candidates.append((left, y + dy, anchor))
        for blocking in ([self.boxes, self.soft], [self.boxes]) if must else ([self.boxes, self.soft],):
            for left, base, anchor in candidates:
                box = (left, base - h + 3, left + w, base + 3)
                if box[0] < x0 or box[2] > x1 or box[1] < y0 or box[3] > y1:
                    continue
                if any(_overlap(box, b) for boxes in blocking for b in boxes):
                    continue
                self.boxes.append(box)
                tx = left if anchor == "start" else left + w if anchor == "end" else left + w / 2
                return tx, base, anchor
        return None


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
