"""The build, top to bottom: read config -> read chapters -> execute -> read into ASTs ->
number cross-references -> write HTML pages -> static files -> search index -> PDF."""
from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import pandoc
from .cache import digest, file_digest
from .editions import edition
from .epub import book as epub
from .errors import BuildError, line_of
from .execute.freeze import ExecCache, Recorder, Replay, Stale, source_key
from .execute.kernel import Kernel, daemon_seconds, matplotlibrc_files
from .execute.markdown import render as render_markdown
from .html import editions_page as editions, site as website
from .pandoc import xref
from .pdf import book as pdf
from .project import config as config_mod
from .project.config import BIB_KEY
from .project.qmd import parse


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
PARALLEL_FROM = 4  # chapters to run before a second kernel pays for its start


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
    run_scripts(cfg, "pre-render", {"QUARTO_PROJECT_INPUT_FILES": "\n".join(ch.source.as_posix() for ch in cfg.chapters)},
                progress)
    post_render = list(cfg.post_render)
    with ThreadPoolExecutor(max_workers=1) as beside:
        # The widget runtime's post-render script reads nothing the render writes, so bookbuild runs
        # it in-process while the chapters execute (mostly Node and libdeflate, outside the GIL)
        # instead of after the render, with the same result in the output folder.
        runtime = None
        if "html" in formats and website.runtime_script(cfg) in post_render:
            post_render.remove(website.runtime_script(cfg))
            runtime = beside.submit(widget_runtime, cfg, report, progress)
        pages = execute_all(cfg, report, progress, restart_kernel)
        report.timings["execute"] = time.perf_counter() - t0
        _write(cfg, formats, progress, search, report, pages)
        if runtime:
            runtime.result()
    outputs = [f"{cfg.output_dir}/{p}" for p in report.html_pages]
    outputs += [f"{cfg.output_dir}/{f.name}" for f in (report.pdf, report.epub) if f]
    t = time.perf_counter()
    run_scripts(cfg, "post-render", {"QUARTO_PROJECT_OUTPUT_FILES": "\n".join(outputs)}, progress, post_render)
    report.timings["post-render"] = time.perf_counter() - t
    report.timings["total"] = time.perf_counter() - t0
    return report


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
    index = xref.build_index(xpages)
    xref.check_references(xpages, index)
    cites = check_citations(cfg, xpages)
    index_path = cfg.root / ".bookcache" / "xref.json"
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


