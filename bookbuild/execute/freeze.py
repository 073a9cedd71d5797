"""Quarto's ``freeze`` idea: a chapter runs again only when its source, the build's
execution settings, the project Python it imported or a project file its cells read have
changed.

A chapter whose prose alone changed (the same cells and inline expressions, in the same order)
does not run again either: the kernel's answers to it are kept with the entry (``calls``) and
replayed into the new text (``Replay``), which is what the kernel would have answered, given
that each chapter starts from an empty namespace and nothing it imports or reads changed."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..cache import digest, file_digest

VERSION = "7"  # bump when the executed-markdown format or what the key covers changes


class ExecCache:
    def __init__(self, root: Path):
        self.root = root
        self.dir = root / ".bookcache" / "exec"
        self.dir.mkdir(parents=True, exist_ok=True)

    def _path(self, stem: str) -> Path:
        return self.dir / f"{stem}.json"

    def lookup(self, stem: str, source_text: str, settings: dict[str, Any]) -> dict[str, Any] | None:
        """The chapter's entry if the settings and what its execution read are unchanged (else
        None). Its ``markdown`` holds when ``entry["source"] == source_key(source_text, settings)``
        (and its figures are in place); otherwise its ``calls`` may be replayed."""
        path = self._path(stem)
        if not path.exists():
            return None
        entry = json.loads(path.read_text())
        if entry.get("settings") != _settings_key(settings):
            return None
        for rel, old in entry.get("modules", {}).items():
            if file_digest(self.root / rel) != old:
                return None
        for rel, (parts, old) in entry.get("parts", {}).items():
            if parts_digest(self.root / rel, parts) != old:
                return None
        return entry

    def figures_exist(self, stem: str, entry: dict[str, Any]) -> bool:
        fig_dir = self.root / ".bookcache" / "figures" / stem
        return all((fig_dir / f).exists() for f in entry.get("figures", []))

    def _rel(self, path: str) -> str | None:
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def store(self, stem: str, source_text: str, settings: dict[str, Any], markdown: str,
              modules: dict[str, str] | list[str], figures: list[str], calls: list[list[Any]],
              parts: dict[str, Any] | None = None) -> None:
        """``modules``: paths the kernel reported (digested here), or a stored entry's digests;
        ``parts``: {path: [part, ...]} of files read only in part (``book.reads``, digested
        here), or a stored entry's {rel: [parts, digest]}."""
        if isinstance(modules, list):
            rels = {}
            for m in modules:
                rel = self._rel(m)
                if rel is not None:
                    rels[rel] = file_digest(Path(m))
            modules = rels
        kept: dict[str, Any] = {}
        for m, value in (parts or {}).items():
            if isinstance(value, list) and len(value) == 2 and isinstance(value[1], str) and not Path(m).is_absolute():
                kept[m] = value                                   # a stored entry's
            elif (rel := self._rel(m)) is not None and rel not in modules:
                kept[rel] = [sorted(set(value)), parts_digest(Path(m), list(value))]
        entry = {"source": source_key(source_text, settings), "settings": _settings_key(settings),
                 "modules": modules, "parts": kept, "figures": figures, "markdown": markdown, "calls": calls}
        tmp = self._path(stem).with_suffix(".tmp")
        tmp.write_text(json.dumps(entry))
        tmp.replace(self._path(stem))


def _settings_key(settings: dict[str, Any]) -> str:
    return digest(VERSION, json.dumps(settings, sort_keys=True))


def source_key(source_text: str, settings: dict[str, Any]) -> str:
    return digest(VERSION, source_text, json.dumps(settings, sort_keys=True))


class Stale(Exception):
    """A replayed chapter asked the kernel something its recorded run did not."""


class Recorder:
    """A kernel (execute.Kernel) that keeps every answer it gave, in order, in ``calls``."""

    def __init__(self, kernel: Any):
        self.kernel, self.root, self.calls = kernel, kernel.root, []

    def start_document(self, cwd: Path) -> None:
        self.kernel.start_document(cwd)
        self.calls.append(["start", _relative(cwd, self.root)])

    def run_cell(self, cell: Any, path: Path) -> Any:
        result = self.kernel.run_cell(cell, path)
        self.calls.append(["cell", cell.code, result.outputs])
        return result

    def inline(self, items: list[Any], path: Path) -> list[str]:
        texts = self.kernel.inline(items, path)
        if items:
            self.calls.append(["inline", [i.expr for i in items], texts])
        return texts


