"""How the built book's running prose reads, chapter by chapter (issue #36).

    python3 benchmarks/prose_stats.py [BUILT_BOOK]       # default: _book

Running prose is the text of the ``<p>`` and ``<li>`` elements of a chapter's ``<main>`` (its
level-1 ``<section>``), leaving out figures and their captions, tables, code, display math, the
"Learning goals" and "Terms in this chapter" boxes, a Predict's choices, widgets, margin notes
and sidenotes, and the page's own furniture (the inline table of contents, "Cite this chapter",
the previous/next links). Inline math and inline code count as one word each. A block ends a
sentence; inside it a sentence ends at ``.``, ``!`` or ``?`` followed by a space (or the block's
end), except after the abbreviations in ``ABBREVIATIONS``.

For each chapter it prints: the mean words a sentence, the 90th percentile, the share of
sentences over 35 words, numbers (words that hold a digit, outside math) per 100 words (the
issue's measure), numerals per 100 words (words that start with a digit: quantities, years and
section numbers, but not names such as A100, FP32 or L2), the
Takeaway boxes (``.takeaway``), the schematic figures (ids that start ``fig-schematic-``, the
marker agreed with the figures' author), and whether the chapter's last section says
"You can now". The goals the issue sets are printed beside them.

Then, for issue #43 ("a reader leaves able to estimate"), a second table: words a sentence and the
share over 35 words again, the worked computations shown, the problems (``.problem`` divs) and
the words before the first section (``bookbuild.teaching_rules.opening_words``). A *worked
computation* is arithmetic the reader sees done: in a paragraph or list item of running prose, or
in display math, numbers joined by an operator (``×``, ``·``, ``/``, ``+``, ``−``, a fraction)
and then ``=`` or ``≈`` and a number, units allowed after each number ("989 TFLOP/s / 3.35 TB/s ≈
295 FLOP/byte", ``$100 \times 2 = 200$``). Inline and display math are read from KaTeX's TeX
annotation (``\frac{a}{b}`` as ``a / b``); each match counts once. A bare result ("about 300")
or a formula in letters (``$I = F/B$``) is not one, nor are numbers joined by a sentence's words
("a 128 × 128 array and M = 511"). The problems' own text and worked answers
(inside a ``.problem`` div) are counted apart from the prose: the issue asks for five in the prose
besides the problems.
"""
from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bookbuild.teaching_rules import OPENING_WORDS, opening_words  # noqa: E402

CHAPTERS = ["data-movement", "roofline", "gpu", "cuda-threads", "attention", "tiling-systolic", "serving",
            "communication"]
GOALS = {"mean": 18.0, "over35": 6.0, "numbers": 4.0, "takeaways": 2, "schematics": 2}
LONG = 35
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "Fig.", "Eq.", "Sec.", "al.", "approx.", "resp.")
# Subtrees that are not running prose.
SKIP_TAGS = {"figure", "table", "pre", "code", "fieldset", "nav", "details.toc-inline", "svg", "script", "style"}
SKIP_CLASSES = {"katex-display", "terms-box", "widget", "predict-choices", "predict-actions", "column-margin",
                "sidenote", "sidenote-ref", "cite-this", "page-meta", "quarto-float", "toc-inline",
                "figure-scroll", "cell-output-display", "page-nav", "widget-readouts"}
NUMBER = re.compile(r"\d")
NUMERAL = re.compile(r"^[^\w]*\d")
_NUM = r"\d[\d,]*(?:\.\d+)?(?:[²³]|\^\{?\d+\}?)?(?:\s*[×x]\s*10\^\{?[-−]?\d+\}?)?"
# A unit is up to three words after a number, never a word of a sentence's own ("a 128 × 128 array
# and M = 511" is no computation).
_NOT_UNIT = r"(?!(?:and|or|of|the|a|an|is|are|to|in|at|on|for|with|by|then|so|that|which|as|if)\b)"
_UNITS = r"(?:\s*" + _NOT_UNIT + r"[A-Za-zµ%][\w/%µ·-]*){0,3}?"
WORKED = re.compile(r"\(?" + _NUM + _UNITS + r"\)?(?:\s*(?:[×·*/+−]|\s-\s)\s*\(?" + _NUM + _UNITS + r"\)?)+\s*[=≈]\s*[~]?\s*"
                    + _NUM)
SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]*\s+")


