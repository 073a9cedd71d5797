"""Write the HTML site: one page per chapter, wrapped in the book's template, plus
static files, rendered math and the offline search index."""
from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from . import mathrender, reader
from .offline import with_manifest
from .npm import node_modules
from ..editions import images as edition_images
from ..editions.edition import citation, edition
from ..editions.files import pdf_href
from ..cache import cached_text
from ..errors import BuildError
from ..pandoc import xref
from ..pandoc.convert import conversion_key, convert, references_page
from ..project.config import BookConfig, _as_list

TEMPLATES = Path(__file__).parent / "templates"
WORDS_PER_MINUTE = 230
TAG = re.compile(r"<[^>]+>")


def write_site(cfg: BookConfig, pages: list[xref.Page], index: dict[str, Any], index_path: Path,
               cites: list[str], progress, report, search: bool = True) -> None:
    out = cfg.out
    out.mkdir(parents=True, exist_ok=True)
    refs_page = references_page(pages)
    cache_dir = cfg.root / ".bookcache" / "html"
    cache_dir.mkdir(parents=True, exist_ok=True)
    key_of = conversion_key(cfg, pages, index_path, cites, refs_page, cfg.html)
    changed: list[str] = []

    def body_of(page: xref.Page) -> str:
        t = time.perf_counter()
        body, fresh = cached_text(cache_dir / (page.output.replace("/", "-") + ".json"), key_of(page),
                                  lambda: convert(cfg, page, index_path, cites, refs_page, "html5",
                                                  ["--section-divs", "--katex"]))
        if fresh:
            changed.append(page.output)
            progress("html", page.output, time.perf_counter() - t)
        return body

    with ThreadPoolExecutor(max_workers=2) as pool:
        bodies = dict(zip([p.output for p in pages], pool.map(body_of, pages)))
    bodies = mathrender.render_pages(bodies, cfg.root)
    copy = cfg.html.get("code-copy") is not False
    bodies = {k: reader.apply(heading_ids(v), figure_source(cfg, k), copy=copy) for k, v in bodies.items()}

    env = template_env(cfg.root / ".bookcache")
    env.filters["site_relative"] = lambda html, root: site_relative(html, root or "")
    env.filters["after_first_h1"] = lambda html, insert: markupsafe.Markup(html.replace("</h1>", "</h1>\n" + str(insert), 1))
    template = env.get_template("page.html")
    katex_stylesheet = node_modules(cfg.root) / "katex" / "dist" / "katex.min.css"
    katex_css = katex_stylesheet.read_text(encoding="utf-8") if katex_stylesheet.is_file() else ""
    nav = navigation(cfg, index)
    version = book_version(cfg)
    feedback = feedback_settings(cfg)
    wrote = 0
    # the offline step (a post-render script) names the web manifest in every page: written so here
    # too, a page is not rewritten by every build and the search index not made again
    linked = OFFLINE_SCRIPT in cfg.post_render
    for i, page in enumerate(pages):
        body = bodies[page.output]
        depth = page.output.count("/")
        root = "../" * depth
        info = index["pages"][page.source]
        words = prose_words(page)
        ctx = {
            "book": cfg, "page": page, "root": root, "nav": nav, "version": version,
            "title": info["title"], "number": info["number"],
            "body": body, "toc": page_toc(index, page.output),
            "prev": nav_link(pages, index, i - 1, root), "next": nav_link(pages, index, i + 1, root),
            "minutes": max(1, math.ceil(words / WORDS_PER_MINUTE)), "words": words,
            "has_math": 'class="katex' in body, "has_widgets": "data-widget=" in body,
            "math_fonts": mathrender.katex_fonts(body, katex_css),
            "source_url": source_url(cfg, page.source), "issue_url": issue_url(cfg),
            "feedback": feedback, "last_changed": last_changed(cfg, page.source),
            "assets": asset_list(cfg),
            **page_edition(cfg, page, info, index["labels"]),
        }
        text = template.render(**ctx)
        if linked:
            text = with_manifest(text, depth)
        dest = out / page.output
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.exists() or dest.read_text(encoding="utf-8") != text:
            dest.write_text(text, encoding="utf-8")
            wrote += 1
        report.html_pages.append(page.output)
    static_files(cfg)
    edition_images.social_card(cfg)
    edition_images.favicons(cfg)
    if search and (wrote or not (out / "pagefind").exists()):
        t = time.perf_counter()
        run_pagefind(cfg)
        progress("search", "pagefind index", time.perf_counter() - t)


