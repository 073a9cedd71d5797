"""Turn an executed chapter into pandoc markdown: cells become code, figures, tables, text.

The output follows Quarto's conventions, so the same filters work on both: a labelled
float is a div whose id starts with ``fig-`` or ``tbl-`` and whose last paragraph is
the caption.
"""
from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path
from typing import Any

import yaml

from .kernel import Kernel
from ..errors import BuildError
from ..project.qmd import Cell, Document, Markdown, inline_expressions, INLINE

FIG_SCHEME = "bookfig:"   # image URLs that point into the figure store; rewritten per format


def options_for(cell: Cell, defaults: dict[str, Any]) -> dict[str, Any]:
    opts = {"echo": True, "eval": True, "output": True, "include": True, "warning": True}
    opts.update({k: v for k, v in defaults.items() if k in opts})
    opts.update(cell.options)
    return opts


def render(doc: Document, kernel: Kernel, defaults: dict[str, Any], fig_dir: Path, stem: str) -> tuple[str, list[str]]:
    """Execute ``doc`` and return (markdown, figure file names)."""
    execute = dict(defaults)
    execute.update(doc.front.get("execute") or {})
    parts: list[str] = []
    figures: list[str] = []
    if doc.front:
        parts.append("---\n" + yaml.safe_dump(doc.front, sort_keys=False, allow_unicode=True) + "---\n")
    kernel.start_document(doc.path.parent if execute.get("execute-dir") == "file" else kernel.root)
    for chunk in doc.chunks:
        if isinstance(chunk, Markdown):
            parts.append(_markdown(chunk, kernel, doc.path))
            continue
        if chunk.lang != "python":
            raise BuildError(f"only python cells can run in this book (found {{{chunk.lang}}})",
                             doc.path, chunk.line)
        opts = options_for(chunk, execute)
        outputs: list[dict[str, Any]] = []
        if opts["eval"]:
            outputs = kernel.run_cell(chunk, doc.path).outputs
        if not opts["include"]:
            continue
        parts.append(_cell(chunk, opts, outputs, fig_dir, stem, figures, doc.path))
    return "\n".join(parts), figures


def seen(doc: Document, kernel: Kernel, defaults: dict[str, Any]) -> list[tuple[int, str, str]]:
    """What a reader sees of ``doc`` once executed, as ``(source line, origin, text)``: each prose
    line with its inline values in place (origin ``""``), and for each included cell its captions,
    alt text and text outputs (tables, printed text), each at the cell's opening line (origin:
    the cell's label, else ``"cell"``). Asks ``kernel`` exactly what ``render`` asks, in the same
    order, so a ``freeze.Replay`` of a recorded run answers it; writes no figure. Code, echoed
    or not, is not listed."""
    execute = dict(defaults)
    execute.update(doc.front.get("execute") or {})
    out: list[tuple[int, str, str]] = []
    kernel.start_document(doc.path.parent if execute.get("execute-dir") == "file" else kernel.root)
    for chunk in doc.chunks:
        if isinstance(chunk, Markdown):
            lines = _markdown(chunk, kernel, doc.path).split("\n")
            last = chunk.line + chunk.text.count("\n")
            # a value holding a newline shifts what follows: those lines keep the chunk's last line
            out += [(min(chunk.line + i, last), "", text) for i, text in enumerate(lines)]
            continue
        opts = options_for(chunk, execute)
        outputs = kernel.run_cell(chunk, doc.path).outputs if opts["eval"] and chunk.lang == "python" else []
        if not opts["include"]:
            continue
        origin = chunk.label or "cell"
        texts = [str(opts[k]) for k in ("fig-cap", "tbl-cap", "fig-alt") if opts.get(k)]
        if opts["output"]:
            for o in outputs:
                data = o.get("data", {})
                if o.get("output_type") == "stream" and (o.get("name") == "stdout" or opts.get("warning", True)):
                    texts.append(_text(o.get("text", "")))
                elif "text/markdown" in data:
                    texts.append(_text(data["text/markdown"]))
                elif "text/plain" in data and not any(m in data for m in ("image/svg+xml", "image/png", "text/html")):
                    texts.append(_text(data["text/plain"]))
        out += [(chunk.line, origin, line) for t in texts for line in t.split("\n")]
    return out


