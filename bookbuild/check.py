"""``bookbuild check``: lint the book's sources without executing anything.

It reports, as ``file:line: kind: message``:

* errors: unknown cell options, unknown div or span classes, figures without alt text, broken
  cross-references, links and citations, duplicate labels, prerequisites that are not chapters;
* unsupported: documented Quarto features that this build does not implement, so a render
  with real Quarto would differ from ours (a shortcode, an R cell, ``layout-ncol``...).

Nothing is executed. One teaching rule reads what the cells made as the last build recorded it
(``.bookcache/exec``, replayed without a kernel), for chapters whose run still holds.

Every finding makes the exit status 1: the build must not silently differ from Quarto.
"""
from __future__ import annotations

import json
import posixpath
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .project import config as config_mod
from . import pandoc, quarto_rules, teaching_rules
from .project.config import BIB_KEY, _as_list
from .errors import BuildError, line_of
from .execute.run import seen_from_cache
from .pandoc.convert import CAPTION_KEYS
from .project.qmd import KNOWN_CELL_OPTIONS, UNSUPPORTED_CELL_OPTIONS, Cell, Document, INLINE, parse
from .pandoc.xref import KINDS, float_label, walk

# Div and span classes Quarto documents and this build implements.
KNOWN_DIV_CLASSES = {
    "callout-note", "callout-tip", "callout-warning", "callout-important", "callout-caution",
    "panel-tabset", "column-margin", "cell", "cell-output", "cell-output-display", "callout",
    "unnumbered", "unlisted", "content-visible", "content-hidden",
    # Quarto's page columns that reach into the margin (assets/css/book.css, #34)
    "column-page", "column-page-right", "column-page-inset-right",
}
KNOWN_SPAN_CLASSES = {"smallcaps", "underline", "mark", "unnumbered", "aside", "content-visible", "content-hidden"}
# Documented Quarto classes this build does not implement (a Quarto render would differ).
UNSUPPORTED_CLASSES = {
    "column-body", "column-body-outset", "column-page-inset", "column-screen",
    "column-screen-inset", "column-page-left", "column-body-outset-right",
    "column-screen-inset-shaded", "hidden", "columns", "column",
    "panel-sidebar", "panel-fill", "panel-center", "panel-input", "incremental", "nonincremental",
    "fragment", "r-stack", "lightbox", "border", "notes", "callout-appearance",
}
UNSUPPORTED_ATTRIBUTES = {"layout-ncol", "layout-nrow", "layout", "layout-align", "fig-align",
                          "fig-pos", "appearance", "icon"}
# Engines: Quarto can run these, this build runs Python only.
OTHER_ENGINES = {"r", "julia", "ojs", "mermaid", "dot", "bash", "sql"}

# _quarto.yml: what the build reads, and documented Quarto keys it does not implement.
SUPPORTED_KEYS = {
    "project": {"type", "output-dir", "execute-dir", "pre-render", "post-render", "resources"},
    "book": {"title", "subtitle", "author", "date", "chapters", "appendices", "output-file",
             "repo-url", "repo-actions", "repo-branch"},
    "execute": {"echo", "eval", "output", "include", "warning", "error", "daemon"},
    "format.html": {"reference-location", "code-copy", "fig-format", "fig-cap-location", "tbl-cap-location",
                    "css", "include-in-header"},
    # margin and fontsize set book.typ's page; template-partials are Quarto's copy of book.typ's
    # page (bookbuild's own template is book.typ: the partials must exist and replace Quarto's)
    "format.typst": {"reference-location", "fig-format", "papersize", "fig-cap-location", "tbl-cap-location",
                     "margin", "fontsize", "template-partials"},
    "format.epub": {"html-math-method"},
}
UNSUPPORTED_KEYS = {
    "project": {"render", "preview", "lib-dir", "freeze"},
    "book": {"cover-image", "downloads", "sharing", "search", "page-navigation", "navbar", "sidebar",
             "page-footer", "favicon", "site-url", "google-analytics", "cookie-consent", "comments",
             "references", "reader-mode", "back-to-top-navigation", "body-header", "body-footer",
             "margin-header", "margin-footer", "doi", "abstract"},
    "execute": {"freeze", "cache", "enabled", "ipynb", "keep-ipynb"},
    "format.html": {"theme", "toc", "toc-depth", "toc-location", "number-sections",
                    "number-depth", "code-fold", "code-tools", "code-line-numbers", "html-math-method",
                    "include-before-body", "include-after-body", "grid",
                    "fig-width", "fig-height", "fig-dpi", "link-external-icon", "anchor-sections",
                    "smooth-scroll", "citations-hover", "footnotes-hover", "crossrefs-hover",
                    "self-contained", "embed-resources", "mainfont", "fontsize", "linestretch",
                    "comments", "lang", "citation-location",
                    "template", "template-partials", "highlight-style", "code-overflow"},
    "format.typst": {"template", "columns", "mainfont",
                     "toc", "toc-depth", "number-sections", "section-numbering", "keep-typ",
                     "include-in-header", "include-before-body", "fig-width", "fig-height",
                     "fig-dpi", "bibliographystyle", "citeproc", "lang", "font-paths", "logo"},
}
OUTPUT_FORMATS = {"html", "typst", "epub"}
# src/resources/formats/typst/pandoc/quarto/ (v1.10): the partials a typst template is made of
QUARTO_TYPST_PARTIALS = ("numbering.typ", "definitions.typ", "typst-template.typ", "page.typ",
                         "typst-show.typ", "notes.typ", "biblio.typ")
