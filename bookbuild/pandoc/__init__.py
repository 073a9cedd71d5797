"""The Pandoc pass, shared by every format: executed markdown read into ASTs, cross-references
numbered and checked across the book (xref.py), and a page's AST run through the filters to a
format's writer (convert.py). Quarto's built-in features are Lua filters, one per feature, in
``lua/`` (a new Quarto feature goes there); ``syntax/`` holds extra highlighting definitions.

This module runs Pandoc (the binary shipped by the PyPI package ``pypandoc-binary``).

Takes executed markdown; gives ASTs, the cross-reference index and converted pages. Knows
nothing of the kernel, of any one output format's page, book or file, nor of the editions."""
from __future__ import annotations

import json
import re
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import BuildError

LUA = Path(__file__).parent / "lua"
SYNTAX = Path(__file__).parent / "syntax"
READ_FORMAT = "markdown+autolink_bare_uris-smart"  # Quarto reads pandoc markdown


@lru_cache(maxsize=1)
def binary() -> str:
    """The pandoc binary pypandoc-binary ships, found without importing pypandoc (whose
    import pulls in urllib and email: a tenth of a second on every build)."""
    import importlib.util
    spec = importlib.util.find_spec("pypandoc")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        shipped = Path(folder) / "files" / "pandoc"
        if shipped.is_file():
            return str(shipped)
    import pypandoc
    return pypandoc.get_pandoc_path()


# What the book's filters print before they stop the build (filters/project.lua's fail):
# "<filter>.lua: <file>[:<line>]: <message>".
FILTER_FAILURE = re.compile(r"^(?P<filter>[\w.-]+\.lua): (?P<file>[^:\s]+?)(?::(?P<line>\d+))?: (?P<message>.+)$", re.M)


def run(args: list[str], text: str, cwd: Path, what: str, source: str | None = None) -> str:
    proc = subprocess.run([binary(), *args], input=text.encode(), capture_output=True, cwd=cwd)
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        failure = FILTER_FAILURE.search(err)
        if failure:                       # the filter said where and what: no Lua traceback
            raise BuildError(failure["message"], failure["file"] or source,
                             int(failure["line"]) if failure["line"] else None,
                             hint=f"reported by filters/{failure['filter']}")
        raise BuildError(f"pandoc failed while {what}", source, detail=err)
    warnings = [ln for ln in err.splitlines() if ln.strip()]
    if warnings:
        raise BuildError(f"pandoc warned while {what}", source, detail="\n".join(warnings),
                         hint="the book builds with no warnings: fix the source")
    return proc.stdout.decode()


def read(markdown: str, cwd: Path, source: str) -> dict[str, Any]:
    return json.loads(run(["-f", READ_FORMAT, "-t", "json"], markdown, cwd, "reading", source))


def internal_filters() -> list[Path]:
    """Our implementations of Quarto's built-in features (and titles.lua, the PDF's run-in titles),
    run after the user's filters."""
    return [LUA / name for name in ("conditional.lua", "answers.lua", "crossref.lua", "callout.lua", "tabset.lua", "margin.lua", "code.lua", "tables.lua",
                                         "titles.lua")]


def filter_args(user_filters: list[Path], citeproc: bool) -> list[str]:
    args: list[str] = []
    for f in [*user_filters, *internal_filters()]:
        args += ["--lua-filter", str(f)]
    if citeproc:
        args.append("--citeproc")
    args += ["--lua-filter", str(LUA / "links.lua")]
    return args


def metadata_args(meta: dict[str, Any]) -> list[str]:
    args = []
    for key, value in meta.items():
        if value is None:
            continue
        if isinstance(value, bool):
            args += ["-M", f"{key}={'true' if value else 'false'}"]
        else:
            args += ["-M", f"{key}={value}"]
    return args