def run_scripts(cfg: config_mod.BookConfig, stage: str, env: dict[str, str], progress: Progress,
                commands: list[str] | None = None) -> None:
    """``project: pre-render:`` / ``post-render:`` commands, run as Quarto runs them (runScripts in
    src/command/render/project.ts): in the project folder, split like a shell command line, with
    QUARTO_PROJECT_OUTPUT_DIR, QUARTO_PROJECT_RENDER_ALL and the input or output files in the
    environment; a command that fails stops the build."""
    import os
    import shlex
    import subprocess
    if commands is None:
        commands = cfg.pre_render if stage == "pre-render" else cfg.post_render
    for command in commands:
        t = time.perf_counter()
        full = {**os.environ, "QUARTO_PROJECT_OUTPUT_DIR": str(cfg.out), "QUARTO_PROJECT_RENDER_ALL": "1", **env}
        try:
            proc = subprocess.run(shlex.split(command), cwd=cfg.root, env=full, capture_output=True, text=True)
        except OSError as exc:
            proc = subprocess.CompletedProcess(command, 127, "", str(exc))
        if proc.returncode != 0:
            config_path = cfg.root / config_mod.CONFIG_NAME
            raise BuildError(f"{stage} script `{command}` failed (exit status {proc.returncode})", config_path,
                             line_of(config_path.read_text(encoding="utf-8"), command),
                             detail=(proc.stdout + proc.stderr)[-2000:])
        progress(stage, command, time.perf_counter() - t)


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
    try:
        keep_kernel = daemon_seconds(cfg.execute)
    except BuildError as err:
        config_path = cfg.root / config_mod.CONFIG_NAME
        raise err.located(config_path, line_of(config_path.read_text(encoding="utf-8"), "daemon:"))
    defaults = dict(cfg.execute)
    defaults["execute-dir"] = cfg.execute_dir
    out: dict[str, dict[str, Any]] = {}
    todo: list[tuple[config_mod.Chapter, str, Any]] = []       # chapters the kernel must run
    for ch in cfg.chapters:
        key = ch.source.as_posix()
        path = cfg.root / ch.source
        text = path.read_text(encoding="utf-8")
        doc = parse(path, text)
        if not doc.cells and "`{python}" not in text:
            out[key] = {"markdown": text, "text": text}  # nothing to run: neither executed nor cached
            continue
        hit = cache.lookup(ch.stem, text, settings)
        if hit is not None and hit["source"] == source_key(text, settings) and cache.figures_exist(ch.stem, hit):
            out[key] = {"markdown": hit["markdown"], "text": text}
            report.cached.append(key)
            progress("execute", key + " (cached)", 0.0)
            continue
        t = time.perf_counter()
        if hit is not None and "calls" in hit:       # the prose changed: the kernel's answers did not
            replay = Replay(cfg.root, hit["calls"])
            try:
                markdown, figures = render_markdown(doc, replay, defaults, cfg.root / ".bookcache" / "figures" / ch.stem,
                                                    ch.stem)
            except Stale:
                pass
            except BuildError as err:
                raise err.located(ch.source)
            else:
                if replay.done():
                    cache.store(ch.stem, text, settings, markdown, hit["modules"], figures, hit["calls"])
                    out[key] = {"markdown": markdown, "text": text}
                    report.replayed.append(key)
                    progress("execute", key + " (prose only: outputs reused)", time.perf_counter() - t)
                    continue
        todo.append((ch, text, doc))

    def run(kernel: Kernel, ch: config_mod.Chapter, text: str, doc: Any) -> None:
        t = time.perf_counter()
        recorder = Recorder(kernel)
        try:
            markdown, figures = render_markdown(doc, recorder, defaults, cfg.root / ".bookcache" / "figures" / ch.stem,
                                                ch.stem)
        except BuildError as err:
            raise err.located(ch.source)
        cache.store(ch.stem, text, settings, markdown, kernel.project_modules(), figures, recorder.calls)
        out[ch.source.as_posix()] = {"markdown": markdown, "text": text}
        report.executed.append(ch.source.as_posix())
        progress("execute", ch.source.as_posix(), time.perf_counter() - t)

    # Many chapters to run (a cold build, a module most chapters import): two kernels take them
    # in turn, each chapter still in a clean namespace; a few run in the one kept kernel.
    slots = 2 if len(todo) >= PARALLEL_FROM and (os.cpu_count() or 1) > 1 else 1
    kernels = [Kernel(cfg.root, keep_alive=keep_kernel, restart=restart_kernel, slot=i) for i in range(slots)]
    queue, failed = list(todo), threading.Event()
    lock = threading.Lock()

    def worker(kernel: Kernel) -> None:
        while not failed.is_set():
            with lock:
                if not queue:
                    return
                job = queue.pop(0)
            try:
                run(kernel, *job)
            except BaseException:
                failed.set()
                raise

    try:
        if todo:
            with ThreadPoolExecutor(max_workers=slots) as pool:
                for job in [pool.submit(worker, k) for k in kernels]:
                    job.result()
    finally:
        used = [k for k in kernels if k.pid is not None]
        if used:
            report.kernel = "reused" if used[0].reused else "started"
            report.kernel_pid = used[0].pid
        for kernel in kernels:
            kernel.close()
    order = [ch.source.as_posix() for ch in cfg.chapters]
    report.executed.sort(key=order.index)
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
