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


# ------------------------------------------------------------------- many servers, and what they send


def cluster_fat_tree(servers: int, gpus_per_server: int, up_label: str, up_bw: float, port_bw: float,
                     leaves: int = 2, spines: int = 2):
    """Several servers on a two-level fat tree: each server's GPUs on its NVSwitch (``up_bw`` per GPU
    per direction), each GPU's own network port (``port_bw``) to a leaf switch, every leaf wired to
    every spine. The leaves' uplinks carry as much as their downlinks (a non-blocking fat tree), so
    any GPU reaches any other at its port's full bandwidth; the figure prints what a leaf's
    downlinks and uplinks carry."""
    W = MAX_WIDTH_IN
    sw, sh = (W - 0.3 - (servers - 1) * 0.12) / servers, 0.72
    H = 3.05
    fig, ax = canvas(W, H)
    ports_per_leaf = servers * gpus_per_server // leaves
    leaf_down = ports_per_leaf * port_bw
    # spines on top, leaves below them, servers at the bottom
    y_spine, y_leaf, y_srv = H - 0.42, H - 1.22, 0.55
    spine_w, leaf_w = 0.95, 1.05
    spine_x = [W / 2 + (k - (spines - 1) / 2) * 1.45 - spine_w / 2 for k in range(spines)]
    leaf_x = [W / 2 + (k - (leaves - 1) / 2) * 1.7 - leaf_w / 2 for k in range(leaves)]
    for lx in leaf_x:
        for sx in spine_x:
            ax.plot([lx + leaf_w / 2, sx + spine_w / 2], [y_leaf + 0.3, y_spine], color=MEMORY, lw=1.6)
    for k, sx in enumerate(spine_x):
        box(ax, sx, y_spine, spine_w, 0.3, f"spine {k}", MEMORY, size=SMALL)
    for k, lx in enumerate(leaf_x):
        box(ax, lx, y_leaf, leaf_w, 0.3, f"leaf {k}", MEMORY, size=SMALL)
    for s in range(servers):
        x = 0.15 + s * (sw + 0.12)
        for k, lx in enumerate(leaf_x):      # half the server's ports to each leaf (its rails)
            ax.plot([x + sw * (k + 0.5) / leaves, lx + leaf_w / 2], [y_srv + sh, y_leaf], color=MEMORY, lw=0.9)
        box(ax, x, y_srv, sw, sh, "", "0.35")
        cols = gpus_per_server // 2
        g = min(0.13, (sw - 0.1) / cols - 0.03)
        for i in range(gpus_per_server):
            r, c = divmod(i, cols)
            gx = x + (sw - cols * g - (cols - 1) * 0.03) / 2 + c * (g + 0.03)
            ax.add_patch(plt.Rectangle((gx, y_srv + 0.5 - r * (g + 0.03)), g, g, fc=solid(COMPUTE, 0.35),
                                       ec=COMPUTE, lw=0.6))
        ax.text(x + sw / 2, y_srv + 0.13, f"server {s}", ha="center", va="center", fontsize=SMALL)
    label = dict(fc="white", ec="none", pad=1.5)
    ax.text(W / 2, y_leaf - 0.28, f"one port a GPU, {fmt.si(port_bw, 'B/s')} each way", ha="center",
            va="center", fontsize=SMALL, color=MEMORY, bbox=label)
    ax.text(W / 2, (y_leaf + y_spine) / 2 + 0.15, f"each leaf: {fmt.si(leaf_down, 'B/s')} down, as much up",
            ha="center", va="center", fontsize=SMALL, color=MEMORY, bbox=label)
    ax.text(W / 2, 0.22, f"inside a server: {up_label}, {fmt.si(up_bw, 'B/s')} each way per GPU",
            ha="center", va="center", fontsize=SMALL, color=COMPUTE)
    return fig


