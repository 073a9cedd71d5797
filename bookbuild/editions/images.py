"""Pictures the editions need, drawn by typst at build time: the EPUB's cover, the card a link
preview shows (Open Graph / Twitter, 1200 x 630) and the favicon's PNG sizes (from the SVG in
assets/img/favicon.svg). Each is made again only when what it shows changes."""
from __future__ import annotations

from pathlib import Path

from .edition import edition
from ..cache import digest
from ..project.config import BookConfig
from ..typst_markup import typst_text as _typst_text

ACCENT = "#1f5fa8"


def _card(cfg: BookConfig, width: int, height: int, title_pt: int) -> str:
    info = edition(cfg)
    sub = _typst_text(cfg.subtitle or "")
    who = _typst_text(", ".join(cfg.author))
    return f"""#set page(width: {width}pt, height: {height}pt, margin: {width // 12}pt, fill: rgb("{ACCENT}"))
#set text(fill: white, hyphenate: false)
#set par(justify: false)
// the roofline of the favicon, large, behind the words
#place(bottom + right, dx: {width // 14}pt, dy: {height // 14}pt,
  curve(stroke: (paint: white.transparentize(78%), thickness: {width // 60}pt, cap: "round", join: "round"),
    curve.move((0pt, {height * 6 // 10}pt)), curve.line(({width * 3 // 10}pt, {height // 10}pt)),
    curve.line(({width * 7 // 10}pt, {height // 10}pt))))
#v(1fr)
#text(size: {title_pt}pt, weight: "bold")[{_typst_text(cfg.title)}]
#v({title_pt // 3}pt)
#block(width: 88%, text(size: {title_pt * 45 // 100}pt)[{sub}])
#v(1fr)
#text(size: {title_pt * 32 // 100}pt)[{who} · {_typst_text(info['edition'])} · version {_typst_text(info['version'])}]
"""


def _favicon(svg: Path, size: int) -> str:
    return f'#set page(width: {size}pt, height: {size}pt, margin: 0pt)\n#image("/{svg.as_posix()}", width: 100%)\n'


def _draw(cfg: BookConfig, source: str, out: Path) -> Path:
    import typst
    cache = cfg.root / ".bookcache" / "images"
    cache.mkdir(parents=True, exist_ok=True)
    key = digest(source)
    stamp = cache / (out.name + ".key")
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        return out
    typ = cache / (out.stem + ".typ")
    typ.write_text(source, encoding="utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    typst.compile(str(typ), output=str(out), root=str(cfg.root), format="png", ppi=72)
    stamp.write_text(key)
    return out


def cover(cfg: BookConfig) -> Path:
    """The EPUB's cover, 1600 x 2400 px (the shape e-book stores ask for)."""
    return _draw(cfg, _card(cfg, 1600, 2400, 150), cfg.root / ".bookcache" / "images" / "cover.png")


def social_card(cfg: BookConfig) -> Path:
    return _draw(cfg, _card(cfg, 1200, 630, 84), cfg.out / "assets" / "img" / "card.png")


def favicons(cfg: BookConfig) -> list[Path]:
    """PNGs of the site's favicon.svg (the book's own, else the house one), as copied into the site."""
    try:
        svg = (cfg.out / "assets" / "img" / "favicon.svg").relative_to(cfg.root)
    except ValueError:          # an output folder outside the project: typst cannot read it
        return []
    if not (cfg.root / svg).exists():
        return []
    return [_draw(cfg, _favicon(svg, n) + f"// {digest((cfg.root / svg).read_text())}\n",
                  cfg.out / "assets" / "img" / f"favicon-{n}.png") for n in (32, 180)]
