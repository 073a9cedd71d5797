"""Figures for the chapter on attention.

The costs come from ``calc.attention`` and the roofs from ``calc.roofline`` and a
``calc.specs`` device; each function here only chooses what to draw and how.
"""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt

from calc import attention, fmt, roofline
from calc.intensity import Cost


@dataclass(frozen=True)
class Variant:
    """One way to compute attention, as the chapter names it, with its cost."""

    key: str
    label: str
    cost: Cost
    colour: str
    marker: str


def variants(N: int, d: int, dtype: str, tile: int, sram_bytes: float, block_rows: int) -> list[Variant]:
    """The chapter's kernels and the paper's two reference counts, in the chapter's order."""
    return [
        Variant("per-output", "Kernels 1 and 2 (no reuse)", attention.one_thread_per_output(N, d, dtype),
                "C3", "o"),
        Variant("tiled", f"Kernel 3 (tiled, T = {tile})", attention.tiled(N, d, tile, dtype), "C1", "s"),
        Variant("standard", "Standard attention, ideal (Alg. 0)", attention.naive(N, d, dtype), "0.45", "D"),
        Variant("flash-alg1", "FlashAttention, Alg. 1", attention.flash(N, d, dtype, sram_bytes), "C0", "^"),
        Variant("flash", f"Kernel 4 (query blocks outer, Br = {block_rows})",
                attention.flash_query_outer(N, d, block_rows, dtype), "C2", "*"),
    ]


def traffic(N: int, d: int, dtype: str, tile: int, sram_bytes: float, block_rows: int,
            sweep: list[int]):
    """Left: HBM bytes of each variant at N (log bars). Right: HBM bytes against N (log-log)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.2, 3.0), gridspec_kw={"width_ratios": [1, 1.1]})
    vs = variants(N, d, dtype, tile, sram_bytes, block_rows)
    ys = list(range(len(vs)))[::-1]
    left.barh(ys, [v.cost.bytes_ / 1e6 for v in vs], color=[v.colour for v in vs], height=0.65)
    left.set_yticks(ys, [v.label for v in vs], fontsize=8)
    left.set_xscale("log")
    left.set_xlabel(f"HBM traffic at N = {fmt.num(N)}, d = {d} (MB)")
    left.grid(axis="y", visible=False)
    for y, v in zip(ys, vs):
        left.text(v.cost.bytes_ / 1e6 * 1.15, y, fmt.num(v.cost.bytes_ / 1e6), va="center", fontsize=8)
    left.set_xlim(min(v.cost.bytes_ for v in vs) / 1e6 / 2, max(v.cost.bytes_ for v in vs) / 1e6 * 8)

    for i, v in enumerate(vs):
        b = [variants(n, d, dtype, tile, sram_bytes, block_rows)[i].cost.bytes_ / 1e6 for n in sweep]
        right.plot(sweep, b, color=v.colour, marker=v.marker, ms=4, lw=1.2, label=v.label)
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_xlabel("Sequence length N (d fixed)")
    right.set_ylabel("HBM traffic (MB)")
    right.axvline(N, color="0.6", lw=0.8, ls=":")
    fig.tight_layout()
    return fig


def roofline_points(device, N: int, d: int, dtype: str, tile: int, sram_bytes: float, block_rows: int,
                    vector_dtype: str = "fp32", tensor_dtype: str = "fp16"):
    """The device's HBM roofline with a CUDA-core roof and a dense Tensor Core roof, and
    each variant's point: filled on the CUDA-core roof (what the book's kernels can reach),
    hollow on the Tensor Core roof (what the same traffic would allow with Tensor Cores)."""
    bw = device.mem_bw
    vec, ten = device.peak_flops(vector_dtype), device.peak_flops(tensor_dtype)
    vs = variants(N, d, dtype, tile, sram_bytes, block_rows)
    fig, ax = plt.subplots(figsize=(6.2, 3.6))
    for peak, name, ls in ((ten, f"{tensor_dtype.upper()} Tensor Core peak (dense)", "-"),
                           (vec, f"{vector_dtype.upper()} CUDA-core peak", "--")):
        xs, ys = zip(*roofline.curve(peak, bw, 0.1, 3000))
        ax.plot(xs, [y / 1e12 for y in ys], color="0.25", lw=1.3, ls=ls, label=name)
        ax.axvline(roofline.ridge_point(peak, bw), color="0.7", lw=0.7, ls=":")
    for v in vs:
        i = v.cost.intensity
        ax.plot([i], [roofline.attainable(i, vec, bw) / 1e12], marker=v.marker, color=v.colour, ms=8,
                ls="none", label=v.label, markeredgecolor="black", markeredgewidth=0.5)
        ax.plot([i], [roofline.attainable(i, ten, bw) / 1e12], marker=v.marker, ms=8, ls="none",
                markerfacecolor="none", markeredgecolor=v.colour, markeredgewidth=1.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Arithmetic intensity (FLOP per HBM byte)")
    ax.set_ylabel("Attainable TFLOP/s")
    ax.set_title(device.label, fontsize=9)
    ax.legend(loc="lower right", fontsize=7, frameon=True, framealpha=0.9)
    return fig


def opening_bytes(rows, flops_text: str):
    """The chapter's opening picture: one bar a kernel, its HBM bytes as a multiple of the last
    kernel's (log axis), ``rows`` a list of (label, ratio) from ``calc.attention``, every kernel doing
    the same FLOPs (``flops_text``).
    3.5 in wide, text at least 8.5 pt, so that a phone shows it whole."""
    fig, ax = plt.subplots(figsize=(3.5, 0.42 * len(rows) + 1.0))
    ys = list(range(len(rows)))[::-1]
    colours = ["C3", "C1", "C0", "C2"]
    ax.barh(ys, [b for _, b in rows], color=[colours[k % 4] for k in range(len(rows))], height=0.6, alpha=0.6)
    for y, (label, b) in zip(ys, rows):
        ax.text(b * 1.15, y, fmt.times(b, 2), va="center", fontsize=8.5)
    ax.set_xscale("log")
    ax.set_yticks(ys, [label for label, _ in rows], fontsize=8.5)
    ax.set_xlim(0.5, max(b for _, b in rows) * 6)
    ticks = [10 ** k for k in range(0, 4) if 10 ** k < max(b for _, b in rows) * 6]
    ax.set_xticks(ticks, [f"{fmt.num(t)}×" for t in ticks])   # plain labels: no small superscripts
    ax.minorticks_off()
    ax.set_xlabel("HBM bytes, times the last kernel's (log)", fontsize=8.5)
    ax.tick_params(labelsize=8.5)
    ax.set_title(f"the same {flops_text} each", fontsize=8.5, loc="left")
    ax.grid(axis="y", visible=False)
    fig.tight_layout()
    return fig
