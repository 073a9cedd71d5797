"""Exercises: a reader's kernel checked on the simulator, with exact counts (issue #29).

An exercise (format: docs/exercises.md) is a fenced div in a
chapter holding a statement, a starter kernel, hints, a reference solution and a *check*: a
block of Python that says which sizes to try, how to make the inputs, what the outputs must be,
the launch shape, and the budgets (``"sectors_per_request <= 4"``) the kernel must meet. This
module

* reads exercises out of a chapter's source (``read_exercises``: a small fenced-div reader,
  with each part's line in the file);
* validates a check without running it (``validate``: unknown keys, missing parts, budget
  names and grammar, each with its line);
* runs a reader's kernel text through ``calc.sim`` (``run_code`` for the Run button,
  ``check_code`` for Check): correctness at every size first (the first mismatch: size, array,
  index, expected and got), then each budget at the measured size with the figure beside the
  limit. Errors carry the reader's own line numbers. Results are plain data, JSON-ready, for the
  page (the browser runs this same file in Pyodide).

Pure standard library plus calc; runs in CPython and Pyodide.
"""
from __future__ import annotations

import ast
import math
import operator
import random
import re
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from . import sim as warpsim
from . import specs
from .sim.counts import place

# ------------------------------------------------------------------ the check's vocabulary

# key -> (required, "def" for a function or "value")
KEYS = {
    "sizes": (True, "value"),
    "inputs": (True, "def"),
    "launch_shape": (True, "def"),
    "expected": (True, "def"),
    "budgets": (True, "value"),
    "measure": (False, "value"),
    "measure_also": (False, "value"),
    "run": (False, "value"),
    "minimum": (False, "def"),
    "kernel": (False, "value"),
    "tolerance": (False, "value"),
    "seed": (False, "value"),
    "device": (False, "value"),
    "dtype": (False, "value"),
    "l2_bytes": (False, "value"),
    "max_steps": (False, "value"),
    "time_limit": (False, "value"),
    "one_warp_blocks": (False, "value"),
}

_COUNT_NAMES = tuple(warpsim.Counts().as_dict()) + ("sectors_per_request",)
_DERIVED = ("load_sectors_per_request", "store_sectors_per_request", "max_sectors_per_request",
            "max_bank_conflicts")
_REPORT_NAMES = ("hbm_bytes", "hbm_read_bytes", "hbm_write_bytes", "intensity", "time_s")
BUDGET_NAMES = _COUNT_NAMES + _DERIVED + _REPORT_NAMES

_OPS = {"<=": operator.le, "<": operator.lt, "==": operator.eq, ">=": operator.ge, ">": operator.gt}
_BUDGET = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op><=|>=|==|<|>)\s*(?P<expr>.+?)\s*$")
_EXPR_NAMES = {"minimum", "reference"}
# Budgets that bound how the work is spread over the threads. Sectors per request and HBM bytes
# alone pass a kernel whose one thread (or one lane a warp) does everything in a loop: a one-lane
# request touches one sector, and the bytes are the same. A check needs one of these too.
SPREAD_NAMES = ("global_requests", "global_loads", "global_stores", "warp_instructions", "divergent")

DEFAULTS = {"tolerance": 1e-4, "device": "a100-sxm-40gb", "dtype": "fp32", "l2_bytes": None,
            "max_steps": 2_000_000, "time_limit": 10, "kernel": None}


class ExerciseError(Exception):
    """A problem with an exercise's source (the author's side), with its line in the file."""

    def __init__(self, message: str, line: Optional[int] = None, path: Optional[str] = None):
        super().__init__(message)
        self.message, self.line, self.path = message, line, path

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}: " if self.path and self.line else (
            f"line {self.line}: " if self.line else "")
        return where + self.message


# ------------------------------------------------------------------ reading a chapter

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
_DIV_OPEN = re.compile(r"^ {0,3}(?P<colons>:{3,})\s*(?P<info>\{[^}]*\}|[A-Za-z][\w-]*)\s*:*\s*$")
_DIV_CLOSE = re.compile(r"^ {0,3}:{3,}\s*$")
_ATTR = re.compile(r'(?P<key>[A-Za-z_][\w-]*)=(?:"(?P<dq>[^"]*)"|\'(?P<sq>[^\']*)\'|(?P<bare>\S+))'
                   r'|#(?P<id>[\w:.-]+)|\.(?P<cls>[\w-]+)')


def parse_attrs(info: str) -> tuple:
    """Pandoc attributes ``{#id .class key="value"}`` (or a bare class word) -> (id, classes, attrs)."""
    info = info.strip()
    if not info.startswith("{"):
        return "", [info] if info else [], {}
    ident, classes, attrs = "", [], {}
    for m in _ATTR.finditer(info[1:-1]):
        if m.group("id"):
            ident = m.group("id")
        elif m.group("cls"):
            classes.append(m.group("cls"))
        else:
            attrs[m.group("key")] = next(g for g in (m.group("dq"), m.group("sq"), m.group("bare")) if g is not None)
    return ident, classes, attrs


@dataclass
class Block:
    """A fenced div or code block of the source: kind "div" or "code", its attributes, the
    line of its opening fence (1-based), its body lines, and (divs) its children in order."""
    kind: str
    ident: str
    classes: list
    attrs: dict
    line: int
    text: str = ""          # code: the code; div: the raw markdown inside
    children: list = field(default_factory=list)
    end: int = 0            # line of the closing fence


def parse_blocks(text: str) -> list:
    """The source's top-level fenced divs and code blocks (nested divs as children)."""
    lines = text.split("\n")
    root = Block("div", "", [], {}, 0)
    stack = [root]
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            fence = m.group("fence")
            info = m.group("info").strip()
            j = i + 1
            close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
            while j < len(lines) and not close.match(lines[j]):
                j += 1
            if info.startswith("{") and not info.startswith("{="):
                ident, classes, attrs = parse_attrs(info)
            else:
                ident, classes, attrs = "", ([info.split()[0]] if info else []), {}
            stack[-1].children.append(Block("code", ident, classes, attrs, i + 1,
                                            "\n".join(lines[i + 1:j]), end=j + 1))
            i = j + 1
            continue
        m = _DIV_OPEN.match(line)
        if m:
            ident, classes, attrs = parse_attrs(m.group("info"))
            div = Block("div", ident, classes, attrs, i + 1)
            div._start = i + 1  # type: ignore[attr-defined]
            stack[-1].children.append(div)
            stack.append(div)
        elif _DIV_CLOSE.match(line) and len(stack) > 1:
            div = stack.pop()
            div.end = i + 1
            div.text = "\n".join(lines[div.line:i])
        i += 1
    return root.children


def _walk(blocks):
    for b in blocks:
        yield b
        if b.kind == "div":
            yield from _walk(b.children)


@dataclass
class Exercise:
    """One exercise as written: where it is and its parts (code with the line of its first line)."""
    id: str
    path: str
    line: int
    title: str
    statement: str
    starter: Optional[str] = None
    starter_line: Optional[int] = None
    hints: list = field(default_factory=list)          # markdown of each hint
    hint_lines: list = field(default_factory=list)
    solution: Optional[str] = None
    solution_line: Optional[int] = None
    explanation: str = ""
    check: Optional[str] = None
    check_line: Optional[int] = None                    # line of the check's first code line
    problems: list = field(default_factory=list)        # (line, message) found while reading

    def where(self, line: Optional[int] = None) -> str:
        return f"{self.path}:{line or self.line}"


_HEADING = re.compile(r"^#{1,6}\s+(?P<t>.+?)\s*(\{[^}]*\})?\s*$")


