"""Every chapter's executed markdown: from the cache when nothing it read changed, replayed when
only its prose did, else run in a clean kernel namespace (two kernels in turn when many must run)."""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from .freeze import ExecCache, Recorder, Replay, Stale, source_key
from .kernel import Kernel, daemon_seconds, matplotlibrc_files
from .markdown import render as render_markdown, seen
from ..cache import file_digest
from ..errors import BuildError, line_of
from ..project import config as config_mod
from ..project.qmd import parse

Progress = Callable[[str, str, float | None], None]   # build.Progress
PARALLEL_FROM = 4  # chapters to run before a second kernel pays for its start


def execute_all(cfg: config_mod.BookConfig, report: Any, progress: Progress,
                restart_kernel: bool = False) -> dict[str, dict[str, Any]]:
    """Executed markdown per chapter, from the cache when nothing it depends on changed; what ran,
    came from the cache or was replayed goes into ``report`` (build.Report)."""
    cache = ExecCache(cfg.root)
    settings = _settings(cfg)
    try:
        keep_kernel = daemon_seconds(cfg.execute)
    except BuildError as err:
        config_path = cfg.root / config_mod.CONFIG_NAME
        raise err.located(config_path, line_of(config_path.read_text(encoding="utf-8"), "daemon:"))
    defaults = _defaults(cfg)
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
                    cache.store(ch.stem, text, settings, markdown, hit["modules"], figures, hit["calls"],
                                hit.get("parts"))
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
        read = kernel.project_modules()
        cache.store(ch.stem, text, settings, markdown, read["files"], figures, recorder.calls, read["parts"])
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


def _settings(cfg: config_mod.BookConfig) -> dict[str, Any]:
    """What the execution cache keys a chapter's run on, besides its source and imports."""
    # how long the kernel is kept changes nothing a chapter computes
    return {"execute": {k: v for k, v in cfg.execute.items() if k != "daemon"},
            "execute-dir": cfg.execute_dir,
            # every figure is drawn with the project's matplotlib settings
            "matplotlibrc": [file_digest(rc) for rc in matplotlibrc_files(cfg.root)]}


def _defaults(cfg: config_mod.BookConfig) -> dict[str, Any]:
    defaults = dict(cfg.execute)
    defaults["execute-dir"] = cfg.execute_dir
    return defaults


def seen_from_cache(cfg: config_mod.BookConfig, ch: config_mod.Chapter, text: str) -> list[tuple[int, str, str]] | None:
    """What a reader sees of chapter ``ch`` (``markdown.seen``), from its last build's recorded
    run, without a kernel: None when the cache has no run that still holds for ``text`` (never
    built, or a cell, an inline expression, an imported module or the settings changed since).
    A chapter with nothing to run is its own text."""
    path = cfg.root / ch.source
    doc = parse(path, text)
    if not doc.cells and "`{python}" not in text:
        return [(i + 1, "", line) for i, line in enumerate(text.split("\n"))]
    if not (cfg.root / ".bookcache" / "exec").is_dir():
        return None                                   # never built here (and nothing to create)
    cache = ExecCache(cfg.root)
    entry = cache.lookup(ch.stem, text, _settings(cfg))
    if entry is None or "calls" not in entry:
        return None
    replay = Replay(cfg.root, entry["calls"])
    try:
        out = seen(doc, replay, _defaults(cfg))
    except (Stale, BuildError):
        return None
    return out if replay.done() else None
