"""Number the book's chapters, sections, figures, tables and equations, across all pages.

Pandoc reads each page; this walks the JSON ASTs in reading order and produces one
index, ``label -> {kind, number, page, title}``. The ``crossref.lua`` filter uses it
to put numbers on headings and captions and to turn ``@fig-x`` into "Figure 2.3".
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

from ..cache import digest
from ..errors import BuildError, line_of

KINDS = {"fig": "Figure", "tbl": "Table", "eq": "Equation", "sec": "Section", "lst": "Listing"}


def walk(node: Any, skip: frozenset = frozenset()) -> Iterator[dict]:
    """Every AST element (a dict with a ``t``), depth first, in document order; elements whose
    type is in ``skip`` are left out with everything inside them.
    (A stack, not recursion: nested generators made this the slowest part of a cached build.)"""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "t" in item:
                if item["t"] in skip:
                    continue
                yield item
            stack.extend(v for v in reversed(list(item.values())) if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(v for v in reversed(item) if isinstance(v, (dict, list)))


NOT_TEXT = frozenset({"Cite"})


def stringify(node: Any) -> str:
    """The plain text of ``node``, without its citations (a caption's "[@key]" would show as
    such in a cross-reference's preview and in the contents)."""
    out: list[str] = []
    for el in walk(node, skip=NOT_TEXT):
        t = el["t"]
        if t == "Str":
            out.append(el["c"])
        elif t in ("Space", "SoftBreak", "LineBreak"):
            out.append(" ")
        elif t in ("Code", "Math"):
            out.append(el["c"][1])
    text = re.sub(r"\s+([,.;:)])", r"\1", "".join(out).replace("()", ""))
    return re.sub(r"\s{2,}", " ", text).strip()


@dataclass
class Page:
    source: str          # chapters/x.qmd
    output: str          # chapters/x.html
    ast: dict
    text: str            # the .qmd source, to locate errors
    appendix: bool = False

    @cached_property
    def elements(self) -> list[dict]:
        """Every element of the page in document order, walked once for all the stages."""
        return list(walk(self.ast["blocks"]))

    @cached_property
    def ast_digest(self) -> str:
        """The AST's digest, shared by the HTML and PDF caches."""
        return digest(json.dumps(self.ast))


def build_index(pages: list[Page]) -> dict[str, Any]:
    labels: dict[str, dict[str, Any]] = {}
    page_info: dict[str, dict[str, Any]] = {}
    sections: dict[str, list[dict[str, Any]]] = {}

    def add(label: str, info: dict, page: Page) -> None:
        if label in labels:
            first = labels[label]
            raise BuildError(f"duplicate label '{label}' (first used in {first['source']})",
                             page.source, line_of(page.text, "#" + label) or line_of(page.text, "label: " + label)
                             or line_of(page.text, label),
                             hint="every label must be unique across the whole book")
        info["source"] = page.source
        info["page"] = page.output
        labels[label] = info

    numbered = 0
    lettered = 0
    for page in pages:
        chapter = ""
        counters = {"fig": 0, "tbl": 0, "eq": 0, "lst": 0}
        sec = [0, 0, 0, 0, 0, 0]
        title = None
        heads = sections.setdefault(page.output, [])
        nested: set[int] = set()   # floats inside a float (Quarto's subfloats)
        divs = [el for el in page.elements if el["t"] == "Div"]
        tab_titles = {id(h) for el in divs if "panel-tabset" in el["c"][0][1] for h in el["c"][1] if h["t"] == "Header"}
        tab_titles |= {id(el["c"][1][0]) for el in divs if _callout_titled_by_heading(el)}
        for el in page.elements:
            t = el["t"]
            if t == "Header" and id(el) not in tab_titles:
                level, (ident, classes, _kv), inlines = el["c"]
                text = stringify(inlines)
                unnumbered = "unnumbered" in classes or "unlisted" in classes
                if level == 1 and title is None:
                    title = text
                    if not unnumbered and page.appendix:
                        lettered += 1
                        chapter = chr(ord("A") + lettered - 1)
                    elif not unnumbered:
                        numbered += 1
                        chapter = str(numbered)
                    heads.append({"id": ident, "number": chapter, "title": text, "level": 1})
                    if _is_label(ident):
                        add(ident, {"kind": "chapter", "number": chapter, "title": text}, page)
                    continue
                if level >= 2 and not unnumbered and chapter:
                    sec[level - 2] += 1
                    for k in range(level - 1, len(sec)):
                        sec[k] = 0
                    number = ".".join([chapter] + [str(x) for x in sec[:level - 1]])
                else:
                    number = ""
                heads.append({"id": ident, "number": number, "title": text, "level": level})
                if _is_label(ident):
                    add(ident, {"kind": "sec", "number": number, "title": text, "level": level}, page)
                continue
            label = float_label(el)
            if label:
                if id(el) in nested:
                    raise BuildError(f"float '{label}' inside another float", page.source,
                                     line_of(page.text, "#" + label) or line_of(page.text, label),
                                     hint="Quarto makes it a subfigure lettered (a), (b), ... under its parent; "
                                          "this build does not: give each float its own place")
                prefix = label.split("-", 1)[0]
                counters[prefix] += 1
                number = f"{chapter}.{counters[prefix]}" if chapter else str(counters[prefix])
                add(label, {"kind": prefix, "number": number, "title": _caption(el)}, page)
                nested.update(id(x) for x in walk(el["c"]) if float_label(x))
            if t in ("Para", "Plain"):
                for eq in equation_labels(el["c"]):
                    counters["eq"] += 1
                    number = f"{chapter}.{counters['eq']}" if chapter else str(counters["eq"])
                    add(eq, {"kind": "eq", "number": number, "title": ""}, page)
        page_info[page.source] = {"number": chapter, "title": title or Path(page.source).stem,
                                  "output": page.output}
    return {"labels": labels, "pages": page_info, "sections": sections}


CALLOUTS = {"callout-note", "callout-tip", "callout-warning", "callout-important", "callout-caution"}


def _callout_titled_by_heading(el: dict) -> bool:
    """A callout without a ``title`` attribute takes its first heading as its title (callout.lua):
    that heading is not a section of the page."""
    if not CALLOUTS & set(el["c"][0][1]):
        return False
    attrs = dict(el["c"][0][2])
    body = el["c"][1]
    return "title" not in attrs and bool(body) and body[0]["t"] == "Header"


def _is_label(ident: str) -> bool:
    """Only labels with a cross-reference prefix are global; pandoc's automatic
    heading ids only need to be unique within their page (pandoc sees to that)."""
    return ident.split("-", 1)[0] in KINDS and "-" in ident


FLOATS = ("fig", "tbl", "lst")    # Quarto's float categories (crossref.categories, kind "float")


def _prefix(ident: str) -> str | None:
    """Quarto's refType: the letters before the first hyphen, lower-cased."""
    m = re.match(r"([A-Za-z]+)-", ident)
    return m.group(1).lower() if m else None


def _lone_image(inlines: list) -> dict | None:
    """discoverFigure / discoverLinkedFigure: a paragraph that is one image, or one link around one image."""
    if len(inlines) == 1 and inlines[0]["t"] == "Image":
        return inlines[0]
    if len(inlines) == 1 and inlines[0]["t"] == "Link" and len(inlines[0]["c"][1]) == 1 \
            and inlines[0]["c"][1][0]["t"] == "Image":
        return inlines[0]["c"][1][0]
    return None


def float_label(el: dict) -> str | None:
    """The label of ``el`` when Quarto numbers it as a float (figure, table, listing), else None.

    The rules of quarto-cli's src/resources/filters/quarto-pre/parsefiguredivs.lua:
    a Div whose id has a float prefix (isFigureDiv(div, false): no caption needed); a pandoc Figure
    with such an id; a Table with a non-empty caption and an id (the caption's ``{#tbl-x}``); a
    paragraph that is a single image (or a link around one) with such an id, captioned or not; a
    CodeBlock with a ``lst-`` id and an ``lst-cap`` attribute (without one it is plain code).
    """
    t, c = el["t"], el.get("c")
    if t in ("Div", "Figure"):
        ident = c[0][0]
        return ident if _prefix(ident) in FLOATS else None
    if t == "Table":
        ident, blocks = c[0][0], c[1][1]
        has_caption = bool(blocks) and bool(blocks[-1].get("c"))
        return ident if has_caption and _prefix(ident) in FLOATS else None
    if t == "Para":
        img = _lone_image(c)
        ident = img["c"][0][0] if img else ""
        return ident if _prefix(ident) in FLOATS else None
    if t == "CodeBlock":
        ident, _classes, kv = c[0]
        return ident if _prefix(ident) == "lst" and "lst-cap" in dict(kv) else None
    return None


def _caption(el: dict) -> str:
    t, c = el["t"], el["c"]
    if t in ("Figure", "Table"):
        return stringify(c[1])
    if t == "Div":
        blocks = c[1]
        if blocks and blocks[-1]["t"] == "Para":
            return stringify(blocks[-1]["c"])
    if t == "Para":
        img = _lone_image(c)
        return stringify(img["c"][1]) if img else ""
    if t == "CodeBlock":
        return dict(c[0][2]).get("lst-cap", "")
    return ""


def equation_labels(inlines: list) -> list[str]:
    """Quarto's numbered equations (crossref/equations.lua, in a Para or a Plain): display math,
    any spaces, then an attribute block starting ``{#eq-``, which may run over several inlines
    (``{#eq-x alt="..."}``). Every one in the paragraph, in order."""
    found = []
    for i, el in enumerate(inlines):
        if el["t"] == "Math" and el["c"][0]["t"] == "DisplayMath":
            j = i + 1
            while j < len(inlines) and inlines[j]["t"] == "Space":
                j += 1
            if j < len(inlines) and inlines[j]["t"] == "Str" and inlines[j]["c"].startswith("{#eq-"):
                found.append(re.match(r"\{#([^\s}]+)", inlines[j]["c"]).group(1))
    return found


def references(pages: list[Page]) -> list[tuple[str, str, int | None]]:
    """All @-references to cross-ref labels: (label, source, line)."""
    found = []
    for page in pages:
        for el in page.elements:
            if el["t"] == "Cite":
                for cit in el["c"][0]:
                    cid = cit["citationId"]
                    if cid.split("-", 1)[0] in KINDS:
                        found.append((cid, page.source, line_of(page.text, "@" + cid)))
    return found


def check_references(pages: list[Page], index: dict[str, Any]) -> None:
    for label, source, line in references(pages):
        if label not in index["labels"]:
            near = [k for k in index["labels"] if k.split("-", 1)[0] == label.split("-", 1)[0]]
            raise BuildError(f"unresolved cross-reference @{label}", source, line,
                             hint=f"known {label.split('-', 1)[0]} labels: {', '.join(sorted(near)[:8]) or 'none'}")
