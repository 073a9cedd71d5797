"""Run a chapter's cells and inline expressions in a Jupyter kernel (nbclient + ipykernel).

One kernel serves the whole build: between chapters its namespace is reset and its
working directory set, so each chapter starts clean, as Quarto starts a kernel per
document, without paying for a new kernel process (and ``import matplotlib``) each time.
"""
from __future__ import annotations

import contextlib
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import BuildError
from .qmd import Cell, Inline

ANSI = re.compile(r"\x1b\[[0-9;]*m")
INLINE_MARK = "\x00book-inline\x00"

_SETUP = r"""
import os as __book_os, sys as __book_sys, json as __book_json
__book_os.chdir({cwd!r})
if {root!r} not in __book_sys.path:
    __book_sys.path.insert(0, {root!r})

def __book_inline(__items):
    __out = []
    for __expr in __items:
        try:
            __v = eval(compile(__expr, '<inline>', 'eval'), globals())
        except Exception as __e:
            __out.append({{'error': type(__e).__name__ + ': ' + str(__e)}})
            continue
        if isinstance(__v, str):
            __text = __v
        elif hasattr(__v, '_repr_markdown_'):
            __text = __v._repr_markdown_()
        else:
            __text = str(__v)
        __out.append({{'text': __text}})
    print({mark!r} + __book_json.dumps(__out))
"""

_RESET = r"""
%reset -f
import sys as __book_sys
for __book_m in [k for k, v in list(__book_sys.modules.items())
                 if (getattr(v, '__file__', None) or '').startswith({root!r})]:
    del __book_sys.modules[__book_m]  # the next document imports the project's modules afresh
if 'matplotlib.pyplot' in __book_sys.modules:
    __book_sys.modules['matplotlib.pyplot'].close('all')
    __book_sys.modules['matplotlib'].rc_file_defaults()  # the project's matplotlibrc, not bare defaults
"""

_MODULES = r"""
import sys as __book_sys, json as __book_json
print({mark!r} + __book_json.dumps(sorted({{m.__file__ for m in list(__book_sys.modules.values())
      if getattr(m, '__file__', None) and m.__file__.startswith({root!r})}})))
"""


@dataclass
class CellResult:
    cell: Cell
    outputs: list[dict[str, Any]]


class Kernel:
    """A single Jupyter kernel, started lazily and reused across chapters."""

    def __init__(self, root: Path, kernel_name: str = "python3", timeout: int = 600):
        self.root = Path(root)
        self.kernel_name = kernel_name
        self.timeout = timeout
        self._stack: contextlib.ExitStack | None = None
        import nbformat  # imported here: a build with every chapter cached never needs Jupyter
        self._nbformat = nbformat
        self._nb = nbformat.v4.new_notebook()
        self._client: Any = None
        self._fresh = True

    def _ensure(self) -> Any:
        if self._client is None:
            from nbclient import NotebookClient
            logging.getLogger("traitlets").setLevel(logging.ERROR)
            self._client = NotebookClient(self._nb, kernel_name=self.kernel_name, timeout=self.timeout,
                                          allow_errors=True, record_timing=False,
                                          shutdown_kernel="immediate",  # no atexit work to wait for
                                          # SVG figures, set on the command line so that matplotlib
                                          # is imported only by chapters that draw
                                          extra_arguments=["--IPKernelApp.log_level=ERROR",
                                                           "--InlineBackend.figure_formats=svg"],
                                          resources={"metadata": {"path": str(self.root)}})
            self._stack = contextlib.ExitStack()
            self._stack.enter_context(self._client.setup_kernel())
        return self._client

    def run(self, code: str) -> list[dict[str, Any]]:
        client = self._ensure()
        cell = self._nbformat.v4.new_code_cell(code)
        self._nb.cells.append(cell)
        client.execute_cell(cell, len(self._nb.cells) - 1)
        return [dict(o) for o in cell.outputs]

    def start_document(self, cwd: Path) -> None:
        """Give the next document a clean namespace, running in ``cwd``."""
        if not self._fresh:
            self._check(self.run(_RESET.format(root=str(self.root) + "/")), "resetting the kernel")
        self._fresh = False
        self._check(self.run(_SETUP.format(cwd=str(cwd), root=str(self.root), mark=INLINE_MARK)),
                    "setting up the kernel")

    def run_cell(self, cell: Cell, path: Path) -> CellResult:
        outputs = self.run(cell.code)
        for out in outputs:
            if out.get("output_type") == "error":
                raise cell_error(cell, path, out)
        return CellResult(cell, outputs)

    def inline(self, items: list[Inline], path: Path) -> list[str]:
        if not items:
            return []
        outputs = self.run(f"__book_inline({json.dumps([i.expr for i in items])})")
        values = self._marked(outputs, "evaluating inline expressions")
        texts = []
        for item, value in zip(items, values):
            if "error" in value:
                raise BuildError(f"inline expression `{{python}} {item.expr}` failed: {value['error']}",
                                 path, item.line,
                                 hint="define the name in a cell above this line, or fix the expression")
            texts.append(value["text"])
        return texts

    def project_modules(self) -> list[str]:
        """Files of the project's own modules imported so far (for the cache key)."""
        return self._marked(self.run(_MODULES.format(mark=INLINE_MARK, root=str(self.root) + "/")),
                            "listing modules")

    def _marked(self, outputs: list[dict[str, Any]], what: str) -> Any:
        self._check(outputs, what)
        for out in outputs:
            if out.get("output_type") == "stream":
                for line in out.get("text", "").splitlines():
                    if line.startswith(INLINE_MARK):
                        return json.loads(line[len(INLINE_MARK):])
        raise BuildError(f"kernel gave no answer while {what}")

    @staticmethod
    def _check(outputs: list[dict[str, Any]], what: str) -> None:
        for out in outputs:
            if out.get("output_type") == "error":
                raise BuildError(f"kernel failed while {what}: {out.get('ename')}: {out.get('evalue')}",
                                 detail=ANSI.sub("", "\n".join(out.get("traceback", []))))

    def close(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None
            self._client = None


def cell_error(cell: Cell, path: Path, out: dict[str, Any]) -> BuildError:
    tb = ANSI.sub("", "\n".join(out.get("traceback", [])))
    # "Cell In[12], line 4" (IPython) names the line inside the cell; the last one is innermost
    # among frames of the cell itself.
    lines = [int(m) for m in re.findall(r"Cell In\[\d+\], line (\d+)", tb)]
    line = cell.code_line + lines[-1] - 1 if lines else cell.line
    name = f"cell '{cell.label}'" if cell.label else f"cell #{cell.index + 1}"
    return BuildError(f"{name} raised {out.get('ename')}: {out.get('evalue')}", path, line,
                      detail=tb, hint="fix the code, or mark the cell `#| eval: false`")