def _exercise(div: Block, path: str) -> Exercise:
    ex = Exercise(div.ident, path, div.line, div.attrs.get("title", ""), "")
    if not div.ident.startswith("ex-"):
        ex.problems.append((div.line, f"an exercise needs an id starting with 'ex-' ({{.exercise #ex-...}}), "
                                      f"got {('#' + div.ident) if div.ident else 'none'}"))
    allowed = {"title"}
    for k in div.attrs:
        if k not in allowed:
            ex.problems.append((div.line, f"unknown attribute {k}= on exercise #{div.ident} (known: title)"))
    # the statement: the div's own markdown outside nested blocks
    lines = div.text.split("\n")
    skip = set()
    for child in div.children:
        skip.update(range(child.line, (child.end or child.line) + 1))
    own = [lines[k] for k in range(len(lines)) if (div.line + 1 + k) not in skip]
    statement = "\n".join(own).strip()
    if not ex.title:
        for ln in own:
            h = _HEADING.match(ln)
            if h:
                ex.title = h.group("t").strip()
                break
    ex.title = ex.title or "Exercise"
    ex.statement = statement
    starters, solutions, checks = [], [], []
    for child in div.children:
        cls = child.classes
        if child.kind == "code" and "starter" in cls:
            starters.append(child)
        elif child.kind == "code" and "check" in cls:
            checks.append(child)
        elif child.kind == "div" and "hint" in cls:
            ex.hints.append(child.text.strip())
            ex.hint_lines.append(child.line)
        elif child.kind == "div" and "solution" in cls:
            solutions.append(child)
        elif child.kind == "div" and "exercise" in cls:
            ex.problems.append((child.line, "an exercise cannot hold another exercise"))
        if child.kind == "div" and ("hint" in cls or "solution" in cls):
            owner = child.attrs.get("exercise")
            if owner is not None and owner != div.ident:
                ex.problems.append((child.line, f"exercise=\"{owner}\" inside exercise #{div.ident}: "
                                                f"they must be the same"))
    for name, found in (("starter (```{.python .starter})", starters), ("solution (::: {.solution})", solutions),
                        ("check (```{.python .check})", checks)):
        if not found:
            ex.problems.append((div.line, f"exercise #{div.ident} has no {name}"))
        elif len(found) > 1:
            ex.problems.append((found[1].line, f"exercise #{div.ident} has more than one {name}"))
    if not 1 <= len(ex.hints) <= 3:
        ex.problems.append((div.line, f"exercise #{div.ident} has {len(ex.hints)} hints; write 1 to 3 "
                                      f"(::: {{.hint}})"))
    if starters:
        ex.starter, ex.starter_line = starters[0].text, starters[0].line + 1
    if checks:
        ex.check, ex.check_line = checks[0].text, checks[0].line + 1
    if solutions:
        sol = solutions[0]
        codes = [c for c in sol.children if c.kind == "code" and "python" in c.classes]
        if not codes:
            ex.problems.append((sol.line, f"the solution of #{div.ident} holds no ```{{.python}} code block "
                                          f"(its first one is the reference kernel)"))
        else:
            ex.solution, ex.solution_line = codes[0].text, codes[0].line + 1
            sl = sol.text.split("\n")
            after = codes[0].end - sol.line  # index in sol.text lines after the code block
            ex.explanation = "\n".join(sl[after:]).strip()
    return ex


def read_exercises(text: str, path: str = "<source>") -> list:
    """Every ``::: {.exercise}`` div of a chapter's source, in order."""
    return [_exercise(b, path) for b in _walk(parse_blocks(text))
            if b.kind == "div" and "exercise" in b.classes]


def read_book(root=".", chapters: Optional[list] = None) -> list:
    """Exercises of the book's chapters (paths relative to ``root``; default: every
    ``chapters/*.qmd``, sorted) in book order."""
    import os
    if chapters is None:
        folder = os.path.join(root, "chapters")
        chapters = sorted(os.path.join("chapters", f) for f in os.listdir(folder) if f.endswith(".qmd"))
    out = []
    for rel in chapters:
        path = os.path.join(root, rel)
        reads(path, "exercises")
        with open(path, encoding="utf-8") as f:
            out.extend(read_exercises(f.read(), rel))
    return out


def reads(path: str, *parts: str) -> None:
    """Say, before opening ``path``, that only these parts of it are read: "exercises" (every
    ``.exercise`` and ``.problem`` div, whole) or "headings" (the front matter and heading lines).
    A standard-library audit event, ``book.reads``: the book's build keys a page that reads a
    chapter this way on those parts instead of on every byte (bookbuild/execute/freeze.py); with
    no hook listening (the browser, a test) it does nothing."""
    import sys
    for part in parts:
        sys.audit("book.reads", path, part)


# ------------------------------------------------------------------ validation (nothing run)

def _parse_budget(text: str) -> tuple:
    """(name, op, expression ast) of a budget string; ValueError with the reason."""
    m = _BUDGET.match(text)
    if not m:
        raise ValueError(f"budget {text!r} is not NAME OP EXPR (OP one of <= < == >= >)")
    name, op, expr = m.group("name"), m.group("op"), m.group("expr")
    if name not in BUDGET_NAMES:
        close = [n for n in BUDGET_NAMES if name in n or n in name][:3]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown budget name {name!r} in {text!r}{hint} (names: calc.exercises.BUDGET_NAMES)")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        raise ValueError(f"budget {text!r}: {expr!r} is not an expression") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id not in _EXPR_NAMES:
                raise ValueError(f"budget {text!r}: unknown name {node.id!r} (a limit may use numbers, "
                                 f"'minimum' and 'reference')")
        elif not isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Load,
                                   ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub, ast.UAdd)):
            raise ValueError(f"budget {text!r}: only numbers, + - * / and 'minimum', 'reference' are allowed")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise ValueError(f"budget {text!r}: {node.value!r} is not a number")
    return name, op, tree


def validate_check(source: str, first_line: int = 1) -> list:
    """Problems of a check block, as (line in the file, message), found without running it."""
    off = first_line - 1
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return [((e.lineno or 1) + off, f"the check does not parse: {e.msg}")]
    problems, seen = [], {}
    for node in tree.body:
        line = node.lineno + off
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring or comment string
        if isinstance(node, ast.FunctionDef):
            name, kind = node.name, "def"
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, kind = node.targets[0].id, "value"
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, kind = node.target.id, "value"
        else:
            problems.append((line, "a check holds only imports, keys (name = value, def name) and "
                                   "helpers named _...; found " + type(node).__name__))
            continue
        if name.startswith("_"):
            continue
        if name not in KEYS:
            close = [k for k in KEYS if k in name or name in k][:2]
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            problems.append((line, f"unknown key {name!r}{hint} (known: {', '.join(KEYS)})"))
            continue
        want = KEYS[name][1]
        if want == "def" and kind != "def" and not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda)):
            problems.append((line, f"{name!r} must be a function (def {name}(...):)"))
        if want == "value" and kind == "def":
            problems.append((line, f"{name!r} is a value, not a function"))
        if name in seen:
            problems.append((line, f"key {name!r} is set twice (first on line {seen[name]})"))
        seen[name] = line
        if name == "budgets" and kind == "value":
            value = node.value
            if not isinstance(value, (ast.List, ast.Tuple)):
                problems.append((line, "budgets must be a list of strings, e.g. [\"bank_conflicts == 0\"]"))
                continue
            for elt in value.elts:
                if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
                    problems.append((elt.lineno + off, "each budget is a string, e.g. \"sectors_per_request <= 4\""))
                    continue
                try:
                    _, _, expr = _parse_budget(elt.value)
                except ValueError as e:
                    problems.append((elt.lineno + off, str(e)))
                    continue
                if any(isinstance(n, ast.Name) and n.id == "minimum" for n in ast.walk(expr)):
                    seen.setdefault("_uses_minimum", elt.lineno + off)
                if _BUDGET.match(elt.value).group("name") in SPREAD_NAMES:
                    seen["_spread"] = True
            if "_spread" not in seen:
                problems.append((line, "no budget bounds how the work is spread over the threads: a kernel "
                                       "whose one thread (or lane 0 of each warp) does everything in a loop "
                                       "would pass; add one on " + ", ".join(SPREAD_NAMES)
                                       + ", e.g. \"global_requests <= 2 * reference\""))
        if name == "sizes" and kind == "value":
            if not isinstance(node.value, (ast.List, ast.Tuple)) or not node.value.elts:
                problems.append((line, "sizes must be a non-empty list, e.g. [1, 31, 33, 1000, 4096]"))
            else:
                try:
                    ast.literal_eval(node.value)
                except ValueError:
                    problems.append((line, "sizes must be literal ints or tuples of ints"))
    for key, (required, _) in KEYS.items():
        if required and key not in seen:
            problems.append((first_line, f"the check has no {key!r} (required keys: "
                                         f"{', '.join(k for k, (r, _) in KEYS.items() if r)})"))
    if "_uses_minimum" in seen and "minimum" not in seen:
        problems.append((seen["_uses_minimum"], "a budget uses 'minimum' but the check defines no minimum(n)"))
    return problems


def validate(ex: Exercise) -> list:
    """Every problem of an exercise as (line in its file, message), without running anything."""
    problems = list(ex.problems)
    if ex.check is not None:
        problems += validate_check(ex.check, ex.check_line)
    for what, code, line in (("starter", ex.starter, ex.starter_line), ("solution", ex.solution, ex.solution_line)):
        if code is None:
            continue
        try:
            compile(code, f"<{what}>", "exec")
        except SyntaxError as e:
            problems.append(((e.lineno or 1) + line - 1, f"the {what} does not parse: {e.msg}"))
    return sorted(problems)


