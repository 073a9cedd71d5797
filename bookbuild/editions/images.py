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


def _maskable(svg: Path, size: int, background: str) -> str:
    """A home-screen icon a phone may crop to a circle: the favicon inside the middle 70% (the
    "safe zone" of the W3C manifest spec's maskable icons is a circle of 80%), on the page colour."""
    return (f'#set page(width: {size}pt, height: {size}pt, margin: {size * 15 // 100}pt, fill: rgb("{background}"))\n'
            f'#image("/{svg.as_posix()}", width: 100%)\n')


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
    stamp = f"// {digest((cfg.root / svg).read_text())}\n"
    # 32: browser tabs; 180: iOS home screen; 192 and 512: the web app manifest (Android, desktop)
    icons = [_draw(cfg, _favicon(svg, n) + stamp, cfg.out / "assets" / "img" / f"favicon-{n}.png")
             for n in (32, 180, 192, 512)]
    background = page_colour(cfg.out)
    icons.append(_draw(cfg, _maskable(svg, 512, background) + stamp,
                       cfg.out / "assets" / "img" / "favicon-maskable-512.png"))
    return icons


def page_colour(folder: Path, name: str = "bg") -> str:
    """A colour of the light theme in ``folder``/assets/css/palette.css (``--bg``, ``--accent``)."""
    import re
    css = folder / "assets" / "css" / "palette.css"
    light = css.read_text(encoding="utf-8").split(":root[data-theme")[0] if css.exists() else ""
    found = re.search(rf"--{name}:\s*(#[0-9a-fA-F]{{3,8}})", light)
    return found.group(1) if found else {"bg": "#ffffff", "accent": "#1f5fa8"}.get(name, "#ffffff")
