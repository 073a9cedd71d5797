"""Every hardware figure in the prose comes from calc: a number typed next to a unit of
throughput, bandwidth, size, power, energy or time is an error.

Scans chapters/*.qmd and index.qmd (prose, captions in Markdown, and the glossary
definitions in the front matter) after blanking code cells, code blocks and inline code
such as `{python} fmt.si(bw, "B/s")`, which is where numbers belong."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

UNITS = [
    # throughput
    r"[kMGTPE]?FLOP/s", r"[kMGTPE]?FLOPS", r"[kMGTPE]?FLOP/byte", r"FLOP/B", r"[kMGTPE]?OP/s", r"TOPS",
    r"teraflops", r"gigaflops", r"petaflops",
    # bandwidth and sizes
    r"[kKMGTP]i?B/s", r"[kKMGTP]B/s", r"GBps", r"[kKMGTP]iB", r"[kKMGTP]B",
    # power, energy, time, frequency
    r"[kmM]?W", r"[pnfµu]J", r"[pnµu]s", r"ms", r"[kMG]Hz", r"cycles", r"clock cycles", r"clocks",
]
NUMBER = r"(?<![\w.,/])\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(NUMBER + r"(?:[ \u00a0\u2009\u202f]|-)?(?:" + "|".join(UNITS) + r")(?![A-Za-z0-9])")

# A product's name may carry its memory size ("A100 SXM4 40GB", "Jetson Orin NX 16GB"): a name, not a claim.
PRODUCTS = r"(?:A100|H100|H200|L4|T4)"
PRODUCT_NAME = re.compile(r"(?:" + PRODUCTS + r"|SXM\d?|PCIe|NX)\s+\d+GB(?![A-Za-z/])"  # A100 SXM4 40GB
                          r"|(?<![\w.,])\d+\s?GB\s+" + PRODUCTS + r"\b")            # the 40 GB A100
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
COMMENT = re.compile(r"<!--.*?-->", re.S)


def prose(text: str) -> str:
    """``text`` with code blocks, cells, inline code and comments blanked; lines are kept so
    that positions still give line numbers. Front matter stays: its definitions are prose."""
    text = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    out, fence = [], None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            out.append("")
            continue
        if fence is not None:
            if line.strip().startswith(fence) and set(line.strip()) <= {fence[0]}:
                fence = None
            out.append("")
            continue
        out.append(INLINE_CODE.sub(lambda m: " " * len(m.group()), line))
    return "\n".join(out)


def typed_figures(text: str) -> list[tuple[int, str]]:
    """(line, match) for every hand-typed hardware figure in ``text``."""
    found = []
    for n, line in enumerate(prose(text).split("\n"), 1):
        line = PRODUCT_NAME.sub(lambda m: " " * len(m.group()), line)
        found += [(n, m.group()) for m in FIGURE.finditer(line)]
    return found


# --------------------------------------------------------------------------- the regex

@pytest.mark.parametrize("sentence,figure", [
    ("The H100 SXM peaks at 989 TFLOPS of dense BF16.", "989 TFLOPS"),
    ("HBM3 delivers 2.0 TB/s to the chip.", "2.0 TB/s"),
    ("about 3,352 GB/s of bandwidth", "3,352 GB/s"),
    ("a peak of 312 TFLOP/s", "312 TFLOP/s"),
    ("ridge at 295 FLOP/byte", "295 FLOP/byte"),
    ("it has 80 GB of memory", "80 GB"),
    ("a card with 40GB on board", "40GB"),
    ("a 50 MiB L2", "50 MiB"),
    ("228 KiB of shared memory", "228 KiB"),
    ("the card draws 700 W", "700 W"),
    ("a DRAM read costs 640 pJ", "640 pJ"),
    ("latency of 500 ns", "500 ns"),
    ("about 290 cycles later", "290 cycles"),
    ("a 1.41 GHz clock", "1.41 GHz"),
    ("19.5\u00a0TFLOPS with a no-break space", "19.5\u00a0TFLOPS"),
    ("(1979 TOPS, sparse)", "1979 TOPS"),
])
def test_regex_catches_typed_figures(sentence, figure):
    assert [m for _, m in typed_figures(sentence)] == [figure]


@pytest.mark.parametrize("sentence", [
    "The H100 peaks at `{python} fmt.si(peak, 'FLOP/s')` of dense BF16.",
    "HBM delivers `{python} fmt.num(bw / 1e12)` TB/s to the chip.",
    "An H100 or an A100 is a GPU; a warp has 32 threads.",
    "Thirty-two lanes issue 4-byte loads in 32-byte sectors.",
    "FLOP/s is a rate; GB/s is a bandwidth; we write W for watts.",
    "See @sec-roofline and @fig-roofline-2 for 3 reasons.",
    "Use `x = 80 GB` in code spans freely.",
    "<!-- TODO: 989 TFLOPS -->",
    "32 Warps and 4 Windows",
    "the A100 SXM4 40GB and the Jetson Orin NX 16GB are product names",
    "against the 40 GB A100 the factor is smaller",
])
def test_regex_ignores_computed_and_non_figures(sentence):
    assert typed_figures(sentence) == []


def test_code_cells_and_blocks_are_not_prose():
    text = "Prose.\n\n```{python}\npeak = 989e12  # 989 TFLOPS\n```\n\n```cuda\n// 2 TB/s\n```\nMore prose.\n"
    assert typed_figures(text) == []


def test_line_numbers_point_at_the_sentence():
    text = "---\ntitle: x\n---\n\nline five\nthen 2.0 TB/s here\n"
    assert typed_figures(text) == [(6, "2.0 TB/s")]


# ------------------------------------------------------------------------ the chapters

SOURCES = sorted((ROOT / "chapters").glob("*.qmd")) + [ROOT / "index.qmd"]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_chapter_types_no_hardware_figure(path):
    found = typed_figures(path.read_text(encoding="utf-8"))
    where = "\n".join(f"  {path.relative_to(ROOT)}:{n}: {m!r}" for n, m in found)
    assert not found, ("hardware figures typed by hand (compute them from calc.specs in a cell and "
                       f"show them with `{{python}} fmt...`):\n{where}")
