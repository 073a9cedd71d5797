"""Rules of ``bookbuild check`` for how the book teaches (issue #36), read from the sources:

* a glossary term used in a chapter that neither introduces it nor builds on (directly, or
  through the chapters it builds on) the chapter that does: a term met before its chapter, or
  in a chapter whose "Builds on" does not lead to it. Only the first use is reported, and a first
  use marked ``[term]{.term}`` is fine: it links to the definition (a hover in HTML, the
  glossary in print), as is one followed within 60 words by the marked term (a heading that
  names what the paragraph below it defines). Only chapters with a ``prerequisites:`` list are read (not the preface or
  the appendices);
* a Predict whose answer stands in the 300 words above it: the key of its Reveal (the first
  sentence's first inline expression that the question does not itself show, else that sentence's
  words less hedges such as "about" or "roughly" and bare answers such as "no" or "the same")
  found in the prose, headings or figure and table captions before the Predict. A collapsed
  Reveal above is not read: a reader has not seen it;
* a Predict whose answer a reader has seen above it in the same section once the cells have run
  (``predict_answered_by_output``, over ``execute.markdown.seen``): the Reveal's leading number
  in a table, caption, alt text or printed output a cell made, or in prose from another
  expression, or an equation the Reveal cites. The first rule reads the source as written and
  misses these (four Predicts of the book sat under the table or equation that answered them);
* a Predict answered by a glossary definition (``predict_answered_by_definition``): a definition
  of a term the chapter introduces or marks above the Predict that shares the Reveal's
  distinctive words or states the intensity it turns on (issue #43: "2:4 sparsity" answered the
  sparse-peak Predict, "GEMV" the decode one, "divergence" the branch one);
* the words a chapter's built page puts before its first section (``opening_words``).

Each rule returns ``(file, line, message)`` tuples; ``check.py`` reports them as errors.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

from .project.config import _as_list

Finding = tuple[Path, "int | None", str]

TERM_SPAN = re.compile(r"\[([^\]]+)\]\{\.term(?:[^}]*?\bkey=\"([^\"]+)\")?[^}]*\}")
INLINE_EXPR = re.compile(r"`\{python\}\s+([^`]+?)`")
NEAR = 60                         # words after a first use within which its [term]{.term} may follow
WINDOW = 300                      # words above a Predict in which its answer must not stand
HEDGES = {"about", "roughly", "around", "approximately", "nearly", "almost", "several", "some", "a", "an",
          "the", "well", "only", "just", "or", "more", "less", "fewer", "than", "it", "is", "by", "at",
          "least", "most", "over", "under", "few", "and", "no", "yes", "none", "not", "same", "all", "of"}


def _key(name: str) -> str:
    return " ".join(name.lower().split())


def _term_pattern(term: str) -> re.Pattern:
    words = [re.escape(w) for w in term.split()]
    body = r"\s+".join(words)
    flags = 0 if any(c.isupper() for c in term) else re.I
    return re.compile(r"(?<![\w/-])" + body + r"(?:s|es)?(?![\w/-])", flags)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def prose_only(text: str) -> str:
    """The page as a reader reads its prose, same length and lines: front matter, code (fenced and
    inline), math, attributes, link targets, cross-references, comments and the "Learning goals"
    box blanked, and a term span's brackets and attributes blanked (its words kept)."""
    out = text
    if out.startswith("---"):
        end = out.find("\n---", 3)
        if end > 0:
            out = _blank(out, 0, end + 4)
    for pattern in (r"^(```|~~~).*?^\1[ \t]*$", r"<!--.*?-->", r"\$\$.*?\$\$", r"(?<!\\)\$[^$\n]+?\$",
                    r"`[^`\n]*`", r"\]\([^)\n]*\)", r"@(?:sec|fig|tbl|eq|lst)-[\w:-]+", r"\[@[^\]]*\]"):
        for m in reversed(list(re.finditer(pattern, out, re.S | re.M))):
            out = _blank(out, m.start(), m.end())
    for m in reversed(list(re.finditer(r"\{[^{}\n]*\}", out))):
        out = _blank(out, m.start(), m.end())
    goals = re.search(r"^:::+ *$", out[m.end():], re.M) if (m := re.search(
        r"^:::+.*[Ll]earning goals.*$", text, re.M)) else None
    if m and goals:
        out = _blank(out, m.start(), m.end() + goals.end())
    return out