def validate_book(exercises: list) -> list:
    """Problems of every exercise plus duplicate ids, as (path, line, message)."""
    out, ids = [], {}
    for ex in exercises:
        out += [(ex.path, line, msg) for line, msg in validate(ex)]
        if ex.id in ids:
            out.append((ex.path, ex.line, f"exercise id #{ex.id} is used twice (first at {ids[ex.id]})"))
        ids.setdefault(ex.id, ex.where())
    return out


# ------------------------------------------------------------------ the spec, loaded

@dataclass
class Spec:
    """A check, run: its keys with defaults filled in."""
    id: str
    sizes: list
    inputs: Callable
    launch_shape: Callable
    expected: Callable
    budgets: list           # (text, name, op, expression ast)
    measure: Any            # the first size the budgets are measured at (the reference's counts shown)
    run: Any
    minimum: Optional[Callable]
    kernel: Optional[str]
    tolerance: float
    seed: int
    device: str
    dtype: str
    l2_bytes: Optional[int]
    max_steps: int
    time_limit: float
    measure_also: list = field(default_factory=list)   # further sizes every budget must hold at
    one_warp_blocks: Any = None                          # why a barrier kernel is checked on one-warp blocks

    @property
    def measured(self) -> list:
        """Every size the budgets are measured at: a kernel tuned to one size (coalesced only when
        ``n == 4096``) fails at the other."""
        return [self.measure] + [s for s in self.measure_also if s != self.measure]


def _size_key(n) -> int:
    return math.prod(n) if isinstance(n, (tuple, list)) else int(n)


def load_spec(source: str, exercise_id: str = "ex", first_line: int = 1, path: str = "<check>") -> Spec:
    """Run a check block's definitions (after validating them) -> Spec. ExerciseError on a problem."""
    problems = validate_check(source, first_line)
    if problems:
        line, msg = problems[0]
        raise ExerciseError(msg, line, path)
    ns: dict = {"Array": warpsim.Array, "math": math, "__name__": "__check__"}
    code = compile("\n" * (first_line - 1) + source, path, "exec")
    try:
        exec(code, ns)
    except Exception as e:
        raise ExerciseError(f"the check raised {type(e).__name__}: {e}", _tb_line(e, path), path) from e
    d = dict(DEFAULTS)
    d.update({k: ns[k] for k in KEYS if k in ns})
    sizes = [tuple(s) if isinstance(s, list) else s for s in d["sizes"]]
    measure = d.get("measure", max(sizes, key=_size_key))
    if measure not in sizes:
        raise ExerciseError(f"measure = {measure!r} is not one of sizes", first_line, path)
    also = d.get("measure_also")
    if also is None:
        # The budgets hold at two sizes, not one: by default also the largest other size above one
        # element (a kernel written for the measured size alone fails there).
        rest = [s for s in sizes if s != measure and _size_key(s) > 1]
        also = [max(rest, key=_size_key)] if rest else []
    also = [tuple(s) if isinstance(s, list) else s for s in also]
    for s in also:
        if s not in sizes:
            raise ExerciseError(f"measure_also holds {s!r}, which is not one of sizes", first_line, path)
    run = d.get("run")
    if run is None:
        big = [s for s in sizes if _size_key(s) > 1]
        run = min(big, key=_size_key) if big else sizes[0]
    budgets = [(t, *_parse_budget(t)) for t in d["budgets"]]
    seed = d.get("seed")
    if seed is None:
        seed = zlib.crc32(exercise_id.encode())
    return Spec(exercise_id, sizes, d["inputs"], d["launch_shape"], d["expected"], budgets, measure, run,
                d.get("minimum"), d["kernel"], float(d["tolerance"]), int(seed), d["device"], d["dtype"],
                d["l2_bytes"], int(d["max_steps"]), float(d["time_limit"]), also, d.get("one_warp_blocks"))


