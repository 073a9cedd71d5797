"""Render TeX math to HTML at build time with KaTeX (npm ``katex``), so pages need
only KaTeX's stylesheet and fonts, no script, and show math before any JS runs."""
from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

from ..cache import digest, shared_entry, user_cache_dir
from ..errors import BuildError

# pandoc --katex writes the TeX, HTML-escaped, in a span (older pandocs add \( \) or \[ \])
MATH = re.compile(r'<span\s+class="math (inline|display)">(?:\\[(\[])?(.*?)(?:\\[)\]])?</span>', re.S)
SCRIPT = Path(__file__).parent / "katex_render.cjs"


def render_pages(pages: dict[str, str], root: Path) -> dict[str, str]:
    """Replace pandoc's ``--katex`` math spans in every page with KaTeX's HTML."""
    cache_path = root / ".bookcache" / "math.json"
    cache: dict[str, str] = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    todo: dict[str, tuple[str, bool, str]] = {}
    for name, text in pages.items():
        for m in MATH.finditer(text):
            tex, display = html.unescape(m.group(2)), m.group(1) == "display"
            key = digest(tex, str(display))
            if key not in cache:
                todo[key] = (tex, display, name)
    if todo:
        keys = list(todo)
        from .npm import node_modules
        proc = subprocess.run(["node", str(SCRIPT)], cwd=node_modules(root).parent, capture_output=True,
                              input=json.dumps([[todo[k][0], todo[k][1]] for k in keys]).encode())
        if proc.returncode != 0:
            raise BuildError("KaTeX could not run", detail=proc.stderr.decode(),
                             hint="run `npm ci` so node_modules/katex exists")
        results = json.loads(proc.stdout)
        for key, res in zip(keys, results):
            if "error" in res:
                tex, _d, page = todo[key]
                raise BuildError(f"math does not parse: {res['error']}", page, detail=tex)
            cache[key] = res["html"]
        cache_path.write_text(json.dumps(cache))
    out = {}
    for name, text in pages.items():
        out[name] = MATH.sub(lambda m: _indexed_once(cache[digest(html.unescape(m.group(2)),
                                                                   str(m.group(1) == "display"))]), text)
    return out


def _indexed_once(rendered: str) -> str:
    """KaTeX writes each formula three times (MathML, its TeX annotation, the visible HTML):
    the search index keeps only the TeX, or $I$ would be found as "III". Not the MathML: its
    text runs the parts together (a search excerpt read "I∗=Ppeakβ" for I* = P_peak / β)."""
    rendered = rendered.replace('<span class="katex-html" aria-hidden="true">',
                                '<span class="katex-html" aria-hidden="true" data-pagefind-ignore>')
    return re.sub(r"<semantics><(\w+)", r"<semantics><\1 data-pagefind-ignore", rendered)   # the MathML's drawing


def used_characters(root: Path) -> str:
    """Every character KaTeX put into the book's rendered math, plus printable ASCII."""
    cache_path = root / ".bookcache" / "math.json"
    cache: dict[str, str] = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    text = "".join(html.unescape(re.sub(r"<[^>]+>", "", h)) for h in cache.values())
    return "".join(sorted(set(text) | {chr(c) for c in range(0x20, 0x7f)}))


def has_math(root: Path) -> bool:
    """Whether any page of the book rendered math (so the site needs KaTeX's CSS and fonts)."""
    cache_path = root / ".bookcache" / "math.json"
    return cache_path.exists() and bool(json.loads(cache_path.read_text()))


def _subset_one(font_path: str, out_path: str, chars: str) -> None:
    import logging
    from fontTools import subset
    logging.getLogger("fontTools").setLevel(logging.ERROR)  # KaTeX's TTFs have 1970 timestamps
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.notdef_outline = True
    options.name_IDs = ["*"]
    font = subset.load_font(font_path, options)
    sub = subset.Subsetter(options)
    sub.populate(text=chars)
    sub.subset(font)
    subset.save_font(font, out_path, options)


