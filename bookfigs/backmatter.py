"""The book's back matter, as Markdown for ``#| output: asis`` cells: the glossary, the
chapter map and the hardware reference.

The glossary and the chapter map read every chapter's front matter (``terms:`` and
``prerequisites:``) from the files listed in ``_quarto.yml``. The hardware reference
prints ``calc.specs`` and computes nothing but ridge points.
"""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import types
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from calc import dtypes, fmt, specs

ROOT = Path(__file__).resolve().parents[1]
HEADING = re.compile(r"^#\s+(?P<title>.+?)\s*(?:\{(?P<attrs>[^}]*)\})?\s*$")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


@dataclass
class Chapter:
    source: str                 # e.g. chapters/roofline.qmd
    title: str
    number: str                 # "2", "A", or "" when unnumbered
    label: str | None           # the title's {#sec-...} label, if any
    appendix: bool
    front: dict = field(default_factory=dict)

    @property
    def terms(self) -> list[dict]:
        return list(self.front.get("terms") or [])

    @property
    def prerequisites(self) -> list[str]:
        return [str(p) for p in (self.front.get("prerequisites") or [])]


def slug(term: str) -> str:
    """The glossary anchor of a term (filters/glossary.lua makes the same): ``term-<slug>``."""
    return re.sub(r"[^0-9a-z]+", "-", term.lower()).strip("-")


def declare_inputs(paths: list[Path]) -> None:
    """Tell the build's execution cache that this page reads ``paths``.

    The cache (bookbuild/cache.py, like Quarto's freeze) runs a page again when a project
    module it imported has changed; listing the files as modules extends that to them."""
    for path in paths:
        name = "bookfigs._inputs." + re.sub(r"\W", "_", path.as_posix())
        mod = types.ModuleType(name)
        mod.__file__ = str(path.resolve())
        sys.modules[name] = mod


def _front_and_heading(text: str) -> tuple[dict, re.Match | None]:
    front: dict = {}
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                front = yaml.safe_load("\n".join(lines[1:i])) or {}
                start = i + 1
                break
    fence = None
    for line in lines[start:]:
        m = FENCE.match(line)
        if m:
            fence = None if fence and m.group(1).startswith(fence) else (fence or m.group(1))
            continue
        if fence is None and (h := HEADING.match(line)):
            return front, h
    return front, None


def book_chapters(root: Path = ROOT) -> list[Chapter]:
    """Every page of the book in order, with its title, number and front matter."""
    config = yaml.safe_load((root / "_quarto.yml").read_text(encoding="utf-8"))
    book = config.get("book") or {}

    def flat(entries, appendix):
        for e in entries or []:
            if isinstance(e, dict) and "chapters" in e:
                yield from flat(e["chapters"], appendix)
            elif isinstance(e, dict) and "href" in e:
                yield e["href"], appendix
            else:
                yield str(e), appendix

    pages = [*flat(book.get("chapters"), False), *flat(book.get("appendices"), True)]
    declare_inputs([root / "_quarto.yml"])
    out, numbered, lettered = [], 0, 0
    for source, appendix in pages:
        # only the front matter and the title are read: the build keys the page on those
        # (calc.exercises.reads says how)
        sys.audit("book.reads", str(root / source), "headings")
        front, head = _front_and_heading((root / source).read_text(encoding="utf-8"))
        attrs = (head.group("attrs") or "") if head else ""
        title = str(front.get("title") or (head.group("title") if head else Path(source).stem))
        label = next((a[1:] for a in attrs.split() if a.startswith("#")), None)
        number = ""
        if "unnumbered" not in attrs and "unlisted" not in attrs:
            if appendix:
                lettered += 1
                number = chr(ord("A") + lettered - 1)
            else:
                numbered += 1
                number = str(numbered)
        out.append(Chapter(source, title, number, label, appendix, front))
    return out