SHORTCODE = re.compile(r"\{\{<\s*([\w-]+)")
LABEL_ATTR = re.compile(r"\{#((?:fig|tbl|eq|sec|lst)-[A-Za-z0-9_:.-]+)")
CLASS_STRING = re.compile(r"""["']([A-Za-z][\w-]*)["']""")
CSS_CLASS = re.compile(r"\.([A-Za-z][\w-]*)")


@dataclass(frozen=True)
class Finding:
    file: str
    line: int | None
    kind: str            # "error" or "unsupported"
    message: str

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        return f"{where}: {self.kind}: {self.message}"


class Linter:
    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.findings: list[Finding] = []
        self.unbuilt: list[str] = []     # chapters whose cells' outputs the last build did not record

    def add(self, file: Path | str, line: int | None, kind: str, message: str) -> None:
        rel = Path(file)
        try:
            rel = rel.resolve().relative_to(self.root)
        except ValueError:
            pass
        self.findings.append(Finding(rel.as_posix(), line, kind, message))

    # -- _quarto.yml -------------------------------------------------------------------------
    def check_config(self) -> config_mod.BookConfig | None:
        try:
            cfg = config_mod.load(self.root)
        except BuildError as err:
            self.add(err.file or config_mod.CONFIG_NAME, err.line, "error", err.message)
            return None
        path = self.root / config_mod.CONFIG_NAME
        text = path.read_text(encoding="utf-8")
        sections: dict[str, Any] = {k: cfg.raw.get(k) for k in ("project", "book", "execute")}
        formats = cfg.raw.get("format") or {}
        for name, opts in (formats.items() if isinstance(formats, dict) else []):
            if name not in OUTPUT_FORMATS:
                self.add(path, line_of(text, f"{name}:"), "unsupported",
                         f"format `{name}`: this build writes html, typst (PDF) and epub only")
            sections[f"format.{name}"] = opts
        for section, body in sections.items():
            if not isinstance(body, dict):
                continue
            for key in body:
                if key in UNSUPPORTED_KEYS.get(section, ()):
                    self.add(path, line_of(text, f"{key}:"), "unsupported",
                             f"`{section}.{key}` is a Quarto option this build ignores")
                elif section.startswith("format.") and section in SUPPORTED_KEYS \
                        and key not in SUPPORTED_KEYS[section]:
                    self.add(path, line_of(text, f"{key}:"), "unsupported",
                             f"`{section}.{key}` is not implemented by this build")

        for section, body in [("", cfg.raw), *((f"format.{n}.", o) for n, o in formats.items())]:
            for key in CAPTION_KEYS:
                where = body.get(key) if isinstance(body, dict) else None
                if where is not None and where not in ("top", "bottom"):
                    self.add(path, line_of(text, f"{key}:"), "unsupported",
                             f"`{section}{key}: {where}`: this build places captions top or bottom only")
        partials = (formats.get("typst") or {}).get("template-partials") if isinstance(formats, dict) else None
        for f in ([partials] if isinstance(partials, str) else partials or []):
            if Path(f).name not in QUARTO_TYPST_PARTIALS:
                self.add(path, line_of(text, f), "error", f"template partial {f} replaces none of Quarto's typst "
                         f"partials ({', '.join(QUARTO_TYPST_PARTIALS)})")
            elif not (self.root / f).is_file():
                self.add(path, line_of(text, f), "error", f"template partial {f} does not exist")
        for f in cfg.filters:
            if not (self.root / f).exists():
                self.add(path, line_of(text, f), "error", f"filter {f} does not exist")
        return cfg

    # -- one page ----------------------------------------------------------------------------
    def check_page(self, cfg: config_mod.BookConfig, ch: config_mod.Chapter,
                   known_classes: set[str]) -> dict[str, Any] | None:
        path = self.root / ch.source
        text = path.read_text(encoding="utf-8")
        try:
            doc = parse(path, text)
        except BuildError as err:
            self.add(path, err.line, "error", err.message)
            return None
        for cell in doc.cells:
            self.check_cell(path, cell)
        markdown = _without_code(text)   # the prose rules read the page without its code
        for m in SHORTCODE.finditer(markdown):
            self.add(path, line_of(text, m.group(0)), "unsupported",
                     f"shortcode {{{{< {m.group(1)} >}}}}: this build does not expand shortcodes")
        for pre in _as_list(doc.front.get("prerequisites")):
            if str(pre) not in {c.source.as_posix() for c in cfg.chapters}:
                self.add(path, line_of(text, str(pre)), "error",
                         f"prerequisite {pre} is not a chapter of the book")
        for rule in (quarto_rules.titled_twice(path, doc, text, markdown),
                     quarto_rules.inline_in_math(path, doc, text),
                     quarto_rules.span_edge_spaces(path, markdown)):
            for file, line, message in rule:
                self.add(file, line, "error", message)
        ast = pandoc.read(_skeleton(doc), path.parent, ch.source.as_posix())
        self.check_ast(path, text, ast, known_classes)
        return {"ast": ast, "text": text, "labels": _labels(doc, text, ast), "front": doc.front}

    def check_cell(self, path: Path, cell: Cell) -> None:
        if cell.lang != "python":
            what = "an Observable JS" if cell.lang == "ojs" else f"a {{{cell.lang}}}"
            self.add(path, cell.line, "unsupported",
                     f"{what} cell: this build executes Python cells only")
            return
        for key in cell.options:
            if key in UNSUPPORTED_CELL_OPTIONS:
                self.add(path, cell.line, "unsupported",
                         f"cell option `{key}` is documented by Quarto but not implemented here")
            elif key not in KNOWN_CELL_OPTIONS:
                self.add(path, cell.line, "error", f"unknown cell option `{key}`")
        label = str(cell.options.get("label") or "")
        if label.startswith("fig-"):
            if not cell.options.get("fig-cap"):
                self.add(path, cell.line, "error", f"figure {label} has no fig-cap")
            if not cell.options.get("fig-alt"):
                self.add(path, cell.line, "error", f"figure {label} has no fig-alt (alt text)")
        if label.startswith("tbl-") and not cell.options.get("tbl-cap"):
            self.add(path, cell.line, "error", f"table {label} has no tbl-cap")

    def check_ast(self, path: Path, text: str, ast: dict, known_classes: set[str]) -> None:
        at = _Cursor(_without_code(text))
        for el in walk(ast["blocks"]):
            t = el["t"]
            if t in ("Div", "Span"):
                ident, classes, attrs = el["c"][0]
                if ident == "refs" or "bookcheck-cell" in classes:
                    continue
                known = (KNOWN_DIV_CLASSES if t == "Div" else KNOWN_SPAN_CLASSES) | known_classes
                for cls in classes:
                    if cls in UNSUPPORTED_CLASSES:
                        self.add(path, at.line("." + cls), "unsupported",
                                 f"class .{cls} is a Quarto feature this build does not implement")
                    elif cls not in known:
                        self.add(path, at.line("." + cls), "error",
                                 f"unknown {'div' if t == 'Div' else 'span'} class .{cls} "
                                 "(neither Quarto's nor handled by a project filter)")
                for key, _ in attrs:
                    if key in UNSUPPORTED_ATTRIBUTES:
                        self.add(path, at.line(key + "="), "unsupported",
                                 f"attribute {key} is a Quarto feature this build does not implement")
            elif t == "Image":
                alt = el["c"][1]
                attrs = dict(el["c"][0][2])
                if not alt and not attrs.get("fig-alt"):
                    self.add(path, at.line(el["c"][2][0]), "error",
                             f"image {el['c'][2][0]} has no alt text")

    # -- the whole book ------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        cfg = self.check_config()
        if cfg is None:
            return self.findings
        known_classes = self.filter_classes(cfg)
        with ThreadPoolExecutor(max_workers=2) as pool:
            pages = list(pool.map(lambda ch: (ch, self.check_page(cfg, ch, known_classes)), cfg.chapters))
        labels: dict[str, str] = {}
        for ch, page in pages:
            if page is None:
                continue
            for label in page["labels"]:
                if label in labels:
                    where = (line_of(page["text"], "#" + label) or line_of(page["text"], f"label: {label}")
                             or line_of(page["text"], label))
                    self.add(self.root / ch.source, where, "error",
                             f"duplicate label {label} (also in {labels[label]})")
                else:
                    labels[label] = ch.source.as_posix()
        self.check_quarto_rules(cfg, pages)
        self.check_terms_and_widgets(pages)
        self.check_teaching(cfg, pages)
        self.check_exercises(pages)
        self.check_problems(pages)
        bib = self.bib_keys(cfg)
        outputs = {ch.output.as_posix(): ch for ch in cfg.chapters}
        ids = {ch.output.as_posix(): _ids(page["ast"]) for ch, page in pages if page}
        for ch, page in pages:
            if page is None:
                continue
            self.check_refs(ch, page, labels, bib)
            self.check_links(ch, page, outputs, ids)
        return self.findings

    def check_quarto_rules(self, cfg: config_mod.BookConfig, pages: list) -> None:
        from .html.site import SHELL, WIDGET_HEAD
        has_widgets = any(page and '.widget' in page["text"] and 'name=' in page["text"] for _, page in pages)
        for rule in (quarto_rules.filter_paths(self.root, cfg.filters),
                     quarto_rules.undeclared_assets(self.root, cfg, SHELL, WIDGET_HEAD, has_widgets)):
            for file, line, message in rule:
                self.add(file, line, "error", message)

    def check_teaching(self, cfg: config_mod.BookConfig, pages: list) -> None:
        """bookbuild/teaching_rules.py: terms met before their chapter, Predicts answered above in
        the source or by a glossary definition a reader has seen and, for chapters whose last build's outputs still hold (the execution cache,
        replayed without a kernel), in what the cells made: tables, captions, printed numbers."""
        read = [(ch.source.as_posix(), page["text"], page["front"]) for ch, page in pages if page]
        answered: set[tuple[Path, int | None]] = set()
        for rule in (teaching_rules.terms_before_introduction(self.root, read),
                     teaching_rules.predict_answered_above(self.root, read),
                     teaching_rules.predict_answered_by_definition(self.root, read)):
            for file, line, message in rule:
                self.add(file, line, "error", message)
                answered.add((file, line))
        shown = []
        for ch, page in pages:
            if page is not None:
                seen = seen_from_cache(cfg, ch, page["text"])
                if seen is None:
                    self.unbuilt.append(ch.source.as_posix())
                else:
                    shown.append((ch.source.as_posix(), seen))
        for file, line, message in teaching_rules.predict_answered_by_output(self.root, shown):
            if (file, line) not in answered:          # one finding per Predict
                self.add(file, line, "error", message)

    def check_terms_and_widgets(self, pages: list) -> None:
        """What filters/glossary.lua and filters/widget.lua would stop the build for: a term no
        chapter declares, a widget parameter or choice the widget does not have."""
        terms = {" ".join(str(t.get("term", "")).lower().split())
                 for _, page in pages if page for t in _as_list(page["front"].get("terms")) if isinstance(t, dict)}
        problems = _widget_problems(self.root)
        for ch, page in pages:
            if page is None:
                continue
            path = self.root / ch.source
            at = _Cursor(_without_code(page["text"]))
            for el in walk(page["ast"]["blocks"]):
                if el["t"] not in ("Span", "Div"):
                    continue
                ident, classes, attrs = el["c"][0]
                attrs = dict(attrs)
                if el["t"] == "Span" and "term" in classes:
                    name = attrs.get("key") or _plain(el["c"][1])
                    key = " ".join(name.lower().split())
                    line = at.line(".term")
                    if not {key, re.sub("es$", "", key), re.sub("s$", "", key)} & terms:
                        self.add(path, line, "error", f'unknown term "{name}": no chapter declares it under `terms:`')
                elif el["t"] == "Div" and "widget" in classes and problems is not None:
                    name = attrs.pop("name", "")
                    for message in problems(name, attrs):
                        self.add(path, at.line(f'name="{name}"'), "error", message)

    def check_exercises(self, pages: list) -> None:
        """What filters/exercise.lua and the build would stop for, found without running a kernel:
        an exercise's missing starter, hints or solution, a check with an unknown key or budget
        name, a duplicate exercise id (the project's ``calc.exercises.validate_book``)."""
        reader = _project_attr(self.root, "calc.exercises", "read_exercises")
        validate_book = _project_attr(self.root, "calc.exercises", "validate_book")
        if reader is None or validate_book is None:
            return
        found = []
        for ch, page in pages:
            if page is not None and ".exercise" in page["text"]:
                found += reader(page["text"], ch.source.as_posix())
        for path, line, message in validate_book(found):
            self.add(self.root / path, line, "error", message)

    def check_problems(self, pages: list) -> None:
        """What filters/problem.lua and the build would stop for, found without running a cell: a
        problem without an id, a title, a cell, an ``answer(`` call, a unit calc.problems cannot
        read or a tolerance band, and a duplicate problem id (``calc.problems.validate_book``)."""
        reader = _project_attr(self.root, "calc.problems", "read_problems")
        validate_book = _project_attr(self.root, "calc.problems", "validate_book")
        if reader is None or validate_book is None:
            return
        found = []
        for ch, page in pages:
            if page is not None and ".problem" in page["text"]:
                found += reader(page["text"], ch.source.as_posix())
        for path, line, message in validate_book(found):
            self.add(self.root / path, line, "error", message)

    def filter_classes(self, cfg: config_mod.BookConfig) -> set[str]:
        """Classes the project handles: any identifier-like string literal in a project filter,
        and any class its stylesheets style (e.g. ``.predict``, which a page script enhances)."""
        found: set[str] = set()
        for f in cfg.filters:
            p = self.root / f
            if p.exists():
                found.update(CLASS_STRING.findall(p.read_text(encoding="utf-8")))
        for css in sorted((self.root / "assets" / "css").glob("*.css")):
            found.update(CSS_CLASS.findall(_strip_css_comments(css.read_text(encoding="utf-8"))))
        return found

    def bib_keys(self, cfg: config_mod.BookConfig) -> set[str]:
        keys: set[str] = set()
        for b in cfg.bibliography:
            p = self.root / b
            if p.exists():
                keys.update(BIB_KEY.findall(p.read_text(encoding="utf-8")))
            else:
                self.add(config_mod.CONFIG_NAME, None, "error", f"bibliography {b} does not exist")
        return keys

    def check_refs(self, ch: config_mod.Chapter, page: dict, labels: dict[str, str], bib: set[str]) -> None:
        path = self.root / ch.source
        for el in walk(page["ast"]["blocks"]):
            if el["t"] != "Cite":
                continue
            for c in el["c"][0]:
                cid = c["citationId"]
                if cid.split("-", 1)[0] in KINDS:
                    if cid not in labels:
                        self.add(path, line_of(page["text"], "@" + cid), "error",
                                 f"cross-reference @{cid} points at no label")
                elif cid not in bib:
                    self.add(path, line_of(page["text"], "@" + cid), "error",
                             f"citation @{cid} is not in the bibliography")

    def check_links(self, ch: config_mod.Chapter, page: dict, outputs: dict, ids: dict) -> None:
        path = self.root / ch.source
        here = ch.output.as_posix()
        for el in walk(page["ast"]["blocks"]):
            if el["t"] != "Link":
                continue
            target = el["c"][2][0]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
                continue  # external, mailto:, ...
            file, _, frag = target.partition("#")
            if file:
                resolved = posixpath.normpath((Path(ch.source.parent) / file).as_posix())
                if resolved.endswith(".qmd"):
                    resolved = resolved[:-4] + ".html"
                if resolved not in outputs:
                    if not (self.root / resolved).exists():
                        self.add(path, line_of(page["text"], target), "error",
                                 f"link to {target}: no such page or file")
                    continue
            else:
                resolved = here
            if frag and frag not in ids.get(resolved, set()):
                self.add(path, line_of(page["text"], target), "error",
                         f"link to {target}: no #{frag} on {resolved}")


