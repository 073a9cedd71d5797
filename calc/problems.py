"""Back-of-envelope problems: a worked answer built from calc's own numbers (issue #43).

A chapter's problem is a ``::: {.problem}`` div (format: filters/problem.lua) whose Python cell
builds a ``Problem``: each ``step`` is one line of arithmetic with its result, formatted here,
and ``answer`` names the unit the reader answers in and the tolerance bands. The cell prints
``p.markdown()`` (``#| output: asis``); filters/problem.lua turns it into the page's check box
and the worked answer, and the Solutions appendix prints every problem's worked answer again
(``solutions_markdown``, which runs each problem's cell anew: a cell must import what it uses).

Values are always in base units, as calc returns them (FLOP, bytes, seconds, FLOP/s, B/s, J, a
fraction for "%"); the unit string only says how a number is shown and what a reader's bare
number means. The reader's text is read by ``parse`` here and by assets/js/problem-units.js in
the page, which must agree: tests/fixtures/problem_units.json holds the cases both are tested on.

Pure standard library; nothing of the project outside calc.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from . import fmt

# ------------------------------------------------------------------ units

# dimension order of the vectors below
DIMS = ("FLOP", "B", "s", "J", "cycle")

def _d(**kw):
    return tuple(kw.get(k, 0) for k in DIMS)

_NONE = _d()
# atom -> (scale to base units, dimension vector); looked up exactly (case matters: B byte, b bit)
_ATOMS = {}
for names, scale, dim in [
    (("FLOP", "FLOPs", "flop", "Flop", "Flops", "OP", "OPs", "op", "ops"), 1.0, _d(FLOP=1)),
    (("FLOPS", "flops"), 1.0, _d(FLOP=1, s=-1)),          # TFLOPS: a rate, as datasheets use it
    (("B", "byte", "bytes", "Byte", "Bytes"), 1.0, _d(B=1)),
    (("b", "bit", "bits"), 0.125, _d(B=1)),
    (("s", "sec", "secs", "second", "seconds"), 1.0, _d(s=1)),
    (("min", "mins", "minute", "minutes"), 60.0, _d(s=1)),
    (("h", "hr", "hrs", "hour", "hours"), 3600.0, _d(s=1)),
    (("day", "days"), 86400.0, _d(s=1)),
    (("Hz",), 1.0, _d(s=-1)),
    (("J", "joule", "joules"), 1.0, _d(J=1)),
    (("W", "watt", "watts"), 1.0, _d(J=1, s=-1)),
    (("cycle", "cycles", "clk", "clock", "clocks"), 1.0, _d(cycle=1)),
    (("%", "percent"), 0.01, _NONE),
    (("x", "×", "times"), 1.0, _NONE),
    (("thousand",), 1e3, _NONE), (("million",), 1e6, _NONE), (("billion",), 1e9, _NONE),
    (("trillion",), 1e12, _NONE),
]:
    for n in names:
        _ATOMS[n] = (scale, dim)
# Counted things: no dimension of their own (a reader may write "8 GPUs" for a bare 8).
for n in ("token", "tok", "GPU", "param", "parameter", "element", "elem", "request", "req",
          "sequence", "seq", "thread", "warp", "block", "SM", "node", "layer", "head", "step",
          "user", "sector", "transaction", "instruction", "accelerator", "chip", "device",
          "server", "word", "row", "tile", "lane", "bank", "batch", "item", "value", "number"):
    _ATOMS[n] = (1.0, _NONE)
    _ATOMS[n + "s"] = (1.0, _NONE)
for n in ("batches", "micro-batch", "micro-batches", "microbatch", "microbatches", "stage", "stages",
          "sample", "samples", "image", "images", "expert", "experts", "iteration", "iterations",
          "way", "ways", "pass", "passes", "wavefront", "wavefronts", "column", "columns", "replay", "replays",
          "wave", "waves", "grid", "grids", "kernel", "kernels", "launch", "launches", "cell", "cells"):
    _ATOMS[n] = (1.0, _NONE)

_PREFIX_WORDS = {"kilo": 1e3, "mega": 1e6, "giga": 1e9, "tera": 1e12, "peta": 1e15, "exa": 1e18,
                 "milli": 1e-3, "micro": 1e-6, "nano": 1e-9, "pico": 1e-12,
                 "kibi": 2.0**10, "mebi": 2.0**20, "gibi": 2.0**30, "tebi": 2.0**40}
_PREFIXES = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50,
             "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
             "m": 1e-3, "u": 1e-6, "µ": 1e-6, "μ": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15}


class UnitError(ValueError):
    """A unit (or a reader's answer) that cannot be read; the message says why, for the reader."""


@dataclass(frozen=True)
class Unit:
    text: str
    scale: float                 # one of this unit, in base units
    dim: tuple

    def describe(self) -> str:
        return describe(self.dim)


_KINDS = {_d(): "a plain number", _d(B=1): "a size in bytes", _d(s=1): "a time",
          _d(FLOP=1): "a count of FLOPs", _d(FLOP=1, s=-1): "a FLOP rate", _d(B=1, s=-1): "a bandwidth",
          _d(FLOP=1, B=-1): "an intensity (FLOP per byte)", _d(s=-1): "a rate per second",
          _d(J=1): "an energy", _d(J=1, s=-1): "a power", _d(cycle=1): "a count of cycles",
          _d(J=1, FLOP=-1): "an energy per FLOP", _d(J=1, B=-1): "an energy per byte"}


def describe(dim: tuple) -> str:
    """What a dimension measures, in words: "a bandwidth", "a size in bytes"."""
    return _KINDS.get(tuple(dim), "in " + dim_text(dim))


def dim_text(dim: tuple) -> str:
    """A dimension in words a reader knows: (1, -1, 0, 0, 0) -> 'FLOP/B'; none -> 'a plain number'."""
    top = [n + (f"^{e}" if e != 1 else "") for n, e in zip(DIMS, dim) if e > 0]
    bottom = [n + (f"^{-e}" if e != -1 else "") for n, e in zip(DIMS, dim) if e < 0]
    if not top and not bottom:
        return "a plain number"
    return ("·".join(top) or "1") + ("/" + "·".join(bottom) if bottom else "")


def _factor(word: str) -> tuple:
    m = re.fullmatch(r"(.+?)\^?([-+]?\d)?", word)
    base, power = m.group(1), int(m.group(2) or 1)
    if base.endswith("^"):
        base = base[:-1]
    if base in _ATOMS:
        s, d = _ATOMS[base]
    else:
        found = None
        for pw, v in _PREFIX_WORDS.items():
            if base.lower().startswith(pw) and base[len(pw):].lower() in _ATOMS_LOWER:
                s, d = _ATOMS_LOWER[base[len(pw):].lower()]
                found = (v * s, d)
                break
        if found is None:
            for p in sorted(_PREFIXES, key=len, reverse=True):
                rest = base[len(p):]
                if base.startswith(p) and rest in _ATOMS and _ATOMS[rest][1] != _NONE:
                    s, d = _ATOMS[rest]
                    found = (_PREFIXES[p] * s, d)
                    break
        if found is None:
            raise UnitError(f"unknown unit “{base}” (units are case-sensitive: GB is gigabytes, Gb gigabits, "
                            f"ms milliseconds, MB/s a bandwidth)")
        s, d = found
    return s ** power, tuple(x * power for x in d)


_ATOMS_LOWER = {k.lower(): v for k, v in _ATOMS.items() if k not in ("b", "B")}
_ATOMS_LOWER.update({"byte": _ATOMS["B"], "bytes": _ATOMS["B"], "bit": _ATOMS["b"], "bits": _ATOMS["b"]})


def unit(text: str) -> Unit:
    """Read a unit: ``unit("FLOP/B")``, ``unit("TB/s")``, ``unit("GiB")``, ``unit("tokens/s")``,
    ``unit("%")``, ``unit("")`` (a plain number). Raises UnitError with the reason."""
    t = text.strip()
    t = re.sub(r"\s+per\s+", "/", t)
    t = t.replace("²", "^2").replace("³", "^3").replace("⋅", "*").replace("·", "*")
    t = re.sub(r"\s*([/*])\s*", r"\1", t)
    if not t:
        return Unit(text, 1.0, _NONE)
    if re.search(r"\s", t):
        raise UnitError(f"cannot read the unit “{text.strip()}” (write it as, say, GB/s or FLOP/B)")
    scale, dim = 1.0, [0] * len(DIMS)
    for k, (op, word) in enumerate(re.findall(r"(^|[/*])([^/*]+)", t)):
        s, d = _factor(word)
        sign = -1 if op == "/" else 1
        scale *= s ** sign
        dim = [a + sign * b for a, b in zip(dim, d)]
    if re.sub(r"(^|[/*])([^/*]+)", "", t):
        raise UnitError(f"cannot read the unit “{text.strip()}”")
    return Unit(text, scale, tuple(dim))


_NUMBER = re.compile(r"^\s*(?:~|≈|about\s+)?\s*(?P<num>[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|[-+−]?\.\d+)"
                     r"(?:\s*(?:[eE](?P<e>[-+−]?\d+)|(?:×|x|\*)\s*10\s*\^\s*(?P<e2>[-+−]?\d+)))?\s*(?P<unit>.*?)\s*$")


def parse(text: str) -> tuple:
    """A reader's answer -> (value in base units, Unit typed or None). Raises UnitError."""
    if not text.strip():
        raise UnitError("type a number first, for example 295 or 1.2 TB/s")
    m = _NUMBER.match(text.replace("\u00a0", " ").replace("\u202f", " "))
    if not m:
        raise UnitError(f"“{text.strip()}” does not start with a number")
    num = float(m.group("num").replace(",", "").replace("−", "-"))
    exp = m.group("e") or m.group("e2")
    if exp:
        num *= 10.0 ** int(exp.replace("−", "-"))
    u = m.group("unit")
    if not u:
        return num, None
    typed = unit(u)
    return num * typed.scale, typed


def grade(text: str, value: float, unit_text: str, right: float, close: float) -> dict:
    """The page's verdict on a reader's answer (assets/js/problem-units.js does the same):
    ``{"verdict": "right" | "close" | "wrong" | "invalid", "value": the reader's number in the
    answer's unit (None if invalid), "error": the relative error, "message": for the reader}``.
    A bare number is taken in the answer's unit; a unit of another dimension is "invalid"."""
    want = unit(unit_text)
    try:
        got, typed = parse(text)
    except UnitError as e:
        return {"verdict": "invalid", "value": None, "error": None, "message": str(e)}
    if typed is None:
        got *= want.scale
    elif typed.dim != want.dim:
        return {"verdict": "invalid", "value": None, "error": None,
                "message": f"“{typed.text.strip()}” is {typed.describe()}, but this answer is "
                           f"{want.describe()}" + (f": give it in {unit_text}" if unit_text else "")}
    err = abs(got - value) / abs(value) if value else abs(got)
    verdict = "right" if err <= right * (1 + 1e-9) else "close" if err <= close * (1 + 1e-9) else "wrong"
    return {"verdict": verdict, "value": got / want.scale, "error": err, "message": ""}


# ------------------------------------------------------------------ showing numbers

def show(value: float, unit_text: str, sig: int | None = None) -> str:
    """A value in base units, shown in ``unit_text``: two significant figures, three where two
    would be more than 1 % off (295 stays 295, 989 becomes 990). A unit without a prefix gets one
    chosen for the value (``show(3.35e12, "B/s") == "3.35 TB/s"``); one with a prefix keeps it
    (``show(85.9e9, "GiB") == "80 GiB"``); "s" is shown as fmt.duration shows times."""
    u = unit(unit_text)
    x = value / u.scale
    if sig is None:
        sig = 2
        if x and abs(fmt.round_sig(x, 2) - x) > 0.01 * abs(x):
            sig = 3
    if unit_text == "%":
        return f"{fmt.num(int(round(x))) if abs(x - round(x)) < 1e-9 else fmt.num(x, sig)}%"
    if unit_text == "s":
        return fmt.duration(x, sig)
    if unit_text in ("×", "x"):
        return f"{fmt.num(int(x)) if float(x).is_integer() else fmt.num(x, sig)}×"
    if unit_text in _PREFIXED_FOR_VALUE:
        if float(x).is_integer() and abs(x) < 1e4:          # a count of bytes or FLOPs, exactly: 1,024 B
            return f"{fmt.num(int(x))} {unit_text}"
        return fmt.si(x, unit_text, sig)
    if isinstance(value, int) and u.scale == 1.0:            # calc's exact counts print exactly
        return f"{fmt.num(value)} {unit_text}".rstrip()
    if float(x).is_integer() and abs(x) < 1e8:              # a count, exactly: 16,777,216
        return f"{fmt.num(int(x))} {unit_text}".rstrip()
    return f"{fmt.num(x, sig)} {unit_text}".rstrip()


# units shown with a prefix chosen for the value (989e12 FLOP/s -> "989 TFLOP/s")
_PREFIXED_FOR_VALUE = ("FLOP", "B", "FLOP/s", "B/s", "J", "W", "Hz", "OP/s", "b/s")


def _pct(fraction: float) -> str:
    return f"{round(fraction * 100, 6):g}"


class Q(float):
    """A step's result: a float that prints as its shown text (``f"{q}"`` is "3.35 TB/s"), so a
    later step's text can quote it; arithmetic on it gives a plain float."""
    text: str

    def __new__(cls, value: float, text: str):
        q = super().__new__(cls, value)
        q.text = text
        return q

    def __str__(self) -> str:
        return self.text

    def __format__(self, spec: str) -> str:
        return self.text if not spec else float.__format__(self, spec)


@dataclass
class Problem:
    """A problem's worked answer, step by step (``step``), then its answer (``answer``)."""
    steps: list = field(default_factory=list)
    value: float | None = None
    unit: str | None = None
    right: float | None = None
    close: float | None = None

    def step(self, text: str, value: float, unit_text: str = "", sig: int | None = None) -> Q:
        """One line of the working: ``text`` (markdown, may quote earlier steps' Q values),
        then " = " and ``value`` shown in ``unit_text``; returns the value as a Q. A text ending
        in ":" states a fact (a datasheet figure, a model's size): "Dense BF16 peak: 989 TFLOP/s";
        one ending in "=" gets the value after it, with no second "="."""
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"step {text!r}: its value must be a finite number, got {value!r}")
        unit(unit_text)
        shown = show(value, unit_text, sig)
        line = f"{text} {shown}" if text.rstrip().endswith((":", "=")) else f"{text} = {shown}"
        self.steps.append(line)
        return Q(value, shown)

    def note(self, text: str) -> None:
        """A line of the working without a number of its own (a formula, a reason)."""
        self.steps.append(text)

    def answer(self, value: float, unit_text: str, *, right: float, close: float) -> Q:
        """The answer, in base units, asked for in ``unit_text`` (what a bare number means), with
        the bands: within ``right`` (a fraction: 0.03 is ±3 %) it is right, within ``close`` close."""
        unit(unit_text)
        if not (0 < right < close < 1):
            raise ValueError(f"tolerances must satisfy 0 < right < close < 1, got right={right}, close={close}")
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value == 0:
            raise ValueError(f"the answer must be a finite, non-zero number, got {value!r}")
        self.value, self.unit, self.right, self.close = float(value), unit_text, right, close
        return Q(value, show(value, unit_text))

    def tolerance_text(self) -> str:
        return f"right within ±{_pct(self.right)}%, close within ±{_pct(self.close)}%"

    def worked_markdown(self) -> str:
        """The worked answer as markdown: numbered steps, then the answer and its bands."""
        if self.value is None:
            raise ValueError("a problem needs p.answer(value, unit, right=..., close=...)")
        lines = [f"{k}. {s}" for k, s in enumerate(self.steps, 1)]
        return ("\n".join(lines) + "\n\n" if lines else "") + \
            f"**Answer: {show(self.value, self.unit)}** ({self.tolerance_text()})."

    def markdown(self) -> str:
        """What the problem's cell prints (``#| output: asis``): a ``.problem-answer`` div with
        the answer as attributes and the worked answer inside, for filters/problem.lua."""
        body = self.worked_markdown()
        unit_attr = self.unit.replace('"', "")
        return (f'\n::: {{.problem-answer value="{self.value!r}" unit="{unit_attr}" '
                f'right="{self.right!r}" close="{self.close!r}" shown="{show(self.value, self.unit)}"}}\n'
                f"{body}\n:::\n")