def pipeline_schedule(schedule, p: int, m: int, bubble: float):
    """A pipeline schedule as a chart of stages against time: ``schedule`` is
    ``calc.parallelism.one_f_one_b``'s list of (stage, "F"/"B", micro-batch, start, end); forward
    passes light, backward passes dark, each numbered by its micro-batch; the idle time of each
    stage hatched. ``bubble`` is ``calc.parallelism.bubble_fraction(p, m)``, printed."""
    W = MAX_WIDTH_IN
    label_w, row_h, top = 0.62, 0.34, 0.12
    end = max(t[4] for t in schedule)
    unit = (W - label_w - 0.08) / end
    H = top + p * row_h + 0.72
    fig, ax = canvas(W, H)
    for s in range(p):
        y = H - top - (s + 1) * row_h
        ax.text(0.04, y + row_h / 2, f"stage {s}", ha="left", va="center", fontsize=SMALL)
        ax.add_patch(plt.Rectangle((label_w, y + 0.03), end * unit, row_h - 0.06, fc="white", ec="0.55",
                                   lw=0.5, hatch="////"))
        for st, kind, i, a, b in schedule:
            if st != s:
                continue
            colour = solid(COMPUTE, 0.25) if kind == "F" else solid(COMPUTE, 0.7)
            ax.add_patch(plt.Rectangle((label_w + a * unit, y + 0.03), (b - a) * unit, row_h - 0.06, fc=colour,
                                       ec="0.15", lw=0.6))
            ax.text(label_w + (a + b) / 2 * unit, y + row_h / 2, str(i + 1), ha="center", va="center",
                    fontsize=SMALL, color="black" if kind == "F" else "white")
    y = H - top - p * row_h - 0.18
    ax.text(0.04, y, f"{p} stages, {m} micro-batches. Light: forward;", ha="left", va="center", fontsize=SMALL)
    ax.text(0.04, y - 0.22, "dark: backward, twice as long. Hatched: idle,", ha="left", va="center", fontsize=SMALL)
    ax.text(0.04, y - 0.44, f"(p − 1)/(m + p − 1) = {p - 1}/{m + p - 1} = {fmt.pct(bubble, 2)} of each stage's time",
            ha="left", va="center", fontsize=SMALL)
    return fig


def parallelism_traffic(rows, tp: int = 4):
    """What each kind of parallelism sends, and over which link: ``rows`` is a list of
    (name, what it sends, how often, bytes each GPU sends a step as text, link label) from the chapter's
    ``calc.parallelism`` plan. Drawn on top: two replicas (rows) of a two-stage pipeline (columns),
    each stage one server whose ``tp`` GPUs form a tensor-parallel group (blue bar, NVLink); the green
    arrow is a stage boundary, the red dashed lines join the same GPU of two replicas (the
    data-parallel all-reduce), both over the network."""
    W = MAX_WIDTH_IN
    H = 2.05 + 0.56 * len(rows)
    fig, ax = canvas(W, H)
    sw, g, gap = 1.36, 0.22, 0.08
    colours = {"TP": COMPUTE, "PP": "C2", "DP": MEMORY}
    xs = [0.3, 0.3 + sw + 0.32]
    row_y = [H - 0.75, H - 1.75]
    ax.text(xs[0] + sw / 2, H - 0.1, "stage 0", ha="center", va="top", fontsize=SMALL)
    ax.text(xs[1] + sw / 2, H - 0.1, "stage 1", ha="center", va="top", fontsize=SMALL)

    def gpu_x(col, i):
        return xs[col] + (sw - tp * g - (tp - 1) * gap) / 2 + i * (g + gap)

    for r, y in enumerate(row_y):
        ax.text(0.08, y + 0.22, f"replica {r}", ha="center", va="center", fontsize=SMALL, rotation=90)
        for col in range(2):
            box(ax, xs[col], y, sw, 0.5, "", "0.35")
            for i in range(tp):
                ax.add_patch(plt.Rectangle((gpu_x(col, i), y + 0.16), g, g, fc=solid(COMPUTE, 0.35), ec=COMPUTE,
                                           lw=0.6))
            ax.plot([gpu_x(col, 0), gpu_x(col, tp - 1) + g], [y + 0.09] * 2, color=COMPUTE, lw=2.4)
        arrow(ax, (xs[0] + sw + 0.02, y + 0.28), (xs[1] - 0.02, y + 0.28), colour="C2", width=1.8)
    for col in range(2):
        for i in (0, tp - 1):
            x = gpu_x(col, i) + g / 2
            ax.plot([x, x], [row_y[1] + 0.5, row_y[0]], color=MEMORY, lw=1.4, ls="--")
    y = row_y[1] - 0.18
    for name, what, when, sent, link in rows:
        c = colours.get(name, "0.2")
        ax.text(0.06, y, name, ha="left", va="top", fontsize=TEXT, color=c, weight="bold")
        ax.text(0.42, y, f"{what}, {when}", ha="left", va="top", fontsize=SMALL)
        ax.text(0.42, y - 0.21, f"{sent} a GPU a step, over {link}", ha="left", va="top", fontsize=SMALL, color=c)
        y -= 0.56
    return fig