TEMPLATE_OPTIONS = {"autoescape": True, "trim_blocks": True, "lstrip_blocks": True}


def template_env(cache: Path) -> jinja2.Environment:
    """The page template's environment; its compiled templates kept in ``cache`` (Jinja's bytecode
    cache checks each template's source and Jinja's and Python's versions; the folder is named by
    these options, which it does not check), a tenth of a second a build."""
    import hashlib
    import json
    name = hashlib.sha256(json.dumps(TEMPLATE_OPTIONS, sort_keys=True).encode()).hexdigest()[:12]
    folder = cache / f"jinja-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), **TEMPLATE_OPTIONS,
                              bytecode_cache=jinja2.FileSystemBytecodeCache(str(folder)))


def navigation(cfg: BookConfig, index: dict[str, Any]) -> list[dict[str, Any]]:
    """Sidebar entries: parts with their chapters, in order."""
    groups: list[dict[str, Any]] = []
    appendix_started = False
    for ch in cfg.chapters:
        info = index["pages"][ch.source.as_posix()]
        part = ch.part
        if ch.appendix and not appendix_started:
            appendix_started = True
            groups.append({"part": "Appendices", "chapters": []})
        elif not ch.appendix and (not groups or groups[-1]["part"] != part):
            groups.append({"part": part, "chapters": []})
        elif ch.appendix and part and groups[-1]["part"] != part:
            groups.append({"part": part, "chapters": []})
        groups[-1]["chapters"].append({"href": ch.output.as_posix(), "title": info["title"],
                                       "number": info["number"]})
    return groups


def page_toc(index: dict[str, Any], output: str) -> list[dict[str, Any]]:
    return [h for h in index["sections"].get(output, []) if 2 <= h["level"] <= 3]


def nav_link(pages: list[xref.Page], index: dict[str, Any], i: int, root: str) -> dict[str, str] | None:
    if i < 0 or i >= len(pages):
        return None
    info = index["pages"][pages[i].source]
    label = f"{info['number']}  {info['title']}" if info["number"] else info["title"]
    return {"href": root + pages[i].output, "title": label}


def source_url(cfg: BookConfig, source: str) -> str | None:
    """The page's source at the commit it was built from (at ``repo-branch``, else main, outside
    a git checkout)."""
    if not cfg.repo_url:
        return None
    ref = edition(cfg)["commit"] or cfg.raw.get("book", {}).get("repo-branch", "main")
    return f"{cfg.repo_url.rstrip('/')}/blob/{ref}/{source}"


def page_description(page: xref.Page, labels: dict[str, Any], limit: int = 200) -> str:
    """The page's first paragraph of prose, cut at a word, for link previews and search engines
    (a cross-reference reads as its text, "Chapter 1"; a citation is left out)."""
    def ref_text(el: dict) -> dict:
        ids = [c["citationId"] for c in el["c"][0]]
        info = [labels[i] for i in ids if i in labels]
        if not info:
            return {"t": "Str", "c": ""}
        name = {"chapter": "Appendix" if info[0]["number"].isalpha() else "Chapter"}.get(info[0]["kind"]) \
            or xref.KINDS.get(info[0]["kind"], "")
        return {"t": "Str", "c": f"{name} {info[0]['number']}"}

    for block in page.ast["blocks"]:
        if block["t"] == "Para" and not any(el["t"] == "Math" and "\\" in el["c"][1] for el in block["c"]):
            inlines = [ref_text(el) if el["t"] == "Cite" else el for el in block["c"]]
            text = xref.stringify(inlines)
            if len(text.split()) >= 8:
                return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"
    return ""


def page_edition(cfg: BookConfig, page: xref.Page, info: dict[str, Any], labels: dict[str, Any]) -> dict[str, Any]:
    """What a page says about its editions: its own PDF, how to cite it and the book, the licence,
    and its link-preview card."""
    site = str(cfg.raw.get("book", {}).get("site-url") or "").rstrip("/")
    chapter = {"number": info["number"], "title": info["title"], "url": f"{site}/{page.output}" if site else ""}
    return {"edition": edition(cfg), "site_url": site, "chapter_pdf": pdf_href(page.output),
            "cite_page": citation(cfg, chapter), "cite_book": citation(cfg),
            "description": page_description(page, labels) or str(cfg.raw.get("description") or cfg.subtitle or "")}