@dataclass
class Stats:
    chapter: str
    sentences: list[int]
    words: int
    numbers: int
    numerals: int
    takeaways: int
    schematics: int
    you_can_now: bool
    worked: int = 0
    worked_in_problems: int = 0
    problems: int = 0
    opening: int = 0

    @property
    def mean(self) -> float:
        return sum(self.sentences) / len(self.sentences) if self.sentences else 0.0

    @property
    def p90(self) -> int:
        s = sorted(self.sentences)
        return s[min(len(s) - 1, math.ceil(0.9 * len(s)) - 1)] if s else 0

    @property
    def over35(self) -> float:
        return 100 * sum(n > LONG for n in self.sentences) / len(self.sentences) if self.sentences else 0.0

    @property
    def per100(self) -> float:
        return 100 * self.numbers / self.words if self.words else 0.0

    @property
    def numerals100(self) -> float:
        return 100 * self.numerals / self.words if self.words else 0.0


def _skipped(tag: Tag) -> bool:
    if tag.name in ("figure", "table", "pre", "code", "fieldset", "nav", "svg", "script", "style", "aside"):
        return tag.name != "code" or tag.find_parent("pre") is not None
    classes = set(tag.get("class") or [])
    if classes & SKIP_CLASSES:
        return True
    if "callout" in classes:
        title = tag.find(class_="callout-title")
        if title and title.get_text(" ", strip=True).lower() == "learning goals":
            return True
    return False


def _text(node: Tag) -> str:
    """The block's own text: inline math and inline code as one placeholder word each, nested
    blocks (lists, paragraphs) and skipped subtrees left out (they are counted on their own)."""
    out: list[str] = []
    for child in node.children:
        if isinstance(child, NavigableString):
            if type(child) is NavigableString:
                out.append(str(child))
            continue
        if not isinstance(child, Tag):
            continue
        classes = set(child.get("class") or [])
        if child.name in ("p", "ul", "ol", "li", "div", "details", "blockquote", "section"):
            continue
        if "katex" in classes or child.name == "math":
            out.append(" MATH ")
        elif child.name == "code":
            out.append(" CODE ")
        elif _skipped(child):
            continue
        else:
            out.append(_text(child))
    return "".join(out)


def _in_skipped(tag: Tag, stop: Tag) -> bool:
    for parent in tag.parents:
        if parent is stop:
            return False
        if _skipped(parent):
            return True
    return False


def _sentences(text: str) -> list[list[str]]:
    text = " ".join(text.split())
    if not text:
        return []
    protected = text
    for abbr in ABBREVIATIONS:
        protected = protected.replace(abbr + " ", abbr.replace(".", "\0") + " ")
    out = []
    for part in SENTENCE_END.split(protected):
        words = [w for w in part.replace("\0", ".").split() if re.search(r"\w", w)]
        if words:
            out.append(words)
    return out


def _tex(tex: str) -> str:
    """A TeX annotation as plain arithmetic: fractions as ``a / b``, operators as signs."""
    tex = re.sub(r"\\(?:text|mathrm|mathsf|operatorname)\{([^{}]*)\}", r" \1 ", tex)
    for _ in range(4):                               # nested \frac, innermost first
        tex = re.sub(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}", r"(\1) / (\2)", tex)
    for macro, sign in (("&", ""), (r"\times", "×"), (r"\cdot", "·"), (r"\approx", "≈"), (r"\div", "/"), (r"\simeq", "≈"),
                        ("{,}", ","), (r"\,", ""), (r"\;", " "), (r"\quad", " "), (r"\!", ""), ("\\", " ")):
        tex = tex.replace(macro, sign)
    tex = re.sub(r"\(\s*([^()]*?)\s*\)", r"\1", tex)      # (400 FLOPs) / (100 bytes): the brackets a fraction made
    return tex.replace("{", " ").replace("}", " ")


def _shown(node: Tag) -> str:
    """A block's text as shown, math as its TeX made plain."""
    out: list[str] = []
    for child in node.children:
        if isinstance(child, NavigableString):
            if type(child) is NavigableString:
                out.append(str(child))
        elif isinstance(child, Tag):
            classes = set(child.get("class") or [])
            if "katex" in classes or "katex-display" in classes:
                note = child.find("annotation")
                out.append(" " + _tex(note.get_text() if note else "") + " ")
            elif child.name in ("p", "ul", "ol", "li", "div", "details", "section") or _skipped(child):
                continue
            else:
                out.append(_shown(child))
    return "".join(out)


