"""Rules of ``bookbuild check`` for sources that build here but would render wrong under real
Quarto, each found once by rendering the book with Quarto 1.10 (issue #15), each with the Quarto
behaviour it guards against:

* a chapter titled twice (a ``title:`` in its front matter and a level-1 heading): Quarto renders
  the title as the chapter's heading and the ``#`` heading as a second, numbered one;
* an inline expression inside ``$...$`` whose value is not Markdown: Quarto inserts a ``str``
  escaped for markdown (``\\,`` for ``,``, backslashes doubled; src/core/jupyter/jupyter-inline.ts),
  which TeX then reads differently;
* a filter that finds files through the working directory or its own path: Quarto runs Pandoc in
  the chapter's folder, so ``PANDOC_SCRIPT_FILE`` is ``../filters/x.lua`` there;
* a bracketed span with a space just inside its brackets (``done.[ More]{.x}``): Pandoc's
  Markdown reader, which Quarto uses too, trims a span's edges, so the page prints ``done.More``;
* a page asset under ``assets/`` that ``_quarto.yml`` does not declare (``format: html: css``,
  ``include-in-header``, ``project: resources``), and widgets without the ``post-render`` script
  that puts their runtime in the site: a Quarto render has neither.

Each rule returns ``(file, line, message)`` tuples; ``check.py`` reports them as errors.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from .errors import line_of
from .project.config import _as_list
from .project.qmd import INLINE, Document

Finding = tuple[Path, "int | None", str]

HEADING_1 = re.compile(r"^#\s+\S")
DEF = re.compile(r"^def\s+(\w+)\s*\(", re.M)
CALLEE = re.compile(r"^\s*([\w.]+)\s*\(")


def titled_twice(path: Path, doc: Document, text: str, markdown_text: str) -> Iterator[Finding]:
    """``markdown_text``: the page without code (fenced blocks blanked)."""
    headings = [i + 1 for i, line in enumerate(markdown_text.split("\n")) if HEADING_1.match(line)]
    if doc.front.get("title") and headings:
        yield (path, line_of(text, "title:"),
               "the chapter is titled twice: a front-matter `title:` and a `# heading` (line "
               f"{headings[0]}); Quarto renders both as numbered chapter headings. Keep the `# Title {{#sec-...}}`")
    for line in headings[1:]:
        yield (path, line, "a second level-1 heading: Quarto numbers it as a chapter of its own "
                           "inside this one; use `##`")


def markdown_functions(doc: Document) -> set[str]:
    """Names the chapter's cells define (``def f(...)``) whose body returns ``Markdown(...)``."""
    found: set[str] = set()
    for cell in doc.cells:
        defs = list(DEF.finditer(cell.code))
        for i, m in enumerate(defs):
            body = cell.code[m.end(): defs[i + 1].start() if i + 1 < len(defs) else len(cell.code)]
            if re.search(r"return\s+(IPython\.display\.)?Markdown\(", body):
                found.add(m.group(1))
    return found


def inline_in_math(path: Path, doc: Document, text: str) -> Iterator[Finding]:
    from .execute.markdown import math_spans
    md_funcs = markdown_functions(doc) | {"Markdown", "IPython.display.Markdown"}
    display = False
    in_fence = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        spans, display = math_spans(line, display)
        for m in INLINE.finditer(line):
            if not any(a <= m.start() < b for a, b in spans):
                continue
            callee = CALLEE.match(m.group("expr"))
            if callee and callee.group(1) in md_funcs:
                continue
            yield (path, number, f"inline expression `{{python}} {m.group('expr').strip()}` inside math "
                                 "must be IPython.display.Markdown (Quarto escapes a str for markdown, "
                                 "and TeX reads the escapes): call a function of this chapter that returns Markdown")


