"""Figures for the opening chapters (preface, data movement, roofline).

Each function draws one figure from ``calc`` numbers onto a new matplotlib
figure and returns it; the chapter cell only chooses the inputs. Nothing here
computes physics: energies, bandwidths and roofs all come from ``calc``.
"""
from __future__ import annotations

import matplotlib.pyplot as plt

from calc import energy, fmt, roofline, tiling

ARITH, MEMORY = "C0", "C3"


def energy_bars(ops: list[tuple[str, str]], accesses: list[tuple[str, str]], bits: int = 32):
    """Log-scale horizontal bars: energy of arithmetic ops and of ``bits``-wide memory accesses."""
    rows = [(label, energy.op_energy_j(op) * 1e12, ARITH) for label, op in ops]
    rows += [(label, energy.access_energy_j(mem, bits) * 1e12, MEMORY) for label, mem in accesses]
    fig, ax = plt.subplots(figsize=(6, 0.32 * len(rows) + 0.9))
    ys = range(len(rows))[::-1]
    ax.barh(list(ys), [r[1] for r in rows], color=[r[2] for r in rows], height=0.65)
    ax.set_yticks(list(ys), [r[0] for r in rows])
    ax.set_xscale("log")
    ax.set_xlabel("Energy per operation or per access (pJ, log scale)")
    for y, (_, pj, _) in zip(ys, rows):
        ax.text(pj * 1.15, y, f"{fmt.num(pj, 2)} pJ", va="center", fontsize=8)
    ax.set_xlim(min(r[1] for r in rows) / 2, max(r[1] for r in rows) * 6)
    ax.grid(axis="y", visible=False)
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=ARITH), plt.Rectangle((0, 0), 1, 1, color=MEMORY)],
              labels=["arithmetic", f"{bits}-bit memory access"], loc="upper right", frameon=False)
    return fig


def hierarchy_bars(levels):
    """Two panels for a ``calc.hierarchy`` table: capacity and bandwidth per level (log scale)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(6.6, 2.8), sharey=True)
    names = [lv.name.replace(" over ", "\nover ") for lv in levels]
    ys = list(range(len(levels)))[::-1]
    for ax, field, scale, xlabel, col in (
        (a1, "capacity_bytes", 1.0, "Capacity (bytes, log)", "C2"),
        (a2, "bw_bytes_per_s", 1.0, "Bandwidth (bytes/s, log)", "C0"),
    ):
        for y, lv in zip(ys, levels):
            spec = getattr(lv, field)
            if spec is None:
                ax.text(0.02, y, "no figure", va="center", fontsize=7.5, color="0.45",
                        transform=ax.get_yaxis_transform())  # x in axes units, y in data units
                continue
            v = float(spec.value) * scale
            ax.barh(y, v, color=col, height=0.6)
            if field == "capacity_bytes":  # memory sizes are binary ("40 MB" L2 is 40 MiB, "40GB" HBM2 40 GiB)
                label = fmt.bytes_iec(v)
            else:
                label = fmt.si(v, "B/s")
            ax.text(v * 1.3, y, label, va="center", fontsize=7.5)
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(axis="y", visible=False)
    a1.set_xlim(1e6, 1e13)
    a2.set_xlim(1e9, 1e15)
    a1.set_yticks(ys, names)
    return fig


def matmul_time_vs_n(device, sizes, tiles=(1, 16), dtype="fp32"):
    """Time lower bound of an N×N×N matmul on ``device``: tiled with each T in ``tiles`` and ideal traffic."""
    peak, bw = device.peak_flops(dtype), device.mem_bw
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for T in tiles:
        ts = [roofline.time_lower_bound(2 * n**3, tiling.traffic_bytes(n, n, n, T, dtype), peak, bw)
              for n in sizes]
        label = "no reuse (naive loops)" if T == 1 else f"{T}×{T} tiles"
        ax.plot(sizes, ts, marker="o", ms=3, label=label)
    from calc import intensity
    ideal = [roofline.time_lower_bound(intensity.gemm(n, n, n, dtype).flops, intensity.gemm(n, n, n, dtype).bytes_,
                                       peak, bw) for n in sizes]
    ax.plot(sizes, ideal, marker="o", ms=3, color="k", label="each operand moved once")
    compute = [roofline.compute_time(2 * n**3, peak) for n in sizes]
    ax.plot(sizes, compute, ls=":", color="0.4", label="arithmetic alone at peak")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("Matrix size N (N×N times N×N)")
    ax.set_ylabel("Time lower bound (s, log)")
    ax.legend(frameon=False, fontsize=8)
    return fig


def roofline_axes(ax, peak, bw, label, color="C0", i_range=(0.1, 1e4), ls="-", ridge_label=True):
    """Draw one roof from ``calc.roofline.curve`` onto ``ax``; returns the ridge point."""
    pts = roofline.curve(peak, bw, *i_range, n=300)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color, ls=ls, lw=2, label=label)
    ridge = roofline.ridge_point(peak, bw)
    if ridge_label:
        ax.axvline(ridge, color=color, ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    return ridge


def toy_roofline(peak, bw, cases):
    """The toy processor's roofline; ``cases`` = [(intensity, label, (dx, dy) label offset in points)]."""
    fig, ax = plt.subplots(figsize=(6, 3.3))
    ridge = roofline_axes(ax, peak, bw, "roof: min(peak, I × bandwidth)", i_range=(0.25, 64))
    for i, label, offset in cases:
        att = roofline.attainable(i, peak, bw)
        color = "C3" if i < ridge else ("C2" if i > ridge else "k")
        ax.plot([i], [att], "o", color=color, ms=7, zorder=5)
        ax.annotate(label, (i, att), textcoords="offset points", xytext=offset, fontsize=8,
                    ha="center" if offset[0] == 0 else ("left" if offset[0] > 0 else "right"))
    ax.set_ylim(peak / 64, peak * 3)
    ax.text(ridge * 1.08, peak / 40, f"ridge point = {fmt.num(ridge, 2)} FLOP/B", fontsize=8, color="C0")
    ax.set_xlabel("Arithmetic intensity (FLOP per byte, log)")
    ax.set_ylabel("Attainable throughput (FLOP/s, log)")
    ax.set_xticks([0.25, 0.5, 1, 2, 4, 8, 16, 32, 64], ["¼", "½", "1", "2", "4", "8", "16", "32", "64"])
    ax.legend(frameon=False, loc="upper left", fontsize=8)
    return fig


