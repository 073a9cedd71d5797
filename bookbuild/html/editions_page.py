"""The Editions page (``_book/editions.html``) and its manifest (``_book/editions.json``): the web
edition, the book's PDF, a PDF per chapter and the EPUB, each with its size and the version it was
built from. Written after the other outputs, from the files as they are in the output folder, so a
build of one format lists what is there."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ..editions.edition import citation, edition
from ..editions.files import pdf_href
from ..project.config import BookConfig

TEMPLATES = Path(__file__).parent / "templates"
PAGE = "editions.html"
MANIFEST = "editions.json"


def size_text(n: int) -> str:
    """Bytes for a reader: kB under a megabyte, else MB (decimal units, as file managers show)."""
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{max(1, round(n / 1e3))} kB"


def manifest(cfg: BookConfig) -> dict[str, Any]:
    out = cfg.out
    info = edition(cfg)
    index = json.loads((cfg.root / ".bookcache" / "xref.json").read_text())
    downloads = [(cfg.pdf_name, "The book (PDF)"), (cfg.pdf_name.removesuffix(".pdf") + ".epub", "The book (EPUB 3)")]
    # Not counted: the offline step's own files (html/offline: the service worker, its libraries,
    # a few tens of kB), written after this page from a list of the site that includes it; counted,
    # they would change this page, and so the worker, on the build after every change.
    from .offline import OUTPUTS as offline_files
    others = {cfg.pdf_name, downloads[1][0], PAGE, MANIFEST}
    html_bytes = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()
                     and p.relative_to(out).parts[0] != "pdf" and p.name not in others
                     and not (p.parent == out and p.name in offline_files)
                     and not p.relative_to(out).parts[0].startswith("workbox-v"))
    editions = []
    if (out / "index.html").exists():
        editions.append({"label": "Online (HTML, interactive; the whole site with its Python runtime)", "href": "index.html", "bytes": html_bytes,
                         "download": False})
    for name, label in downloads:
        if (out / name).exists():
            editions.append({"label": label, "href": name, "bytes": (out / name).stat().st_size, "download": True})
    chapters = []
    for ch in cfg.chapters:
        href = pdf_href(ch.output.as_posix())
        if (out / href).exists():
            meta = index["pages"][ch.source.as_posix()]
            chapters.append({"number": meta["number"], "title": meta["title"], "href": href,
                             "bytes": (out / href).stat().st_size})
    for e in [*editions, *chapters]:
        e["size_text"] = size_text(e["bytes"])
    return {"title": cfg.title, "version": info["version"], "commit": info["commit"], "date": info["iso_date"],
            "license": info["license_name"], "editions": editions, "chapters": chapters}


def write_editions_page(cfg: BookConfig, report: Any = None, formats: tuple[str, ...] = ()) -> Path:
    from .site import asset_list
    data = manifest(cfg)
    cfg.out.mkdir(parents=True, exist_ok=True)
    _write_if_changed(cfg.out / MANIFEST, json.dumps(data, indent=1))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    assets = asset_list(cfg)
    text = env.get_template(PAGE).render(book=cfg, edition=edition(cfg), manifest=data,
                                         cite=citation(cfg), css=assets["css"], js=assets["js"],
                                         sidebar=book_sidebar(cfg))
    from .site import OFFLINE_SCRIPT
    if OFFLINE_SCRIPT in cfg.post_render:          # as the offline step leaves it (site.write_site)
        from .offline import with_manifest
        text = with_manifest(text, 0)
    page = cfg.out / PAGE
    _write_if_changed(page, text)
    return page


def book_sidebar(cfg: BookConfig) -> Markup | None:
    """The book's chapter list as the site's pages carry it (the start page's, which sits beside this
    page at the site's root), so that the Editions page is a page of the book like any other."""
    index = cfg.out / "index.html"
    if not index.exists():
        return None
    m = re.search(r'<nav id="sidebar".*?</nav>', index.read_text(encoding="utf-8"), re.S)
    return Markup(m.group(0).replace(' aria-current="page"', "")) if m else None


def _write_if_changed(path: Path, text: str) -> None:
    """A build that changes nothing rewrites nothing (a web host's caches, `preview`'s reload)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