def kernel_name(code: Optional[str]) -> Optional[str]:
    """The kernel of a text, by its name: the one ``@cuda.jit`` function that is not a device
    function; else the first function no other one calls (None if the text does not parse)."""
    try:
        tree = ast.parse(code or "")
    except SyntaxError:
        return None
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]

    def jit(d):
        f = d.func if isinstance(d, ast.Call) else d
        device = isinstance(d, ast.Call) and any(
            k.arg == "device" and isinstance(k.value, ast.Constant) and k.value.value for k in d.keywords)
        return (isinstance(f, ast.Attribute) and f.attr == "jit" or isinstance(f, ast.Name) and f.id == "jit"), device

    kernels = [f.name for f in funcs if any(jit(d)[0] and not jit(d)[1] for d in f.decorator_list)]
    if len(kernels) == 1:
        return kernels[0]
    called = {c.func.id for f in funcs for c in ast.walk(f) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
    roots = [f.name for f in funcs if f.name not in called]
    return (kernels or roots or [f.name for f in funcs] or [None])[0]


def spec_of(ex: Exercise) -> Spec:
    """The exercise's check, loaded; the kernel checked is the function of the reference's name
    (a text holding a correct draft under another name and a wrong kernel checks the kernel)."""
    if ex.check is None:
        raise ExerciseError(f"exercise #{ex.id} has no check", ex.line, ex.path)
    spec = load_spec(ex.check, ex.id, ex.check_line, ex.path)
    if spec.kernel is None:
        spec.kernel = kernel_name(ex.solution)
    return spec


def _tb_line(e: BaseException, filename: str) -> Optional[int]:
    line, tb = None, e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


# ------------------------------------------------------------------ running a kernel

def _rng(spec: Spec, n) -> random.Random:
    return random.Random(f"{spec.seed}:{n!r}")


def _inputs(spec: Spec, n) -> tuple:
    """The launch's arguments. A list among them (Horner's coefficients) is passed as a tuple, as
    Numba passes a tuple by value: a list would be Python state every thread shares, uncounted,
    that a kernel could write or append to (and nothing would compare it afterwards)."""
    args = spec.inputs(n, _rng(spec, n))
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    return tuple(tuple(a) if isinstance(a, list) else a for a in args)


def _launch(kernel, spec: Spec, n, args):
    grid, block = spec.launch_shape(n)
    kw = {"device": spec.device, "max_steps": spec.max_steps}
    if spec.l2_bytes is not None:
        kw["l2_bytes"] = spec.l2_bytes
    return warpsim.launch(kernel, grid, block, args=args, **kw)


def _fmt_size(n) -> str:
    if isinstance(n, tuple):
        return " × ".join(f"{v:,}" for v in n)
    return f"{n:,}"


_READER = "<your kernel>"


def _reader_line(e: BaseException) -> Optional[int]:
    """The reader's line in an error's traceback (the deepest frame of their code)."""
    line, tb = None, e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == _READER:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _kernel_error(e: warpsim.KernelError, n=None) -> dict:
    # The line from the traceback when the reader's code is in it: in the browser's runtime the
    # simulator's own frames carry another file name than its __file__, and e.line named a
    # line of the simulator's (see /work/notes/sim-requests.md); the traceback is right in both.
    line = e.line
    found = _reader_line(e)
    text = str(e)
    if isinstance(e, warpsim.Race) and "race" not in e.message.lower():
        # the page shows the message alone: say what it is before which threads and lines
        text = text.replace(e.message, "a data race: " + e.message, 1)
    if found is not None and found != line:
        text = (re.sub(r"^line \d+", f"line {found}", text) if line is not None
                else f"line {found}, {text}" if e.thread is not None else f"line {found}: {text}")
        line = found
    out = {"stage": "error", "kind": type(e).__name__, "line": line, "message": text,
           "detail": e.message}
    if n is not None:
        out["size"] = _fmt_size(n)
        out["message"] = f"size {_fmt_size(n)}: {text}"
    if isinstance(e, warpsim.KernelSyntaxError) and e.line:
        out["message"] = f"line {e.line}: {e.message}"
    return out


def _crash(e: BaseException, n=None) -> dict:
    """A result for an exception that is not a KernelError, raised while compiling or running a
    reader's kernel: the simulator failed on something it should have refused with a message of
    its own. The check fails (nothing the kernel does may turn into "passed", nor reach the page
    as an internal error), naming the reader's line when the traceback has one."""
    line = _reader_line(e)
    where = f"line {line}: " if line else ""
    size = f"size {_fmt_size(n)}: " if n is not None else ""
    return {"stage": "error", "kind": type(e).__name__, "line": line, "size": _fmt_size(n) if n is not None else None,
            "message": f"{size}{where}the simulator failed on your kernel ({type(e).__name__}: {e}); it should "
                       f"have said why, so please report this kernel", "detail": str(e)}


# What a reader's kernel may raise through the simulator that ends the check as an error: any
# Exception, and SystemExit (raised by a kernel, it must not end the page's worker). Not
# KeyboardInterrupt: that is how the page stops a kernel that runs too long.
_CRASHES = (Exception, SystemExit)


def _attribute_store(code: str) -> Optional[dict]:
    """A compile result refusing a kernel that sets an attribute (``numba.float32 = ...``,
    ``A.itemsize = 0``, ``kernel.total = 0.0``), or None. Numba's kernels set elements, never
    attributes; here every attribute a kernel reaches belongs to the simulator (its arrays, its
    numba / cuda / math namespaces, the kernel's own function), and setting one changed that
    check or every later one in the page's worker: a first Check setting numba.float32 =
    numba.float16 let the next Check of the bank-conflicted complex starter pass."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None     # the simulator says why, with the line
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            target = ast.unparse(node)
            return {"stage": "compile", "kind": "KernelSyntaxError", "line": node.lineno,
                    "message": f"line {node.lineno}: {target} = ...: a kernel sets array elements "
                               f"(A[i] = x), not attributes; {target} belongs to the simulator, and "
                               f"changing it is not GPU memory (keep data in cuda.shared.array or "
                               f"cuda.local.array)", "detail": f"assignment to the attribute {target}"}
    return None


def compile_reader(code: str, spec: Spec):
    """The reader's kernel, or a result dict describing why it does not compile."""
    name = spec.kernel
    if name is not None and not re.search(rf"^\s*def\s+{re.escape(name)}\s*\(", code, re.M):
        name = None     # the reader named their kernel otherwise: the simulator picks it
    try:
        kernel = warpsim.compile_kernel(code, name, filename=_READER)
        refused = _attribute_store(code)    # after the simulator's own refusals, which come first
        return (None, refused) if refused else (kernel, None)
    except warpsim.KernelError as e:
        return None, _kernel_error(e)
    except _CRASHES as e:
        return None, _crash(e)


# What an element of an array may hold after a launch: a number of Python's own types, not a
# subclass (whose __eq__ could say anything), not a complex, a tuple or any other object a kernel
# stored (0.5 + 0j compared equal to 0.5).
_ELEMENT_TYPES = (int, float)


def _close(got, want, tol: float) -> bool:
    if isinstance(want, (tuple, list)):
        return isinstance(got, (tuple, list)) and len(got) == len(want) and all(
            _close(g, w, tol) for g, w in zip(got, want))
    if got is warpsim.POISON or type(got) not in _ELEMENT_TYPES:
        return False
    try:
        if isinstance(want, float) or isinstance(got, float):
            if math.isnan(want):
                return isinstance(got, float) and math.isnan(got)
            return abs(got - want) <= tol * max(1.0, abs(want))
        return got == want
    except (TypeError, OverflowError, ValueError):
        return False


def _show(v) -> Any:
    if v is warpsim.POISON:
        return "never written"
    if isinstance(v, float):
        return float(f"{v:.7g}") if math.isfinite(v) else str(v)
    if isinstance(v, (int, str)) or v is None:
        return v
    return repr(v)


def _index_text(arr: warpsim.Array, flat: int) -> str:
    if len(arr.shape) == 1:
        return f"{arr.name}[{flat}]"
    idx, rest = [], flat
    for s in arr.shape[::-1]:
        idx.append(rest % s)
        rest //= s
    return f"{arr.name}[{', '.join(map(str, idx[::-1]))}]"


def _compare(spec: Spec, n, report, want: dict, args=(), code: Optional[str] = None) -> Optional[dict]:
    for name, values in want.items():
        arr = report.arrays.get(name)
        if arr is None:
            return {"stage": "mismatch", "message": f"size {_fmt_size(n)}: the check expects an array {name!r}, "
                                                     f"which the launch does not have", "size": _fmt_size(n)}
        values = list(values)
        if len(values) != len(arr.data):
            raise ExerciseError(f"expected() gave {len(values)} values for {name}, which holds {len(arr.data)}")
        if arr.data == values and all(type(g) in _ELEMENT_TYPES for g in arr.data):
            # exactly equal (a copy, integer results): no element-wise pass
            continue
        for k, (g, w) in enumerate(zip(arr.data, values)):
            if not _close(g, w, spec.tolerance):
                where = _index_text(arr, k)
                got = "was never written" if g is warpsim.POISON else f"is {_show(g)}"
                line = _writer_line(report, arr, k)
                said = f" (written by line {line})" if line and g is not warpsim.POISON else ""
                if line is None and g is not warpsim.POISON:
                    # an array that held data at launch (Y of y = a x + y): nobody stored here
                    said = f": no thread wrote {where}, which still holds its launch-time value"
                if line is None:
                    # no store reached the element: name the lines that store to the array (their
                    # index misses it), or say that none does
                    stores = _store_lines(report, arr)
                    written = _text_store_lines(code, name)
                    if stores:
                        line = stores[0]
                        said += (f" (the kernel stores {name} on line{'s' if len(stores) > 1 else ''} "
                                 f"{', '.join(map(str, stores))}; no thread's index there reached {where})")
                    elif written:
                        line = written[0]
                        said += (f" (no thread ran the store{'s' if len(written) > 1 else ''} to {name} on "
                                 f"line{'s' if len(written) > 1 else ''} {', '.join(map(str, written))} at this size)")
                    else:
                        said += f" (no line of the kernel stores to {name})"
                return {"stage": "mismatch", "size": _fmt_size(n), "array": name, "index": k,
                        "element": where, "expected": _show(w), "got": _show(g), "line": line,
                        "message": f"size {_fmt_size(n)}: {where} {got}, expected {_show(w)}{said}"}
    return None


def _text_store_lines(code: Optional[str], name: str) -> list:
    """The lines of a kernel's text that assign to an element of the argument ``name``
    (``Y[i] = ...``, ``Y[i] += ...``, ``Y.vec(4)[i] = ...``), found without running it."""
    try:
        tree = ast.parse(code or "")
    except SyntaxError:
        return []
    def base(t):
        while isinstance(t, ast.Subscript):
            t = t.value
        if isinstance(t, ast.Call) and isinstance(t.func, ast.Attribute) and t.func.attr == "vec":
            t = t.func.value
        return t.id if isinstance(t, ast.Name) else None
    out = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if isinstance(e, ast.Subscript) and base(e) == name:
                    out.add(node.lineno)
    return sorted(out)


def _store_lines(report, arr) -> list:
    """The kernel lines that store to ``arr`` (any element), in order."""
    return sorted({ins.line for ins in report.record if ins.kind in ("st", "atom") and ins.array is arr
                   and ins.line is not None})


def _writer_line(report, arr, flat: int) -> Optional[int]:
    """The kernel line of the last store to ``arr[flat]`` (None if none stored there)."""
    line = None
    for ins in report.record:
        if ins.kind in ("st", "atom") and ins.array is arr and flat in ins.index:
            line = ins.line
    return line


def _finite(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def figures(report, spec: Spec, names=None) -> dict:
    """Every budget figure of a launch (or those in ``names``): the totals, the derived ones, HBM and roofline."""
    t = report.totals
    out = t.as_dict()
    out["sectors_per_request"] = t.sectors_per_request
    out["load_sectors_per_request"] = t.load_sectors / t.global_loads if t.global_loads else 0.0
    out["store_sectors_per_request"] = t.store_sectors / t.global_stores if t.global_stores else 0.0
    want = set(names) if names is not None else set(BUDGET_NAMES)
    if "max_sectors_per_request" in want:
        out["max_sectors_per_request"] = max((len(warpsim.sectors_of(i)) for i in report.record
                                              if i.space == "global"), default=0)
    if "max_bank_conflicts" in want:
        worst = 0
        for i in report.record:
            if i.space == "shared":
                c = warpsim.counts_of(i)
                worst = max(worst, c.bank_conflicts)
        out["max_bank_conflicts"] = worst
    tr = report.traffic
    roof = report.roofline(spec.device, spec.dtype)
    out.update(hbm_bytes=tr.hbm_bytes, hbm_read_bytes=tr.read_bytes, hbm_write_bytes=tr.write_bytes,
               intensity=roof.intensity, time_s=roof.time_s)
    return out


def point(report, spec: Spec) -> dict:
    """The launch on the roofline: intensity (FLOP/B), attainable FLOP/s, and the roofs."""
    return _point_dict(report.roofline(spec.device, spec.dtype), spec.dtype, spec.device)


def _point_dict(roof, dtype: str, device) -> dict:
    label = (specs.device(device) if isinstance(device, str) else device).label
    return {"device": roof.device, "label": label, "dtype": dtype, "flops": roof.flops,
            "hbm_bytes": roof.hbm_bytes, "intensity": _finite(roof.intensity), "time_s": roof.time_s,
            "flops_per_s": roof.flops / roof.time_s if roof.time_s else 0.0,
            "peak_flops": roof.peak_flops, "mem_bw": roof.mem_bw, "bound": roof.bound}


def measured_points(result: dict, spec: Spec, measured) -> list:
    """The reader's kernel (``result["point"]``) and the reference (``result["reference_point"]``)
    on each device the reader measured in this browser (``measured``: the dicts of
    ``BookDevice.devices()``, see ``calc.measured``), beside the exercise's datasheet device.

    The FLOPs and HBM bytes are the simulator's, as counted for the exercise's device (its L2
    model); only the roofs change. A device without a peak for the exercise's dtype is drawn with
    its FP32 peak, and says so (``dtype_note``). A dict that is not a plausible measurement gives
    ``{"name", "error"}`` instead of a point."""
    from . import measured as measured_mod
    out = []
    if not result.get("point") or not measured:
        return out
    for d in (measured.values() if isinstance(measured, dict) else measured):
        try:
            dev = measured_mod.device_from_dict(d)
        except (ValueError, TypeError) as e:
            out.append({"name": str((d or {}).get("name", "?")) if isinstance(d, dict) else "?", "error": str(e)})
            continue
        dtype, note = spec.dtype, None
        if (dtype, False) not in dev.peaks:
            note = f"no measured {dtype.upper()} peak; drawn with its FP32 one"
            dtype = "fp32"
        entry = {"name": dev.name, "label": dev.label, "dtype_note": note}
        for key in ("point", "reference_point"):
            p = result.get(key)
            entry[key] = (_point_dict(place(p["flops"], p["hbm_bytes"], dev, dtype), dtype, dev)
                          if p else None)
        out.append(entry)
    return out


def _eval_limit(expr, minimum, reference):
    env = {"minimum": minimum, "reference": reference}

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            v = env[node.id]
            if v is None:
                raise ExerciseError(f"the budget uses {node.id!r}, which is not known here")
            return v
        if isinstance(node, ast.UnaryOp):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        a, b = ev(node.left), ev(node.right)
        return {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                ast.Div: operator.truediv}[type(node.op)](a, b)
    return ev(expr)


def measure_code(code: str, spec: Spec) -> dict:
    """Launch ``code`` at each measured size: its figures, per-line table and roofline point at the
    first (the reference's side of a check; no comparison of outputs), and its figures at the
    others (``also``: size text -> figures), for the budgets that compare with the reference."""
    kernel, err = compile_reader(code, spec)
    if err:
        raise ExerciseError(f"the code does not compile: {err['message']}")
    def launch(n):
        try:
            return _launch(kernel, spec, n, _inputs(spec, n))
        except warpsim.KernelError as e:
            # the reference fails (verify says so with its line); a check of another kernel that
            # needs its figures must not end in the simulator's exception
            raise ExerciseError(f"the reference fails at size {_fmt_size(n)}: {e}") from e
    report = launch(spec.measure)
    also = {}
    for n in spec.measured[1:]:
        r = launch(n)
        also[_fmt_size(n)] = {k: _finite(v) for k, v in figures(r, spec).items()}
    return {"figures": {k: _finite(v) for k, v in figures(report, spec).items()},
            "lines": report.table(), "point": point(report, spec),
            "minimum": spec.minimum(spec.measure) if spec.minimum else None, "also": also}


def _reference_figures(reference: Optional[dict], n, spec: Spec) -> Optional[dict]:
    if not reference:
        return None
    if n == spec.measure:
        return reference["figures"]
    return (reference.get("also") or {}).get(_fmt_size(n))


def _budgets_at(report, spec: Spec, n, reference: Optional[dict]) -> tuple:
    """Every budget at size ``n``: (rows of text, name, op, measured, limit, ok and size; the figures)."""
    figs = figures(report, spec, {b[1] for b in spec.budgets})
    minimum = spec.minimum(n) if spec.minimum else None
    ref = _reference_figures(reference, n, spec)
    rows = []
    for text, name, op, expr in spec.budgets:
        limit = _eval_limit(expr, minimum, ref.get(name) if ref else None)
        value = figs[name]
        ok = _OPS[op](value, limit) if value is not None else False
        rows.append({"budget": text, "name": name, "op": op, "size": _fmt_size(n),
                     "measured": _finite(_show(value) if isinstance(value, float) else value),
                     "limit": _finite(_show(limit) if isinstance(limit, float) else limit), "ok": ok})
    return rows, figs


def _overflow_note(overflow) -> dict:
    """What to say when an exponential left FP32's range before a wrong result (the simulator's
    exp is inf past 88.72, as expf: calc.sim.arith.EXP_LIMIT)."""
    line, thread, block, x = overflow
    where = f"thread ({thread.x}, {thread.y}, {thread.z}) of block ({block.x}, {block.y}, {block.z})"
    return {"line": line, "overflow": True,
            "hint": f"exp overflowed FP32 on line {line} ({where}: exp({_num(x)}) is more than FP32's largest "
                    f"value, 3.4e38, so it is inf): subtract the row's maximum before the exponential"}


def _changed_input(spec: Spec, n, report, before: dict) -> Optional[dict]:
    """The first element of an input (an array the check does not read as an output, which held
    data at launch) that the kernel changed."""
    for name, old in before.items():
        arr = report.arrays.get(name)
        if arr is None or arr.data == old:
            continue
        k = next(k for k, (g, w) in enumerate(zip(arr.data, old)) if g is not w and g != w)
        where = _index_text(arr, k)
        line = _writer_line(report, arr, k)
        by = f" (written by line {line})" if line else ""
        return {"stage": "mismatch", "size": _fmt_size(n), "array": name, "index": k, "element": where,
                "expected": _show(old[k]), "got": _show(arr.data[k]), "line": line,
                "message": f"size {_fmt_size(n)}: your kernel changed its input {name}: {where} was "
                           f"{_show(old[k])} at launch and is {_show(arr.data[k])} now{by}. Only the "
                           f"outputs may change; an input must hold its launch-time contents afterwards."}
    return None


def check_code(code: str, spec: Spec, reference: Optional[dict] = None, ref_code: Optional[str] = None) -> dict:
    """Check a reader's kernel: correctness at every size, then the budgets at the measure size.

    ``reference``: the reference's ``measure_code`` result (the page has it from the build);
    else it is measured from ``ref_code`` when a budget needs it. Returns plain data:
    ``passed`` (bool), ``stage`` ("compile", "error", "mismatch", "budget", "passed"), ``message``,
    ``line`` (the reader's line, when known), ``sizes`` (each size tried, ok and ms), ``budgets``
    (text, name, measured, limit, ok), ``lines`` (per-line counts at the measure size), ``point``
    and ``reference_point`` (the roofline), ``ms`` (the check's time)."""
    t0 = time.perf_counter()
    result: dict = {"passed": False, "stage": "compile", "message": "", "line": None, "sizes": [],
                    "budgets": [], "lines": [], "point": None,
                    "reference_point": reference.get("point") if reference else None,
                    "measure": _fmt_size(spec.measure)}
    kernel, err = compile_reader(code, spec)
    if err:
        result.update(err)
        result["stage"] = "compile"
        result["ms"] = (time.perf_counter() - t0) * 1e3
        return result
    reports = {}
    for n in spec.sizes:
        s0 = time.perf_counter()
        args = _inputs(spec, n)
        want = spec.expected(n, *args)
        # Inputs: every array the check does not read back that held data at launch.
        before = {a.name: list(a.data) for a in args if isinstance(a, warpsim.Array)
                  and a.name not in want and any(v is not warpsim.POISON for v in a.data)}
        try:
            report = _launch(kernel, spec, n, args)
        except warpsim.KernelError as e:
            result.update(_kernel_error(e, n))
            result["sizes"].append({"size": _fmt_size(n), "ok": False, "ms": (time.perf_counter() - s0) * 1e3})
            break
        except _CRASHES as e:
            result.update(_crash(e, n))
            result["sizes"].append({"size": _fmt_size(n), "ok": False, "ms": (time.perf_counter() - s0) * 1e3})
            break
        bad = _compare(spec, n, report, want, args, code) or _changed_input(spec, n, report, before)
        if bad and getattr(report, "overflow", None):
            bad.update(_overflow_note(report.overflow))
        result["sizes"].append({"size": _fmt_size(n), "ok": bad is None, "ms": (time.perf_counter() - s0) * 1e3})
        if bad:
            if bad.get("hint"):
                bad["message"] = f"{bad['message']}; {bad['hint']}"
            result.update(bad)
            break
        if n in spec.measured:
            reports[n] = report
    else:
        measured = reports[spec.measure]
        needs_ref = any("reference" in ast.dump(b[3]) for b in spec.budgets)
        if needs_ref and ref_code is not None and (reference is None or any(
                _reference_figures(reference, n, spec) is None for n in spec.measured)):
            reference = measure_code(ref_code, spec)
            result["reference_point"] = reference["point"]
        failed = []
        for n in spec.measured:
            if needs_ref and reference is not None and _reference_figures(reference, n, spec) is None:
                raise ExerciseError(f"the reference has no figures at size {_fmt_size(n)}, which the budgets are measured at")
            rows, figs = _budgets_at(reports[n], spec, n, reference)
            if n == spec.measure:
                result["budgets"] = rows
                result["totals"] = {k: _finite(v) for k, v in figs.items()}
            else:
                result.setdefault("budgets_also", []).extend(rows)
            failed += [(n, r) for r in rows if not r["ok"]]
        result["lines"] = measured.table()
        result["point"] = point(measured, spec)
        if failed:
            n, first = failed[0]
            result["stage"] = "budget"
            result["message"] = "correct at every size, but " + "; ".join(
                f"{r['name']} is {_num(r['measured'])}"
                + (f" at size {r['size']}" if len(spec.measured) > 1 else "")
                + f", the budget is {r['op']} {_num(r['limit'])}{_by_how_much(r)}"
                for n, r in failed if n == failed[0][0])
            worst = _worst_line(reports[n], first["name"])
            if worst:
                result["line"] = worst
                result["message"] += f" (most of it on line {worst})"
        else:
            result["passed"] = True
            result["stage"] = "passed"
            at = " and ".join(_fmt_size(n) for n in spec.measured)
            result["message"] = (f"correct at all {len(spec.sizes)} sizes"
                                 + (f", and within every budget at size{'s' if len(spec.measured) > 1 else ''} {at}"
                                    if spec.budgets else ""))
    result["ms"] = (time.perf_counter() - t0) * 1e3
    return result


_LINE_FIELD = {"sectors_per_request": "sectors", "load_sectors_per_request": "load_sectors",
               "store_sectors_per_request": "store_sectors", "max_sectors_per_request": "sectors",
               "bank_conflicts": "bank_conflicts", "max_bank_conflicts": "bank_conflicts",
               "hbm_bytes": "sectors", "hbm_read_bytes": "load_sectors", "hbm_write_bytes": "store_sectors",
               "bytes_moved": "sectors", "efficiency": "sectors", "time_s": "sectors", "intensity": "sectors"}


def _worst_line(report, name: str) -> Optional[int]:
    """The kernel line contributing most to a failed budget's figure (None if it has no per-line share)."""
    fld = _LINE_FIELD.get(name, name)
    best, line = 0, None
    for ln, c in report.per_line.items():
        v = c.as_dict().get(fld)
        if isinstance(v, (int, float)) and v > best:
            best, line = v, ln
    return line


def _by_how_much(row: dict) -> str:
    """How far a failed budget's figure is from its limit: ": 55,296 over, 4.43 times the limit"
    for an upper bound, ": 3 short" for a lower one, nothing for == or a zero limit."""
    m, lim, op = row["measured"], row["limit"], row["op"]
    if not isinstance(m, (int, float)) or not isinstance(lim, (int, float)):
        return ""
    if op in ("<=", "<") and m > lim:
        return f": {_num(m - lim)} over" + (f", {m / lim:.3g} times the limit" if lim > 0 else "")
    if op in (">=", ">") and m < lim:
        return f": {_num(lim - m)} short"
    return ""


def _num(v) -> str:
    if isinstance(v, float):
        return f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def run_code(code: str, spec: Spec, n=None) -> dict:
    """The Run button: launch at the ``run`` size and print the output arrays (or the error)."""
    n = spec.run if n is None else n
    t0 = time.perf_counter()
    kernel, err = compile_reader(code, spec)
    if err:
        err["ms"] = (time.perf_counter() - t0) * 1e3
        return {"ok": False, **err}
    args = _inputs(spec, n)
    want = spec.expected(n, *args)
    try:
        report = _launch(kernel, spec, n, args)
    except warpsim.KernelError as e:
        return {"ok": False, **_kernel_error(e, n), "ms": (time.perf_counter() - t0) * 1e3}
    except _CRASHES as e:
        return {"ok": False, **_crash(e, n), "ms": (time.perf_counter() - t0) * 1e3}
    outputs = {name: [_show(v) for v in report.arrays[name].data[:64]] for name in want if name in report.arrays}
    lengths = {name: len(report.arrays[name].data) for name in outputs}
    grid, block = report.grid, report.block
    return {"ok": True, "size": _fmt_size(n), "outputs": outputs, "lengths": lengths,
            "launch": f"<<<({grid.x}, {grid.y}, {grid.z}), ({block.x}, {block.y}, {block.z})>>>",
            "lines": report.table(), "point": point(report, spec),
            "message": f"ran at size {_fmt_size(n)}: " + ", ".join(
                f"{k} = [{', '.join(map(str, v[:8]))}{', ...' if lengths[k] > 8 else ''}]" for k, v in outputs.items()),
            "ms": (time.perf_counter() - t0) * 1e3}


# ------------------------------------------------------------------ the build's honesty

def verify(ex: Exercise) -> list:
    """What the build requires of an exercise: its reference passes its own check, its starter
    fails it. Returns (line, message) problems (empty: fine)."""
    problems = validate(ex)
    if problems:
        return problems
    try:
        spec = spec_of(ex)
    except ExerciseError as e:
        return [(e.line or ex.check_line, e.message)]
    out = coverage(ex, spec)
    # the reference's own check: the Solutions appendix prints it, so it is kept (see _kept) once
    ref = _kept("reference", ex, lambda: check_code(ex.solution, spec, ref_code=ex.solution),
                keep=lambda r: bool(r.get("passed")))
    if not ref["passed"]:
        rl = ref.get("line")
        line = ex.solution_line + rl - 1 if rl else ex.solution_line
        out.append((line, f"the reference solution of #{ex.id} fails its own check: {ref['message']}"))
    if not ref["passed"]:
        return out      # the starter's budgets compare with the reference's figures, which fail
    starter = check_code(ex.starter, spec, ref_code=ex.solution)
    if starter["passed"]:
        out.append((ex.starter_line, f"the starter of #{ex.id} passes the check: the exercise would teach "
                                     f"nothing (make it wrong, or slower than a budget allows)"))
    return out


def _dims(v) -> tuple:
    v = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    return tuple(int(x) for x in v) + (1,) * (3 - len(v))


def coverage(ex: Exercise, spec: Spec) -> list:
    """What a check must try, whatever the kernel (line, message) problems: a size that is not a
    whole number of blocks, so a kernel without bounds guards fails; and, where the reference
    synchronises, a block of more than one warp, so a missing or misplaced barrier is a race the
    simulator sees between warps. A kernel written for one warp a block says so in the check's
    ``one_warp_blocks`` (a sentence): the race detector compares every pair of threads of a block,
    its own warp's lanes included (tests/calc/test_exercise_checks.py drops each barrier of those
    references and requires a rejection), so a missing barrier is caught there too."""
    out = []
    shapes = [(n, _dims(spec.launch_shape(n)[1])) for n in spec.sizes]
    def ragged(n, block):
        threads = math.prod(block)
        if _size_key(n) % threads:
            return True
        return isinstance(n, tuple) and any(c % b for c, b in zip(reversed(n), block) if b > 1)
    if not any(ragged(n, b) for n, b in shapes):
        out.append((ex.check_line, f"#{ex.id}: every size of the check is a whole number of blocks "
                                   f"({', '.join(_fmt_size(n) for n, _ in shapes)}), so a kernel without "
                                   f"bounds guards would pass; add a size that leaves a block partly empty"))
    why = spec.one_warp_blocks
    if why is not None and not (isinstance(why, str) and why.strip()):
        out.append((ex.check_line, f"#{ex.id}: one_warp_blocks must say why the kernel is written for "
                                   f"one warp a block (a sentence), not {why!r}"))
    if "syncthreads" in (ex.solution or "") and not why and not any(math.prod(b) > 32 for _, b in shapes):
        out.append((ex.check_line, f"#{ex.id}: the reference synchronises, but no launch of the check has "
                                   f"more than one warp per block, where a missing barrier is a race "
                                   f"between warps; add such a launch, or say in one_warp_blocks why the "
                                   f"kernel is written for one warp a block"))
    return out


# ------------------------------------------------------------------ kept results (the build's)
#
# The build runs every reference and starter through the simulator twice over (the Solutions
# appendix, then the exercises' filter once per chapter: ``page``), and again for every page it
# converts after a word of its prose changed. Where ``BOOK_EXERCISES_CACHE`` names a folder (the
# book's build sets it), what ``verify`` found and what ``page`` prints for an exercise are kept
# there, keyed on the exercise's parts (not where it is in its file) and on every module of calc:
# the same exercise and the same simulator give the same answer. Without it (the browser, Quarto,
# a test) nothing is kept.

CACHE_ENV = "BOOK_EXERCISES_CACHE"
_CALC_DIGEST: list = []


def _calc_digest() -> str:
    import hashlib
    import os
    if not _CALC_DIGEST:
        h = hashlib.sha256()
        here = os.path.dirname(os.path.abspath(__file__))
        for folder, dirs, files in os.walk(here):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(f for f in files if f.endswith(".py")):
                with open(os.path.join(folder, name), "rb") as f:
                    h.update(os.path.relpath(os.path.join(folder, name), here).encode() + b"\0" + f.read() + b"\0")
        _CALC_DIGEST.append(h.hexdigest())
    return _CALC_DIGEST[0]


def _kept(kind: str, ex: Exercise, compute, keep=lambda value: True):
    """``compute()``, or what it gave for this exercise before (see above); kept when ``keep(value)``."""
    import hashlib
    import json
    import os
    folder = os.environ.get(CACHE_ENV)
    if not folder:
        return compute()
    parts = [kind, _calc_digest(), ex.id, ex.path, ex.title, ex.statement, ex.starter, ex.hints, ex.solution,
             ex.explanation, ex.check]
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    path = os.path.join(folder, key + ".json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        pass
    value = compute()
    if keep(value):
        os.makedirs(folder, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(value, f, default=str)
        os.replace(tmp, path)
    return value


def verify_kept(ex: Exercise) -> list:
    """``verify(ex)``, kept (see above) when it found nothing: a problem is found again, at its line."""
    return _kept("verify", ex, lambda: verify(ex), keep=lambda problems: not problems)


def page_data(ex: Exercise) -> dict:
    """What the page needs for one exercise (JSON-ready): ids, the check's source and its first
    line, the starter, the reference's measured figures and roofline point, the time limit."""
    spec = spec_of(ex)
    ref = measure_code(ex.solution, spec)
    return {"id": ex.id, "title": ex.title, "check": ex.check, "starter": ex.starter,
            "time_limit": spec.time_limit, "reference": ref, "measure": _fmt_size(spec.measure),
            "run": _fmt_size(spec.run), "budgets": [b[0] for b in spec.budgets], "kernel": spec.kernel}


# ------------------------------------------------------------------ the Solutions appendix

_CHAPTER_ENTRY = re.compile(r"^\s*-\s+(?P<path>chapters/[\w./-]+\.qmd)\s*$")


def book_chapters(root=".") -> list:
    """The chapters listed in the book's ``_quarto.yml``, in book order (their ``- chapters/x.qmd``
    lines; standard library only, as the browser's calc has no YAML reader)."""
    import os
    with open(os.path.join(root, "_quarto.yml"), encoding="utf-8") as f:
        return [m.group("path") for ln in f if (m := _CHAPTER_ENTRY.match(ln))]


_SHOWN = (("global_loads", "global loads (requests)"), ("global_stores", "global stores (requests)"),
          ("sectors_per_request", "sectors per request"), ("shared_requests", "shared-memory requests"),
          ("bank_conflicts", "bank conflicts (extra wavefronts)"), ("divergent", "divergent warp instructions"),
          ("flops", "FLOPs"), ("hbm_bytes", "HBM bytes"), ("intensity", "FLOP per HBM byte"))


def _cell(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return _num(v)


def _range_text(arr) -> str:
    vals = [v for v in arr.data if v is not warpsim.POISON]
    if not vals:
        return f"`{arr.name}` ({arr.dtype}, {arr.n:,} elements, written by the kernel)"
    lo, hi = min(vals), max(vals)
    return f"`{arr.name}` ({arr.dtype}, values from {_num(lo)} to {_num(hi)})"


def tries(spec: Spec) -> str:
    """What "passed" means for one exercise, in words: the sizes and launches Check tries, the
    inputs' types and value ranges (read from the inputs it makes), the tolerance, and the sizes
    the budgets are measured at. For the Solutions appendix."""
    launches = []
    for n in spec.sizes:
        g, b = spec.launch_shape(n)
        gd, bd = _dims(g), _dims(b)
        launches.append(f"{_fmt_size(n)} (<<<{gd[0] * gd[1] * gd[2]:,} × {bd[0] * bd[1] * bd[2]:,}>>>)")
    big = max(spec.sizes, key=_size_key)
    arrays = [a for a in _inputs(spec, big) if isinstance(a, warpsim.Array)]
    parts = [f"Check runs the kernel at {len(spec.sizes)} sizes, each with its launch of blocks × threads: "
             + ", ".join(launches) + "."]
    parts.append(f"At size {_fmt_size(big)} the arrays are " + "; ".join(_range_text(a) for a in arrays)
                 + f". Every output element must match within a relative {spec.tolerance:g}, every input "
                 f"must hold its launch-time contents afterwards, and any error the simulator raises "
                 f"(out of bounds, an uninitialised read, a race) fails the check even if the kernel "
                 f"catches it.")
    if spec.budgets:
        at = " and ".join(_fmt_size(n) for n in spec.measured)
        parts.append(f"The budgets hold at size{'s' if len(spec.measured) > 1 else ''} {at}: "
                     + ", ".join(f"`{b[0]}`" for b in spec.budgets) + ".")
    return " ".join(parts)


def solutions_markdown(root=".", exercises: Optional[list] = None) -> str:
    """The Solutions appendix: per exercise, its reference kernel, the budgets it meets with the
    measured figures, and its counts at the measured size, all from the simulator now. Raises
    ExerciseError (file:line) when an exercise fails the build's rule (``verify``)."""
    import os
    if exercises is None:
        exercises = read_book(root, book_chapters(root))
    out = []
    for ex in exercises:
        problems = verify_kept(ex)
        if problems:
            line, msg = problems[0]
            raise ExerciseError(msg, line, ex.path)
        spec = spec_of(ex)
        r = _kept("reference", ex, lambda: check_code(ex.solution, spec, ref_code=ex.solution),
                  keep=lambda r: bool(r.get("passed")))
        page = os.path.splitext(ex.path)[0] + ".qmd"
        title = re.sub(r"^Exercise:\s*", "", ex.title)
        title = title[:1].upper() + title[1:]
        out.append(f"## {title} {{#sec-sol-{ex.id[3:]}}}\n")
        out.append(f"[The exercise](../{page}#{ex.id}). Its reference kernel:\n")
        out.append("```{.python}\n" + ex.solution.rstrip() + "\n```\n")
        out.append("What its check tries. " + tries(spec) + "\n")
        if r["budgets"]:
            rows = ["| Budget | Measured | Limit | Met |", "|:--|--:|--:|:--|"]
            for b in r["budgets"]:
                rows.append(f"| `{b['budget']}` | {_cell(b['measured'])} | {_cell(b['limit'])} | {_cell(b['ok'])} |")
            out.append(f"The budgets, at size {_fmt_size(spec.measure)}:\n\n" + "\n".join(rows) + "\n")
        t = r["totals"]
        rows = ["| Count | Value |", "|:--|--:|"]
        rows += [f"| {label} | {_cell(t.get(name))} |" for name, label in _SHOWN
                 if t.get(name) not in (None, 0) or name in ("hbm_bytes", "global_loads")]
        if spec.minimum:
            rows.append(f"| least possible (the check's minimum) | {_cell(spec.minimum(spec.measure))} |")
        out.append(f"Its counts at size {_fmt_size(spec.measure)}, from `calc.sim` "
                   f"(correct at all {len(spec.sizes)} sizes of the check):\n\n" + "\n".join(rows) + "\n")
    return "\n".join(out)


def progress_html(root=".") -> str:
    """The index page's "Your exercises" block: one line per chapter with exercises (its title,
    a link, "k of n solved" filled in by assets/js/exercise-progress.js from the reader's own
    browser storage), and Export, Import and Reset buttons. HTML only; nothing leaves the browser."""
    import html
    import os
    from .problems import read_problems
    rows = []
    for path in book_chapters(root):
        reads(os.path.join(root, path), "exercises", "headings")
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        exs = read_exercises(text, path)
        probs = read_problems(text, path)
        if not exs and not probs:
            continue
        title = next((m.group("t") for ln in text.split("\n") if (m := re.match(r"^#\s+(?P<t>.+?)\s*(\{[^}]*\})?\s*$", ln))), path)
        ids = " ".join(ex.id for ex in exs)
        pids = " ".join(p.id for p in probs)
        href = os.path.splitext(path)[0] + ".html"
        counts = []
        if exs:
            counts.append(f'<span class="exercise-progress-count">{len(exs)} '
                          f'{"exercise" if len(exs) == 1 else "exercises"}</span>')
        if probs:
            counts.append(f'<span class="problem-progress-count">{len(probs)} '
                          f'{"problem" if len(probs) == 1 else "problems"}</span>')
        rows.append(f'<li data-exercises="{html.escape(ids)}" data-problems="{html.escape(pids)}">'
                    f'<a href="{html.escape(href)}">{html.escape(title)}</a>: ' + "; ".join(counts) + '</li>')
    return ('<section class="exercise-progress" aria-labelledby="exercise-progress-title">\n'
            '<link rel="stylesheet" href="assets/css/exercises.css">\n'
            '<p id="exercise-progress-title"><strong>Your exercises</strong> (kept in this browser only)</p>\n'
            '<ul>\n' + "\n".join(rows) + '\n</ul>\n'
            '<div class="exercise-progress-actions">'
            '<button type="button" class="exercise-export">Export my progress</button>'
            '<button type="button" class="exercise-import-open">Import progress</button>'
            '<input type="file" class="exercise-import" accept="application/json,.json" hidden '
            'aria-label="A progress file exported from this book">'
            '<button type="button" class="exercise-reset-all">Reset all exercises</button></div>\n'
            '<p class="exercise-progress-status" role="status" aria-live="polite"></p>\n'
            '<script defer src="assets/js/exercise-progress.js"></script>\n</section>')


# ------------------------------------------------------------------ the page's worker

_SPECS: dict = {}


def _cached_spec(ex: dict) -> Spec:
    key = (ex["id"], ex["check"], ex.get("kernel"))
    spec = _SPECS.get(key)
    if spec is None:
        spec = _SPECS[key] = load_spec(ex["check"], ex["id"], 1, f"<check of {ex['id']}>")
        if spec.kernel is None:
            spec.kernel = ex.get("kernel")
    return spec


def handle(request: str) -> str:
    """The browser's entry point (one call per Run or Check, JSON in and out; and ``"place"``,
    with ``"result"``: an earlier check's ``point`` and ``reference_point``, when the reader's
    measured device changes after a check).

    ``{"op": "check" | "run" | "gpuscript" | "warm", "code": the reader's text, "exercise": the page data of
    ``page_data``}``, and for a check ``"measured"``: the reader's measured devices (the dicts of
    ``BookDevice.devices()``, may be absent) -> ``run_code``'s result, or ``check_code``'s with
    ``measured_points`` (``measured_points``'s list) added, or ``{"stage": "internal",
    "message": ...}`` when the exercise itself is broken (the build should have caught it).
    ``"gpuscript"`` ("Run on an NVIDIA GPU"), with ``"result"``: the page's last Check or Run,
    whose figures the script prints -> ``calc.gpuscript.for_page``'s ``{"filename", "script"}``."""
    import gc
    import json
    req = json.loads(request)
    ex = req["exercise"]
    # No cyclic collection during a Check: a launch makes tens of thousands of records, and the
    # collector's passes over them took up to half of a Check in Pyodide. The page's worker
    # collects after posting the answer, while the reader reads it.
    enabled = gc.isenabled()
    gc.disable()
    try:
        spec = _cached_spec(ex)
        if req["op"] == "warm":
            # the page warms the worker for an exercise on screen: its check is compiled now
            # (_cached_spec), with the simulator's imports, and the code sent (the starter) is Run
            # once at the check's small size, so the reader's first Check takes no first-time path
            out = {"ok": True, "warm": ex["id"]}
            if req.get("code"):
                out["ok"] = bool(run_code(req["code"], spec).get("ok"))
        elif req["op"] == "run":
            out = run_code(req["code"], spec)
        elif req["op"] == "gpuscript":
            # "Run on an NVIDIA GPU": the reader's kernel, the check's data, the ncu command (calc.gpuscript)
            from . import gpuscript
            out = gpuscript.for_page(req["code"], spec, ex["id"], req.get("result"), req.get("title", ""))
        elif req["op"] == "place":
            # a device measured (or deleted) after the check: the check's points on it, no new launch
            out = {"measured_points": measured_points(req["result"], spec, req.get("measured"))}
        else:
            out = check_code(req["code"], spec, reference=ex.get("reference"))
            out["measured_points"] = measured_points(out, spec, req.get("measured"))
    except ExerciseError as e:
        out = {"passed": False, "ok": False, "stage": "internal", "message": str(e), "line": None}
    finally:
        if enabled:
            gc.enable()
    return json.dumps(out, default=str, allow_nan=False)


def _selftest() -> None:
    """What the page does, once, small: the browser runtime's build (widgets/prep_runtime.mjs) runs
    this so that every standard-library module an exercise needs is in the shipped archive."""
    import json
    text = ('::: {.exercise #ex-selftest}\nCopy.\n\n```{.python .starter}\nfrom numba import cuda\n\n'
            '@cuda.jit\ndef k(A, B, n):\n    pass\n```\n\n'
            '::: {.hint}\nIndex.\n:::\n\n::: {.solution}\n```{.python}\nfrom numba import cuda\n\n@cuda.jit\n'
            'def k(A, B, n):\n    i = cuda.grid(1)\n    if i < n:\n        B[i] = A[i]\n```\n:::\n\n'
            '```{.python .check}\nsizes = [1, 33]\n\ndef inputs(n, rng):\n'
            '    return (Array("A", [rng.random() for _ in range(n)]), Array("B", n), n)\n\n'
            'def launch_shape(n):\n    return ((n + 31) // 32,), 32\n\n'
            'def expected(n, A, B, _n):\n    return {"B": list(A.data)}\n\n'
            'budgets = ["sectors_per_request <= 4", "global_loads <= reference"]\n```\n:::\n')
    ex = read_exercises(text, "selftest.qmd")[0]
    assert not validate(ex), validate(ex)
    data = {"id": ex.id, "check": ex.check, "reference": measure_code(ex.solution, spec_of(ex))}
    good = json.loads(handle(json.dumps({"op": "check", "code": ex.solution, "exercise": data})))
    bad = json.loads(handle(json.dumps({"op": "check", "code": ex.starter, "exercise": data})))
    ran = json.loads(handle(json.dumps({"op": "run", "code": ex.solution, "exercise": data})))
    assert good["passed"] and not bad["passed"] and ran["ok"], (good, bad, ran)


# ------------------------------------------------------------------ command line

def _main(argv=None) -> int:
    """``python3 -m calc.exercises page <chapter.qmd>``: verify the chapter's exercises (the
    reference passes, the starter fails; problems as ``file:line: message`` on stderr, exit 1)
    and print their page data as JSON. ``python3 -m calc.exercises verify [chapter ...]``: the
    same checks for the book (default: every chapter), no data printed."""
    import json
    import sys
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("page", "verify"):
        print(_main.__doc__, file=sys.stderr)
        return 2
    cmd, files = args[0], [a for a in args[1:] if not a.startswith("--")]
    if cmd == "page" and len(files) != 1:
        print("usage: python3 -m calc.exercises page <chapter.qmd>", file=sys.stderr)
        return 2
    exercises = read_book(".", files or None)
    problems = [(ex.path, line, msg) for ex in exercises for line, msg in verify_kept(ex)]
    seen: dict = {}
    for ex in exercises:
        if ex.id in seen:
            problems.append((ex.path, ex.line, f"exercise id #{ex.id} is used twice (first at {seen[ex.id]})"))
        seen.setdefault(ex.id, ex.where())
    if problems and "--errors-as-json" in args:
        # for filters/exercise.lua: Pandoc's pipe does not pass stderr on, so the problems come as data
        print(json.dumps({"errors": [[p, ln, m] for p, ln, m in problems]}))
        return 0
    for path, line, msg in problems:
        print(f"{path}:{line}: {msg}", file=sys.stderr)
    if problems:
        return 1
    if cmd == "page":
        print(json.dumps({ex.id: _kept("page", ex, lambda: page_data(ex)) for ex in exercises}, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