def _closure(source: str, prerequisites: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(prerequisites.get(source, []))
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(prerequisites.get(p, []))
    return seen


def terms_before_introduction(root: Path, pages: Iterable[tuple[str, str, dict]]) -> Iterator[Finding]:
    """``pages``: (source path relative to the root, text, front matter) in book order."""
    pages = list(pages)
    introduced: dict[str, tuple[str, str]] = {}          # key -> (chapter, name as declared)
    for source, _, front in pages:
        for t in _as_list(front.get("terms")):
            if isinstance(t, dict) and t.get("term"):
                introduced.setdefault(_key(str(t["term"])), (source, str(t["term"])))
    prerequisites = {source: [str(p) for p in _as_list(front.get("prerequisites"))] for source, _, front in pages}
    for source, text, front in pages:
        if "prerequisites" not in front:
            continue
        prose = prose_only(text)
        marked: dict[str, list[int]] = {}                # key -> offsets of its {.term} spans
        for m in TERM_SPAN.finditer(text):
            key = _key(m.group(2) or m.group(1))
            for k in (key, re.sub("es$", "", key), re.sub("s$", "", key)):
                if k in introduced:
                    marked.setdefault(k, []).append(m.start())
                    break
        builds_on = _closure(source, prerequisites)
        path = root / source
        for key, (home, name) in introduced.items():
            uses = [m.start() for m in _term_pattern(name).finditer(prose)]
            if not uses:
                continue
            first = uses[0]
            spans = marked.get(key, [])
            ends = [w.end() for w in re.finditer(r"\S+", prose[first:])][:NEAR]
            near = first + (ends[-1] if ends else 0)
            if any(first - 1 <= s <= near for s in spans):
                continue                                 # the first use links to the definition, or a
                                                         # heading's use is defined just below it
            if home == source:
                continue
            line = text.count("\n", 0, first) + 1
            if home not in builds_on:
                yield (path, line, f'term "{name}" is used here ({len(uses)} time{"s" * (len(uses) > 1)}) but '
                                   f'introduced in {home}, which this chapter does not build on: define it at '
                                   f'first use, mark the first use [{name}]{{.term}}, or list {home} under '
                                   '`prerequisites:`')


def _words_before(prose: str, end: int, n: int) -> tuple[str, int]:
    """The last ``n`` words of ``prose[:end]`` as one lower-case string, and where they start."""
    matches = list(re.finditer(r"\S+", prose[:end]))
    start = matches[-n].start() if len(matches) >= n else 0
    return prose[start:end], start


def _reveal_key(body: str) -> tuple[list[str], list[str]]:
    """(inline expressions, content words) of a Reveal's first sentence."""
    first = re.split(r"(?<=[.!?])\s", " ".join(body.split()), maxsplit=1)[0]
    exprs = [" ".join(e.split()) for e in INLINE_EXPR.findall(first)]
    if exprs:
        return exprs, []
    words = re.findall(r"[A-Za-z0-9%]+", re.sub(r"`[^`]*`|\$[^$]*\$", " ", first).lower())
    return [], [w for w in words if w not in HEDGES]


def _without_reveals(text: str) -> str:
    """``text`` with each collapsed Reveal's body blanked (a reader above has not opened it)."""
    out = text
    for m in reversed(list(re.finditer(r"^:::+\s*\{[^}]*title=\"Reveal\"[^}]*\}\s*$(.*?)^:::+\s*$", text, re.S | re.M))):
        out = _blank(out, m.start(1), m.end(1))
    return out


def _cell_captions(text: str) -> str:
    """``text`` with each fenced cell's code blanked but its fig-cap / tbl-cap kept in place."""
    out = text
    for m in reversed(list(re.finditer(r"^```\{python\}.*?^```[ \t]*$", text, re.S | re.M))):
        block = m.group(0)
        kept = "\n".join(line if re.match(r"#\|\s*(fig|tbl)-cap:", line) else re.sub(r"[^\n]", " ", line)
                         for line in block.split("\n"))
        out = out[:m.start()] + kept + out[m.end():]
    return out


def predict_answered_above(root: Path, pages: Iterable[tuple[str, str, dict]]) -> Iterator[Finding]:
    for source, text, _ in pages:
        path = root / source
        opens = list(re.finditer(r"^:::+\s*\{[^}]*\.predict\b[^}]*\}\s*$", text, re.M))
        for m in opens:
            reveal = re.compile(r"^:::+\s*\{[^}]*title=\"Reveal\"[^}]*\}\s*$", re.M).search(text, m.end())
            if not reveal:
                continue
            close = re.compile(r"^:::+\s*$", re.M).search(text, reveal.end())
            body = text[reveal.end(): close.start() if close else len(text)]
            exprs, words = _reveal_key(body)
            question = " ".join(text[m.end():reveal.start()].split())
            exprs = [e for e in exprs if "{python} " + e not in question][:1]   # the answer leads
            if not exprs and not words:
                continue
            line = text.count("\n", 0, m.start()) + 1
            if exprs:
                # expressions as written, in prose and captions above (the 300 words, with a
                # cell's captions); code cells' bodies are not prose
                above = _cell_captions(_without_reveals(text[:m.start()]))
                window, _ = _words_before(above, len(above), WINDOW)
                found = [e for e in exprs if "{python} " + e in " ".join(window.split())]
                if found:
                    yield (path, line, f"Predict answered above it: its Reveal's key figure `{{python}} {found[0]}` "
                                       f"stands in the {WINDOW} words before the Predict; move the Predict up")
                continue
            above = prose_only(_cell_captions(_without_reveals(text[:m.start()])))
            above = re.sub(r"#\|\s*(fig|tbl)-cap:", " ", above)
            window = " ".join(_words_before(above, len(above), WINDOW)[0].split()).lower()
            pattern = r"\b" + r"\W+(?:\w+\W+){0,2}?".join(re.escape(w) for w in words) + r"\w*"
            if re.search(pattern, window):
                yield (path, line, f"Predict answered above it: its Reveal's answer \"{' '.join(words)}\" stands in "
                                   f"the {WINDOW} words before the Predict; move the Predict up (a heading that "
                                   "gives the answer becomes a question)")


# -- a Predict answered by what the cells made: a table, a caption, printed output, an equation -----
Seen = list[tuple[int, str, str]]   # execute.markdown.seen: (source line, origin, text as shown)
UNIT = (r"%|×|[kKMGTP]i?B(?:/s)?|B|bytes?|bits?|[kMGTP]?FLOPs?(?:/s|/byte)?|[pnµum]?s|seconds?|cycles?|"
        r"[kMG]?Hz|[fpnµm]?J|[kM]?W|tokens?(?:/s)?")
NUMBER = re.compile(r"(?<![\w.,/-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?!\d|,\d)(?:\s?(" + UNIT + r")(?![\w/]))?")
TINY = 100                        # an integer below this is an answer only with its unit ("32 bytes")
OPEN = re.compile(r"^:::+\s*\{[^}]*\.predict\b[^}]*\}\s*$")
REVEAL = re.compile(r"^:::+\s*\{[^}]*title=\"Reveal\"[^}]*\}\s*$")
CLOSE = re.compile(r"^:::+\s*$")
HEADING = re.compile(r"^#{1,6}\s")
CHOICE = re.compile(r"^\s*(?:[-*+]|\d+\.)\s")


class Row(NamedTuple):
    line: int                     # source line (a cell's output: the cell's opening line)
    origin: str                   # "" for prose, else the cell's label (or "cell")
    text: str                     # as shown, inline values in place
    prose: bool                   # prose markup (a div fence, a heading) rather than a cell's output


def _plain_text(text: str) -> str:
    """Shown text for matching: Quarto's markdown escapes (``1\\,024``) undone, emphasis and code
    marks dropped, no-break and thin spaces made plain."""
    text = re.sub(r"\\([\\`*_{}\[\]()>#+,\-.!|$%])", r"\1", text)
    text = re.sub(r"[*_`]", "", text)
    return re.sub(r"[\u00a0\u202f\u2009]", " ", text)


def _numbers(text: str) -> list[tuple[str, str]]:
    """(number as formatted, unit or "") for each number in ``text``; a unit (UNIT) is the word or
    sign right after the number."""
    return [(m.group(1) + (m.group(2) or ""), m.group(3) or "") for m in NUMBER.finditer(_plain_text(text))]


def _tiny(number: str) -> bool:
    return "." not in number and int(number.replace(",", "")) < TINY


def _stands_in(number: str, unit: str, text: str) -> bool:
    """Whether ``text`` shows the number (a tiny one only with the same unit)."""
    return any(n == number and (not _tiny(number) or (unit and u.rstrip("s") == unit.rstrip("s")))
               for n, u in _numbers(text))


def _no_math(text: str) -> str:
    """``text`` without math (worked arithmetic, not the answer) and cross-references."""
    return re.sub(r"@\w[\w:-]*|\$\$.*?\$\$|\$[^$]*\$", " ", text)


def _lead(text: str, givens: set[str]) -> str:
    """The Reveal's answer: its first sentence, or its first two when the first states no number
    the question does not give ("Only the second. The limit is 65,535 blocks, ...")."""
    first, second = (re.split(r"(?<=[.!?])\s+(?=[A-Z`$@\"(\d])", " ".join(text.split()), maxsplit=2) + ["", ""])[:2]
    return first if any(n not in givens for n, _ in _numbers(_no_math(first))) else f"{first} {second}"


def _rows(seen: Seen) -> list[Row]:
    """``seen`` as rows, fenced code and HTML comments left out."""
    rows, fence, comment = [], None, False
    for line, origin, text in seen:
        if origin:
            rows.append(Row(line, origin, text, False))
            continue
        stripped = text.strip()
        if fence:
            if stripped.startswith(fence) and set(stripped) <= set(fence[0]):
                fence = None
            continue
        if m := re.match(r"^(`{3,}|~{3,})", stripped):
            fence = m.group(1)
            continue
        if comment or "<!--" in text:
            comment = "-->" not in text.split("<!--")[-1]
            continue
        rows.append(Row(line, origin, text, True))
    return rows


def _next(rows: list[Row], start: int, pattern: re.Pattern) -> int | None:
    """The first prose row from ``start`` on that matches ``pattern``."""
    return next((j for j in range(start, len(rows)) if rows[j].prose and pattern.match(rows[j].text)), None)


def predict_answered_by_output(root: Path, pages: Iterable[tuple[str, Seen]]) -> Iterator[Finding]:
    """A Predict whose answer a reader has already seen above it in the same section, once the
    cells have run. The answer: the first distinctive number (a decimal, 100 or more, or any
    number with a unit) of the Reveal's first sentence (its first two when the first gives none)
    that the question does not give (its choices are not givens), found as printed in a prose
    line, or a table, caption, alt text or printed output of a cell, between the section's
    heading and the Predict (collapsed Reveals left out); or an equation those sentences cite
    (@eq-...) defined there. ``pages``: (source path, ``execute.markdown.seen`` of the page)."""
    for source, seen in pages:
        rows = _rows(seen)
        path = root / source
        hidden: set[int] = set()                      # rows of collapsed Reveals: not read above
        for j, row in enumerate(rows):
            if row.prose and REVEAL.match(row.text):
                hidden.update(range(j + 1, _next(rows, j + 1, CLOSE) or len(rows)))
        for k, row in enumerate(rows):
            if not (row.prose and OPEN.match(row.text)) or (r := _next(rows, k + 1, REVEAL)) is None:
                continue
            end = _next(rows, r + 1, CLOSE) or len(rows)
            question = [q.text for q in rows[k + 1:r] if not (q.prose and (CLOSE.match(q.text) or CHOICE.match(q.text)))]
            givens = {n for n, _ in _numbers(" ".join(question))}
            lead = _lead(" ".join(a.text for a in rows[r + 1:end]), givens)
            start = next((j for j in range(k - 1, -1, -1) if rows[j].prose and HEADING.match(rows[j].text)), -1)
            above = [a for j, a in enumerate(rows[start + 1:k], start + 1) if j not in hidden]
            cited = [(eq, a) for eq in re.findall(r"@(eq-[\w:-]+)", lead) for a in above
                     if a.prose and re.search(r"\{#" + re.escape(eq) + r"[\s}]", a.text)]
            if cited:
                eq, where = cited[0]
                yield (path, row.line, f"Predict answered above it: its Reveal cites @{eq}, which stands above it "
                                       f"in the same section, at line {where.line}; move the Predict up")
                continue
            key = next(((n, u) for n, u in _numbers(_no_math(lead)) if n not in givens and (u or not _tiny(n))), None)
            where = next((a for a in above if _stands_in(*key, a.text)), None) if key else None
            if where:
                shown = key[0] + ("" if key[1] in ("", "%") else " ") + key[1]
                what = f"at line {where.line}" if where.prose else f"in the output of the cell at line {where.line} ({where.origin})"
                yield (path, row.line, f"Predict answered above it: its Reveal's answer \"{shown}\" stands above it "
                                       f"in the same section, {what}; move the Predict up")


# -- an opening: what a reader reads before the chapter's first section (issue #43) -----------------
OPENING_WORDS = 150               # at most this many words before a chapter's first section heading


def opening_words(html: str) -> int:
    """Words a reader meets on a built page between its title and its first section heading: the
    level-1 section's text up to its first level-2 section, callouts, captions and margin notes
    included; the title, the page's inline table of contents, scripts, styles and drawings' own
    text (SVG) left out. A word is a run of characters holding a letter or a digit."""
    from bs4 import BeautifulSoup, Tag

    main = BeautifulSoup(html, "html.parser").find("main")
    section = main.find("section", class_="level1") if main else None
    if section is None:
        raise ValueError("no <main> with a level-1 <section>")
    words = 0
    for child in section.children:
        if not isinstance(child, Tag):
            words += len(re.findall(r"\S*\w\S*", str(child)))
            continue
        if child.name == "section":
            break
        if child.name in ("h1", "script", "style") or "toc-inline" in (child.get("class") or []):
            continue
        for hidden in child.find_all(["script", "style", "svg"]):
            hidden.decompose()
        words += len(re.findall(r"\S*\w\S*", child.get_text(" ")))
    return words


# -- a Predict answered by a glossary definition a reader has seen (issue #43) -----------------------
COMMON = 0.03                     # a word stem in more than this share of the book's paragraphs is not distinctive
SHARED = 2                        # distinctive stems a definition must share with the Reveal's lead
SHARED_CALLOUT = 3                # ... and a callout above it (a Takeaway, a note): longer, so more
CALLOUT = re.compile(r"^:::+\s*\{([^}]*\.callout-[^}]*)\}\s*$(.*?)^:::+\s*$", re.S | re.M)
RATE = re.compile(r"\bFLOPs?\s*(?:/|per)\s*(?:byte|B)\b|\bbytes?\s*(?:/|per)\s*FLOP\b", re.I)


def _stems(text: str) -> set[str]:
    """Word stems (first five letters of each word of four letters or more) of source text, with
    inline code, attributes, citations and cross-references left out."""
    text = re.sub(r"`[^`]*`|\{[^}]*\}|\[@[^\]]*\]|@[\w:-]+", " ", text)
    return {w[:5] for w in re.findall(r"[a-z][a-z0-9-]+", text.lower()) if len(w) > 3}


def _definitions(front: dict) -> dict[str, str]:
    return {_key(str(t["term"])): str(t.get("def", "")) for t in _as_list(front.get("terms"))
            if isinstance(t, dict) and t.get("term")}


def predict_answered_by_definition(root: Path, pages: Iterable[tuple[str, str, dict]]) -> Iterator[Finding]:
    """A Predict whose Reveal a glossary definition already gives: a definition of a term the
    chapter introduces (its "Terms" box, the Glossary) or marks ``[term]{.term}`` above the Predict
    (a hover) that shares with the Reveal's first three sentences ``SHARED`` distinctive word stems
    (stems in at most ``COMMON`` of the book's paragraphs, Reveals left out, and not in the question), or that states
    an intensity (FLOP per byte) when the Reveal's lead turns on one; or an open callout above it
    in the chapter (a Takeaway, a note; not a Predict, a collapsed Reveal or the Learning goals)
    that shares ``SHARED_CALLOUT`` such stems. ``pages``: (source path, text, front matter), every
    page of the book (the stems' frequencies are the book's)."""
    pages = list(pages)
    defs: dict[str, str] = {}
    paragraphs: list[set[str]] = []
    for _, text, front in pages:
        defs.update(_definitions(front))
        paragraphs += [_stems(p) for p in re.split(r"\n\s*\n", prose_only(_without_reveals(text))) if p.strip()]
    counts: dict[str, int] = {}
    for p in paragraphs:
        for s in p:
            counts[s] = counts.get(s, 0) + 1
    common = {s for s, n in counts.items() if n > max(2.0, COMMON * len(paragraphs))}
    for source, text, front in pages:
        own = set(_definitions(front))
        for m in re.finditer(r"^:::+\s*\{[^}]*\.predict\b[^}]*\}\s*$", text, re.M):
            reveal = REVEAL_SOURCE.search(text, m.end())
            if not reveal:
                continue
            close = re.compile(r"^:::+\s*$", re.M).search(text, reveal.end())
            body = " ".join(text[reveal.end(): close.start() if close else len(text)].split())
            lead = " ".join(re.split(r"(?<=[.!?])\s+", body)[:3])
            key = _stems(lead) - _stems(text[m.end():reveal.start()]) - common
            marked = set()
            for t in TERM_SPAN.finditer(text[:m.start()]):
                k = _key(t.group(2) or t.group(1))
                marked.update(k2 for k2 in (k, re.sub("es$", "", k), re.sub("s$", "", k)) if k2 in defs)
            line = text.count("\n", 0, m.start()) + 1
            found = None
            for c in CALLOUT.finditer(text[:m.start()]):
                if re.search(r"\.predict\b|collapse=|[Ll]earning goals", c.group(1)):
                    continue
                shared = sorted(key & _stems(c.group(2)))
                if len(shared) >= SHARED_CALLOUT:
                    found = (f"Predict answered above it by a callout: the callout at line "
                             f"{text.count(chr(10), 0, c.start()) + 1} shares {', '.join(shared)} with its Reveal; "
                             "move the Predict above it or reword one of them")
                    break
            if found:
                yield (root / source, line, found)
                continue
            for term in sorted(own | marked):
                definition = defs.get(term, "")
                shared = sorted(key & _stems(definition))
                rate = bool(RATE.search(lead) and RATE.search(definition) and re.search(r"\d", definition))
                if len(shared) >= SHARED or rate:
                    why = f"shares {', '.join(shared)} with its Reveal" if len(shared) >= SHARED else \
                        "states the intensity its Reveal turns on"
                    yield (root / source, text.count("\n", 0, m.start()) + 1,
                           f'Predict answered above it by a definition: the glossary entry "{term}" ({why}); '
                           "reword the definition or the Predict so that the reader must work the answer out")
                    break


REVEAL_SOURCE = re.compile(r"^:::+\s*\{[^}]*title=\"Reveal\"[^}]*\}\s*$", re.M)