def _plain(inlines: list) -> str:
    return "".join(el["c"] if el["t"] == "Str" else " " if el["t"] in ("Space", "SoftBreak") else
                   _plain(el["c"]) if el["t"] in ("Emph", "Strong") else "" for el in inlines)


def _widget_problems(root: Path):
    """The project's ``widgets.problems`` (its widgets' parameter check), if it has widgets."""
    if not (root / "widgets" / "__init__.py").is_file():
        return None
    import importlib
    import sys
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module("widgets").problems
    except (ImportError, AttributeError):
        return None
    finally:
        sys.path.remove(str(root))


def _project_attr(root: Path, module: str, name: str):
    """``module.name`` from the project (its ``calc``), or None when the project has none."""
    if not (root / (module.replace(".", "/") + ".py")).is_file():
        return None
    import importlib
    import sys
    sys.path.insert(0, str(root))
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    finally:
        sys.path.remove(str(root))


def _strip_css_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


class _Cursor:
    """Line numbers for repeated needles: the n-th search for a needle finds its n-th occurrence
    (the AST is walked in source order)."""

    def __init__(self, text: str):
        self.text, self.pos = text, {}

    def line(self, needle: str) -> int | None:
        at = self.text.find(needle, self.pos.get(needle, 0))
        if at < 0:
            at = self.text.find(needle)
            if at < 0:
                return None
        self.pos[needle] = at + len(needle)
        return self.text.count("\n", 0, at) + 1


