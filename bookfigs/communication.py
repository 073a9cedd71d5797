"""Figures for the communication chapter: a ring all-reduce step by step, a node's links, bus
bandwidth against message size, and the communication roofline.

Every number a figure prints comes from ``calc`` (``calc.collectives``, ``calc.specs``) or is
passed in by the chapter cell from ``calc``; these functions choose only the layout. The two
schematics follow ``bookfigs.schematics``' rules (at most 3.5 in wide, text at least 8.5 pt).
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt

from calc import collectives, fmt

from .schematics import COMPUTE, MAX_WIDTH_IN, MEMORY, SMALL, TEXT, arrow, box, canvas, solid

# ----------------------------------------------------------------------------- schematics


def ring_allreduce(p: int = 4):
    """Ring all-reduce over ``p`` GPUs, one row per step (``calc.collectives.steps`` and
    ``chunk_state``): each GPU's ``p`` chunks, with the number of GPUs whose values each chunk
    now sums, darker as it fills; the chunk each GPU sends at that step is outlined."""
    sched = collectives.steps("all-reduce", "ring", p)
    rows = len(sched) + 1
    W = MAX_WIDTH_IN
    label_w, top, row_h = 1.05, 0.42, 0.3
    col_w = (W - label_w - 0.05) / p
    sq = min(0.16, (col_w - 0.08) / p)
    H = top + rows * row_h + 0.5
    fig, ax = canvas(W, H)
    for g in range(p):
        ax.text(label_w + g * col_w + col_w / 2, H - 0.2, f"GPU {g}", ha="center", va="center", fontsize=TEXT)
    for r in range(rows):
        y = H - top - (r + 1) * row_h
        state = collectives.chunk_state("all-reduce", "ring", p, r)
        if r == 0:
            name = "start"
        else:
            name = f"{r}: {'reduce' if sched[r - 1].phase == 'reduce-scatter' else 'gather'}"
        ax.text(0.02, y + row_h / 2, name, ha="left", va="center", fontsize=SMALL)
        sent = {(t.src, t.chunk) for t in sched[r].transfers} if r < len(sched) else set()
        for g in range(p):
            x0 = label_w + g * col_w + (col_w - p * sq) / 2
            for c in range(p):
                n = len(state[g][c])
                fill = solid(MEMORY if n == p else COMPUTE, 0.12 + 0.5 * (n - 1) / max(1, p - 1))
                lw = 2.0 if (g, c) in sent else 0.6
                ax.add_patch(plt.Rectangle((x0 + c * sq, y + 0.05), sq, row_h - 0.1, fc=fill,
                                           ec="0.1" if (g, c) in sent else "0.45", lw=lw))
                ax.text(x0 + c * sq + sq / 2, y + row_h / 2, str(n), ha="center", va="center", fontsize=SMALL)
    per_gpu = collectives.bytes_per_gpu_sent("all-reduce", "ring", p, 1.0)
    ax.text(0.02, 0.3, f"{len(sched)} steps; each GPU sends {len(sched)} chunks of S/{p}\n"
                       f"= {fmt.num(per_gpu, 2)} S, and receives as much. Outlined: sent next.",
            ha="left", va="center", fontsize=SMALL)
    return fig


def node_fabric(gpu_label: str, hbm_bw: float, up_label: str, up_bw: float, out_label: str, out_bw: float,
                gpus: int = 8):
    """One node: ``gpus`` GPUs, each with its HBM, on a switch (the scale-up link, bandwidth per
    GPU per direction) and each with its own network port out of the node (the scale-out link),
    reached over PCIe, beside the switch rather than through it. Arrow
    widths grow with the logarithm of the bandwidth."""
    W = MAX_WIDTH_IN
    cols = 4
    rows = math.ceil(gpus / cols)
    gw, gh, gap, link_h, band = 0.74, 0.42, 0.1, 0.62, 0.46
    H = 0.3 + 0.3 + rows * (gh + gap) + (link_h + band) + 0.1
    fig, ax = canvas(W, H)
    x0 = (W - cols * gw - (cols - 1) * gap) / 2
    y = H - 0.18
    ax.text(W / 2, y, f"one node: {gpus} × {gpu_label}", ha="center", va="center", fontsize=TEXT)
    y -= 0.27
    ax.text(W / 2, y, f"each GPU reads its own HBM at {fmt.si(hbm_bw, 'B/s')}", ha="center", va="center",
            fontsize=SMALL, color=COMPUTE)
    y -= 0.15
    for i in range(gpus):
        r, c = divmod(i, cols)
        box(ax, x0 + c * (gw + gap), y - (r + 1) * gh - r * gap, gw, gh, f"GPU {i}", COMPUTE, size=SMALL)
    y -= rows * gh + (rows - 1) * gap
    lo, hi = math.log10(out_bw), math.log10(hbm_bw)

    def lw(v):
        return 1.0 + 5.0 * (math.log10(v) - lo) / (hi - lo)

    # Two separate paths leave each GPU: NVLink to the switch chips, and (over PCIe, not through
    # the switch) its own network card to the other nodes. Side by side, so neither looks as if it
    # passed through the other.
    half = (W - 0.4 - 0.2) / 2
    for k, (label, bw, name, colour) in enumerate((
            (up_label, up_bw, "NVSwitch chips:\nany GPU of the node", "0.35"),
            (out_label, out_bw, "a network card per\nGPU: other nodes", MEMORY))):
        left = 0.2 + k * (half + 0.2)
        ax_x = left + 0.3
        arrow(ax, (ax_x, y - 0.03), (ax_x, y - link_h + 0.03), style="<|-|>", width=lw(bw))
        ax.text(ax_x + 0.15, y - link_h / 2, f"{label}:\n{fmt.si(bw, 'B/s')} each way,\nper GPU",
                fontsize=SMALL, va="center")
        box(ax, left, y - link_h - band, half, band, name, colour, size=SMALL)
    return fig


# ----------------------------------------------------------------------------- data plots


def busbw_vs_size(sizes, curves, measured, link_bw: float, link_label: str):
    """Bus bandwidth against message size: ``curves`` [(label, style, [busbw per size])] from the
    alpha-beta model, ``measured`` [(label, size, busbw)] published points, and the link's
    bandwidth as a dashed line. Sizes in bytes, bandwidths in bytes/s."""
    fig, ax = plt.subplots(figsize=(6.6, 3.6))
    for k, (label, style, ys) in enumerate(curves):
        ax.plot(sizes, [y / 1e9 for y in ys], style, color=f"C{k}", lw=1.6, label=label)
    for label, x, y in measured:
        ax.plot([x], [y / 1e9], "D", color="C3", ms=6, zorder=5)
        ax.annotate(label, (x, y / 1e9), textcoords="offset points", xytext=(-6, -14), ha="right", fontsize=7.5,
                    color="C3")
    ax.axhline(link_bw / 1e9, color="k", ls="--", lw=1)
    ax.text(sizes[-1], link_bw / 1e9 * 1.02, f"{link_label}: {fmt.si(link_bw, 'B/s')} each way", fontsize=7.5,
            va="bottom", ha="right")
    ax.set_xscale("log")
    ax.set_xlabel("Message size S (bytes, log)")
    ax.set_ylabel("Bus bandwidth (GB/s)")
    ax.set_ylim(0, link_bw / 1e9 * 1.25)
    ax.legend(frameon=False, fontsize=7.5, loc="upper left")
    return fig


def comm_roofline(peak: float, peak_label: str, links, points, i_range=(10, 1e6)):
    """The communication roofline: attainable FLOP/s per GPU against FLOPs per byte a GPU sends
    over a link, with one sloped roof per link ``[(label, bytes/s)]`` and ``points``
    [(label, intensity, link index, (dx, dy) label offset in points)] placed under their link's roof."""
    fig, ax = plt.subplots(figsize=(6.6, 4.0))
    xs = [i_range[0] * (i_range[1] / i_range[0]) ** (k / 200) for k in range(201)]
    ax.axhline(peak, color="0.2", lw=1.2)
    ax.text(xs[-1], peak * 1.12, peak_label, ha="right", va="bottom", fontsize=7.5)
    for k, (label, bw) in enumerate(links):
        ax.plot(xs, [min(peak, x * bw) for x in xs], color=f"C{k}", lw=1.6, label=f"{label} ({fmt.si(bw, 'B/s')})")
        ridge = peak / bw
        ax.plot([ridge], [peak], "|", color=f"C{k}", ms=12, mew=2)
    for label, x, k, (dx, dy) in points:
        bw = links[k][1]
        y = min(peak, x * bw)
        ax.plot([x], [y], "o", color=f"C{k}", ms=6, zorder=5, mec="k", mew=0.5)
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(dx, dy), fontsize=7.5, color=f"C{k}",
                    ha="right" if dx < 0 else "left")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*i_range)
    ax.set_ylim(peak / 300, peak * 4)
    ax.set_xlabel("Communication intensity (FLOP per byte a GPU sends, log)")
    ax.set_ylabel("Attainable FLOP/s per GPU (log)")
    ax.legend(frameon=False, fontsize=7.5, loc="lower right")
    return fig
