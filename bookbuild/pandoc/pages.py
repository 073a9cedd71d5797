"""The executed pages read into Pandoc ASTs, and the citations they make checked against the
bibliography."""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from .. import pandoc
from ..cache import digest
from ..errors import BuildError, line_of
from ..project import config as config_mod
from ..project.config import BIB_KEY
from . import xref

Progress = Callable[[str, str, float | None], None]   # build.Progress


def read_all(cfg: config_mod.BookConfig, pages: dict[str, dict[str, Any]], progress: Progress) -> dict[str, dict]:
    """Pandoc AST (JSON) of every page; cached by the executed markdown's digest."""
    cache_dir = cfg.root / ".bookcache" / "ast"
    cache_dir.mkdir(parents=True, exist_ok=True)

    def one(ch: config_mod.Chapter) -> tuple[str, dict]:
        key = ch.source.as_posix()
        md = pages[key]["markdown"]
        d = digest(pandoc.binary(), md)
        path = cache_dir / f"{ch.stem}.json"
        if path.exists():
            cached = json.loads(path.read_text())
            if cached.get("digest") == d:
                return key, cached["ast"]
        ast = pandoc.read(md, cfg.root / ch.source.parent, key)
        path.write_text(json.dumps({"digest": d, "ast": ast}))
        return key, ast

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, cfg.chapters))


def check_citations(cfg: config_mod.BookConfig, pages: list[xref.Page]) -> list[str]:
    """Every bibliography key cited in the book, in order; an unknown key stops the build."""
    known: set[str] = set()
    for bib in cfg.bibliography:
        path = cfg.root / bib
        if not path.exists():
            raise BuildError(f"bibliography {bib} does not exist", cfg.root / config_mod.CONFIG_NAME,
                             line_of((cfg.root / config_mod.CONFIG_NAME).read_text(), bib))
        known.update(BIB_KEY.findall(path.read_text(encoding="utf-8")))
    cited: list[str] = []
    for page in pages:
        for el in page.elements:
            if el["t"] != "Cite":
                continue
            for c in el["c"][0]:
                cid = c["citationId"]
                if cid.split("-", 1)[0] in xref.KINDS:
                    continue
                if cid not in known:
                    raise BuildError(f"unknown citation @{cid}", page.source, line_of(page.text, "@" + cid),
                                     hint=f"add it to {', '.join(cfg.bibliography) or 'a bibliography'}")
                if cid not in cited:
                    cited.append(cid)
    return cited