_MADE: list = []


def problem() -> Problem:
    """A new problem (kept, so that ``solutions_markdown`` finds what a cell made)."""
    p = Problem()
    _MADE.append(p)
    return p


# ------------------------------------------------------------------ the book's problems

@dataclass
class Found:
    id: str
    path: str
    line: int
    title: str
    code: str              # the problem's Python cell
    code_line: int


def read_problems(text: str, path: str = "<source>") -> list:
    """Every ``::: {.problem}`` div of a chapter's source, in order (calc.exercises' reader)."""
    from .exercises import _walk, parse_blocks
    out = []
    for b in _walk(parse_blocks(text)):
        if b.kind == "div" and "problem" in b.classes:
            m = _CELL.search(b.text)
            code = m.group("code") if m else ""
            line = b.line + 1 + b.text[:m.start("code")].count("\n") if m else b.line
            out.append(Found(b.ident, path, b.line, b.attrs.get("title", ""), code, line))
    return out


# a Python cell inside the div: ```{python} ... ``` (its code, the line after the fence)
_CELL = re.compile(r"^(?P<fence>`{3,})\s*\{python[^}]*\}\s*\n(?P<code>.*?)^(?P=fence)\s*$", re.M | re.S)


def validate(found: Found) -> list:
    """(line, message) for what the build would stop on, found without running the cell: no id,
    no title, no Python cell, no ``.answer(`` call, a unit that cannot be read, a band missing."""
    import ast
    out = []
    if not found.id.startswith("prob-"):
        out.append((found.line, f"a problem needs an id starting with prob- (got #{found.id or '(none)'})"))
    if not found.title:
        out.append((found.line, f"problem #{found.id} needs a title=\"...\""))
    if not found.code:
        out.append((found.line, f"problem #{found.id} has no Python cell making its answer"))
        return out
    try:
        tree = ast.parse(re.sub(r"(?m)^#\|.*$", "", found.code))
    except SyntaxError as e:
        return out + [(found.code_line + (e.lineno or 1) - 1, f"problem #{found.id}: {e.msg}")]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "answer"]
    if not calls:
        out.append((found.code_line, f"problem #{found.id} has no p.answer(value, unit, right=..., close=...)"))
    for c in calls:
        line = found.code_line + c.lineno - 1
        if len(c.args) < 2 or not isinstance(c.args[1], ast.Constant) or not isinstance(c.args[1].value, str):
            out.append((line, f"problem #{found.id}: answer()'s unit must be a string, e.g. \"FLOP/B\""))
        else:
            try:
                unit(c.args[1].value)
            except UnitError as e:
                out.append((line, f"problem #{found.id}: {e}"))
        kws = {k.arg for k in c.keywords}
        for band in ("right", "close"):
            if band not in kws:
                out.append((line, f"problem #{found.id}: answer() needs its tolerance {band}= (a fraction, e.g. 0.03)"))
    return out


