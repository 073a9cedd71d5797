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
from pathlib import Path
from typing import Any

from ..cache import digest, file_digest

VERSION = "6"  # bump when the executed-markdown format or what the key covers changes


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
        return entry

    def figures_exist(self, stem: str, entry: dict[str, Any]) -> bool:
        fig_dir = self.root / ".bookcache" / "figures" / stem
        return all((fig_dir / f).exists() for f in entry.get("figures", []))

    def store(self, stem: str, source_text: str, settings: dict[str, Any], markdown: str,
              modules: dict[str, str] | list[str], figures: list[str], calls: list[list[Any]]) -> None:
        """``modules``: paths the kernel reported (digested here), or a stored entry's digests."""
        if isinstance(modules, list):
            rels = {}
            for m in modules:
                try:
                    rel = Path(m).relative_to(self.root).as_posix()
                except ValueError:
                    continue
                rels[rel] = file_digest(Path(m))
            modules = rels
        entry = {"source": source_key(source_text, settings), "settings": _settings_key(settings),
                 "modules": modules, "figures": figures, "markdown": markdown, "calls": calls}
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