def issue_url(cfg: BookConfig) -> str | None:
    if not cfg.repo_url or "issue" not in cfg.repo_actions:
        return None
    return f"{cfg.repo_url.rstrip('/')}/issues/new"


def feedback_settings(cfg: BookConfig) -> dict[str, str]:
    """What the reader's "Suggest a change" does, from _quarto.yml ``feedback:`` (see docs/feedback.md, Reader
    feedback): ``endpoint`` (a feedback service), ``issue-url`` (by default the repository's new-issue page
    when book.repo-url is set) and ``email``. ``issue-url: false`` turns the issue link off."""
    raw = cfg.raw.get("feedback") or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{cfg.root / '_quarto.yml'}: feedback: must be a mapping (endpoint, issue-url, email)")
    unknown = set(raw) - {"endpoint", "issue-url", "email"}
    if unknown:
        raise ValueError(f"{cfg.root / '_quarto.yml'}: feedback: unknown key(s) {', '.join(sorted(unknown))}"
                         " (known: endpoint, issue-url, email)")
    issue = raw.get("issue-url")
    if issue is None and cfg.repo_url:
        issue = f"{cfg.repo_url.rstrip('/')}/issues/new"
    settings = {"endpoint": raw.get("endpoint"), "issue-url": issue, "email": raw.get("email")}
    return {k: str(v) for k, v in settings.items() if v}


def last_changed(cfg: BookConfig, source: str) -> str | None:
    """The date (YYYY-MM-DD) of the last commit that changed a page's source; None outside git or for a
    file git does not track."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%cs", "--", source], cwd=cfg.root,
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    date = out.stdout.strip()
    return date if out.returncode == 0 and len(date) == 10 else None


def book_version(cfg: BookConfig) -> str:
    """The short commit the site is built from ("dev" outside a git checkout)."""
    return edition(cfg)["version"]


def prose_words(page: xref.Page) -> int:
    """Words a reader reads: text in the page's AST, so code, math, figures' SVG and widget
    drawings do not count towards the reading time."""
    return sum(len(el["c"].split()) for el in page.elements if el["t"] == "Str")   # walked once already


def asset_dirs(cfg: BookConfig) -> list[Path]:
    """Where the site's styles and scripts come from: the book's own ``assets/`` folder on top of
    the one beside this build tool (the house theme), so a book elsewhere gets the same look."""
    tool = Path(__file__).resolve().parent.parent.parent / "assets"
    own = cfg.root / "assets"
    return [d for d in dict.fromkeys([tool, own]) if d.is_dir()]


# bookbuild's page shell (the template's top bar, sidebar, search and contents; the cite box and
# Editions page), as Quarto's is its Bootstrap theme and quarto.js: every page of this build loads
# them, a Quarto page does not.
SHELL = {"css": ["assets/css/book.css", "assets/css/editions.css"], "js": ["assets/js/book.js"]}
# What filters/widget.lua asks Quarto to put in the head of a page with widgets.
WIDGET_CSS = '<link rel="stylesheet" href="/assets/css/widgets.css">'
WIDGET_HOST = '<script async src="/assets/js/widgets-host.js"></script>'
WIDGET_HEAD = WIDGET_CSS + "\n" + WIDGET_HOST
SITE_PATH = re.compile(r'\b(src|href)="/(?!/)')


def figure_source(cfg: BookConfig, output: str):
    """Where the file behind an image of page ``output`` is while the page is written: a cell's
    figure is still in ``.bookcache/figures/`` (copied to the site's ``figures/`` afterwards)."""
    page_dir = (cfg.out / output).parent

    def source(src: str) -> Path:
        path = Path(os.path.normpath(page_dir / src))
        try:
            rel = path.relative_to(cfg.out)
        except ValueError:
            return path
        if rel.parts[:1] == ("figures",):
            return cfg.root / ".bookcache" / rel
        return path
    return source


SECTION_HEADING = re.compile(r'(<section id="([^"]+)"[^>]*>\s*<h[1-6])(?![^>]*\bid=)')


def heading_ids(html: str) -> str:
    """Each section's heading gets an id of its own (``<section id>`` + ``-title``): Pandoc's
    ``--section-divs`` moves the heading's id to its section, and Pagefind makes a search result's
    sub-results (the sections where the words are, each with its link) only from headings with ids."""
    return SECTION_HEADING.sub(lambda m: f'{m.group(1)} id="{m.group(2)}-title"', html)


def site_relative(html: str, root: str) -> str:
    """Paths that start at the site root (``/assets/...``) made relative to a page ``root`` away
    from it, as Quarto's HTML post-processor does for every ``src`` and ``href`` of a website page
    (resolveResourceRefs in src/project/types/website/website-resources.ts)."""
    return SITE_PATH.sub(lambda m: f'{m.group(1)}="{root}', html)


def head_includes(cfg: BookConfig) -> str:
    """``format: html: include-in-header``: files (relative to the project) or ``text:`` entries."""
    out = []
    for entry in _as_list(cfg.html.get("include-in-header")):
        if isinstance(entry, dict) and "text" in entry:
            out.append(str(entry["text"]))
            continue
        name = str(entry.get("file") if isinstance(entry, dict) else entry)
        path = next((d.parent / name for d in reversed(asset_dirs(cfg)) if (d.parent / name).is_file()),
                    cfg.root / name)         # the book's own file, else the house theme's beside bookbuild
        if not path.is_file():
            raise BuildError(f"include-in-header file {name} does not exist", cfg.root / "_quarto.yml")
        out.append(path.read_text(encoding="utf-8"))
    return "\n".join(out)


def asset_list(cfg: BookConfig) -> dict[str, Any]:
    """The stylesheets and head HTML of every page: the shell's, then what ``_quarto.yml`` declares
    (``css``, ``include-in-header``); the widgets' only on pages with widgets."""
    return {"css": SHELL["css"] + [str(c) for c in _as_list(cfg.html.get("css"))],
            "js": SHELL["js"], "head": head_includes(cfg), "widget_css": WIDGET_CSS, "widget_host": WIDGET_HOST}


def _sync_tree(src: Path, dest: Path, skip_suffix: str | None = None) -> None:
    if not src.exists():
        return
    for path in src.rglob("*"):
        if path.is_dir() or (skip_suffix and path.suffix == skip_suffix):
            continue
        target = dest / path.relative_to(src)
        if target.exists() and target.stat().st_size == path.stat().st_size and \
                target.stat().st_mtime >= path.stat().st_mtime:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)