def _without_code(text: str) -> str:
    """The source with fenced code blocks and inline code blanked (line count kept)."""
    out, fence = [], None
    for line in text.split("\n"):
        s = line.strip()
        if fence is None and (s.startswith("```") or s.startswith("~~~")):
            fence = s[:3]
            out.append("")
            continue
        if fence is not None:
            if s.startswith(fence):
                fence = None
            out.append("")
            continue
        out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def _skeleton(doc: Document) -> str:
    """The page as Pandoc should see it, without executing: a cell becomes an empty div carrying
    its label, an inline expression a placeholder."""
    parts: list[str] = []
    for chunk in doc.chunks:
        if isinstance(chunk, Cell):
            label = chunk.options.get("label")
            ident = f"#{label} " if label else ""
            parts.append(f"::: {{{ident}.bookcheck-cell}}\n:::")
        else:
            parts.append(INLINE.sub("0", chunk.text))
    return "\n\n".join(parts)


def _labels(doc: Document, text: str, ast: dict) -> list[str]:
    found = [str(c.options["label"]) for c in doc.cells if c.options.get("label")]
    found += LABEL_ATTR.findall(_without_code(text))
    # listings: a fenced block's `{#lst-x lst-cap="..."}` is code to _without_code (xref.float_label's rule)
    found += [el["c"][0][0] for el in walk(ast["blocks"]) if el["t"] == "CodeBlock" and float_label(el)]
    return found


def _ids(ast: dict) -> set[str]:
    ids: set[str] = set()
    for el in walk(ast["blocks"]):
        if el["t"] in ("Header",):
            ids.add(el["c"][1][0])
        elif el["t"] in ("Div", "Span", "CodeBlock", "Figure", "Table") and el["c"][0][0]:
            ids.add(el["c"][0][0])
    return ids


def check(root: Path) -> list[Finding]:
    return Linter(root).run()


def run_check(root: Path) -> int:
    linter = Linter(root)
    findings = linter.run()
    for f in findings:
        print(f)
    if linter.unbuilt:
        print(f"check: {len(linter.unbuilt)} page(s) whose cells have not run since they changed, so their Predicts were not "
              f"compared with what the cells make: {', '.join(linter.unbuilt)} (python3 -m bookbuild build)")
    errors = sum(f.kind == "error" for f in findings)
    unsupported = sum(f.kind == "unsupported" for f in findings)
    if findings:
        print(f"check: {errors} error(s), {unsupported} unsupported Quarto feature(s)")
        return 1
    print("check: no problems found")
    return 0


def as_json(findings: Iterable[Finding]) -> str:
    return json.dumps([f.__dict__ for f in findings], indent=1)