def _markdown(chunk: Markdown, kernel: Kernel, path: Path) -> str:
    items = inline_expressions(chunk)
    if not items:
        return chunk.text
    values = iter(zip(items, kernel.inline(items, path)))
    out = []
    in_fence = None
    display_math = False
    from ..project.qmd import FENCE
    for line in chunk.text.split("\n"):
        m = FENCE.match(line)
        if m:
            if in_fence is None:
                in_fence = m.group("fence")
            elif line.strip().startswith(in_fence):
                in_fence = None
        if in_fence is None and not m:
            spans, display_math = math_spans(line, display_math)

            def value(found: re.Match) -> str:
                item, data = next(values)
                in_math = any(a <= found.start() < b for a, b in spans)
                return quarto_inline(data, item.expr, in_math, path, item.line)
            line = INLINE.sub(value, line)
        out.append(line)
    return "\n".join(out)


# Quarto's asEscapedMarkdown (src/core/jupyter/jupyter-inline.ts): a quoted text/plain value (a
# Python str) loses its quotes, its backslashes are doubled and then every character of the class
# [\\`*_{}\[\]()>#+-.!] is escaped; in that class "+-." is a range, so "," is escaped too.
QUARTO_ESCAPED = re.compile(r"([\\`*_{}\[\]()>#+,\-.!])")


def quarto_inline(data: dict[str, str], expr: str, in_math: bool, path: Path, line: int) -> str:
    """The markdown Quarto puts in place of an inline expression whose display data is ``data``
    (resolveUserExpressions in src/core/jupyter/jupyter-inline.ts): text/markdown as is (IPython's
    ``Markdown``), text/plain escaped when it is a quoted string.  A value that Quarto would print
    mangled stops the build instead."""
    where = f"`{{python}} {expr}`"
    if "text/html" in data or "text/latex" in data:
        raise BuildError(f"inline expression {where} has HTML or LaTeX display data, which Quarto inserts "
                         "as raw output of one format only", path, line,
                         hint="return a str, a number or IPython.display.Markdown(...)")
    if "text/markdown" in data:
        return data["text/markdown"]
    plain = data.get("text/plain", "")
    if len(plain) < 2 or plain[0] != plain[-1] or plain[0] not in "'\"":
        return plain                                   # a number (its repr), inserted as it is
    inner = plain[1:-1]
    if "\\" in inner:
        raise BuildError(f"inline expression {where} is a str with a backslash ({plain}); Quarto doubles "
                         "its backslashes and the page would show them", path, line,
                         hint="return IPython.display.Markdown(...) for markdown or TeX")
    escaped = QUARTO_ESCAPED.sub(r"\\\1", inner)
    if "$" in inner and escaped != inner:
        raise BuildError(f"inline expression {where} is a str holding TeX math ({plain}); Quarto escapes it "
                         f"for markdown as {escaped}, which TeX reads differently", path, line,
                         hint="return IPython.display.Markdown(...) for text with $math$")
    if in_math and escaped != inner:
        raise BuildError(f"inline expression {where} inside math is a plain str ({plain}); Quarto escapes "
                         f"it for markdown as {escaped}, which TeX reads differently", path, line,
                         hint="inside $...$ return IPython.display.Markdown(...)")
    return escaped


def math_spans(line: str, display: bool) -> tuple[list[tuple[int, int]], bool]:
    """Character ranges of ``line`` inside TeX math (``$...$``, or ``$$...$$`` which may span
    lines: ``display`` says whether the line starts inside one), and whether it ends inside one."""
    spans: list[tuple[int, int]] = []
    start = 0 if display else None
    inline_start = None
    i = 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line.startswith("$$", i) and inline_start is None:
            if start is None:
                start = i
            else:
                spans.append((start, i + 2))
                start = None
            i += 2
            continue
        if line[i] == "$" and start is None:
            if inline_start is None:
                if i + 1 < len(line) and not line[i + 1].isspace():
                    inline_start = i
            elif not line[i - 1].isspace():
                spans.append((inline_start, i + 1))
                inline_start = None
        i += 1
    if start is not None:
        spans.append((start, len(line)))
    return spans, start is not None