def static_files(cfg: BookConfig) -> None:
    out = cfg.out
    for d in asset_dirs(cfg):
        _sync_tree(d, out / "assets")
    _sync_tree(cfg.root / ".bookcache" / "figures", out / "figures")
    katex = node_modules(cfg.root) / "katex" / "dist"
    from .mathrender import has_math
    if katex.exists() and has_math(cfg.root):  # a book without math ships no KaTeX
        from .mathrender import subset_fonts
        subsetted = subset_fonts(katex / "fonts", out / "assets" / "katex" / "fonts", cfg.root)
        _sync_tree(katex / "fonts", out / "assets" / "katex" / "fonts", ".woff2" if subsetted else None)
        target = out / "assets" / "katex" / "katex.min.css"
        if not target.exists():
            shutil.copy2(katex / "katex.min.css", target)


RUNTIME_SCRIPT = "python3 -m widgets.bundle"
OFFLINE_SCRIPT = "python3 -m bookbuild.html.offline"


def runtime_script(cfg: BookConfig) -> str | None:
    """The post-render command that puts the widgets' runtime in the site, if the book declares it
    and has the module (``_quarto.yml``: ``project: post-render: python3 -m widgets.bundle``)."""
    if (cfg.root / "widgets" / "bundle.py").exists() and RUNTIME_SCRIPT in cfg.post_render:
        return RUNTIME_SCRIPT
    return None


def widget_runtime(cfg: BookConfig) -> list[str]:
    """The widget runtime (Pyodide + calc) inside the site; what it had to make (see
    widgets.bundle.build_runtime). It needs no chapter, so the build runs it beside them."""
    from widgets import bundle
    made: list[str] = []
    bundle.build_runtime(cfg.out, cfg.root, made=made)
    return made


def run_pagefind(cfg: BookConfig) -> None:
    exe = node_modules(cfg.root) / ".bin" / "pagefind"
    if not exe.exists():
        raise BuildError("pagefind is not installed", hint="run `npm ci` in the book's folder")
    proc = subprocess.run([str(exe), "--site", str(cfg.out), "--output-subdir", "pagefind", "--silent"],
                          cwd=cfg.root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BuildError("pagefind failed to index the site", detail=proc.stdout + proc.stderr)
