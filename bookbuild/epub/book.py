"""The EPUB 3 edition: every page through the book's filters (as for any format that is neither
HTML nor typst: widgets become their static SVG figure and readout table, cross-references and
glossary terms become links inside the book), joined into one document and written by Pandoc's
``epub3`` writer with MathML, highlighted code, a cover and the book's metadata."""
from __future__ import annotations

import html
import json
import re
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .. import pandoc
from ..cache import cached_text, digest, file_digest
from ..editions import images as edition_images
from ..editions.edition import edition
from ..pandoc import xref
from ..pandoc.convert import conversion_key, convert, references_page
from ..project.config import BookConfig

STYLE = Path(__file__).parent / "templates" / "epub.css"


def epub_name(cfg: BookConfig) -> str:
    return cfg.pdf_name.removesuffix(".pdf") + ".epub"


BIG = re.compile(r"\\[Bb]ig+[lrm]?(?![A-Za-z])\s*")
SVG_PAGE_LINK = re.compile(r'\s(?:xlink:)?href="(?!#)[^"]*"')


def _margin_notes(blocks: list) -> list:
    """A margin note (``::: {.column-margin}``) has no margin in an EPUB: where it follows a
    paragraph it becomes that paragraph's footnote (a reader's note, read on a tap), not a stray
    paragraph in the flow; elsewhere it stays a Div, styled as an aside (epub.css)."""
    out: list = []
    for b in blocks:
        margin = isinstance(b, dict) and b.get("t") == "Div" and "column-margin" in b["c"][0][1]
        if margin and out and out[-1].get("t") == "Para":
            out[-1] = {"t": "Para", "c": out[-1]["c"] + [{"t": "Note", "c": b["c"][1]}]}
        else:
            out.append(b)
    return out


def _for_epub(node: Any) -> Any:
    """What the epub3 writer gets wrong, put right in the AST:
    - margin notes, which it writes into the flow (``_margin_notes``);
    - an id on a Figure is not seen by the writer when it points links at the file a target went to
      (a table in chapter 1 referred to from chapter 3 kept its bare ``#tbl-...``): the id moves to a
      Div around the figure;
    - texmath writes ``\\big/`` as an ``<mi>`` with ``minsize``/``stretchy``, which MathML 3 allows
      only on ``<mo>`` (EPUBCheck RSC-005): the size hints go, the symbol stays."""
    if isinstance(node, list):
        return _margin_notes([_for_epub(x) for x in node])
    if not isinstance(node, dict):
        return node
    if node.get("t") == "Math":
        kind, tex = node["c"]
        return {"t": "Math", "c": [kind, BIG.sub("", tex)]}
    node = {k: _for_epub(v) for k, v in node.items()}
    if node.get("t") == "Figure" and node["c"][0][0]:
        ident = node["c"][0][0]
        node["c"][0] = ["", *node["c"][0][1:]]
        return {"t": "Div", "c": [[ident, ["float"], []], [node]]}
    return node


def _unlink_svgs(folder: Path) -> None:
    """A drawing's links to the web pages (the chapter map's boxes) go nowhere inside the EPUB
    (EPUBCheck RSC-007): the links stay as groups without a target."""
    for svg in folder.rglob("*.svg"):
        text = svg.read_text(encoding="utf-8")
        fixed = SVG_PAGE_LINK.sub("", text)
        if fixed != text:
            svg.write_text(fixed, encoding="utf-8")


def _metadata(cfg: BookConfig) -> dict[str, Any]:
    info = edition(cfg)
    meta: dict[str, Any] = {
        "title": [{"type": "main", "text": cfg.title}],
        "creator": [{"role": "author", "text": a} for a in cfg.author],
        "lang": info["lang"],
        "date": info["iso_date"],
        "description": info["description"],
        "subject": info["keywords"],
        "rights": " ".join(x for x in (info["license_text"], info["code_license_text"]) if x),
        # the same book at the same commit is the same edition: a stable identifier, not a random one
        "identifier": [{"scheme": "URI", "text": f"{cfg.repo_url or 'urn:book:' + cfg.title}#{info['commit'] or 'dev'}"}],
        "version": info["version"],
    }
    if cfg.subtitle:
        meta["title"].append({"type": "subtitle", "text": cfg.subtitle})
    return meta


