"""The build, top to bottom: read config -> read chapters -> execute -> read into ASTs ->
number cross-references -> write HTML pages -> static files -> search index -> PDF."""
from __future__ import annotations

import fcntl
import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import config as config_mod
from . import edition, editions, epub, pandoc, pdf, website, xref
from .config import BIB_KEY
from .cache import ExecCache, digest, file_digest
from .errors import BuildError, line_of
from .execute import Kernel, daemon_seconds, matplotlibrc_files
from .markdown import render as render_markdown
from .qmd import parse


@dataclass
class Report:
    """What a build did, for the progress display and the benchmarks."""
    executed: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    html_pages: list[str] = field(default_factory=list)
    pdf: Path | None = None
    epub: Path | None = None
    kernel: str = ""  # "started" or "reused" when a chapter ran, else empty
    kernel_pid: int | None = None


Progress = Callable[[str, str, float | None], None]


def _quiet(stage: str, item: str, seconds: float | None) -> None:
    pass


def build(root: Path, formats: tuple[str, ...] = ("html", "pdf", "epub"), progress: Progress = _quiet,
          search: bool = True, restart_kernel: bool = False) -> Report:
    root = Path(root).resolve()
    (root / ".bookcache").mkdir(exist_ok=True)
    with open(root / ".bookcache" / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time per project: they share .bookcache
        return _build(root, formats, progress, search, restart_kernel)


def _build(root: Path, formats: tuple[str, ...], progress: Progress, search: bool,
           restart_kernel: bool = False) -> Report:
    report = Report()
    t0 = time.perf_counter()
    edition.forget()
    cfg = config_mod.load(root)
    pages = execute_all(cfg, report, progress, restart_kernel)
    report.timings["execute"] = time.perf_counter() - t0

    t = time.perf_counter()
    asts = read_all(cfg, pages, progress)
    xpages = [xref.Page(ch.source.as_posix(), ch.output.as_posix(), asts[ch.source.as_posix()],
                        pages[ch.source.as_posix()]["text"], ch.appendix)
              for ch in cfg.chapters]
    index = xref.build_index(xpages)
    xref.check_references(xpages, index)
    cites = check_citations(cfg, xpages)
    index_path = root / ".bookcache" / "xref.json"
    index_path.write_text(json.dumps(index))
    report.timings["read"] = time.perf_counter() - t

    def timed(stage: str, write: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        result = write(*args, **kwargs)
        report.timings[stage] = time.perf_counter() - t
        return result

    # the site and the PDF need nothing from each other: they are written side by side
    with ThreadPoolExecutor(max_workers=2) as pool:
        site = book = None
        if "html" in formats:
            site = pool.submit(timed, "html", website.write_site, cfg, xpages, index, index_path, cites,
                               progress, report, search=search)
        if "pdf" in formats:
            book = pool.submit(timed, "pdf", pdf.write_pdf, cfg, xpages, index_path, cites, progress)
        if "epub" in formats:   # after the PDF in the same worker: the machine has two cores
            book = pool.submit(_then, book, lambda: timed("epub", epub.write_epub, cfg, xpages, index_path,
                                                          cites, progress))
        if site:
            site.result()
        if book:
            result = book.result()
            if "epub" in formats:
                report.pdf, report.epub = result
            else:
                report.pdf = result
    editions.write_editions_page(cfg, report, formats)
    report.timings["total"] = time.perf_counter() - t0
    return report


def _then(first, second: Callable[[], Any]) -> tuple[Any, Any]:
    """Run ``second`` after the future ``first`` (if any) and return both results."""
    return (first.result() if first else None), second()


def execute_all(cfg: config_mod.BookConfig, report: Report, progress: Progress,
                restart_kernel: bool = False) -> dict[str, dict[str, Any]]:
    """Executed markdown per chapter, from the cache when nothing it depends on changed."""
    cache = ExecCache(cfg.root)
    # how long the kernel is kept changes nothing a chapter computes
    settings = {"execute": {k: v for k, v in cfg.execute.items() if k != "daemon"},
                "execute-dir": cfg.execute_dir,
                # every figure is drawn with the project's matplotlib settings
                "matplotlibrc": [file_digest(rc) for rc in matplotlibrc_files(cfg.root)]}
    kernel: Kernel | None = None
    try:
        keep_kernel = daemon_seconds(cfg.execute)
    except BuildError as err:
        config_path = cfg.root / config_mod.CONFIG_NAME
        raise err.located(config_path, line_of(config_path.read_text(encoding="utf-8"), "daemon:"))
    out: dict[str, dict[str, Any]] = {}
    try:
        for ch in cfg.chapters:
            key = ch.source.as_posix()
            path = cfg.root / ch.source
            text = path.read_text(encoding="utf-8")
            doc = parse(path, text)
            if not doc.cells and "`{python}" not in text:
                out[key] = {"markdown": text, "text": text}  # nothing to run: neither executed nor cached
                continue
            hit = cache.lookup(ch.stem, text, settings)
            if hit is not None:
                out[key] = {"markdown": hit["markdown"], "text": text}
                report.cached.append(key)
                progress("execute", key + " (cached)", 0.0)
                continue
            t = time.perf_counter()
            if kernel is None:
                kernel = Kernel(cfg.root, keep_alive=keep_kernel, restart=restart_kernel)
            defaults = dict(cfg.execute)
            defaults["execute-dir"] = cfg.execute_dir
            try:
                markdown, figures = render_markdown(doc, kernel, defaults,
                                                    cfg.root / ".bookcache" / "figures" / ch.stem, ch.stem)
            except BuildError as err:
                raise err.located(ch.source)
            modules = kernel.project_modules()
            cache.store(ch.stem, text, settings, markdown, modules, figures)
            out[key] = {"markdown": markdown, "text": text}
            report.executed.append(key)
            progress("execute", key, time.perf_counter() - t)
    finally:
        if kernel is not None:
            report.kernel = "reused" if kernel.reused else "started"
            report.kernel_pid = kernel.pid
            kernel.close()
    return out


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
