"""The PDF: every page through the same filters to typst, one book file, compiled by
the typst compiler (PyPI ``typst``)."""
from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jinja2

from . import typstd, xref
from .cache import cached_text, digest, file_digest
from .config import BookConfig
from .edition import book_edition
from .errors import BuildError
from .execute import daemon_seconds
from .website import conversion_key, convert, references_page

TEMPLATES = Path(__file__).parent / "templates"
IMAGE = re.compile(r'image\("(?!/)([^"]+)"')


def typst_fragment(cfg: BookConfig, page: xref.Page, index_path: Path, cites: list[str],
                   refs_page: str | None) -> str:
    media = Path(".bookcache") / "media" / page.output.replace("/", "-")
    text = convert(cfg, page, index_path, cites, refs_page, "typst", [f"--extract-media={media}"])
    # typst resolves absolute paths from the project root given to the compiler
    return IMAGE.sub(lambda m: f'image("/{m.group(1)}"', text)


def write_pdf(cfg: BookConfig, pages: list[xref.Page], index_path: Path, cites: list[str], progress) -> Path:
    cache_dir = cfg.root / ".bookcache" / "typst"
    cache_dir.mkdir(parents=True, exist_ok=True)
    refs_page = references_page(pages)
    key_of = conversion_key(cfg, pages, index_path, cites, refs_page, cfg.typst)

    def one(page: xref.Page) -> str:
        t = time.perf_counter()
        text, fresh = cached_text(cache_dir / (page.output.replace("/", "-") + ".json"), key_of(page),
                                  lambda: typst_fragment(cfg, page, index_path, cites, refs_page))
        if fresh:
            progress("pdf", page.output.replace(".html", ".typ"), time.perf_counter() - t)
        return text

    with ThreadPoolExecutor(max_workers=2) as pool:
        fragments = list(pool.map(one, pages))

    env = template_env()
    from .chapter_pdf import write_chapter_pdfs    # the same fragments, one PDF per page
    write_chapter_pdfs(cfg, pages, fragments, progress, index_path)
    chapters = []
    last_part = None
    appendix_started = False
    for ch, frag in zip(cfg.chapters, fragments):
        part = ch.part
        if ch.appendix and not appendix_started:
            appendix_started = True
            part = part or "Appendices"
        new_part = part if part and part != last_part else None
        last_part = part or last_part
        chapters.append({"part": new_part, "typst": frag, "appendix": ch.appendix})
    source = env.get_template("book.typ").render(book=cfg, chapters=chapters, typst_str=typst_str,
                                                   typst_text=typst_text, edition=book_edition(cfg), single=False,
                                                   doc_title=None)
    book_typ = cache_dir / "book.typ"
    pdf_path = cfg.out / cfg.pdf_name
    key = digest(source, *[file_digest(p) for p in sorted((cfg.root / ".bookcache" / "figures").rglob("*"))
                           if p.is_file()])
    stamp = cache_dir / "book.key"
    if pdf_path.exists() and stamp.exists() and stamp.read_text() == key:
        return pdf_path
    book_typ.write_text(source, encoding="utf-8")
    t = time.perf_counter()
    cfg.out.mkdir(parents=True, exist_ok=True)
    try:
        kept = typstd.compile_pdf(book_typ, pdf_path, cfg.root, daemon_seconds(cfg.execute))
    except Exception as exc:  # typst raises its own error type with the diagnostics
        raise BuildError("typst could not compile the PDF", book_typ, detail=str(exc),
                         hint="the message names a line of the generated book.typ") from None
    drop_false_suspects(pdf_path)
    stamp.write_text(key)
    progress("pdf", cfg.pdf_name + (" (kept typst compiler)" if kept else ""), time.perf_counter() - t)
    return pdf_path


def template_env() -> jinja2.Environment:
    """Jinja for typst sources: ``{#`` starts typst code, so comments are ``{#! ... !#}``."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=False,
                              variable_start_string="{{", variable_end_string="}}",
                              block_start_string="{%", block_end_string="%}", comment_start_string="{#!",
                              comment_end_string="!#}")


def typst_str(value: object) -> str:
    """A Python value as a typst string literal."""
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def typst_text(value: object) -> str:
    """Plain text made safe inside typst markup."""
    return re.sub(r'([\\#\[\]*_$@<>`~])', r'\\\1', str(value))


SUSPECTS = b"/Suspects false"


def drop_false_suspects(pdf_path: Path) -> None:
    """Blank typst's ``/Suspects false`` in the catalog's /MarkInfo. It is valid PDF (and the
    default), but poppler (Debian 12's pdftotext, pdfinfo) reports "Suspects object is wrong type
    (boolean)" for it on every run. Spaces of the same length keep every byte offset, so the
    cross-reference table stays right."""
    data = pdf_path.read_bytes()
    if data.count(SUSPECTS) == 1 and b"/MarkInfo<</Marked true" + SUSPECTS in data:
        pdf_path.write_bytes(data.replace(SUSPECTS, b" " * len(SUSPECTS)))
