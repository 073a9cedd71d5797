"""Figures for the chapter on tiling and systolic arrays.

Each function draws one figure from ``calc`` numbers onto a new matplotlib
figure and returns it; the chapter cell only chooses the inputs (sizes, tile
edges, devices). Tile counts, intensities, cycles and array states all come
from ``calc.tiling`` and ``calc.systolic``.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from calc import fmt, roofline, systolic, tiling

TILE_COLOURS = ("C0", "C1", "C2", "C3")


def fringe_utilisation(sizes: list[int], tiles: list[int]):
    """Useful fraction of launched outputs, ``tile_count(n, n, T).utilisation``, against n."""
    fig, ax = plt.subplots(figsize=(6, 2.9))
    for T, colour in zip(tiles, TILE_COLOURS):
        ax.plot(sizes, [tiling.tile_count(n, n, T).utilisation for n in sizes],
                color=colour, lw=1.2, label=f"{T} × {T} tiles")
    ax.set_xlabel("Matrix size n (output is n × n)")
    ax.set_ylabel("Useful fraction of tile slots")
    ax.set_ylim(0, 1.05)
    ax.set_xlim(sizes[0], sizes[-1])
    ax.legend(loc="lower right", frameon=False)
    return fig


def intensity_vs_tile(tiles: list[int], size: int, ridges: list[tuple[str, float]],
                      thread_limit: int, smem_limit: int, smem_device: str, dtype: str = "fp32"):
    """Intensity of the tiled kernel (``tiling.tiled_intensity``) against the tile edge T.

    ``ridges``: (label, FLOP/byte) horizontal lines; ``thread_limit``: largest T with one
    thread per output; ``smem_limit``: largest T whose tiles fit shared memory.
    """
    fig, ax = plt.subplots(figsize=(6, 3.2))
    xs = sorted(set(tiles) | {smem_limit})
    ys = [tiling.tiled_intensity(size, size, size, T, dtype) for T in xs]
    ax.plot(xs, ys, "o-", color="C0", lw=1.4, ms=3.5, label=f"tiled kernel ({size} × {size}, {dtype.upper()})")
    for (label, ridge), colour in zip(ridges, ("C3", "C1")):
        ax.axhline(ridge, color=colour, lw=1, ls="--")
        ax.text(xs[0], ridge * 1.1, label, color=colour, fontsize=8, va="bottom")
    top = max(ys) * 3
    for T, label, ha in ((thread_limit, f"T = {thread_limit}\none thread per output\nfills a block", "right"),
                         (smem_limit, f"T = {smem_limit}\ntiles fill {smem_device}\nshared memory", "right")):
        ax.axvline(T, color="0.4", lw=0.8, ls=":")
        ax.text(T / 1.06, top / 1.15, label, fontsize=7.5, color="0.3", va="top", ha=ha)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylim(min(ys) / 1.6, top)
    ax.set_xticks(tiles, [str(T) for T in tiles])
    ax.minorticks_off()
    ax.set_xlabel("Tile edge T (log scale)")
    ax.set_ylabel("FLOP per global byte (log)")
    ax.legend(loc="lower right", frameon=False)
    return fig


def _grid(ax, R: int, C: int, frame: dict, done: dict, queue_a: dict, queue_b: dict, title: str, K: int):
    """One panel: the R×C array at one cycle, busy PEs shaded, operands still waiting at the edges."""
    busy = {(i, j): k for i, j, k in frame["active"]}
    for i in range(R):
        y = R - 1 - i
        for j in range(C):
            on = (i, j) in busy
            ax.add_patch(Rectangle((j, y), 0.9, 0.9, facecolor="C0" if on else "0.93",
                                   edgecolor="0.35", lw=0.8))
            if on:
                k = busy[(i, j)]
                ax.text(j + 0.45, y + 0.6, f"a{i}{k}·b{k}{j}", ha="center", va="center",
                        fontsize=7, color="white")
            ax.text(j + 0.45, y + 0.25, f"{done.get((i, j), 0)}/{K}", ha="center", va="center",
                    fontsize=7.5, color="white" if on else "0.35")
        waiting = " ".join(f"a{i}{k}" for k in reversed(queue_a[i]))
        ax.text(-0.12, y + 0.45, waiting + " →" if waiting else "", ha="right", va="center",
                fontsize=7, color="C1")
    for j in range(C):
        waiting = "\n".join(f"b{k}{j}" for k in reversed(queue_b[j]))
        ax.text(j + 0.45, R + 0.05, waiting + ("\n↓" if waiting else ""), ha="center", va="bottom",
                fontsize=7, color="C2", linespacing=0.9)
    ax.set_xlim(-2.0, C)
    ax.set_ylim(-0.05, R + 1.55)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title, fontsize=8.5, pad=2)


def systolic_frames(A: list, B: list, picks: list[int], cols: int = 2):
    """Key frames of ``systolic.frames(A, B)``: one panel per chosen cycle.

    Everything drawn is read off the frames: a PE's count of finished MACs, and the
    operands still queued at the left (A) and top (B) edges, which are those the edge
    PEs use in later frames.
    """
    frames = list(systolic.frames(A, B))
    R, K, C = len(A), len(B), len(B[0])
    done_by_cycle, done = [], {}
    for f in frames:  # MACs each PE has finished by the end of each cycle
        for i, j, _ in f["active"]:
            done[(i, j)] = done.get((i, j), 0) + 1
        done_by_cycle.append(dict(done))
    rows = (len(picks) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.45 * rows))
    for ax, t in zip(axes.flat, picks):
        f = frames[t]
        later = [(i, j, k) for g in frames[t + 1:] for i, j, k in g["active"]]
        queue_a = {i: [k for ii, j, k in later if ii == i and j == 0] for i in range(R)}
        queue_b = {j: [k for i, jj, k in later if jj == j and i == 0] for j in range(C)}
        _grid(ax, R, C, f, done_by_cycle[t], queue_a, queue_b,
              f"cycle {t}: {len(f['active'])} of {R * C} PEs busy", K)
    for ax in list(axes.flat)[len(picks):]:
        ax.axis("off")
    fig.subplots_adjust(wspace=0.02, hspace=0.14, left=0.01, right=0.99, top=0.95, bottom=0.01)
    return fig


def systolic_utilisation(ms: list[int], K: int, N: int, R: int, C: int):
    """``systolic.utilisation`` against the streamed dimension M, with and without weight loads."""
    fig, ax = plt.subplots(figsize=(6, 2.9))
    for load, style, label in ((False, "-", "weight loads hidden (double-buffered)"),
                               (True, "--", "weight loads exposed")):
        ax.plot(ms, [systolic.utilisation(m, K, N, R, C, include_weight_load=load) for m in ms],
                style, color="C0", lw=1.4, label=label)
    ax.set_xscale("log", base=2)
    ticks = ms[::2]
    ax.set_xticks(ticks, [fmt.num(m) for m in ticks])
    ax.minorticks_off()
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("Rows streamed through each weight tile, M (log scale)")
    ax.set_ylabel("Fraction of PE-cycles doing a MAC")
    ax.legend(loc="upper left", frameon=False)
    return fig


def roofline_ladder(peak: float, bw: float, label: str, points: list[tuple[str, float]]):
    """One roof from ``calc.roofline.curve`` with kernels (label, intensity) placed on it."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    lo, hi = min(i for _, i in points) / 2, max(max(i for _, i in points), roofline.ridge_point(peak, bw)) * 8
    pts = roofline.curve(peak, bw, lo, hi, n=300)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], color="C0", lw=2, label=f"roof: {label}")
    ridge = roofline.ridge_point(peak, bw)
    ax.axvline(ridge, color="C0", ls=":", lw=1)
    ax.text(ridge / 1.1, peak * 1.25, f"ridge {fmt.num(ridge)} FLOP/B", fontsize=8, color="C0",
            ha="right", va="bottom")
    for k, (name, i) in enumerate(points):
        att = roofline.attainable(i, peak, bw)
        ax.plot([i], [att], "o", color="C3" if i < ridge else "C2", ms=6, zorder=5)
        ax.annotate(f"{name}\n{fmt.num(i)} FLOP/B, {fmt.si(att, 'FLOP/s')}", (i, att),
                    textcoords="offset points", xytext=(6, -22 if k < len(points) - 1 else -26),
                    fontsize=7.5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(peak / 300, peak * 3)
    ax.set_xlabel("Arithmetic intensity (FLOP per global byte, log)")
    ax.set_ylabel("Attainable (FLOP/s, log)")
    ax.legend(frameon=False, loc="upper left", fontsize=8)
    return fig


def opening_reuse(T: int, naive_i: float):
    """The chapter's opening picture: C = A·B with one output's row and column (untiled: each
    element loaded for every output) beside one T × T tile of C and the two strips it loads once,
    each element then used T times. The untiled intensity is ``calc.tiling``'s. 3.5 in wide."""
    fig, axes = plt.subplots(1, 2, figsize=(3.5, 1.9))
    for ax, tile, text in ((axes[0], 1, f"one output at a time:\n{fmt.num(naive_i, 2)} FLOP/byte"),
                           (axes[1], T, f"a {T} × {T} tile: each\nelement used {T} times")):
        size, t = 1.0, (0.09 if tile == 1 else 0.3)
        # A at left, B on top, C at the bottom right (the usual picture of a product)
        ax.add_patch(Rectangle((0, 0), 0.45, 0.45, fc="white", ec="0.3"))             # A
        ax.add_patch(Rectangle((0.55, 0.55), 0.45, 0.45, fc="white", ec="0.3"))       # B
        ax.add_patch(Rectangle((0.55, 0), 0.45, 0.45, fc="white", ec="0.3"))          # C
        ax.add_patch(Rectangle((0, 0.45 - t * 0.45), 0.45, t * 0.45, fc="C0", alpha=0.45, ec="none"))
        ax.add_patch(Rectangle((0.55, 0.55), t * 0.45, 0.45, fc="C1", alpha=0.45, ec="none"))
        ax.add_patch(Rectangle((0.55, 0.45 - t * 0.45), t * 0.45, t * 0.45, fc="C3", alpha=0.7, ec="none"))
        for x, y, name in ((0.225, 0.2, "A"), (0.775, 0.8, "B"), (0.8, 0.2, "C")):
            ax.text(x, y, name, ha="center", va="center", fontsize=9)
        ax.text(0.5, -0.08, text, ha="center", va="top", fontsize=8.5)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.42, 1.02)
        ax.set_aspect("equal")
        ax.axis("off")
    fig.subplots_adjust(left=0.02, right=0.98, top=0.98, bottom=0.02, wspace=0.15)
    return fig