def subset_fonts(src: Path, dest: Path, root: Path) -> bool:
    """KaTeX's woff2 fonts cut down to the glyphs the book's math uses (fontTools + brotli), so a
    page with math fetches a few KB of font instead of tens. Falls back to the full fonts when
    fontTools is missing. The woff and ttf fallbacks, which browsers fetch only without woff2
    support, are copied whole. Twenty fonts take about 1.7 s of CPU, so they are cut on every
    core, and only again when the math's characters change (in the per-user cache, see
    bookbuild.cache.user_cache_dir)."""
    chars = used_characters(root)
    key = digest(chars, *(p.name + str(p.stat().st_size) for p in sorted(src.glob("*.woff2"))))
    import importlib.util
    if importlib.util.find_spec("fontTools") is None:    # found, not imported: its logging and
        return False                                    # timeit are a no-op build's time

    def make(tmp: Path) -> None:
        import multiprocessing
        import os
        from concurrent.futures import ProcessPoolExecutor
        fonts = sorted(src.glob("*.woff2"), key=lambda p: -p.stat().st_size)  # biggest first
        # read from the TTF twin when there is one: fontTools loads a TTF's glyphs lazily, but
        # decodes every glyph of a woff2 first (half the time, for the same output)
        sources = [f.with_suffix(".ttf") if f.with_suffix(".ttf").is_file() else f for f in fonts]
        # forkserver, not fork: preview builds from a thread, and a forked child can inherit a lock
        # another thread held at that moment and wait on it forever.
        ctx = multiprocessing.get_context("forkserver")
        with ProcessPoolExecutor(max_workers=min(len(fonts), os.cpu_count() or 1), mp_context=ctx) as pool:
            for job in [pool.submit(_subset_one, str(s), str(tmp / f.name), chars)
                        for f, s in zip(fonts, sources)]:
                job.result()

    # the cut fonts depend only on the characters and KaTeX's fonts: kept for every clone
    cached, _ = shared_entry(user_cache_dir() / "katex-fonts" / key, make)
    dest.mkdir(parents=True, exist_ok=True)
    for p in cached.iterdir():
        target = dest / p.name
        if not target.exists() or target.read_bytes() != p.read_bytes():
            target.write_bytes(p.read_bytes())
    return True


FONT_FACE = re.compile(r"@font-face\{([^}]*)\}")
CSS_RULE = re.compile(r"([^{}@]+)\{([^{}]*)\}")
CLASS_ATTR = re.compile(r'\sclass="([^"]*)"')
SELECTOR_CLASS = re.compile(r"\.([\w-]+)")
FONT_URL = re.compile(r"url\((?:[^)]*/)?([\w-]+)\.woff2\)")
WEIGHTS = {"normal": "400", "bold": "700"}


def _declarations(body: str) -> dict[str, str]:
    return {k.strip(): v.strip() for k, _, v in (d.partition(":") for d in body.split(";")) if v}


def katex_fonts(page_body: str, katex_css: str) -> list[str]:
    """The KaTeX font files (their stems, such as ``KaTeX_Size1-Regular``) a page's math is drawn
    with, read from KaTeX's own stylesheet: each ``.katex .class`` rule whose classes all occur in
    the page names a family, style and weight, and an ``@font-face`` names the file. The page
    preloads them, so they are in before its first layout: one that arrives later lays the whole
    chapter out again (127 ms of the main thread on the roofline chapter, while the widgets' worker
    was starting)."""
    elements = {frozenset(m.group(1).split()) for m in CLASS_ATTR.finditer(page_body)}
    if not any("katex" in e for e in elements):
        return []

    def occurs(selector: str) -> bool:
        """Each compound's classes (".delimsizing.size1") are all on one element of the page."""
        compounds = [set(SELECTOR_CLASS.findall(c)) - {"katex"} for c in re.split(r"[\s>+~]+", selector.strip())]
        return all(any(c <= e for e in elements) for c in compounds if c)

    faces = {}
    for m in FONT_FACE.finditer(katex_css):
        d = _declarations(m.group(1))
        url = FONT_URL.search(d.get("src", ""))
        if url and "font-family" in d:
            weight = d.get("font-weight", "400")
            faces[(d["font-family"].strip("'\""), d.get("font-style", "normal"), WEIGHTS.get(weight, weight))] = url.group(1)
    wanted = [("KaTeX_Main", "normal", "400")]               # .katex { font: normal 1.21em KaTeX_Main }
    for m in CSS_RULE.finditer(katex_css):
        d = _declarations(m.group(2))
        if "font-family" not in d:
            continue
        family = d["font-family"].split(",")[0].strip().strip("'\"")
        for selector in m.group(1).split(","):
            if selector.strip().startswith(".katex") and occurs(selector):
                weight = d.get("font-weight", "400")
                wanted.append((family, d.get("font-style", "normal"), WEIGHTS.get(weight, weight)))
    return sorted({faces[w] for w in wanted if w in faces})