def validate_book(found: list) -> list:
    """(path, line, message) for every problem of the book, duplicate ids included."""
    out, seen = [], {}
    for f in found:
        out += [(f.path, line, msg) for line, msg in validate(f)]
        if f.id in seen:
            out.append((f.path, f.line, f"problem id #{f.id} is used twice (first at {seen[f.id]})"))
        seen.setdefault(f.id, f"{f.path}:{f.line}")
    return out


def run_cell(found: Found) -> Problem:
    """Run a problem's cell anew in an empty namespace, its output swallowed; its Problem."""
    import contextlib
    import io
    start = len(_MADE)
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            exec(compile(found.code, f"{found.path}:#{found.id}", "exec"), {"__name__": "__problem__"})
        except NameError as e:
            raise ValueError(f"{found.path}:{found.code_line}: problem #{found.id}'s cell must import what it "
                             f"uses (it runs alone in the Solutions appendix): {e}") from None
    made = [p for p in _MADE[start:] if p.value is not None]
    del _MADE[start:]
    if not made:
        raise ValueError(f"{found.path}:{found.code_line}: problem #{found.id}'s cell made no answered problem")
    return made[-1]


def solutions_markdown(root: str = ".", chapters: list | None = None, level: int = 3) -> str:
    """The Solutions appendix's problems: per chapter, each problem's title, a link back and its
    worked answer, from its own cell run now."""
    import os
    from .exercises import book_chapters, reads
    out = []
    for path in chapters if chapters is not None else book_chapters(root):
        # only the .problem divs and the chapter's title are read: the build keys this page on them
        reads(os.path.join(root, path), "exercises", "headings")
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        found = read_problems(text, path)
        if not found:
            continue
        title = next((m.group("t") for ln in text.split("\n")
                      if (m := re.match(r"^#\s+(?P<t>.+?)\s*(\{[^}]*\})?\s*$", ln))), path)
        out.append(f"{'#' * level} {title} {{.unnumbered .unlisted}}\n")
        for k, f in enumerate(found, 1):
            p = run_cell(f)
            out.append(f"{'#' * (level + 1)} Problem {k}: {f.title} {{#sol-{f.id} .unnumbered .unlisted}}\n")
            out.append(f"[The problem](../{path}#{f.id}).\n")
            out.append(p.worked_markdown() + "\n")
    return "\n".join(out)