def _in_problem(block: Tag) -> bool:
    return any("problem" in (p.get("class") or []) for p in block.parents if isinstance(p, Tag))


def worked_computations(section: Tag, problems: bool = False) -> int:
    """Worked computations (see the module's docstring) in running prose and display math, or
    with ``problems`` in the problems' statements and worked answers."""
    n = 0
    for block in section.find_all(["p", "li"]):
        if _in_skipped(block, section) or _skipped(block) or _in_problem(block) != problems:
            continue
        text = " ".join(_shown(block).replace("\u00a0", " ").replace("\u2009", "").replace("\u202f", "").split())
        n += len(WORKED.findall(text))
    return n


def measure(html: str, chapter: str) -> Stats:
    soup = BeautifulSoup(html, "html.parser")
    main = soup.find("main")
    section = main.find("section", class_="level1") if main else None
    if section is None:
        raise SystemExit(f"{chapter}: no <main> with a level-1 <section>")
    lengths: list[int] = []
    words = numbers = numerals = 0
    for block in section.find_all(["p", "li"]):
        if _in_skipped(block, section) or _skipped(block):
            continue
        for sentence in _sentences(_text(block)):
            lengths.append(len(sentence))
            words += len(sentence)
            numbers += sum(1 for w in sentence if w not in ("MATH", "CODE") and NUMBER.search(w))
            numerals += sum(1 for w in sentence if w not in ("MATH", "CODE") and NUMERAL.match(w))
    takeaways = len(section.select(".takeaway"))
    schematics = len({t["id"] for t in section.find_all(id=re.compile(r"^fig-schematic-"))})
    last = section.find_all("section", class_="level2")
    tail = last[-1] if last else section
    you_can_now = "you can now" in tail.get_text(" ", strip=True).lower()
    return Stats(chapter, lengths, words, numbers, numerals, takeaways, schematics, you_can_now,
                 worked_computations(section), worked_computations(section, problems=True),
                 len(section.select(".problem")), opening_words(html))


def table(book: Path) -> list[Stats]:
    rows = []
    for name in CHAPTERS:
        page = book / "chapters" / f"{name}.html"
        if page.exists():
            rows.append(measure(page.read_text(encoding="utf-8"), name))
    return rows


def main(argv: list[str]) -> int:
    book = Path(argv[1] if len(argv) > 1 else "_book")
    rows = table(book)
    if not rows:
        print(f"no chapters under {book}/chapters", file=sys.stderr)
        return 1
    print(f"running prose of {book}")
    print("| chapter | sentences | words | mean words/sentence | 90th pct | over 35 words | numbers/100 words "
          "| numerals/100 words | Takeaway boxes | schematic figures | 'You can now' ending |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.chapter} | {len(r.sentences)} | {r.words} | {r.mean:.1f} | {r.p90} | {r.over35:.1f} % "
              f"| {r.per100:.1f} | {r.numerals100:.1f} | {r.takeaways} | {r.schematics} | {'yes' if r.you_can_now else 'no'} |")
    print(f"| goal | | | <= {GOALS['mean']:.0f} | | <= {GOALS['over35']:.0f} % | <= {GOALS['numbers']:.0f} "
          f"| | >= {GOALS['takeaways']} | >= {GOALS['schematics']} | yes |")
    met = [r.chapter for r in rows if r.mean <= GOALS["mean"] and r.over35 <= GOALS["over35"]
           and r.per100 <= GOALS["numbers"] and r.takeaways >= GOALS["takeaways"]
           and r.schematics >= GOALS["schematics"] and r.you_can_now]
    print(f"chapters meeting every goal: {len(met)} of {len(rows)}" + (f" ({', '.join(met)})" if met else ""))
    print()
    print("issue #43: a reader leaves able to estimate")
    print("| chapter | words/sentence | over 35 words | worked computations in the prose | problems "
          "| worked computations in the problems | words before the first section |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.chapter} | {r.mean:.1f} | {r.over35:.1f} % | {r.worked} | {r.problems} | {r.worked_in_problems} "
              f"| {r.opening} |")
    print(f"| goal | <= {GOALS['mean']:.0f} | <= 5 % | >= 5 | 6-10 | | <= {OPENING_WORDS} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