def _link(ch: Chapter, from_dir: str) -> str:
    """Markdown that names and links ``ch`` from a page in ``from_dir``."""
    if ch.label and ch.number:
        return f"@{ch.label}, *{ch.title}*"
    rel = Path(ch.source).as_posix()
    up = "../" * len(Path(from_dir).parts) if from_dir else ""
    return f"[{ch.title}]({up}{rel})"


# ------------------------------------------------------------------------------ glossary


def glossary_terms(chapters: list[Chapter]) -> list[dict]:
    """Every declared term with its chapter, sorted; ValueError on a term defined twice."""
    seen: dict[str, dict] = {}
    for ch in chapters:
        for i, t in enumerate(ch.terms):
            if not isinstance(t, dict) or "term" not in t or "def" not in t:
                raise ValueError(f"{ch.source}: entry {i + 1} of `terms:` needs `term:` and `def:`")
            key = " ".join(str(t["term"]).lower().split())
            if key in seen:
                raise ValueError(f"term {t['term']!r} is defined twice: in {seen[key]['chapter'].source} "
                                 f"and in {ch.source}")
            seen[key] = {"term": str(t["term"]), "def": " ".join(str(t["def"]).split()), "chapter": ch}
    return sorted(seen.values(), key=lambda e: (e["term"].lower(), e["term"]))


def glossary_markdown(root: Path = ROOT, page_dir: str = "appendices") -> str:
    entries = glossary_terms(book_chapters(root))
    if not entries:
        return "*No chapter declares any terms yet.*\n"
    out, letter = [], None
    for e in entries:
        first = e["term"][0].upper()
        first = first if first.isalpha() else "#"
        if first != letter:
            letter = first
            out.append(f"## {'Symbols' if first == '#' else first} {{.unnumbered}}\n")
        # a term's own entry outranks a page that only uses the term in search (Pagefind's weights: 1 by default)
        out.append(f"::: {{#term-{slug(e['term'])} .glossary-entry data-pagefind-weight=\"10\"}}\n{e['term']}\n:   {e['def']}\n\n"
                   f"    [Introduced in {_link(e['chapter'], page_dir)}.]{{.glossary-where}}\n:::\n")
    return "\n".join(out)


# --------------------------------------------------------------------------- chapter map


def map_chapters(chapters: list[Chapter]) -> list[Chapter]:
    """The chapters the map shows: the numbered ones outside the appendices."""
    return [c for c in chapters if c.number and not c.appendix]


def prerequisite_edges(chapters: list[Chapter]) -> list[tuple[Chapter, Chapter]]:
    """(prerequisite, chapter) pairs; ValueError naming a prerequisite that is not in the book."""
    by_source = {c.source: c for c in chapters}
    edges = []
    for ch in map_chapters(chapters):
        for p in ch.prerequisites:
            if p not in by_source:
                raise ValueError(f"{ch.source}: prerequisite {p!r} is not a chapter listed in _quarto.yml")
            edges.append((by_source[p], ch))
    return edges


