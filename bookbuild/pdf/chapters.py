"""A PDF per chapter: each page's typst (the fragment the book PDF is made of) compiled on its own
with the book's template, under a line that says where it comes from and how to cite it.

A reference to another chapter's figure, section, citation or glossary term has no target in a
chapter on its own: it keeps its text ("Figure 3.2", "NVIDIA Corporation 2022") without the link."""
from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .template import drop_false_suspects, template_env
from ..cache import digest, file_digest
from ..editions.edition import citation, edition
from ..editions.files import FOLDER, pdf_href
from ..errors import BuildError
from ..pandoc import xref
from ..project.config import BookConfig
from ..typst_markup import typst_str, typst_text

LINK_TO_LABEL = re.compile(r"#link\(<([^>\s]+)>\)")
# a label typst attaches to the element before it: `] <fig-x>`, `= Title\n<sec-x>`
DEFINED_LABEL = re.compile(r"(?<![\\(])<([A-Za-z][\w:.\-]*)>")


def unlink_missing(typst_text: str) -> str:
    """Links to labels the fragment does not define lose their link (and keep their text)."""
    defined = set(DEFINED_LABEL.findall(typst_text))
    return LINK_TO_LABEL.sub(lambda m: m.group(0) if m.group(1) in defined else "#", typst_text)


def write_chapter_pdfs(cfg: BookConfig, pages: list[xref.Page], fragments: list[str], progress,
                       index_path: Path | None = None) -> list[Path]:
    import typst

    index = json.loads((index_path or cfg.root / ".bookcache" / "xref.json").read_text())
    template = template_env().get_template("book.typ")
    cache_dir = cfg.root / ".bookcache" / "typst-chapters"
    cache_dir.mkdir(parents=True, exist_ok=True)
    (cfg.out / FOLDER).mkdir(parents=True, exist_ok=True)
    figures = digest(*[file_digest(p) for p in sorted((cfg.root / ".bookcache" / "figures").rglob("*"))
                       if p.is_file()])
    info = edition(cfg)

    def one(item: tuple[xref.Page, str]) -> Path:
        page, fragment = item
        meta = index["pages"][page.source]
        chapter = {"number": meta["number"], "title": meta["title"], "url": ""}
        ed = {**info, "citation": citation(cfg, chapter)["plain"]}
        source = template.render(book=cfg, chapters=[{"part": None, "typst": unlink_missing(fragment)}],
                                 typst_str=typst_str, typst_text=typst_text, edition=ed, single=True,
                                 doc_title=f"{meta['title']} – {cfg.title}")
        name = pdf_href(page.output)
        out = cfg.out / name
        stem = Path(name).stem
        key = digest(source, figures)
        stamp = cache_dir / f"{stem}.key"
        if out.exists() and stamp.exists() and stamp.read_text() == key:
            return out
        typ = cache_dir / f"{stem}.typ"
        typ.write_text(source, encoding="utf-8")
        t = time.perf_counter()
        try:
            typst.compile(str(typ), output=str(out), root=str(cfg.root))
        except Exception as exc:
            raise BuildError(f"typst could not compile the PDF of {page.source}", typ, detail=str(exc),
                             hint="the message names a line of the generated chapter .typ") from None
        drop_false_suspects(out)
        stamp.write_text(key)
        progress("pdf", name, time.perf_counter() - t)
        return out

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, zip(pages, fragments)))
