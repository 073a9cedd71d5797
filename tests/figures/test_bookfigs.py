"""The figure modules the chapters draw with (bookfigs/*.py), one test of what each draws: the data
on the axes is calc's, the labels say what it is, and the text is legible where the page shows it.

Legibility: the build shows a static figure at the width where its smallest text is 11 CSS px
(bookbuild.html.reader.figure_width); that width must fit the text column and the margin column
of a wide screen (palette.css: 42rem + 15rem, plus the 1rem gap book.css leaves), or the figure
scrolls sideways on every screen. bookfigs/backmatter.py draws no matplotlib figure: its
chapter map and tables are tested on the built pages (tests/book/test_backmatter.py).

In the PDF a figure is drawn at its own size, or shrunk to the text column when wider: there its
text prints at 7 pt at least, mathtext's exponents (70% of the tick labels' 9 pt) aside."""
from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from bookbuild.html import reader as reader_html  # noqa: E402
from bookfigs import attention as fig_attention  # noqa: E402
from bookfigs import gpu as fig_gpu  # noqa: E402
from bookfigs import intro as fig_intro  # noqa: E402
from bookfigs import serving as fig_serving  # noqa: E402
from bookfigs import tiling as fig_tiling  # noqa: E402
from calc import attention, cuda, energy, llm, occupancy, roofline, specs, systolic, tiling  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WIDEST_PX = (42 + 15 + 1) * 16          # the text column, the margin column and the gap between
A4_WIDTH_CM = 21.0
PRINT_MIN_PT = 7.0


def pdf_text_width_pt() -> float:
    """The PDF's text column: A4 less the side margins, both from _quarto.yml's `format: typst:`,
    which our template and Quarto's partials read alike."""
    import yaml
    typst = yaml.safe_load((ROOT / "_quarto.yml").read_text())["format"]["typst"]
    assert typst["papersize"] == "a4"
    margin_cm = float(re.fullmatch(r"([\d.]+)cm", str(typst["margin"]["x"])).group(1))
    return (A4_WIDTH_CM - 2 * margin_cm) / 2.54 * 72
GIB = 2**30


@pytest.fixture(autouse=True)
def book_style():
    """The chapters' matplotlibrc (the build runs the cells from the project root), and no figure
    left open between tests."""
    with matplotlib.rc_context(fname=str(ROOT / "matplotlibrc")):
        yield
    plt.close("all")


def svg_of(fig) -> str:
    out = io.StringIO()
    fig.savefig(out, format="svg")
    return out.getvalue()


def assert_legible(fig) -> None:
    svg = svg_of(fig)
    sizes = [float(s) for s in re.findall(r"font-size:\s*([\d.]+)px", svg)]
    assert sizes, "the figure's text is SVG text with sizes (svg.fonttype: none)"
    shown, per_px = reader_html.figure_width(svg)
    assert shown * per_px >= 11 - 1e-6, "the smallest text, at the width the page shows it"
    assert shown <= WIDEST_PX, f"shown {shown} px wide for 11 px text: wider than {WIDEST_PX} px"
    # matplotlib writes the SVG's size in pt and its text in user units of 1/72 inch (= pt)
    width_pt = float(re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg).group(1))
    scale = min(1.0, pdf_text_width_pt() / width_pt)
    ticks = plt.rcParams["font.size"]
    printed = min(s for s in sizes if abs(s - 0.7 * ticks) > 1e-6) * scale
    assert printed >= PRINT_MIN_PT - 0.05, \
        f"its smallest text prints at {printed:.1f} pt in the PDF ({width_pt:.0f} pt wide, shrunk ×{scale:.2f})"


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


# ------------------------------------------------------------------------------ intro.py

def test_intro_energy_bars_are_calcs_energies_in_pj():
    ops, accesses = [("FP32 add", "fp32_add"), ("FP32 multiply", "fp32_mult")], [("DRAM read", "dram_high")]
    fig = fig_intro.energy_bars(ops, accesses)
    ax = fig.axes[0]
    widths = [p.get_width() for p in ax.patches if p.get_width() > 0 and p.get_height() == pytest.approx(0.65)]
    want = [energy.op_energy_j(o) * 1e12 for _, o in ops] + [energy.access_energy_j(m, 32) * 1e12 for _, m in accesses]
    assert widths == pytest.approx(want)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["FP32 add", "FP32 multiply", "DRAM read"]
    assert "pJ" in ax.get_xlabel() and ax.get_xscale() == "log"
    assert_legible(fig)


