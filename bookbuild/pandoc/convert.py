"""A page's AST through the filters to one output format: the metadata the book's filters read
(``book-xref``, ``book-page``, ``book-root``...), the filter chain, citeproc where the page cites,
and the cache key every format's conversion of a page is kept under."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import pandoc
from ..cache import digest, file_digest
from ..project.config import BookConfig
from ..errors import BuildError
from . import xref


CAPTION_KEYS = ("fig-cap-location", "tbl-cap-location")   # Quarto's: top or bottom


def meta_string(value: str) -> dict:
    return {"t": "MetaString", "c": value}


def cite_meta(keys: list[str]) -> dict:
    citations = [{"citationId": k, "citationPrefix": [], "citationSuffix": [],
                  "citationMode": {"t": "NormalCitation"}, "citationNoteNum": 0, "citationHash": 0}
                 for k in keys]
    return {"t": "MetaInlines", "c": [{"t": "Cite", "c": [citations, [{"t": "Str", "c": "@*"}]]}]}


def page_meta(cfg: BookConfig, page: xref.Page, index_path: Path, cites: list[str],
              refs_page: str | None, fmt: str) -> dict[str, Any]:
    depth = page.output.count("/")
    meta = {
        "book-xref": meta_string(str(index_path)),
        "book-page": meta_string(page.output),
        "book-root": meta_string("../" * depth if fmt.startswith("html") else ""),
        "link-citations": {"t": "MetaBool", "c": True},
    }
    opts = cfg.html if fmt.startswith("html") else cfg.typst
    ref_loc = opts.get("reference-location")
    if ref_loc:
        meta["reference-location"] = meta_string(str(ref_loc))
    for key in CAPTION_KEYS:                                  # a page's own front matter wins
        where = opts.get(key, cfg.raw.get(key))
        if where:
            meta["book-" + key] = meta_string(str(where))
    meta["book-figures"] = meta_string(".bookcache/figures/")   # HTML reads each SVG's size there
    if refs_page:
        meta["book-refs-page"] = meta_string(refs_page)
    if cfg.bibliography:
        meta["bibliography"] = {"t": "MetaList", "c": [meta_string(str(cfg.root / b)) for b in cfg.bibliography]}
        if page.output == refs_page:
            if cites:
                meta["nocite"] = cite_meta(cites)
        elif not refs_page:
            meta["suppress-bibliography"] = {"t": "MetaBool", "c": True}
        # else citeproc writes this page's entries (so citations link) and links.lua drops them
    csl = cfg.raw.get("csl")
    if csl:
        meta["csl"] = meta_string(str(cfg.root / csl))
    return meta


def references_page(pages: list[xref.Page]) -> str | None:
    for page in pages:
        for el in page.elements:
            if el["t"] == "Div" and el["c"][0][0] == "refs":
                return page.output
    return None


def user_filters(cfg: BookConfig) -> list[Path]:
    out = []
    for f in cfg.filters:
        path = cfg.root / f
        if not path.exists():
            raise BuildError(f"filter {f} does not exist", cfg.root / "_quarto.yml")
        out.append(path)
    return out


def convert(cfg: BookConfig, page: xref.Page, index_path: Path, cites: list[str], refs_page: str | None,
            fmt: str, extra: list[str]) -> str:
    """Run a page's AST through the filters and pandoc's writer for ``fmt``."""
    ast = dict(page.ast)
    meta = dict(ast.get("meta", {}))
    meta.update(page_meta(cfg, page, index_path, cites, refs_page, fmt))
    ast["meta"] = meta
    citeproc = bool(cfg.bibliography) and (page.output == refs_page or cites_bibliography(page))
    args = ["-f", "json", "-t", fmt, "--syntax-definition", str(pandoc.SYNTAX / "cuda.xml"), *extra,
            *pandoc.filter_args(user_filters(cfg), citeproc=citeproc)]
    return pandoc.run(args, json.dumps(ast), cfg.root, f"writing {fmt}", page.source)


def cites_bibliography(page: xref.Page) -> bool:
    """Whether the page cites a bibliography entry: citeproc (a third of a second per run,
    reading the style and the .bib) runs only on pages that need it."""
    return any(el["t"] == "Cite" and any(c["citationId"].split("-", 1)[0] not in xref.KINDS for c in el["c"][0])
               for el in page.elements)


def filters_digest(cfg: BookConfig) -> str:
    files = [*user_filters(cfg), *pandoc.internal_filters(), pandoc.LUA / "links.lua",
             pandoc.SYNTAX / "cuda.xml", *[cfg.root / b for b in cfg.bibliography]]
    python = [f"{f.relative_to(cfg.root).as_posix()}\0{file_digest(f)}" for f in project_python(cfg.root)]
    return digest(*[file_digest(f) for f in files], *python, pandoc.binary())


def project_python(root: Path) -> list[Path]:
    """The project's own Python packages (folders at its root with an ``__init__.py``): a filter
    may run them (filters/widget.lua runs ``python -m widgets``, which imports calc), so a change
    to them converts the pages again."""
    return sorted(f for init in root.glob("*/__init__.py") for f in init.parent.rglob("*.py")
                  if "__pycache__" not in f.parts)


def front_matter_digest(pages: list[xref.Page]) -> str:
    """Every page's metadata: project filters may read any chapter's front matter
    (filters/glossary.lua knows every chapter's terms on every page)."""
    return digest(json.dumps([p.ast.get("meta", {}) for p in pages], sort_keys=True))


def conversion_key(cfg: BookConfig, pages: list[xref.Page], index_path: Path, cites: list[str],
                   refs_page: str | None, settings: dict[str, Any]):
    """A page's cache key for one output format: its AST plus everything every page's conversion
    reads (the cross-reference index, the filters, every page's front matter, the citations)."""
    book_wide = {k: cfg.raw.get(k) for k in CAPTION_KEYS}          # read by page_meta too
    shared = digest(file_digest(index_path), filters_digest(cfg), front_matter_digest(pages),
                    json.dumps(cites), str(refs_page), json.dumps(settings, sort_keys=True, default=str),
                    json.dumps(book_wide, sort_keys=True, default=str))
    return lambda page: digest(page.ast_digest, shared)