def device_rooflines(roofs, points, i_range=(0.1, 1e4)):
    """Several devices' roofs (label, peak, bw, color, ls) and kernels (label, intensity, (dx, dy))
    placed on the first roof; (dx, dy) is the label offset in points."""
    fig, ax = plt.subplots(figsize=(6.6, 3.8))
    for label, peak, bw, color, ls in roofs:
        roofline_axes(ax, peak, bw, label, color, i_range, ls)
    peak0, bw0 = roofs[0][1], roofs[0][2]
    for label, i, offset in points:
        att = roofline.attainable(i, peak0, bw0)
        ax.plot([i], [att], "o", color="k", ms=4, zorder=5)
        ax.annotate(label, (i, att), textcoords="offset points", xytext=offset, fontsize=7,
                    ha="left" if offset[0] >= 0 else "right")
    ax.set_xlabel("Arithmetic intensity (FLOP per byte of HBM traffic, log)")
    ax.set_ylabel("Attainable throughput (FLOP/s, log)")
    ax.legend(frameon=False, loc="lower right", fontsize=7)
    return fig


def batch_intensity(batches, costs_by_batch, ridges, line_label="decode matmul"):
    """Intensity of a weight matrix applied to a batch of tokens, with device ridge lines."""
    fig, ax = plt.subplots(figsize=(6, 3.1))
    ax.plot(batches, [c.intensity for c in costs_by_batch], marker="o", ms=3, color="k",
            label=line_label)
    for k, (label, ridge) in enumerate(ridges):
        ax.axhline(ridge, color=f"C{k}", ls="--", lw=1)
        ax.text(batches[0], ridge * (1.12 if k % 2 else 0.8), label, color=f"C{k}", fontsize=8,
                va="bottom" if k % 2 else "top")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("Tokens sharing one read of the weights (batch)")
    ax.set_ylabel("Arithmetic intensity (FLOP/B, log)")
    ax.legend(frameon=False, loc="lower right", fontsize=8)
    return fig