def test_intro_toy_roofline_is_min_of_peak_and_bandwidth():
    peak, bw = 8e9, 2e9                       # the ridge at 4 FLOP/B
    fig = fig_intro.toy_roofline(peak, bw, [(1, "memory-bound", (0, 8)), (16, "compute-bound", (0, 8))])
    ax = fig.axes[0]
    roof = ax.lines[0]
    for x, y in zip(roof.get_xdata(), roof.get_ydata()):
        assert y == pytest.approx(min(peak, x * bw))
    points = [(ln.get_xdata()[0], ln.get_ydata()[0]) for ln in ax.lines if ln.get_marker() == "o"]
    assert points == [(1, 2e9), (16, 8e9)]
    assert "ridge point = 4.0 FLOP/B" in texts(fig)
    assert "intensity" in ax.get_xlabel().lower() and "FLOP/s" in ax.get_ylabel()
    assert_legible(fig)


def test_intro_matmul_time_never_beats_arithmetic_at_peak():
    h100 = specs.device("h100-sxm")
    sizes = [256, 1024, 4096]
    fig = fig_intro.matmul_time_vs_n(h100, sizes)
    ax = fig.axes[0]
    by = {ln.get_label(): list(ln.get_ydata()) for ln in ax.lines}
    compute = [roofline.compute_time(2 * n**3, h100.peak_flops("fp32")) for n in sizes]
    assert by["arithmetic alone at peak"] == pytest.approx(compute)
    for name in ("no reuse (naive loops)", "16×16 tiles", "each operand moved once"):
        assert all(t >= c for t, c in zip(by[name], compute)), name
    assert_legible(fig)


# -------------------------------------------------------------------------------- gpu.py

def test_gpu_occupancy_curves_are_calcs_occupancy():
    regs = list(range(16, 256))
    fig = fig_gpu.occupancy_curves("8.0", [128, 256, 768, 1024], regs, ["8.0", "9.0"], list(range(0, 229)), 256, 32)
    left, right = fig.axes
    line = next(ln for ln in left.lines if ln.get_label() == "1024 threads/block")
    for r, occ in zip(regs, line.get_ydata()):
        try:
            want = occupancy.occupancy("8.0", 1024, r, 0).occupancy
        except ValueError:
            want = 0.0
        assert occ == want, r
    assert line.get_ydata()[regs.index(32)] == 1.0 and line.get_ydata()[regs.index(255)] == 0.0
    assert [ln.get_label() for ln in right.lines] == ["cc 8.0", "cc 9.0"]
    assert "Registers" in left.get_xlabel() and "KiB" in right.get_xlabel()
    assert_legible(fig)


def test_gpu_bank_conflict_bars_are_the_gcd_with_32_banks():
    strides = [1, 2, 3, 4, 8, 16, 32, 33]
    fig = fig_gpu.bank_conflict_bars(strides)
    ax = fig.axes[0]
    assert [p.get_height() for p in ax.patches] == [1, 2, 1, 4, 8, 16, 32, 1]    # gcd(stride, 32), by hand
    assert [p.get_height() for p in ax.patches] == [cuda.bank_conflicts(s) for s in strides]
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(s) for s in strides]
    assert_legible(fig)


def test_gpu_coalescing_rows_are_labelled():
    fig = fig_gpu.coalescing_patterns([("stride 1, 4 B", 1, 4, 0), ("stride 2, 4 B", 2, 4, 0)], 512)
    assert {"stride 1, 4 B", "stride 2, 4 B"} <= set(texts(fig)) | {t.get_text() for t in fig.axes[0].get_yticklabels()}
    assert_legible(fig)


# ----------------------------------------------------------------------------- tiling.py

def test_tiling_fringe_utilisation_is_useful_over_launched():
    sizes = list(range(1, 101))
    fig = fig_tiling.fringe_utilisation(sizes, [16, 32])
    ax = fig.axes[0]
    line16 = ax.lines[0]
    assert line16.get_label() == "16 × 16 tiles"
    assert line16.get_ydata()[sizes.index(17) ] == pytest.approx(17**2 / 32**2)    # 2 × 2 tiles of 16 for n = 17
    assert line16.get_ydata()[sizes.index(32)] == 1.0
    assert list(line16.get_ydata()) == [tiling.tile_count(n, n, 16).utilisation for n in sizes]
    assert_legible(fig)