# A bracketed span, `[text]{attributes}`, whose text starts or ends with a space; links (`](`) and
# task-list boxes (`[ ]`, `[x]`) are not spans.
SPAN_EDGE_SPACE = re.compile(r"(?<![\\!])\[(?: +[^\]\s][^\]\n]*|[^\]\n]*[^\]\s] +)\]\{")


def span_edge_spaces(path: Path, markdown_text: str) -> Iterator[Finding]:
    """``markdown_text``: the source with code blanked (check._without_code), lines kept."""
    for number, line in enumerate(markdown_text.split("\n"), 1):
        for m in SPAN_EDGE_SPACE.finditer(line):
            yield (path, number, f"a space just inside the span {m.group(0)[:40]}... is dropped by Pandoc's "
                                 "reader (so by Quarto too): put the space outside the brackets")


PATH_FROM_CWD = re.compile(r"PANDOC_SCRIPT_FILE|get_working_directory|io\.open\s*\(")


def filter_paths(root: Path, filters: list[str]) -> Iterator[Finding]:
    for f in filters:
        path = root / f
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            code = line.split("--", 1)[0]
            if PATH_FROM_CWD.search(code) and "project.lua" not in code:
                yield (path, number, "the filter finds a file through the working directory or its own "
                                     "path, which differ under Quarto (Pandoc runs in the chapter's folder): "
                                     "use filters/project.lua (project.root, project.read)")


ASSET_NAME = re.compile(r"[\w.-]+\.(?:css|js|mjs|html)\b")


def undeclared_assets(root: Path, cfg: Any, shell: dict[str, list[str]], widget_head: str,
                      has_widgets: bool) -> Iterator[Finding]:
    """Every file under ``assets/`` reachable from what ``_quarto.yml`` declares; the widgets'
    runtime made by a declared post-render script."""
    config = root / "_quarto.yml"
    config_text = config.read_text(encoding="utf-8")
    html = cfg.html
    declared = [str(c) for c in _as_list(html.get("css"))]
    texts = [widget_head, *(str(p) for group in shell.values() for p in group)]
    for entry in _as_list(html.get("include-in-header")):
        file = entry.get("file") if isinstance(entry, dict) else entry
        if isinstance(entry, dict) and "text" in entry:
            texts.append(str(entry["text"]))
        elif file and (root / str(file)).is_file():
            declared.append(str(file))
    for f in cfg.filters:
        if (root / f).is_file():
            texts.append((root / f).read_text(encoding="utf-8"))
    assets = sorted(p for p in (root / "assets").rglob("*") if p.is_file()) if (root / "assets").is_dir() else []
    reached = {Path(d).name for d in declared}
    frontier = [*texts, *((root / d).read_text(encoding="utf-8") for d in declared if (root / d).is_file())]
    while frontier:                                   # names mentioned by what is reached, transitively
        found = set(ASSET_NAME.findall(frontier.pop())) - reached
        reached |= found
        frontier += [p.read_text(encoding="utf-8", errors="replace") for p in assets if p.name in found]
    resources = [str(r) for r in _as_list((cfg.raw.get("project") or {}).get("resources"))]
    for p in assets:
        rel = p.relative_to(root).as_posix()
        if p.suffix in (".css", ".js", ".mjs", ".html") and p.name not in reached:
            yield (p, None, f"{rel} is in no page: declare it in _quarto.yml (format: html: css or "
                            "include-in-header) so that a Quarto render loads it too, or delete it")
        elif not any(Path(rel).match(r) or rel.startswith(r.rstrip("*").rstrip("/") + "/") for r in resources):
            yield (config, line_of(config_text, "resources:"),
                   f"{rel} is not among `project: resources`: a Quarto render would not copy it into the site")
    if has_widgets and not any("widgets.bundle" in c for c in cfg.post_render):
        yield (config, line_of(config_text, "project:"),
               "the book has widgets but no `project: post-render: python3 -m widgets.bundle`: "
               "a Quarto render would have no Python runtime for them")
