"""The PDF: every page through the same filters to typst, one book file, compiled by
the typst compiler (PyPI ``typst``)."""
from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import typstd
from .chapters import write_chapter_pdfs
from .template import drop_false_suspects, template_env
from ..cache import cached_text, digest, file_digest
from ..editions.edition import book_edition
from ..errors import BuildError
from ..execute.kernel import daemon_seconds
from ..pandoc import xref
from ..pandoc.convert import conversion_key, convert, references_page
from ..project.config import BookConfig
from ..typst_markup import typst_str, typst_text

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
    write_chapter_pdfs(cfg, pages, fragments, progress, index_path)    # the same fragments, one PDF per page
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
