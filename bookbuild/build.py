"""The build, top to bottom, one package per stage: read the project (project/: _quarto.yml, the
chapters, pre-render scripts) -> execute the chapters (execute/) -> read them into ASTs, number
cross-references, check citations (pandoc/) -> write the formats side by side: the HTML site with
math and search (html/), the book's PDF and a PDF per chapter (pdf/), the EPUB (epub/) -> the
Editions page that lists them -> post-render scripts. What every edition states about itself and
its pictures are in editions/; ``check`` and ``preview`` are the other commands beside this one."""
from __future__ import annotations

import fcntl
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .editions import edition
from .epub.book import write_epub
from .execute.run import execute_all
from .html import site as website
from .html.editions_page import write_editions_page
from .pandoc import xref
from .pandoc.pages import check_citations, read_all
from .pdf.book import write_pdf
from .project import config as config_mod
from .project.scripts import run_scripts


@dataclass
class Report:
    """What a build did, for the progress display and the benchmarks."""
    executed: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    replayed: list[str] = field(default_factory=list)  # prose changed, cells and inline code not
    timings: dict[str, float] = field(default_factory=dict)
    html_pages: list[str] = field(default_factory=list)
    pdf: Path | None = None
    epub: Path | None = None
    kernel: str = ""  # "started" or "reused" when a chapter ran, else empty
    kernel_pid: int | None = None
    runtime: list[str] | None = None  # widget runtime: cache entries made now (None: not built)


Progress = Callable[[str, str, float | None], None]
EXERCISES_CACHE = "BOOK_EXERCISES_CACHE"    # calc.exercises.CACHE_ENV (bookbuild imports no calc)


def _quiet(stage: str, item: str, seconds: float | None) -> None:
    pass