def _fence(text: str) -> str:
    longest = max((len(run) for run in text.split("\n") if set(run.strip()) == {"`"}), default=0)
    return "`" * max(3, longest + 1)


def _cell(cell: Cell, opts: dict[str, Any], outputs: list[dict[str, Any]], fig_dir: Path,
          stem: str, figures: list[str], path: Path) -> str:
    label = cell.label or ""
    blocks: list[str] = []
    if opts["echo"]:
        attrs = [".python", ".cell-code"]
        if opts.get("code-fold"):
            attrs.append(f'code-fold="{str(opts["code-fold"]).lower()}"')
            if opts.get("code-summary"):
                attrs.append(f'code-summary="{_attr(opts["code-summary"])}"')
        f = _fence(cell.code)
        blocks.append(f"{f}{{{' '.join(attrs)}}}\n{cell.code}\n{f}")
    body: list[str] = []
    if opts["output"]:
        for n, out in enumerate(outputs):
            rendered = _output(out, opts, cell, fig_dir, stem, figures, n)
            if rendered:
                body.append(rendered)
    if label.startswith("fig-") or label.startswith("tbl-"):
        cap_key = "fig-cap" if label.startswith("fig-") else "tbl-cap"
        caption = opts.get(cap_key)
        if not caption:
            raise BuildError(f"cell '{label}' has no `{cap_key}`", path, cell.line,
                             hint=f"add `#| {cap_key}: ...`: a labelled figure or table needs a caption")
        body = [f"::: {{#{label}}}\n" + "\n\n".join(body) + f"\n\n{caption}\n:::"]
    elif label and not label.startswith("lst-"):
        blocks.insert(0, "")  # plain labels only name the cell
    classes = " ".join(f".{c}" for c in _as_list(opts.get("classes")))
    ident = f"#cell-{label}" if label and not label.startswith(("fig-", "tbl-")) else ""
    head = " ".join(x for x in (ident, ".cell", classes) if x)
    return f"::::: {{{head}}}\n" + "\n\n".join(b for b in blocks + body if b) + "\n:::::\n"


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else str(value).split()


def _attr(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def _output(out: dict[str, Any], opts: dict[str, Any], cell: Cell, fig_dir: Path, stem: str,
            figures: list[str], n: int) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        if out.get("name") == "stderr" and not opts.get("warning", True):
            return ""
        text = out.get("text", "").rstrip("\n")
        if not text:
            return ""
        if opts["output"] == "asis" and out.get("name") == "stdout":
            return text  # printed markdown, taken as it is (Quarto's `output: asis`)
        f = _fence(text)
        cls = ".cell-output-stderr" if out.get("name") == "stderr" else ".cell-output-stdout"
        return f"{f}{{.cell-output {cls}}}\n{text}\n{f}"
    if kind not in ("display_data", "execute_result"):
        return ""
    data = out.get("data", {})
    if opts["output"] == "asis" and "text/plain" in data and "text/markdown" not in data:
        return _text(data["text/plain"]).strip("'\"")
    if "text/markdown" in data:
        return _text(data["text/markdown"])
    for mime, ext in (("image/svg+xml", "svg"), ("image/png", "png")):
        if mime in data:
            payload = _text(data[mime])
            raw = payload.encode() if ext == "svg" else __import__("base64").b64decode(payload)
            digest = hashlib.sha1(raw).hexdigest()[:10]
            name = f"{cell.label or 'cell-' + str(cell.index + 1)}-{n + 1}-{digest}.{ext}"
            fig_dir.mkdir(parents=True, exist_ok=True)
            (fig_dir / name).write_bytes(raw)
            figures.append(name)
            alt = opts.get("fig-alt") or ""
            alt_attr = f' fig-alt="{_attr(alt)}"' if alt else ""
            return f"![]({FIG_SCHEME}{stem}/{name}){{{alt_attr.strip()}}}" if alt else f"![]({FIG_SCHEME}{stem}/{name})"
    if "text/html" in data:
        return "```{=html}\n" + _text(data["text/html"]) + "\n```"
    if "text/plain" in data:
        text = _text(data["text/plain"])
        f = _fence(text)
        return f"{f}{{.cell-output .cell-output-display}}\n{text}\n{f}"
    return ""


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)
