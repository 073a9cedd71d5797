"""Figures for the serving chapter: memory budgets, one decode step on the roofline, bytes per step.

Each function draws ``calc`` numbers the chapter cell passes in; nothing here computes physics.
"""
from __future__ import annotations

import matplotlib.pyplot as plt

from calc import fmt, roofline

from .intro import roofline_axes

PART_COLORS = {"weights": "C0", "KV cache": "C1", "activations": "C3"}
GIB = 2**30


def memory_bars(rows, capacity_bytes: float, capacity_label: str):
    """Horizontal stacked bars, one per (label, calc.llm.Budget), against a capacity line (GiB)."""
    fig, ax = plt.subplots(figsize=(6.6, 0.45 * len(rows) + 1.2))
    ys = list(range(len(rows)))[::-1]
    for y, (label, budget) in zip(ys, rows):
        left = 0.0
        for name, value in budget.parts:
            ax.barh(y, value / GIB, left=left, color=PART_COLORS[name], height=0.6,
                    label=name if y == ys[0] else None)
            left += value / GIB
        verdict = "fits" if budget.fits else "does not fit"
        ax.text(left + 2, y, f"{fmt.bytes_iec(budget.total_bytes)}: {verdict}", va="center", fontsize=7.5)
    ax.axvline(capacity_bytes / GIB, color="k", ls="--", lw=1)
    ax.text(capacity_bytes / GIB, len(rows) - 0.45, f" {capacity_label}", fontsize=7.5, va="bottom")
    ax.set_yticks(ys, [r[0] for r in rows], fontsize=7.5)
    ax.set_xlabel("Memory (GiB)")
    ax.set_xlim(0, max(max(b.total_bytes for _, b in rows), capacity_bytes) / GIB * 1.3)
    ax.set_ylim(-0.6, len(rows) - 0.1)
    ax.grid(axis="y", visible=False)
    ax.legend(frameon=False, fontsize=7.5, loc="lower right")
    return fig


def decode_roofline(peak: float, bw: float, label: str, series, i_range=(0.1, 1e4)):
    """One roof and the operations of decode steps: ``series`` is a list of (legend, marker, costs,
    {op name: short label}) placed on the roof at their intensity."""
    fig, ax = plt.subplots(figsize=(6.6, 3.9))
    roofline_axes(ax, peak, bw, label, "C0", i_range)
    for k, (legend, marker, costs, short) in enumerate(series):
        xs = [c.intensity for c in costs]
        ys = [roofline.attainable(c.intensity, peak, bw) for c in costs]
        ax.plot(xs, ys, marker, color=f"C{k + 1}", ms=6, ls="none", label=legend, zorder=5)
        for c, x, y in zip(costs, xs, ys):
            if c.name in short:
                ax.annotate(short[c.name], (x, y), textcoords="offset points",
                            xytext=(6, -11) if k == 0 else (-6, 6), fontsize=8,
                            ha="left" if k == 0 else "right", color=f"C{k + 1}")
    ax.set_xlabel("Arithmetic intensity (FLOP per byte of HBM traffic, log)")
    ax.set_ylabel("Attainable throughput (FLOP/s, log)")
    ax.legend(frameon=False, loc="lower right", fontsize=7.5)
    return fig


def bytes_per_step(batches, weight_bytes: float, kv_bytes, intensities, ridge: float, ridge_label: str):
    """Two panels against the batch: the bytes one decode step reads (weights, KV cache, stacked)
    and the step's arithmetic intensity beside the device's ridge point."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(6.8, 2.9))
    w = [weight_bytes / GIB] * len(batches)
    kv = [k / GIB for k in kv_bytes]
    a1.stackplot(batches, w, kv, colors=[PART_COLORS["weights"], PART_COLORS["KV cache"]],
                 labels=["weights", "KV cache"])
    a1.set_xscale("log", base=2)
    a1.set_xlabel("Batch (sequences)")
    a1.set_ylabel("Bytes read per step (GiB)")
    a1.legend(frameon=False, fontsize=7.5, loc="upper left")
    a2.plot(batches, intensities, "o-", color="k", ms=3)
    a2.axhline(ridge, color="C0", ls="--", lw=1)
    a2.text(batches[0], ridge * 0.8, ridge_label, color="C0", fontsize=7.5, va="top")
    a2.set_xscale("log", base=2)
    a2.set_yscale("log")
    a2.set_xlabel("Batch (sequences)")
    a2.set_ylabel("Step intensity (FLOP/B, log)")
    fig.tight_layout()
    return fig


def opening_budget(capacity_bytes: float, capacity_label: str, weight_bytes: float, seq_bytes: float,
                   seqs: int, seq_label: str):
    """The chapter's opening picture: one GPU's memory as a bar, the weights at the left and then
    one block per sequence's KV cache (``seq_bytes`` each, ``seqs`` of them, from ``calc.llm``) up to
    the capacity. 3.5 in wide, text at least 8.5 pt."""
    fig, ax = plt.subplots(figsize=(3.5, 1.55))
    cap = capacity_bytes / GIB
    ax.barh(0, weight_bytes / GIB, color=PART_COLORS["weights"], height=0.55)
    ax.text(weight_bytes / GIB / 2, 0, "weights", ha="center", va="center", fontsize=8.5, color="white")
    left = weight_bytes / GIB
    for k in range(seqs):
        ax.barh(0, seq_bytes / GIB, left=left, color=PART_COLORS["KV cache"], height=0.55,
                edgecolor="white", linewidth=0.4)
        left += seq_bytes / GIB
    ax.axvline(cap, color="k", ls="--", lw=1)
    ax.text(cap, 0.42, capacity_label, ha="right", va="bottom", fontsize=8.5)
    ax.text(weight_bytes / GIB, -0.45, f"{seqs} × {seq_label}", ha="left", va="top", fontsize=8.5,
            color=PART_COLORS["KV cache"])
    ax.set_xlim(0, cap * 1.02)
    ax.set_ylim(-0.9, 0.8)
    ax.set_yticks([])
    ax.set_xlabel("GiB", fontsize=8.5)
    ax.tick_params(labelsize=8.5)
    ax.grid(axis="y", visible=False)
    fig.tight_layout()
    return fig