def test_tiling_systolic_utilisation_and_ladder():
    ms = [2**k for k in range(10)]
    fig = fig_tiling.systolic_utilisation(ms, 256, 256, 128, 128)
    hidden, exposed = fig.axes[0].lines
    assert hidden.get_label().startswith("weight loads hidden") and exposed.get_label() == "weight loads exposed"
    assert list(hidden.get_ydata()) == [systolic.utilisation(m, 256, 256, 128, 128, include_weight_load=False) for m in ms]
    assert list(exposed.get_ydata()) == [systolic.utilisation(m, 256, 256, 128, 128, include_weight_load=True) for m in ms]
    assert all(e < h <= 1 for e, h in zip(exposed.get_ydata(), hidden.get_ydata()))   # exposed loads cost cycles
    assert_legible(fig)
    h100 = specs.device("h100-sxm")
    fig = fig_tiling.roofline_ladder(h100.peak_flops("fp32"), h100.mem_bw, "H100 SXM, FP32", [("naive", 0.25), ("tiled", 8.0)])
    ax = fig.axes[0]
    dots = [(ln.get_xdata()[0], ln.get_ydata()[0]) for ln in ax.lines if ln.get_marker() == "o"]
    assert dots == [(0.25, 0.25 * h100.mem_bw), (8.0, 8.0 * h100.mem_bw)]     # both below the 20 FLOP/B ridge
    assert [t.split("\n")[0] for t in texts(fig) if "\n" in t] == ["naive", "tiled"]
    assert_legible(fig)


# ---------------------------------------------------------------------------- serving.py

def test_serving_memory_bars_stack_weights_cache_and_activations():
    l8, cap = llm.model("llama3-8b"), specs.device("h100-sxm").mem_capacity_bytes
    rows = [("8B, 8 sequences", llm.memory_budget(l8, cap, 8192, 8)), ("8B, 96", llm.memory_budget(l8, cap, 8192, 96))]
    fig = fig_serving.memory_bars(rows, cap, "H100 SXM5: 80 GiB")
    ax = fig.axes[0]
    ends = {}
    for p in ax.patches:
        ends[round(p.get_y() + p.get_height() / 2)] = max(ends.get(round(p.get_y() + p.get_height() / 2), 0),
                                                          p.get_x() + p.get_width())
    assert ends[1] == pytest.approx(rows[0][1].total_bytes / GIB) and ends[0] == pytest.approx(rows[1][1].total_bytes / GIB)
    words = " ".join(texts(fig))
    assert ": fits" in words and "does not fit" in words and "80 GiB" in words
    assert ax.get_xlabel() == "Memory (GiB)"
    assert_legible(fig)


def test_serving_bytes_per_step_and_decode_roofline():
    l8, h100 = llm.model("llama3-8b"), specs.device("h100-sxm")
    batches = [1, 8, 64]
    w = llm.step_weight_bytes(l8, "bf16")
    kv = [llm.kv_cache_bytes(l8, 4096, b, "bf16") for b in batches]
    steps = [llm.total(llm.decode_step(l8, b, 4096)).intensity for b in batches]
    ridge = h100.ridge_point("bf16")
    fig = fig_serving.bytes_per_step(batches, w, kv, steps, ridge, "H100 ridge")
    a1, a2 = fig.axes
    assert list(a2.lines[0].get_ydata()) == steps and a2.lines[1].get_ydata()[0] == ridge
    assert "GiB" in a1.get_ylabel() and "H100 ridge" in texts(fig)
    assert_legible(fig)
    ops = llm.decode_step(l8, 1, 4096)
    fig = fig_serving.decode_roofline(h100.peak_flops("bf16"), h100.mem_bw, "H100, BF16 dense",
                                      [("batch 1", "o", ops, {"LM head": "LM head"})])
    marks = fig.axes[0].lines[-1]
    assert list(marks.get_xdata()) == [c.intensity for c in ops]
    assert "LM head" in texts(fig)
    assert_legible(fig)


# -------------------------------------------------------------------------- attention.py