def write_epub(cfg: BookConfig, pages: list[xref.Page], index_path: Path, cites: list[str], progress) -> Path:
    cache_dir = cfg.root / ".bookcache" / "epub"
    cache_dir.mkdir(parents=True, exist_ok=True)
    refs_page = references_page(pages)
    key_of = conversion_key(cfg, pages, index_path, cites, refs_page, {"epub": cfg.raw.get("format", {}).get("epub")})

    def one(page: xref.Page) -> str:
        t = time.perf_counter()
        media = Path(".bookcache") / "epub-media" / page.output.replace("/", "-")
        text, fresh = cached_text(cache_dir / (page.output.replace("/", "-") + ".json"), key_of(page),
                                  lambda: convert(cfg, page, index_path, cites, refs_page, "json",
                                                  [f"--extract-media={media}", "-M", "book-format=epub3"]))
        if fresh:
            progress("epub", page.output.replace(".html", ".json"), time.perf_counter() - t)
        return text

    with ThreadPoolExecutor(max_workers=2) as pool:
        docs = [json.loads(text) for text in pool.map(one, pages)]

    blocks: list[dict] = []
    for doc in docs:
        blocks.extend(doc["blocks"])
    blocks = _for_epub(blocks)
    _unlink_svgs(cfg.root / ".bookcache" / "epub-media")
    book = {"pandoc-api-version": docs[0]["pandoc-api-version"], "meta": {}, "blocks": blocks}
    cover = edition_images.cover(cfg)
    meta_file = cache_dir / "metadata.json"
    meta_file.write_text(json.dumps(_metadata(cfg)), encoding="utf-8")
    out = cfg.out / epub_name(cfg)
    source = json.dumps(book)
    key = digest(source, meta_file.read_text(), file_digest(cover), file_digest(STYLE), pandoc.binary(),
                 *[file_digest(p) for p in sorted((cfg.root / ".bookcache" / "epub-media").rglob("*")) if p.is_file()])
    stamp = cache_dir / "book.key"
    if out.exists() and stamp.exists() and stamp.read_text() == key:
        return out
    t = time.perf_counter()
    cfg.out.mkdir(parents=True, exist_ok=True)
    pandoc.run(["-f", "json", "-t", "epub3", "-o", str(out), "--mathml", "--split-level=1",
                "--toc-depth=2", "--syntax-definition", str(pandoc.SYNTAX / "cuda.xml"),
                "--epub-cover-image", str(cover), "--css", str(STYLE),
                "--metadata-file", str(meta_file), "--epub-title-page=true"],
               source, cfg.root, "writing the EPUB")
    _title_chapters(out)
    stamp.write_text(key)
    progress("epub", out.name, time.perf_counter() - t)
    return out


CHAPTER_FILE = re.compile(r"EPUB/text/ch\d+\.xhtml")
TITLE = re.compile(r"<title>[^<]*</title>")
FIRST_HEADING = re.compile(r"<h1\b[^>]*>(.*?)</h1>", re.S)


def _title_chapters(epub: Path) -> None:
    """Pandoc names each chapter file's ``<title>`` after the file ("ch002.xhtml"), which a reading
    system shows as the page's name: each takes its first heading's text instead (as the
    navigation does). The archive is rewritten with ``mimetype`` first and stored, as EPUB needs."""
    with zipfile.ZipFile(epub) as z:
        entries = [(info, z.read(info)) for info in z.infolist()]
    changed = False
    for i, (info, data) in enumerate(entries):
        if not CHAPTER_FILE.fullmatch(info.filename):
            continue
        text = data.decode("utf-8")
        heading = FIRST_HEADING.search(text)
        if not heading:
            continue
        name = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", heading.group(1))).split())
        fixed = TITLE.sub(lambda _: f"<title>{html.escape(name, quote=False)}</title>", text, count=1)
        if fixed != text:
            entries[i] = (info, fixed.encode("utf-8"))
            changed = True
    if not changed:
        return
    tmp = epub.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w") as z:
        for info, data in entries:
            z.writestr(info, data, compress_type=zipfile.ZIP_STORED if info.filename == "mimetype" else zipfile.ZIP_DEFLATED)
    tmp.replace(epub)