def _dot_text(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def chapter_map_dot(chapters: list[Chapter], page_dir: str = "appendices") -> str:
    up = "../" * len(Path(page_dir).parts)
    lines = ['digraph chapters {', '  rankdir=TB; bgcolor="transparent"; nodesep=0.35; ranksep=0.45;',
             '  node [shape=box, style="rounded,filled", fillcolor="#eef3fa", color="#1f5fa8", '
             'fontname="Helvetica", fontsize=11, margin="0.15,0.07"];',
             '  edge [color="#5d6166", arrowsize=0.7];']
    for c in map_chapters(chapters):
        url = up + str(Path(c.source).with_suffix(".html").as_posix())
        label = "\\n".join(_dot_text(line) for line in textwrap.wrap(f"{c.number}  {c.title}", 26))
        lines.append(f'  "{c.source}" [label="{label}", URL="{url}", '
                     f'tooltip="{_dot_text(c.title)}", target="_top"];')
    for a, b in prerequisite_edges(chapters):
        lines.append(f'  "{a.source}" -> "{b.source}";')
    lines.append("}")
    return "\n".join(lines)


def chapter_map_svg(root: Path = ROOT, page_dir: str = "appendices") -> str:
    """The map laid out by Graphviz's ``dot`` as SVG (nodes link to the chapters), drawing
    only the direct dependencies: an arrow implied by a longer path is left out."""
    dot = chapter_map_dot(book_chapters(root), page_dir)
    # tred drops the arrows a longer path already implies (1 -> 3 when 1 -> 2 -> 3)
    reduced = subprocess.run(["tred"], input=dot, capture_output=True, text=True, check=True).stdout
    proc = subprocess.run(["dot", "-Tsvg"], input=reduced, capture_output=True, text=True, check=True)
    svg = proc.stdout
    return svg[svg.index("<svg"):]  # drop the XML prolog and doctype


def chapter_map_alt(root: Path = ROOT) -> str:
    chapters = book_chapters(root)
    parts = []
    for c in map_chapters(chapters):
        pre = [p for p, ch in prerequisite_edges(chapters) if ch is c]
        need = "; ".join(f"{p.number} {p.title}" for p in pre) if pre else "nothing"
        parts.append(f"Chapter {c.number}, {c.title}, builds on {need}.")
    return "Graph of the chapters and the chapters each builds on. " + " ".join(parts)


def prerequisites_table(root: Path = ROOT, page_dir: str = "appendices") -> str:
    chapters = book_chapters(root)
    edges = prerequisite_edges(chapters)
    rows = ["| Chapter | Read first |", "|:--|:--|"]
    for c in map_chapters(chapters):
        pre = [p for p, ch in edges if ch is c]
        rows.append(f"| {_link(c, page_dir)} | {'; '.join(_link(p, page_dir) for p in pre) or '—'} |")
    return "\n".join(rows) + "\n"


# ------------------------------------------------------------------------ hardware reference

_LABELS = {
    "mem_bw": "Memory bandwidth", "mem_capacity": "Memory capacity", "mem_type": "Memory type",
    "mem_reported": "Memory reported by the driver (nvidia-smi)",
    "sm_count": "Streaming multiprocessors (SMs)", "l2_bytes": "L2 cache",
    "smem_per_sm_bytes": "Shared memory per SM (max)", "l1_smem_per_sm_bytes": "L1 + shared memory per SM",
    "register_file_per_sm_bytes": "Register file per SM", "tdp_watts": "Board power (TDP)",
    "compute_capability": "CUDA compute capability", "cuda_cores": "CUDA cores", "tensor_cores": "Tensor Cores",
    "gpu_max_clock_hz": "GPU max clock", "module_ai_tops_sparse_int8": "Module AI throughput (INT8, 2:4 sparse)",
    "module_power_watts": "Module power", "tensorcores_per_chip": "TensorCores per chip",
    "mxus_per_tensorcore": "MXUs per TensorCore", "mxu_dim": "MXU size",
    "nvlink_bw_total": "NVLink bandwidth (both directions)", "compute_units": "Compute units",
    "infinity_fabric_links": "Infinity Fabric links", "infinity_fabric_link_bw": "Infinity Fabric bandwidth per link",
}
_FAMILIES = [("NVIDIA A100", "a100"), ("NVIDIA H100 and H200", "h1|h2"), ("NVIDIA B200", "b200"),
             ("AMD Instinct", "mi3"), ("NVIDIA L4 and T4", "l4|t4"),
             ("NVIDIA Jetson Orin", "jetson"), ("Google TPUs", "tpu")]


def exact(x: float, most: int = 6) -> str:
    """``x`` to as many significant figures as it has (up to ``most``): 494.7 -> '494.7'."""
    if isinstance(x, int):
        return fmt.num(x)
    r = fmt.round_sig(float(x), most)
    digits = f"{abs(r):.6e}".split("e")[0].replace(".", "").rstrip("0")
    return fmt.num(r, max(1, len(digits)))


def _value(row: dict) -> str:
    v, unit = row["value"], row["unit"]
    if isinstance(v, str):
        return v
    if row.get("computed") and isinstance(v, (int, float)):
        # a computed figure: no more digits than its inputs carry (half of 989 is 494.5; two FLOP
        # per FMA × 1,024 cores × 918 MHz is 1.88 TFLOP/s, not 1.88006)
        exact_ = lambda x: exact(x, 4)
    else:
        exact_ = exact
    return _with_unit(v, unit, exact_)


def _with_unit(v, unit: str, exact) -> str:
    if isinstance(v, tuple):
        return " × ".join(fmt.num(x) for x in v) + f" {unit}"
    if unit == "B/s":
        return f"{exact(v / 1e9)} GB/s"
    if unit in ("FLOP/s", "OP/s"):
        return f"{exact(v / 1e12)} T{unit}"
    if unit == "B":
        return f"{exact(v / 2**20)} MiB" if v >= 2**20 else f"{exact(v / 1024)} KiB"
    if unit == "Hz":
        return f"{exact(v / 1e6)} MHz"
    if unit == "GB":                          # memory capacity: the vendors' GB is 2^30 bytes (JEDEC)
        return f"{exact(v)} GiB"
    return f"{exact(v)} {unit}".strip()


class _Sources:
    """Letters for the documents one table draws on, and the notes that expand them."""

    def __init__(self):
        self.letters: dict[str, str] = {}
        self.rows: list[dict] = []

    def letter(self, row: dict) -> str:
        if row["source"] not in self.letters:
            self.letters[row["source"]] = "abcdefghijklmnopqrstuvwxyz"[len(self.letters)]
            self.rows.append(row)
        return self.letters[row["source"]]

    def markdown(self) -> str:
        items = []
        for row in self.rows:
            cite = f" [@{row['key']}]" if row["key"] else ""
            items.append(f"- **{self.letters[row['source']]}**: {row['source']}{cite}")
        return "::: {.hw-sources}\nSources:\n\n" + "\n".join(items) + "\n:::\n"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def device_markdown(dev: specs.Device) -> str:
    rows = dev.spec_table()
    src = _Sources()
    peak = {(r["quantity"].split()[1], "sparse" in r["quantity"]): r for r in rows if r["quantity"].startswith("peak ")}
    out = []
    if peak:
        out.append("::: {.hw-table}")
        out.append("| Format | Dense | 2:4 sparse | Ridge point, dense | Ridge point, 2:4 sparse | Source |")
        out.append("|:--|--:|--:|--:|--:|:--|")
        for dtype in dict.fromkeys(d for d, _ in dev.peak_keys()):
            cells, letters = [], []
            per = dtypes.op_unit(dtype) + "/B"
            for sparse in (False, True):
                r = peak.get((dtype, sparse))
                cells.append((_value(r) + (" †" if r["computed"] else "")) if r else "—")
                if r:
                    letters.append(src.letter(r))
            for sparse in (False, True):
                r = peak.get((dtype, sparse))
                cells.append(f"{fmt.num(dev.ridge_point(dtype, sparse))} {per}" if r and dev.has("mem_bw") else "—")
            out.append(f"| {dtype.upper()} | " + " | ".join(cells) + f" | {', '.join(dict.fromkeys(letters))} |")
        out.append(":::\n")
        notes = []
        if any(r["computed"] for r in peak.values()):
            notes.append("† Not printed in the source: " + next(r["note"] for r in peak.values() if r["computed"]) + ".")
        sparse_only = {r["note"] for r in peak.values() if r["note"] and not r["computed"]}
        notes += [f"Note: {n}." for n in sorted(sparse_only)]
        if notes:
            out.append(" ".join(notes) + "\n")
    out.append("::: {.hw-table}")
    out.append("| Quantity | Value | Source | Note |")
    out.append("|:--|--:|:--|:--|")
    for r in rows:
        name = r["quantity"]
        if name.startswith("peak ") or name.startswith("max ") or name == "registers per SM":
            continue
        label = _LABELS.get(name, name.replace("_", " "))
        note = r["note"]
        if r["unit"] == "GB":
            note = "; ".join(filter(None, [note, f"printed as {exact(r['value'])} GB"]))
        out.append(f"| {label} | {_cell(_value(r))} | {src.letter(r)} | {_cell(note)} |")
    out.append(":::\n")
    out.append(src.markdown() + "\n")
    return "\n".join(out)


def devices_summary_markdown() -> str:
    rows = ["| Device | Memory bandwidth | Memory | Peak, dense 16-bit | Ridge point, dense 16-bit |",
            "|:--|--:|--:|--:|--:|"]
    for dev in specs.products():
        dtype = "fp16" if ("fp16", False) in dev.peak_keys() else "bf16" if ("bf16", False) in dev.peak_keys() else None
        mem = f"{exact(dev.mem_capacity_bytes / 2**30)} GiB {dev.value('mem_type').split(' ')[0]}"
        mark = " †" if dtype and (dtype, False) not in dev.peaks else ""
        peak = f"{exact(dev.peak_flops(dtype) / 1e12)} TFLOP/s{mark}" if dtype else "—"
        ridge = f"{fmt.num(dev.ridge_point(dtype))} FLOP/B" if dtype else "—"
        rows.append(f"| {dev.label} | {exact(dev.mem_bw / 1e9)} GB/s | {mem} | {peak} | {ridge} |")
    return "\n".join(rows) + "\n"


def hardware_markdown() -> str:
    """One section per device family, one tab per device."""
    listed = {d.name for _, p in _FAMILIES for d in specs.products() if re.match(p, d.name)}
    groups = [(family, [d for d in specs.products() if re.match(pattern, d.name)]) for family, pattern in _FAMILIES]
    groups.append(("Other devices", [d for d in specs.products() if d.name not in listed]))
    out = []
    for family, devs in groups:
        if not devs:
            continue
        out.append(f"## {family} {{.unnumbered}}\n\n::: {{.panel-tabset}}\n")
        for d in devs:
            out.append(f"### {d.label.removeprefix('NVIDIA ')}\n\n{device_markdown(d)}")
        out.append(":::\n")
    return "\n".join(out)


_LIMIT_LABELS = ["max threads per SM", "max warps per SM", "max blocks per SM", "registers per SM",
                 "max registers per thread", "max shared memory per SM", "max shared memory per block (opt-in)",
                 "max threads per block", "max block dimensions (x, y, z)", "max grid dimensions (x, y, z)"]


def limits_markdown() -> str:
    """Per-SM and per-launch limits, one column per compute capability the devices use."""
    ccs = sorted({d.cc for d in specs.products() if d.cc})
    tables = {cc: {r["quantity"]: r for r in _limit_rows(cc)} for cc in ccs}
    users = {cc: ", ".join(d.label.replace("NVIDIA ", "") for d in specs.products() if d.cc == cc) for cc in ccs}
    head = "| Limit | " + " | ".join(f"cc {cc}" for cc in ccs) + " |"
    rows = [head, "|:--|" + "--:|" * len(ccs), "| Devices | " + " | ".join(users[cc] for cc in ccs) + " |"]
    for q in _LIMIT_LABELS:
        unit = tables[ccs[0]][q]["unit"]
        if unit == "B":
            cells = [_value(tables[cc][q]) for cc in ccs]
        else:  # counts: the unit goes in the row's label
            cells = [" × ".join(fmt.num(x) for x in v) if isinstance(v, tuple) else fmt.num(v)
                     for v in (tables[cc][q]["value"] for cc in ccs)]
        label = q[0].upper() + q[1:] + ("" if unit == "B" else f" ({unit})")
        rows.append(f"| {label} | " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(rows) + "\n"


def limits_source_markdown() -> str:
    return f"Source: {specs.CUDA_GUIDE.cite()} [@{specs.CUDA_GUIDE.key}].\n"


def _limit_rows(cc: str) -> list[dict]:
    dev = next(d for d in specs.products() if d.cc == cc)
    return [r for r in dev.spec_table() if r["quantity"] in _LIMIT_LABELS]