def build(root: Path, formats: tuple[str, ...] = ("html", "pdf", "epub"), progress: Progress = _quiet,
          search: bool = True, restart_kernel: bool = False) -> Report:
    root = Path(root).resolve()
    (root / ".bookcache").mkdir(exist_ok=True)
    with open(root / ".bookcache" / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time per project: they share .bookcache
        # where the project's exercises keep what the simulator found for each (calc.exercises:
        # the Solutions appendix and the exercises' filter, in the kernel and in pandoc's filters)
        before = os.environ.get(EXERCISES_CACHE)
        os.environ[EXERCISES_CACHE] = str(root / ".bookcache" / "exercises")
        try:
            return _build(root, formats, progress, search, restart_kernel)
        finally:
            if before is None:
                os.environ.pop(EXERCISES_CACHE, None)
            else:
                os.environ[EXERCISES_CACHE] = before


def _build(root: Path, formats: tuple[str, ...], progress: Progress, search: bool,
           restart_kernel: bool = False) -> Report:
    report = Report()
    t0 = time.perf_counter()
    edition.forget()
    cfg = config_mod.load(root)
    run_scripts(cfg, "pre-render", {"QUARTO_PROJECT_INPUT_FILES": "\n".join(ch.source.as_posix() for ch in cfg.chapters)},
                progress)
    post_render = list(cfg.post_render)
    with ThreadPoolExecutor(max_workers=2) as beside:
        # The widget runtime's post-render script reads nothing the render writes, so bookbuild runs
        # it in-process while the chapters execute (mostly Node and libdeflate, outside the GIL)
        # instead of after the render, with the same result in the output folder; the editor's
        # bundle (a copy from the per-user cache, or esbuild) is the same kind of script.
        runtime = editor = None
        if "html" in formats and website.runtime_script(cfg) in post_render:
            post_render.remove(website.runtime_script(cfg))
            runtime = beside.submit(widget_runtime, cfg, report, progress)
        if "html" in formats and EDITOR_SCRIPT in post_render and (cfg.root / "scripts" / "editor_bundle.py").exists():
            post_render.remove(EDITOR_SCRIPT)
            editor = beside.submit(run_scripts, cfg, "post-render", {}, progress, [EDITOR_SCRIPT])
        pages = execute_all(cfg, report, progress, restart_kernel)
        report.timings["execute"] = time.perf_counter() - t0
        _write(cfg, formats, progress, search, report, pages)
        for job in (runtime, editor):
            if job:
                job.result()
    outputs = [f"{cfg.output_dir}/{p}" for p in report.html_pages]
    outputs += [f"{cfg.output_dir}/{f.name}" for f in (report.pdf, report.epub) if f]
    t = time.perf_counter()
    env = {"QUARTO_PROJECT_OUTPUT_FILES": "\n".join(outputs)}
    for command in post_render:
        if command == OFFLINE_SCRIPT:
            # bookbuild's own last step: run in this process (the same function its __main__ calls)
            # rather than paying for a second Python and its imports
            t1 = time.perf_counter()
            offline(cfg)
            progress("post-render", command, time.perf_counter() - t1)
        else:
            run_scripts(cfg, "post-render", env, progress, [command])
    report.timings["post-render"] = time.perf_counter() - t
    report.timings["total"] = time.perf_counter() - t0
    return report


EDITOR_SCRIPT = "python3 scripts/editor_bundle.py"
OFFLINE_SCRIPT = website.OFFLINE_SCRIPT


def offline(cfg: config_mod.BookConfig) -> None:
    """``python3 -m bookbuild.html.offline`` in this process (see html/offline/__main__.py)."""
    from .html.offline import write_offline
    write_offline(cfg.out, cfg.title, cfg.raw.get("description"), cfg.root)


def widget_runtime(cfg: config_mod.BookConfig, report: Report, progress: Progress) -> None:
    t = time.perf_counter()
    report.runtime = website.widget_runtime(cfg)
    report.timings["runtime"] = time.perf_counter() - t
    what = f"made {' and '.join(report.runtime)}" if report.runtime else "from the per-user cache"
    progress("runtime", f"widget runtime ({what})", report.timings["runtime"])


def _write(cfg: config_mod.BookConfig, formats: tuple[str, ...], progress: Progress, search: bool,
           report: Report, pages: dict[str, dict[str, Any]]) -> None:
    """Read the executed chapters, number cross-references, write the site and the PDF."""
    t = time.perf_counter()
    asts = read_all(cfg, pages, progress)
    xpages = [xref.Page(ch.source.as_posix(), ch.output.as_posix(), asts[ch.source.as_posix()],
                        pages[ch.source.as_posix()]["text"], ch.appendix)
              for ch in cfg.chapters]
    index_path = cfg.root / ".bookcache" / "xref.json"
    index = cached_index(xpages, index_path)
    xref.check_references(xpages, index)
    cites = check_citations(cfg, xpages)
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
            book = pool.submit(timed, "pdf", write_pdf, cfg, xpages, index_path, cites, progress)
        if "epub" in formats:   # after the PDF in the same worker: the machine has two cores
            book = pool.submit(_then, book, lambda: timed("epub", write_epub, cfg, xpages, index_path,
                                                          cites, progress))
        if site:
            site.result()
        if book:
            result = book.result()
            if "epub" in formats:
                report.pdf, report.epub = result
            else:
                report.pdf = result
    write_editions_page(cfg, report, formats)


def cached_index(pages: list[xref.Page], index_path: Path) -> dict[str, Any]:
    """The cross-reference index (xref.build_index), kept in ``index_path`` beside the digest of what
    it is made of (each page's names, appendix flag and AST): a build whose pages' ASTs are the same
    reads it back instead of walking every page again. The page's source text only places an error,
    and an index was kept only where there was none."""
    from .cache import digest
    key = digest(json.dumps([[p.source, p.output, p.appendix, p.ast_digest] for p in pages]))
    key_path = index_path.with_name(index_path.name + ".key")
    if index_path.exists() and key_path.exists() and key_path.read_text() == key:
        return json.loads(index_path.read_text())
    index = xref.build_index(pages)
    text = json.dumps(index)
    if not index_path.exists() or index_path.read_text() != text:
        index_path.write_text(text)
    key_path.write_text(key)
    return index


def _then(first, second: Callable[[], Any]) -> tuple[Any, Any]:
    """Run ``second`` after the future ``first`` (if any) and return both results."""
    return (first.result() if first else None), second()
