"""Split a ``.qmd`` file into front matter, markdown runs and executable cells.

Only what Quarto documents is recognised: a YAML front matter block, cells fenced
as ```` ```{python} ```` with ``#| key: value`` option lines, and inline
expressions written `` `{python} expr` ``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import BuildError

FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
EXEC_INFO = re.compile(r"^\{(?P<lang>[A-Za-z0-9_+-]+)(?P<rest>[^}]*)\}\s*$")
INLINE = re.compile(r"`\{(?P<lang>python|r|julia|ojs)\}\s+(?P<expr>[^`]+?)`")
OPTION = re.compile(r"^#\|\s?(?P<body>.*)$")

# Cell options Quarto documents that this build honours.
KNOWN_CELL_OPTIONS = {
    "label", "echo", "eval", "output", "include", "warning", "error",
    "fig-cap", "fig-alt", "tbl-cap", "code-fold", "code-summary", "fig-width", "fig-height",
    "lst-label", "lst-cap", "classes",
}
# Documented Quarto cell options that this build reads but does not implement.
UNSUPPORTED_CELL_OPTIONS = {
    "layout-ncol", "layout-nrow", "layout", "fig-subcap", "fig-align", "fig-pos", "fig-dpi",
    "fig-format", "column", "cache", "freeze", "code-line-numbers", "code-overflow", "panel",
    "fig-column", "tbl-column", "tbl-subcap", "tbl-colwidths", "message", "comment",
}


@dataclass
class Markdown:
    text: str
    line: int                     # 1-based line of the first line of ``text``


@dataclass
class Cell:
    code: str
    lang: str
    options: dict[str, Any]
    line: int                     # line of the opening fence
    index: int = 0                # 0-based position among executable cells
    code_line: int = 0            # line of the first line of ``code``

    @property
    def label(self) -> str | None:
        return self.options.get("label")


@dataclass
class Inline:
    expr: str
    line: int


@dataclass
class Document:
    path: Path
    front: dict[str, Any]
    chunks: list[Markdown | Cell] = field(default_factory=list)
    front_end_line: int = 0

    @property
    def cells(self) -> list[Cell]:
        return [c for c in self.chunks if isinstance(c, Cell)]


def parse(path: Path, text: str | None = None) -> Document:
    text = path.read_text(encoding="utf-8") if text is None else text
    lines = text.split("\n")
    front: dict[str, Any] = {}
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                try:
                    front = load_yaml("\n".join(lines[1:i])) or {}
                except yaml.YAMLError as exc:
                    mark = getattr(exc, "problem_mark", None)
                    raise BuildError(f"malformed front matter: {getattr(exc, 'problem', exc)}",
                                     path, (mark.line + 2) if mark else 1) from None
                start = i + 1
                break
        else:
            raise BuildError("front matter opened with --- is never closed", path, 1)
    doc = Document(path, front if isinstance(front, dict) else {}, front_end_line=start)
    buf: list[str] = []
    buf_line = start + 1
    i = start
    n_cells = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            buf.append(lines[i])
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        close = _closing(lines, i, fence)
        exe = EXEC_INFO.match(info)
        if exe is None or close is None:
            # an ordinary code block (or an unclosed fence): keep it verbatim
            end = close if close is not None else len(lines) - 1
            buf.extend(lines[i:end + 1])
            i = end + 1
            continue
        if buf:
            doc.chunks.append(Markdown("\n".join(buf), buf_line))
        body = lines[i + 1:close]
        options, code_start = _options(body, path, i + 2)
        doc.chunks.append(Cell("\n".join(body[code_start:]), exe.group("lang"), options, i + 1,
                              n_cells, i + 2 + code_start))
        n_cells += 1
        buf = []
        buf_line = close + 2
        i = close + 1
    if buf:
        doc.chunks.append(Markdown("\n".join(buf), buf_line))
    return doc


def _closing(lines: list[str], i: int, fence: str) -> int | None:
    for j in range(i + 1, len(lines)):
        s = lines[j].strip()
        if s.startswith(fence[0] * len(fence)) and set(s) <= {fence[0]}:
            return j
    return None


def _options(body: list[str], path: Path, first_line: int) -> tuple[dict[str, Any], int]:
    opt_lines: list[str] = []
    k = 0
    while k < len(body):
        m = OPTION.match(body[k])
        if not m:
            break
        opt_lines.append(m.group("body"))
        k += 1
    if not opt_lines:
        return {}, 0
    try:
        options = load_yaml("\n".join(opt_lines)) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise BuildError(f"cell options are not valid YAML: {getattr(exc, 'problem', exc)}",
                         path, first_line + (mark.line if mark else 0)) from None
    if not isinstance(options, dict):
        raise BuildError("cell options must be `#| key: value` lines", path, first_line)
    return options, k


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with libyaml's parser where PyYAML has it (a fifth of the time, for the
    same values: the constructor is the same); YAML it cannot read is read again by the pure-Python
    loader, so an author's error message is the one it always was."""
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:
        return yaml.safe_load(text)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError:
        return yaml.safe_load(text)


def inline_expressions(md: Markdown) -> list[Inline]:
    """Inline expressions in a markdown run, skipping fenced code blocks."""
    found: list[Inline] = []
    in_fence: str | None = None
    for offset, line in enumerate(md.text.split("\n")):
        m = FENCE.match(line)
        if m:
            f = m.group("fence")
            if in_fence is None:
                in_fence = f
            elif line.strip().startswith(in_fence):
                in_fence = None
            continue
        if in_fence is not None:
            continue
        for im in INLINE.finditer(line):
            found.append(Inline(im.group("expr").strip(), md.line + offset))
    return found
