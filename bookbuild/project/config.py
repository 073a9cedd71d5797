"""Read ``_quarto.yml`` (project type ``book``) into a small, checked structure."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import BuildError

CONFIG_NAME = "_quarto.yml"
BIB_KEY = re.compile(r"@\w+\s*\{\s*([^,\s]+)\s*,")  # the key of each entry of a .bib file


@dataclass
class Chapter:
    """One page of the book, in reading order."""
    source: Path            # relative to the project root, e.g. chapters/roofline.qmd
    part: str | None        # title of the part it belongs to
    appendix: bool = False

    @property
    def output(self) -> Path:
        """Relative path of the HTML page."""
        return self.source.with_suffix(".html")

    @property
    def stem(self) -> str:
        return self.source.with_suffix("").as_posix().replace("/", "-")


@dataclass
class BookConfig:
    root: Path
    title: str
    author: list[str]
    chapters: list[Chapter]
    raw: dict[str, Any]
    subtitle: str | None = None
    date: str | None = None
    output_dir: str = "_book"
    filters: list[str] = field(default_factory=list)
    bibliography: list[str] = field(default_factory=list)
    execute: dict[str, Any] = field(default_factory=dict)
    html: dict[str, Any] = field(default_factory=dict)
    typst: dict[str, Any] = field(default_factory=dict)
    repo_url: str | None = None
    repo_actions: list[str] = field(default_factory=list)
    execute_dir: str = "file"
    pre_render: list[str] = field(default_factory=list)
    post_render: list[str] = field(default_factory=list)

    @property
    def out(self) -> Path:
        return self.root / self.output_dir

    @property
    def pdf_name(self) -> str:
        return (self.raw.get("book", {}).get("output-file") or "book") + ".pdf"


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _chapter_entries(entries: list, path: Path, appendix: bool) -> list[Chapter]:
    chapters: list[Chapter] = []
    for entry in entries:
        if isinstance(entry, str):
            chapters.append(Chapter(Path(entry), None, appendix))
        elif isinstance(entry, dict) and "part" in entry:
            title = entry["part"]
            for sub in _as_list(entry.get("chapters")):
                if not isinstance(sub, str):
                    raise BuildError(f"chapters inside part {title!r} must be file names", path)
                chapters.append(Chapter(Path(sub), str(title), appendix))
        elif isinstance(entry, dict) and "href" in entry:
            chapters.append(Chapter(Path(entry["href"]), None, appendix))
        else:
            raise BuildError(f"cannot read chapter entry {entry!r}", path,
                             hint="use a file name or `- part: Title` with `chapters:`")
    return chapters


def load(root: Path) -> BookConfig:
    """Parse and validate the project configuration."""
    root = Path(root).resolve()
    path = root / CONFIG_NAME
    if not path.exists():
        raise BuildError(f"no {CONFIG_NAME} here", root, hint="run the build from the book's folder")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        raise BuildError(f"malformed YAML: {getattr(exc, 'problem', exc)}", path, line) from None
    if not isinstance(raw, dict):
        raise BuildError("expected a mapping at the top level", path, 1)
    project = raw.get("project") or {}
    if project.get("type") != "book":
        raise BuildError("project type must be `book`", path, _line(path, "project:"),
                         hint="add `project: {type: book}`")
    book = raw.get("book")
    if not isinstance(book, dict) or not book.get("chapters"):
        raise BuildError("`book:` needs a `chapters:` list", path, _line(path, "book:"))
    chapters = _chapter_entries(_as_list(book.get("chapters")), path, appendix=False)
    chapters += _chapter_entries(_as_list(book.get("appendices")), path, appendix=True)
    seen: set[str] = set()
    for ch in chapters:
        key = ch.source.as_posix()
        if key in seen:
            raise BuildError(f"chapter {key} is listed twice", path, _line(path, key))
        seen.add(key)
        if not (root / ch.source).exists():
            raise BuildError(f"chapter file {key} does not exist", path, _line(path, key))
    formats = raw.get("format") or {}
    if not isinstance(formats, dict):
        formats = {str(f): {} for f in _as_list(formats)}
    authors = [a if isinstance(a, str) else a.get("name", "") for a in _as_list(book.get("author"))]
    return BookConfig(
        root=root,
        title=str(book.get("title") or raw.get("title") or "Untitled"),
        subtitle=book.get("subtitle"),
        date=str(book.get("date")) if book.get("date") else None,
        author=authors,
        chapters=chapters,
        raw=raw,
        output_dir=str(project.get("output-dir") or "_book"),
        filters=_filters(_as_list(raw.get("filters")), path),
        bibliography=[str(b) for b in _as_list(raw.get("bibliography"))],
        execute=dict(raw.get("execute") or {}),
        html=dict(formats.get("html") or {}),
        typst=dict(formats.get("typst") or {}),
        repo_url=book.get("repo-url"),
        repo_actions=[str(a) for a in _as_list(book.get("repo-actions"))],
        execute_dir=str(project.get("execute-dir") or "file"),
        pre_render=[str(c) for c in _as_list(project.get("pre-render"))],
        post_render=[str(c) for c in _as_list(project.get("post-render"))],
    )


# Quarto's filter entry points (src/resources/filters/main.lua) that run before its own
# processing of callouts, tabsets, figures and cross-references: bookbuild runs the book's
# filters before its implementations of those, so these three behave alike here.
EARLY_ENTRY_POINTS = ("pre-ast", "post-ast", "pre-quarto")


def _filters(entries: list, path: Path) -> list[str]:
    """Filter paths in order: a plain path (Quarto runs it at pre-quarto) or ``{path, at}``."""
    out = []
    after_quarto = False
    for entry in entries:
        if after_quarto and not isinstance(entry, dict):
            raise BuildError(f"filter {entry} comes after `quarto`, where Quarto runs it after its own "
                             "filters; this build cannot", path, _line(path, str(entry)),
                             hint="list the book's filters before `quarto`, or give them `at: pre-ast`")
        if isinstance(entry, dict):
            at = str(entry.get("at", "pre-quarto"))
            if at not in EARLY_ENTRY_POINTS or "path" not in entry:
                raise BuildError(f"filter entry {entry!r} is not supported by this build", path,
                                 _line(path, str(entry.get("path", "filters:"))),
                                 hint=f"use `path:` with `at:` one of {', '.join(EARLY_ENTRY_POINTS)}")
            out.append(str(entry["path"]))
        elif entry == "quarto":
            after_quarto = True     # where Quarto's own filters go; bookbuild's run after the book's
        else:
            out.append(str(entry))
    return out


def _line(path: Path, needle: str) -> int | None:
    from ..errors import line_of
    return line_of(path.read_text(encoding="utf-8"), needle)