def _relative(path: Path, root: Path) -> str:
    """Where a chapter runs, as the execution cache keys it: relative to the project (a copied or
    moved project keeps its cache, as it does for unchanged sources)."""
    return os.path.relpath(path, root)


class Replay:
    """Answers a chapter's questions from a recorded run; ``Stale`` at the first one that differs."""

    def __init__(self, root: Path, calls: list[list[Any]]):
        self.root, self.calls, self.at = root, calls, 0

    def _next(self, kind: str, question: Any) -> Any:
        if self.at >= len(self.calls) or self.calls[self.at][:2] != [kind, question]:
            raise Stale(kind)
        self.at += 1
        return self.calls[self.at - 1][2] if kind != "start" else None

    def start_document(self, cwd: Path) -> None:
        self._next("start", _relative(cwd, self.root))

    def run_cell(self, cell: Any, path: Path) -> Any:
        from .kernel import CellResult
        return CellResult(cell, self._next("cell", cell.code))

    def inline(self, items: list[Any], path: Path) -> list[str]:
        return self._next("inline", [i.expr for i in items]) if items else []

    def done(self) -> bool:
        return self.at == len(self.calls)


# ---------------------------------------------------------------- what a cell read of a file
#
# A page generated from other pages (the Solutions appendix from the exercises, the glossary and
# the chapter map from the chapters' front matter and titles) reads every chapter, but only a part
# of each. Its module says which part with a standard-library audit event,
#
#     sys.audit("book.reads", path, part)        # part: one of PARTS
#
# (a no-op anywhere no hook listens: in the browser, in a test), and the page is then keyed on that
# part of the file instead of on its bytes: one word of prose outside an exercise leaves the
# Solutions appendix cached. A file read whole by anything else in the same document is still
# keyed whole (the kernel reports it among the files read); an unknown part keys the whole file.

_DIV_OPEN = re.compile(r"^ {0,3}:{3,}\s*(?P<info>\{[^}]*\}|[A-Za-z][\w-]*)\s*:*\s*$")
_DIV_CLOSE = re.compile(r"^ {0,3}:{3,}\s*$")
_CODE_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_EXERCISE_CLASSES = ("exercise", "problem")


def _classes(info: str) -> list[str]:
    if not info.startswith("{"):
        return [info]
    return re.findall(r"(?:^|\s)\.([\w-]+)", info[1:-1])


def _lines(text: str) -> list[tuple[str, bool]]:
    """Each line with whether it is inside a fenced code block (the fence lines count as inside)."""
    out, fence = [], None
    for line in text.split("\n"):
        m = _CODE_FENCE.match(line)
        if fence is None and m:
            fence = m.group("fence")
            out.append((line, True))
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
            out.append((line, True))
            continue
        out.append((line, False))
    return out


def exercise_divs(text: str) -> str | None:
    """Every ``.exercise`` and ``.problem`` div of a chapter's source, whole (its statement, hints,
    starter, check and solution) and in order, with its path-independent text: None when the
    divs do not balance (the caller keys the whole file then)."""
    kept: list[str] = []
    depth, inside = 0, None          # inside: the depth the exercise div opened at
    for line, code in _lines(text):
        if not code and _DIV_OPEN.match(line):
            depth += 1
            if inside is None and any(c in _EXERCISE_CLASSES for c in _classes(_DIV_OPEN.match(line)["info"])):
                inside = depth
        elif not code and _DIV_CLOSE.match(line):
            if depth == 0:
                return None
            if inside == depth:
                kept.append(line)
                kept.append("")       # one exercise from the next
                inside = None
                depth -= 1
                continue
            depth -= 1
        if inside is not None:
            kept.append(line)
    return None if inside is not None else "\n".join(kept)


def front_and_headings(text: str) -> str:
    """A chapter's front matter (its title, ``terms:``, ``prerequisites:``) and every heading line
    (those inside code blocks too: more than a reader of titles needs, never less)."""
    lines = text.split("\n")
    kept: list[str] = []
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            kept.append(lines[i])
            if lines[i].strip() in ("---", "..."):
                break
    kept += [line for line in lines if _HEADING.match(line)]
    return "\n".join(kept)


PARTS = {"exercises": exercise_divs, "headings": front_and_headings}


def parts_digest(path: Path, parts: list[str]) -> str:
    """The digest of ``parts`` of the file at ``path`` (the whole file's when one is unknown or
    the file does not parse as expected)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return file_digest(path)
    pieces: list[str] = []
    for part in sorted(set(parts)):
        made = PARTS[part](text) if part in PARTS else None
        if made is None:
            return file_digest(path)
        pieces += [part, made]
    return digest(*pieces)