def test_attention_traffic_bars_are_calcs_bytes():
    a100 = specs.device("a100-sxm-80gb")
    sram = a100.value("smem_per_sm_bytes")
    fig = fig_attention.traffic(1024, 128, "fp16", 32, sram, 128, [256, 1024, 4096])
    left, right = fig.axes
    bars = [p.get_width() for p in left.patches]
    want = [attention.one_thread_per_output(1024, 128, "fp16").bytes_ / 1e6, attention.tiled(1024, 128, 32, "fp16").bytes_ / 1e6,
            attention.naive(1024, 128, "fp16").bytes_ / 1e6, attention.flash(1024, 128, "fp16", sram).bytes_ / 1e6,
            attention.flash_query_outer(1024, 128, 128, "fp16").bytes_ / 1e6]
    assert bars == pytest.approx(want)
    assert bars == sorted(bars, reverse=True)            # each kernel moves less than the one before
    assert [t.get_text() for t in left.get_yticklabels()][0] == "Kernels 1 and 2 (no reuse)"
    assert len(right.lines) == 5 + 1 and "N" in right.get_xlabel()
    assert_legible(fig)


def test_attention_roofline_points_sit_on_the_roofs():
    h100 = specs.device("h100-sxm")
    fig = fig_attention.roofline_points(h100, 1024, 128, "fp16", 32, h100.value("smem_per_sm_bytes"), 128)
    ax = fig.axes[0]
    filled = [ln for ln in ax.lines if ln.get_marker() not in ("None", "", None) and ln.get_markerfacecolor() != "none"]
    for ln in filled:
        i = ln.get_xdata()[0]
        assert ln.get_ydata()[0] == pytest.approx(roofline.attainable(i, h100.peak_flops("fp32"), h100.mem_bw) / 1e12)
    assert len(filled) == 5 and ax.get_title() == h100.label
    assert_legible(fig)


def test_tiling_intensity_vs_tile_and_its_limits():
    tiles = [1, 2, 4, 8, 16, 32, 64, 128]
    fig = fig_tiling.intensity_vs_tile(tiles, 4096, [("A100 FP32 ridge", 12.5), ("H100 FP32 ridge", 20.0)], 32, 170, "H100")
    ax = fig.axes[0]
    line = ax.lines[0]
    assert list(line.get_xdata()) == [*tiles, 170]                 # the shared-memory limit is a point too
    assert list(line.get_ydata()) == [tiling.tiled_intensity(4096, 4096, 4096, t, "fp32") for t in [*tiles, 170]]
    assert line.get_ydata()[0] == pytest.approx(0.25, rel=0.01)    # T = 1: 2 FLOPs per two 4-byte loads
    words = texts(fig)
    assert "A100 FP32 ridge" in words and any(w.startswith("T = 170\n") for w in words)
    assert_legible(fig)


def test_tiling_systolic_frames_title_the_busy_pes():
    A = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    fig = fig_tiling.systolic_frames(A, A, [0, 2, 4, 6])
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    # a 3 × 3 output-stationary array, K = 3: 1, 6, 6 and 1 PEs busy at cycles 0, 2, 4 and 6 (counted
    # on the anti-diagonals i + j = t - k, k < 3)
    assert titles == ["cycle 0: 1 of 9 PEs busy", "cycle 2: 6 of 9 PEs busy", "cycle 4: 6 of 9 PEs busy",
                      "cycle 6: 1 of 9 PEs busy"]
    assert_legible(fig)


def test_intro_device_rooflines_and_batch_intensity():
    h100, a100 = specs.device("h100-sxm"), specs.device("a100-sxm-80gb")
    roofs = [("H100 BF16", h100.peak_flops("bf16"), h100.mem_bw, "C0", "-"),
             ("A100 BF16", a100.peak_flops("bf16"), a100.mem_bw, "C1", "-")]
    fig = fig_intro.device_rooflines(roofs, [("GEMV", 1.0, (6, -8))])
    ax = fig.axes[0]
    dot = next(ln for ln in ax.lines if ln.get_marker() == "o")
    assert (dot.get_xdata()[0], dot.get_ydata()[0]) == (1.0, h100.mem_bw)       # on the first roof, memory-bound
    assert [ln.get_label() for ln in ax.lines if not ln.get_label().startswith("_")][:2] == ["H100 BF16", "A100 BF16"]
    assert_legible(fig)
    from calc import intensity
    costs = [intensity.decode_matmul(b, 4096, 4 * 4096, "bf16") for b in (1, 64, 4096)]
    fig = fig_intro.batch_intensity([1, 64, 4096], costs, [("H100 ridge", h100.ridge_point("bf16"))])
    line = fig.axes[0].lines[0]
    assert list(line.get_ydata()) == [c.intensity for c in costs]
    assert line.get_ydata()[0] == pytest.approx(1.0, rel=0.01)    # one token: a multiply-add per 2-byte weight
    assert "H100 ridge" in texts(fig)
    assert_legible(fig)
