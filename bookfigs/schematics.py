"""Schematic figures: pictures of how data moves, drawn from ``calc`` numbers.

Each function draws one diagram on a canvas measured in inches (one axes filling the figure,
its data units inches) and returns the figure. Every number printed on a diagram is computed
by ``calc`` or passed in by the chapter cell from ``calc``; the diagrams choose only layout.

Two rules keep them readable everywhere. They are at most ``MAX_WIDTH_IN`` wide, so that
the reader shows them whole on a 390-pixel phone screen; their smallest text is ``SMALL`` pt,
so that, shown at that width, it is at least 11 CSS pixels (``bookbuild.html.reader.figure_width``
sizes each figure so; tests/figures/test_schematics.py checks both). The page darkens them
for dark mode by inverting the SVG, like every static figure, so fills are light tints and
text is black or a full palette colour.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgba
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from calc import fmt, intensity, llm, roofline, tiling
from calc.cuda import LINE_BYTES
from calc.dtypes import size_bytes

#: widest canvas (inches): its natural size, 4/3 px per pt, fits a 390 px phone's column
MAX_WIDTH_IN = 3.5
#: smallest font (pt) and the normal one
SMALL, TEXT = 8.5, 9.0
COMPUTE, MEMORY, READ, WRITE, IDLE = "C0", "C3", "C0", "C1", "0.6"


def tint(colour: str, alpha: float = 0.18):
    """A light fill of ``colour`` (stays legible under the page's dark-mode inversion)."""
    return to_rgba(colour, alpha)


def solid(colour: str, alpha: float = 0.18):
    """``tint`` blended onto white: an opaque light fill that hides what lies beneath."""
    r, g, b, _ = to_rgba(colour)
    return (1 - alpha + alpha * r, 1 - alpha + alpha * g, 1 - alpha + alpha * b, 1.0)


def canvas(width: float, height: float):
    """A figure of ``width`` × ``height`` inches whose single axes has inch units, no frame."""
    if width > MAX_WIDTH_IN:
        raise ValueError(f"a schematic is at most {MAX_WIDTH_IN} in wide, got {width}")
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.axis("off")
    return fig, ax


def crop(fig, ax, bottom: float):
    """Cut the canvas off below ``bottom`` (inches), for a diagram laid out from the top down."""
    x0, x1 = ax.get_xlim()
    top = ax.get_ylim()[1]
    ax.set_ylim(bottom, top)
    fig.set_size_inches(x1 - x0, top - bottom)


def box(ax, x, y, w, h, text="", colour="0.3", fill=None, size=TEXT, **kw):
    """A rounded box with centred ``text``; (x, y) is its lower-left corner."""
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=0.05",
                                fc=tint(colour) if fill is None else fill, ec=colour, lw=1))
    if text:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size, **kw)


def arrow(ax, start, end, colour="0.25", width=1.2, style="-|>", mutation=9, **kw):
    """A straight arrow from ``start`` to ``end`` (inches)."""
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=mutation, color=colour,
                                 lw=width, shrinkA=0, shrinkB=0, **kw))


# ----------------------------------------------------------------- chapter 1: data movement

def hierarchy_path(levels):
    """The path a byte climbs from the host to an SM's registers (``calc.hierarchy`` levels,
    fastest first): one box a level with its capacity, one arrow a hop with the bandwidth
    and latency of the level it leaves. Arrow widths grow with the logarithm of bandwidth."""
    import math

    by = {lv.name: lv for lv in levels}
    regs = levels[0]
    order = [lv for lv in levels[1:] if lv.capacity_bytes is not None]        # on the GPU
    host = [lv for lv in levels if lv.capacity_bytes is None and lv.bw_bytes_per_s is not None]
    W, row, gap = MAX_WIDTH_IN, 0.42, 0.46
    H = row * (len(order) + 2) + gap * (len(order) + 1) + 0.25
    fig, ax = canvas(W, H)
    bx, bw = 0.05, 1.55
    bws = [lv.bw_bytes_per_s.value for lv in levels if lv.bw_bytes_per_s]
    lo, hi = math.log10(min(bws)), math.log10(max(bws))

    def lw(v):
        return 1.2 + 5.0 * (math.log10(v) - lo) / (hi - lo)

    def capacity(lv):
        return fmt.bytes_iec(lv.capacity_bytes.value)

    y = H - row - 0.05
    box(ax, bx, y, bw, row, f"SM registers\n{capacity(regs)} in all", COMPUTE, size=TEXT)
    ax.text(bx + bw + 0.12, y + row / 2, "operands read\ninside the pipeline", fontsize=SMALL,
            va="center", color="0.25")
    tops = [y]
    for lv in order:
        y -= row + gap
        box(ax, bx, y, bw, row, f"{lv.name}\n{capacity(lv)}", MEMORY if lv is order[-1] else COMPUTE,
            size=SMALL)
        tops.append(y)
        top = y + row
        arrow(ax, (bx + bw / 2, top), (bx + bw / 2, top + gap), width=lw(lv.bw_bytes_per_s.value))
        lat = fmt.si(lv.latency_s.value, "s")
        ax.text(bx + bw / 2 + 0.16, top + gap / 2,
                f"{fmt.si(lv.bw_bytes_per_s.value, 'B/s')}\n≈ {lat} a load", fontsize=SMALL, va="center")
    # the host: DRAM over PCIe x16 up into HBM, and the SSD beside it
    y -= row + gap
    dram = host[0]
    box(ax, bx, y, bw, row, "host DRAM", "0.35", size=TEXT)
    top = y + row
    arrow(ax, (bx + bw / 2, top), (bx + bw / 2, top + gap), width=lw(dram.bw_bytes_per_s.value))
    ax.text(bx + bw / 2 + 0.16, top + gap / 2, f"PCIe Gen4 x16\n{fmt.si(dram.bw_bytes_per_s.value, 'B/s')}"
            " each way", fontsize=SMALL, va="center")
    if len(host) > 1:
        ssd = host[1]
        sx = bx + bw + 0.45
        box(ax, sx, y, W - sx - 0.05, row, "NVMe SSD", "0.35", size=TEXT)
        arrow(ax, (sx, y + row / 2), (bx + bw, y + row / 2), width=lw(ssd.bw_bytes_per_s.value))
        ax.text(sx + (W - sx - 0.05) / 2, y - 0.04, f"PCIe x4: {fmt.si(ssd.bw_bytes_per_s.value, 'B/s')}",
                fontsize=SMALL, ha="center", va="top")
    # where each level lives: the chip (registers to L2), the package (HBM), the host
    y0, y1 = tops[len(order) - 1], tops[0] + row
    ax.plot([W - 0.1] * 2, [y0, y1], color="0.45", lw=1)
    ax.text(W - 0.15, (y0 + y1) / 2, "on the GPU chip", rotation=90, fontsize=SMALL, ha="right",
            va="center", color="0.3")
    ax.text(bx + bw + 0.12, tops[len(order)] + row / 2, "on the package,\nbeside the chip", fontsize=SMALL,
            va="center", color="0.3")
    ax.set_ylim(-0.16, H)
    fig.set_size_inches(W, H + 0.16)
    return fig


def littles_law_pipe(bw: float, latency_s: float, cycles: int, value_bytes: int = 4):
    """Little's law as a pipe between an SM and HBM: the pipe's length is the latency, its flow
    the bandwidth, and what it holds, bandwidth × latency, is the data that must be in flight."""
    in_flight = bw * latency_s
    W, H = MAX_WIDTH_IN, 1.85
    fig, ax = canvas(W, H)
    y0, ph = 1.02, 0.42                                           # pipe bottom and height
    box(ax, 0.02, y0 - 0.12, 0.5, ph + 0.24, "SM", COMPUTE, size=TEXT)
    box(ax, W - 0.6, y0 - 0.12, 0.58, ph + 0.24, "HBM", MEMORY, size=TEXT)
    x0, x1 = 0.6, W - 0.68
    ax.add_patch(Rectangle((x0, y0), x1 - x0, ph, fc=tint("0.5", 0.12), ec="0.3", lw=1))
    n = 9
    step = (x1 - x0) / n
    for k in range(n):                                            # data on its way to the SM
        ax.add_patch(Rectangle((x0 + k * step + 0.05, y0 + 0.09), step - 0.1, ph - 0.18,
                               fc=tint(MEMORY, 0.45), ec=MEMORY, lw=0.8))
    arrow(ax, (x1 - 0.05, y0 + ph + 0.13), (x0 + 0.05, y0 + ph + 0.13), colour=MEMORY, width=1.2)
    ax.text((x0 + x1) / 2, y0 + ph + 0.2, f"data flows at {fmt.si(bw, 'B/s')}", ha="center",
            va="bottom", fontsize=TEXT, color="0.15")
    ax.annotate("", (x0, y0 - 0.14), (x1, y0 - 0.14),
                arrowprops=dict(arrowstyle="<|-|>", color="0.3", lw=1, mutation_scale=7, shrinkA=0, shrinkB=0))
    ax.text((x0 + x1) / 2, y0 - 0.2, f"length = latency ≈ {fmt.si(latency_s, 's')}\n({cycles} clock cycles)",
            ha="center", va="top", fontsize=SMALL)
    lines = in_flight / LINE_BYTES
    ax.text(W / 2, 0.02,
            f"in flight = {fmt.si(bw, 'B/s')} × {fmt.si(latency_s, 's')} = {fmt.bytes_si(in_flight)}\n"
            f"= {fmt.num(in_flight / value_bytes, 2)} FP32 values, or {fmt.num(lines, 2)} "
            f"loads of {LINE_BYTES} B",
            ha="center", va="bottom", fontsize=SMALL, color="0.1")
    return fig


# ----------------------------------------------------------------- chapter 2: roofline

def two_pipes(bw: float, peak: float, intensities):
    """The toy processor as two pipes in series: bytes flow from memory at ``bw`` B/s, and each
    byte carries ``I`` FLOPs to a compute pipe that finishes at most ``peak`` FLOP/s. For each
    intensity the slower pipe sets the rate: min(peak, bw × I) (``calc.roofline.attainable``)."""
    W = MAX_WIDTH_IN
    row = 0.88
    H = 0.95 + row * len(intensities)
    fig, ax = canvas(W, H)
    top = H - 0.1
    box(ax, 0.02, top - 0.5, 0.72, 0.46, "memory", MEMORY)
    box(ax, W - 0.9, top - 0.5, 0.88, 0.46, "compute", COMPUTE)
    ax.add_patch(Rectangle((0.78, top - 0.34), W - 1.72, 0.14, fc=tint(MEMORY, 0.3), ec=MEMORY, lw=0.8))
    arrow(ax, (0.8, top - 0.27), (W - 0.96, top - 0.27), colour=MEMORY, width=1.1)
    ax.text(W / 2 - 0.05, top - 0.14, f"memory pipe: {fmt.num(bw)} bytes/s", ha="center", va="bottom",
            fontsize=SMALL, color=MEMORY)
    ax.text(W - 0.46, top - 0.56, f"at most\n{fmt.num(peak)} FLOP/s", ha="center", va="top",
            fontsize=SMALL, color=COMPUTE)
    y = top - 0.95
    for I in intensities:
        fed = bw * I
        rate = roofline.attainable(I, peak, bw)
        bound = "memory-bound" if fed < peak else "compute-bound"
        busy = min(1.0, fed / peak)                                  # share of time compute works
        ax.text(0.05, y, f"I = {fmt.num(I)} FLOP/byte: {bound}", fontsize=TEXT, va="top", weight="bold",
                color=MEMORY if fed < peak else COMPUTE)
        bar_y, bar_w = y - 0.58, W - 0.1
        ax.add_patch(Rectangle((0.05, bar_y), bar_w, 0.14, fc="none", ec="0.5", lw=0.6))
        ax.add_patch(Rectangle((0.05, bar_y), bar_w * busy, 0.14, fc=tint(COMPUTE, 0.5), ec=COMPUTE, lw=0.6))
        ax.text(0.05, y - 0.22, f"{fmt.num(bw)} × {fmt.num(I)} = {fmt.num(fed)} FLOP/s fed; "
                f"runs at {fmt.num(rate)}", fontsize=SMALL, va="top", color="0.15")
        ax.text(0.05 + bar_w * busy + 0.04 if busy < 0.7 else 0.09, bar_y + 0.07,
                f"compute busy {fmt.pct(busy, 2)}", fontsize=SMALL, va="center",
                color="0.2")
        y -= row
    crop(fig, ax, y + row - 0.66)
    return fig


def weight_reuse(batches, d_in: int, d_out: int, dtype: str = "bf16"):
    """One read of a weight matrix serves every token of the batch: for each batch b, the
    matrix (read once from HBM) and b token vectors, with the FLOPs and bytes of
    ``calc.intensity.decode_matmul``: the intensity grows with b."""
    W = MAX_WIDTH_IN
    rows = [(b, intensity.decode_matmul(b, d_in, d_out, dtype)) for b in batches]
    row = 0.92
    H = 0.42 + row * len(rows)
    fig, ax = canvas(W, H)
    ax.text(0.05, H - 0.04, f"A {fmt.num(d_in)} × {fmt.num(d_out)} weight matrix in {dtype.upper()},\n"
            "read once from HBM, used by every token of the batch", fontsize=SMALL, va="top", color="0.2")
    y = H - 0.5
    for b, cost in rows:
        y -= row
        box(ax, 0.05, y + 0.12, 0.62, 0.62, "W", MEMORY)
        arrow(ax, (0.72, y + 0.43), (0.95, y + 0.43), width=1)
        shown = min(b, 8)
        for k in range(shown):
            ax.add_patch(Rectangle((1.0 + k * 0.11, y + 0.17), 0.08, 0.52, fc=tint(COMPUTE, 0.45), ec=COMPUTE, lw=0.6))
        if b > shown:
            ax.text(1.0 + shown * 0.11 + 0.02, y + 0.43, "…", fontsize=TEXT, va="center")
        ax.text(1.0, y + 0.08, fmt.count(b, "token"), fontsize=SMALL, va="top", color=COMPUTE)
        ax.text(2.12, y + 0.43, f"{fmt.si(cost.flops, 'FLOP')}\non {fmt.bytes_si(cost.bytes_)}\n"
                f"= {fmt.num(cost.intensity, 2)} FLOP/byte", fontsize=SMALL, va="center")
    crop(fig, ax, y - 0.05)
    return fig


def tile_reuse(tiles, dtype: str = "bf16"):
    """A T×T tile of A and one of B, loaded once into fast memory, feed a T×T×T block of
    multiply-adds: each value loaded is used T times, so FLOPs per byte loaded grow with T.
    FLOPs from ``calc.intensity.gemm``, bytes from ``calc.tiling.smem_bytes_per_block``."""
    cell = 0.055
    rows = [(T, intensity.gemm(T, T, T, dtype).flops, tiling.smem_bytes_per_block(T, dtype)) for T in tiles]
    heights = [max(T * cell, 0.3) for T in tiles]
    widest = max(tiles) * cell
    xa, xb = 0.1, 0.1 + widest + 0.45
    xt = xb + widest + 0.45
    W = MAX_WIDTH_IN
    H = sum(heights) + 0.34 * len(tiles) + 0.66
    fig, ax = canvas(W, H)
    ax.text(0.05, H - 0.04, f"A T × T tile of A and one of B, loaded once into\nfast memory: each "
            f"value is used T times\n({dtype.upper()}, {fmt.count(size_bytes(dtype), 'byte')} a value).",
            fontsize=SMALL, va="top", color="0.2")
    y = H - 0.56
    for (T, flops, nbytes), h in zip(rows, heights):
        y -= h + 0.34
        side = T * cell
        cy = y + h / 2
        for k, (x, colour) in enumerate(((xa, "C0"), (xb, "C2"))):
            for i in range(T):
                for j in range(T):
                    ax.add_patch(Rectangle((x + j * cell, cy - side / 2 + i * cell), cell, cell,
                                           fc=tint(colour, 0.35), ec=colour, lw=0.6))
            ax.text(x + side + 0.04, cy, "A" if k == 0 else "B", fontsize=SMALL, va="center", color=colour)
        ax.text(xb - 0.16, cy, "×", fontsize=TEXT, ha="center", va="center")
        ax.text(0.05, y + h + 0.05, f"T = {T}", fontsize=TEXT, va="bottom", weight="bold")
        arrow(ax, (xt - 0.2, cy), (xt - 0.04, cy), width=1)
        ax.text(xt, cy, f"{fmt.count(2 * T * T, 'value')} ({fmt.num(nbytes)} B) loaded\n"
                f"{fmt.num(flops)} FLOPs done\n= {fmt.num(flops / nbytes)} FLOP per byte",
                fontsize=SMALL, va="center")
    return fig


def transformer_layer(ops, peak: float, bw: float, dims: str):
    """One transformer layer as a column of operations, top to bottom: each box names the
    operation and the shapes it multiplies or touches (symbols, defined by ``dims``), and beside
    it its HBM bytes and intensity; memory-bound operations are red, compute-bound blue.
    ``ops``: (label, shape text, calc Cost)."""
    W, row, gap = MAX_WIDTH_IN, 0.42, 0.12
    H = len(ops) * (row + gap) + 0.66
    fig, ax = canvas(W, H)
    bw_box = 2.05
    y = H - 0.16
    for k, (label, shape, cost) in enumerate(ops):
        y -= row
        reg = roofline.regime(cost.intensity, peak, bw)
        colour = COMPUTE if reg == "compute-bound" else MEMORY
        box(ax, 0.05, y, bw_box, row, "", colour)
        ax.text(0.12, y + row * 0.7, label, fontsize=TEXT, va="center")
        ax.text(0.12, y + row * 0.27, shape, fontsize=SMALL, va="center", color="0.25")
        ax.text(bw_box + 0.14, y + row * 0.7, fmt.bytes_si(cost.bytes_), fontsize=SMALL, va="center")
        ax.text(bw_box + 0.14, y + row * 0.27, f"{fmt.num(cost.intensity)} FLOP/B", fontsize=SMALL,
                va="center", color=colour)
        if k < len(ops) - 1:
            arrow(ax, (0.05 + bw_box / 2, y), (0.05 + bw_box / 2, y - gap), width=0.9, mutation=6)
        y -= gap
    ax.text(bw_box + 0.14, H - 0.02, "HBM bytes, FLOP/B", fontsize=SMALL, va="top", color="0.3")
    ax.text(0.05, 0.3, dims, fontsize=SMALL, va="center")
    ax.add_patch(Rectangle((0.05, 0.02), 0.16, 0.12, fc=tint(MEMORY), ec=MEMORY))
    ax.text(0.26, 0.08, "memory-bound", fontsize=SMALL, va="center")
    ax.add_patch(Rectangle((1.45, 0.02), 0.16, 0.12, fc=tint(COMPUTE), ec=COMPUTE))
    ax.text(1.66, 0.08, "compute-bound", fontsize=SMALL, va="center")
    return fig


# ----------------------------------------------------------------- chapter 7: serving

def kv_timeline(m, prompt_tokens: int, decode_steps: int, dtype: str = "bf16"):
    """One sequence's KV cache over time, a row per step: prefill writes the whole prompt's
    keys and values in one step; each decode step reads every cached token and appends one.
    Bytes per token from ``calc.llm.model_kv_bytes_per_token``."""
    per_token = llm.model_kv_bytes_per_token(m, dtype)
    n = prompt_tokens + decode_steps
    W = MAX_WIDTH_IN
    cell, x0 = 0.16, 0.88
    rows = decode_steps + 1
    H = rows * 0.36 + 1.25
    fig, ax = canvas(W, H)
    ax.text(0.05, H - 0.05, f"one column = one token's keys and values:\n{fmt.num(m.layers)} layers × 2 × "
            f"{fmt.num(m.kv_heads)} KV heads × {fmt.num(m.head_dim)} × {fmt.num(size_bytes(dtype))} B"
            f" = {fmt.bytes_iec(per_token)}", fontsize=SMALL, va="top")
    y = H - 0.72
    ax.text(x0, y + 0.02, "token positions →", fontsize=SMALL, va="bottom", color="0.3")
    ax.text(0.05, y + 0.02, "steps ↓", fontsize=SMALL, va="bottom", color="0.3")
    for step in range(rows):
        y -= 0.36
        cached = 0 if step == 0 else prompt_tokens + step - 1
        written = prompt_tokens if step == 0 else 1
        for t in range(n):
            if t < cached:
                fc, ec = tint(READ, 0.35), READ
            elif t < cached + written:
                fc, ec = tint(WRITE, 0.75), WRITE
            else:
                fc, ec = "white", "0.75"
            ax.add_patch(Rectangle((x0 + t * cell, y), cell * 0.92, 0.26, fc=fc, ec=ec, lw=0.7))
        label = "prefill" if step == 0 else f"decode {step}"
        ax.text(0.05, y + 0.13, label, fontsize=SMALL, va="center", weight="bold" if step == 0 else None)
        right = x0 + n * cell + 0.06
        text = (f"writes {fmt.bytes_iec(written * per_token)}" if step == 0 else
                f"reads {fmt.bytes_iec(cached * per_token)}")
        ax.text(right, y + 0.13, text, fontsize=SMALL, va="center")
    ax.add_patch(Rectangle((0.05, 0.05), 0.15, 0.13, fc=tint(WRITE, 0.75), ec=WRITE))
    ax.text(0.25, 0.11, "written this step", fontsize=SMALL, va="center")
    ax.add_patch(Rectangle((1.75, 0.05), 0.15, 0.13, fc=tint(READ, 0.35), ec=READ))
    ax.text(1.95, 0.11, "read this step", fontsize=SMALL, va="center")
    ax.text(0.05, 0.3, f"a prompt of {fmt.count(prompt_tokens, 'token')} ({m.label}, {dtype.upper()})",
            fontsize=SMALL, va="bottom", color="0.3")
    return fig


def head_sharing(m, dtype: str = "bf16"):
    """Query heads and the key/value heads they read, for MHA, the model's own grouping and MQA:
    one line a query head to its KV head; beside each, the KV cache per token (``calc.llm``)."""
    kinds = []
    for kv in (m.heads, m.kv_heads, 1):
        v = m if kv == m.kv_heads else m.with_kv_heads(kv)
        if all(v.kv_heads != k.kv_heads for k in kinds):
            kinds.append(v)
    W = MAX_WIDTH_IN
    panel = 1.02
    H = panel * len(kinds) + 0.3
    fig, ax = canvas(W, H)
    x0, span = 0.08, W - 0.16
    qw = span / m.heads
    ax.text(x0, H - 0.04, f"{fmt.num(m.heads)} query heads (green) read cached KV heads (orange)",
            fontsize=SMALL, va="top", color="0.2")
    for p, v in enumerate(kinds):
        top = H - p * panel - 0.25
        ax.text(x0, top, f"{v.attention_kind}: {fmt.count(v.kv_heads, 'KV head')}, "
                f"{fmt.bytes_iec(llm.model_kv_bytes_per_token(v, dtype))} a token", fontsize=TEXT, va="top",
                weight="bold")
        qy, ky = top - 0.42, top - 0.86
        kw = span / v.kv_heads
        for h in range(m.heads):
            ax.add_patch(Rectangle((x0 + h * qw + qw * 0.1, qy), qw * 0.8, 0.16, fc=tint("C2", 0.5), ec="C2", lw=0.5))
            g = h // v.group_size
            arrow(ax, (x0 + (g + 0.5) * kw, ky + 0.16), (x0 + (h + 0.5) * qw, qy), colour="0.45",
                  width=0.5, style="-")
        for g in range(v.kv_heads):
            ax.add_patch(Rectangle((x0 + g * kw + min(kw * 0.1, 0.05), ky), kw - 2 * min(kw * 0.1, 0.05), 0.16,
                                   fc=tint(WRITE, 0.7), ec=WRITE, lw=0.6))
    return fig


def paged_blocks(lengths_tokens, max_tokens: int, block_tokens: int):
    """Three sequences' KV cache, allocated two ways: a contiguous slab of ``max_tokens`` slots
    each (``calc.llm.contiguous_allocation``), and blocks of ``block_tokens`` handed out as the
    sequences grow, found through each sequence's block table (``calc.llm.block_tables``)."""
    colours = ("C0", "C2", "C4", "C1", "C5")
    cont = llm.contiguous_allocation(lengths_tokens, max_tokens)
    paged = llm.paged_allocation(lengths_tokens, block_tokens)
    tables = llm.block_tables(lengths_tokens, block_tokens)
    nblocks = max(b for t in tables for b in t) + 1
    W = MAX_WIDTH_IN
    slot = min((W - 0.55) / max_tokens, 0.18)
    n = len(lengths_tokens)
    per_row = max(1, int((W - 1.15) // (block_tokens * slot + 0.08)))
    mem_rows = -(-nblocks // per_row)
    H = 0.6 + n * 0.3 + 0.35 + 0.45 + max(n * 0.3, mem_rows * 0.5) + 0.3
    fig, ax = canvas(W, H)
    names = [chr(ord("A") + i) for i in range(n)]
    y = H - 0.05
    ax.text(0.05, y, f"Contiguous: {fmt.num(max_tokens)} slots reserved each", fontsize=TEXT, va="top", weight="bold")
    y -= 0.3
    for i, length in enumerate(lengths_tokens):
        y -= 0.3
        ax.text(0.05, y + 0.1, names[i], fontsize=TEXT, va="center", color=colours[i])
        for t in range(max_tokens):
            used = t < length
            ax.add_patch(Rectangle((0.3 + t * slot, y), slot * 0.9, 0.2, fc=tint(colours[i], 0.6) if used else "white",
                                   ec=colours[i] if used else "0.6", lw=0.6, hatch=None if used else "////"))
    y -= 0.08
    ax.text(0.05, y, f"{fmt.num(cont.used_tokens)} tokens in {fmt.num(cont.allocated_tokens)} slots: "
            f"{fmt.pct(cont.waste_fraction)} wasted", fontsize=SMALL, va="top")
    y -= 0.42
    ax.text(0.05, y, f"Paged: blocks of {fmt.count(block_tokens, 'slot')}, taken as needed",
            fontsize=TEXT, va="top", weight="bold")
    y -= 0.3
    bw_ = block_tokens * slot
    mem_x = W - per_row * (bw_ + 0.08) + 0.04
    ax.text(0.05, y, "block tables", fontsize=SMALL, va="top", color="0.3")
    ax.text(mem_x, y, "physical blocks in HBM", fontsize=SMALL, va="top", color="0.3")
    owner = {b: (i, j) for i, t in enumerate(tables) for j, b in enumerate(t)}
    where = {}
    for b in range(nblocks):
        i, j = owner[b]
        x = mem_x + (b % per_row) * (bw_ + 0.08)
        by = y - 0.55 - (b // per_row) * 0.5
        where[b] = (x, by)
        filled = min(block_tokens, lengths_tokens[i] - j * block_tokens)
        for t in range(block_tokens):
            used = t < filled
            ax.add_patch(Rectangle((x + t * slot, by), slot * 0.9, 0.2,
                                   fc=tint(colours[i], 0.6) if used else "white", ec=colours[i] if used else "0.6",
                                   lw=0.6, hatch=None if used else "////"))
        ax.text(x + bw_ / 2, by + 0.23, f"block {b}", fontsize=SMALL, ha="center", va="bottom", color="0.3")
    ty = y - 0.25
    for i, t in enumerate(tables):
        ty -= 0.3
        ax.text(0.05, ty + 0.1, f"{names[i]}: [{', '.join(str(b) for b in t)}]", fontsize=TEXT, va="center",
                color=colours[i])
    bottom = min(min(by for _, by in where.values()) - 0.3, ty - 0.2)
    ax.text(0.05, bottom, f"{fmt.num(paged.used_tokens)} tokens in {fmt.num(paged.allocated_tokens)} slots: "
            f"{fmt.pct(paged.waste_fraction)} wasted", fontsize=SMALL, va="bottom")
    crop(fig, ax, bottom - 0.04)
    return fig


def batching_timelines(lengths_tokens, slots: int):
    """The same queue of requests served by static batches and by continuous batching
    (``calc.llm.static_batching``, ``continuous_batching``): batch slots down, decode steps across,
    each request a bar as long as the tokens it generates; grey is a slot left idle."""
    colours = [f"C{k}" for k in (0, 1, 2, 4, 5, 6, 8, 9)]
    scheds = [llm.static_batching(lengths_tokens, slots), llm.continuous_batching(lengths_tokens, slots)]
    steps = max(s.steps for s in scheds)
    W = MAX_WIDTH_IN
    x0 = 0.42
    unit = (W - x0 - 0.08) / steps
    panel = slots * 0.22 + 0.62
    H = panel * 2 + 0.2
    fig, ax = canvas(W, H)
    for p, s in enumerate(scheds):
        top = H - p * panel - 0.04
        ax.text(0.05, top, f"{s.policy.capitalize()} batching: {fmt.count(s.steps, 'step')}, "
                f"{fmt.pct(s.utilisation)} busy", fontsize=TEXT, va="top", weight="bold")
        base = top - 0.3 - slots * 0.22
        ax.add_patch(Rectangle((x0, base), s.steps * unit, slots * 0.22, fc=tint(IDLE, 0.35), ec="none"))
        for slot in range(slots):
            ax.text(x0 - 0.06, base + (slots - 1 - slot) * 0.22 + 0.1, f"slot {slot + 1}", fontsize=SMALL,
                    ha="right", va="center")
        for r, (slot, start, n) in enumerate(s.runs):
            yy = base + (slots - 1 - slot) * 0.22 + 0.02
            c = colours[r % len(colours)]
            ax.add_patch(Rectangle((x0 + start * unit, yy), n * unit - 0.02, 0.17, fc=tint(c, 0.6), ec=c, lw=0.8))
            ax.text(x0 + (start + n / 2) * unit, yy + 0.085, chr(ord("a") + r), fontsize=SMALL, ha="center",
                    va="center")
        if s.policy == "static":
            for start in sorted({st for _, st, _ in s.runs})[1:]:
                ax.plot([x0 + start * unit] * 2, [base - 0.03, base + slots * 0.22 + 0.03], color="0.2", lw=1, ls="--")
    ax.annotate("", (x0 + steps * unit, 0.3), (x0, 0.3),
                arrowprops=dict(arrowstyle="-|>", color="0.3", lw=1, mutation_scale=7, shrinkA=0, shrinkB=0))
    ax.text(x0, 0.24, "decode steps (one token per request each)", fontsize=SMALL, va="top")
    return fig


# ----------------------------------------------------------------- chapter 3: inside a GPU

def bank_passes(cases):
    """Shared memory's banks as columns and passes as rows: for each (title, stride in 4-byte
    words), lane i of a warp reads word i · stride, and its cell lands in its bank
    (``calc.cuda.bank_of``) at the pass in which that bank serves it. A tower is a conflict."""
    from calc import cuda

    cell = (MAX_WIDTH_IN - 0.55) / cuda.SMEM_BANKS
    row = min(cell, 0.06)
    layouts = []
    for title, stride in cases:
        addrs = [lane * stride * cuda.SMEM_BANK_BYTES for lane in range(cuda.WARP_SIZE)]
        words: dict[int, list[int]] = {}
        place = []
        for lane, a in enumerate(addrs):
            bank, word = cuda.bank_of(a), a // cuda.SMEM_BANK_BYTES
            seen = words.setdefault(bank, [])
            if word not in seen:
                seen.append(word)
            place.append((lane, bank, seen.index(word)))
        passes = cuda.bank_conflict_degree_of(addrs)
        assert passes == max(p for _, _, p in place) + 1
        layouts.append((title, stride, place, passes))
    W = MAX_WIDTH_IN
    H = sum(0.62 + p * row for *_, p in layouts) + 0.35
    fig, ax = canvas(W, H)
    x0 = 0.45
    y = H - 0.04
    for title, stride, place, passes in layouts:
        ax.text(0.05, y, f"{title}: {fmt.count(passes, 'pass', 'passes')}", fontsize=TEXT, va="top",
                weight="bold", color=MEMORY if passes > 1 else "C2")
        base = y - 0.34 - passes * row
        ax.add_patch(Rectangle((x0, base), cuda.SMEM_BANKS * cell, passes * row, fc="none", ec="0.6", lw=0.6))
        for lane, bank, p in place:
            colour = MEMORY if passes > 1 else "C2"
            ax.add_patch(Rectangle((x0 + bank * cell, base + p * row), cell * 0.9, row * 0.9,
                                   fc=tint(colour, 0.6), ec=colour, lw=0.4))
        idle = cuda.SMEM_BANKS - len({bank for _, bank, _ in place})
        if idle and passes > 4:
            ax.text(x0 + (cuda.SMEM_BANKS + 1) * cell / 2, base + passes * row / 2,
                    f"{fmt.num(idle)} banks idle", fontsize=SMALL, ha="center", va="center", color="0.3")
        ax.text(x0 - 0.05, base + passes * row / 2, "passes" if passes > 1 else "1 pass", fontsize=SMALL,
                ha="right", va="center", rotation=90 if passes > 4 else 0, color="0.3")
        y = base - 0.28
    for b in (0, cuda.SMEM_BANKS - 1):
        ax.text(x0 + (b + 0.45) * cell, y + 0.24, str(b), fontsize=SMALL, ha="center", va="top", color="0.3")
    ax.text(x0 + cuda.SMEM_BANKS * cell / 2, y + 0.24, f"bank ({fmt.num(cuda.SMEM_BANKS)} in all)",
            fontsize=SMALL, ha="center", va="top", color="0.3")
    crop(fig, ax, y - 0.02)
    return fig


def warp_divergence(cases, path_cycles: int):
    """A warp's 32 lanes at a branch: for each (title, condition on the thread number), the lanes
    coloured by the side they take, then the passes the warp makes, one per side some lane takes,
    the other lanes masked off. The passes' cycles add (``path_cycles`` each)."""
    from calc import cuda

    n = cuda.WARP_SIZE
    x0 = 0.42
    cell = (MAX_WIDTH_IN - x0 - 0.05) / n
    sides = {True: ("A", "C0"), False: ("B", "C1")}
    layouts = []
    for title, cond in cases:
        takes = [bool(cond(lane)) for lane in range(n)]
        order = [t for t in (True, False) if t in takes]
        layouts.append((title, takes, order))
    W = MAX_WIDTH_IN
    H = sum(0.78 + 0.2 * len(order) for *_, order in layouts) + 0.3
    fig, ax = canvas(W, H)
    y = H - 0.04
    for title, takes, order in layouts:
        cycles = len(order) * path_cycles
        ax.text(0.05, y, f"{title}: {fmt.count(len(order), 'pass', 'passes')}, {fmt.num(cycles)} cycles",
                fontsize=TEXT, va="top", weight="bold", color=MEMORY if len(order) > 1 else "C2")
        y -= 0.42
        ax.text(x0 - 0.05, y + 0.07, "lanes", fontsize=SMALL, ha="right", va="center", color="0.3")
        for lane, t in enumerate(takes):
            colour = sides[t][1]
            ax.add_patch(Rectangle((x0 + lane * cell, y), cell * 0.9, 0.14, fc=tint(colour, 0.6), ec=colour, lw=0.4))
        for side in order:
            y -= 0.2
            name, colour = sides[side]
            ax.text(x0 - 0.05, y + 0.07, name, fontsize=SMALL, ha="right", va="center", color=colour)
            for lane, t in enumerate(takes):
                on = t == side
                ax.add_patch(Rectangle((x0 + lane * cell, y), cell * 0.9, 0.14,
                                       fc=tint(colour, 0.6) if on else "none", ec=colour if on else "0.75",
                                       lw=0.4, hatch=None if on else "////"))
        y -= 0.2
    for lane in (0, n - 1):
        ax.text(x0 + (lane + 0.45) * cell, y + 0.14, str(lane), fontsize=SMALL, ha="center", va="top", color="0.3")
    ax.text(x0 + n * cell / 2, y + 0.14, f"lane ({n} a warp); hatched: masked off", fontsize=SMALL,
            ha="center", va="top", color="0.3")
    crop(fig, ax, y - 0.1)
    return fig


def occupancy_bins(occ, lim, threads: int, regs: int, smem: int):
    """An SM's resources as bins filled block by block (``calc.occupancy``): warp slots,
    registers and shared memory, each with as many blocks as it could hold; the smallest count
    is the blocks resident, and the bin that sets it is drawn in the memory colour."""
    from calc import cuda

    warps = cuda.warps_per_block(threads)
    bins = [("warp slots", occ.limits["warps"], f"{fmt.num(warps)} of {fmt.num(lim.max_warps_per_sm)} a block"),
            ("registers", occ.limits["registers"], f"{fmt.num(regs * threads)} of {fmt.num(lim.regs_per_sm)} a block"),
            ("shared memory", occ.limits["shared memory"],
             f"{fmt.num(occ.smem_charged_per_block)} of {fmt.num(lim.smem_per_sm_bytes)} B a block")]
    W = MAX_WIDTH_IN
    most = max(n for _, n, _ in bins)
    H = 0.78 * len(bins) + 0.4
    fig, ax = canvas(W, H)
    y = H - 0.05
    width = W - 0.1
    for name, fits, note in bins:
        binds = name in occ.limiters
        colour = MEMORY if binds else "0.45"
        ax.text(0.05, y, f"{name}: room for {fmt.count(fits, 'block')}", fontsize=TEXT, va="top",
                weight="bold" if binds else "normal", color=colour)
        by = y - 0.4
        ax.add_patch(Rectangle((0.05, by), width, 0.16, fc="none", ec="0.5", lw=0.7))
        seg = width / most
        for k in range(fits):
            resident = k < occ.active_blocks
            ax.add_patch(Rectangle((0.05 + k * seg + 0.01, by + 0.015), seg - 0.02, 0.13,
                                   fc=tint("C0" if resident else "0.6", 0.55 if resident else 0.2),
                                   ec="C0" if resident else "0.6", lw=0.5))
        ax.text(0.05, by - 0.04, note, fontsize=SMALL, va="top", color="0.3")
        y -= 0.78
    ax.text(0.05, y + 0.05, f"resident: {fmt.count(occ.active_blocks, 'block')} = {fmt.num(occ.active_warps)} warps, "
            f"{fmt.pct(occ.occupancy)}", fontsize=SMALL, va="top", color="C0")
    crop(fig, ax, y - 0.1)
    return fig


# ----------------------------------------------------------------- chapter 6: attention

def flash_streaming(N: int, d: int, block_rows: int, block_cols: int, dtype: str, score_dtype: str = "fp32"):
    """FlashAttention with query blocks outside (the chapter's Kernel 4): one thread block keeps
    its ``block_rows`` queries and their output on chip and streams K and V through shared memory
    in blocks of ``block_cols`` keys; each block of scores is made, used and dropped there. HBM
    traffic from ``calc.attention`` beside standard attention's, which writes S and P."""
    import math

    from calc import attention

    s = size_bytes(dtype)
    tr, tc = math.ceil(N / block_rows), math.ceil(N / block_cols)
    flash = attention.flash_query_outer(N, d, block_rows, dtype)
    std = attention.naive(N, d, dtype)
    W = MAX_WIDTH_IN
    H = 4.0
    fig, ax = canvas(W, H)
    # HBM: Q, K, V, O as N × d strips cut into blocks
    ax.add_patch(Rectangle((0.02, 2.75), W - 0.04, 1.23, fc=tint(MEMORY, 0.08), ec=MEMORY, lw=0.8))
    ax.text(0.1, 3.93, f"HBM: Q, K, V and O, {fmt.num(N)} × {fmt.num(d)} each ({dtype.upper()})",
            fontsize=SMALL, va="top", color=MEMORY)
    top, hgt, sw = 3.7, 0.88, 0.34
    strips = {}
    for k, (name, blocks, hi) in enumerate((("Q", tr, 2), ("K", tc, 5), ("V", tc, 5), ("O", tr, 2))):
        x = 0.3 + k * 0.82
        strips[name] = x
        h = hgt / blocks
        for b in range(blocks):
            colour = "C2" if name in "QO" else "C0"
            ax.add_patch(Rectangle((x, top - (b + 1) * h), sw, h, fc=tint(colour, 0.6 if b == hi else 0.12),
                                   ec=colour, lw=0.5))
        ax.text(x + sw + 0.05, top - hgt / 2, name, fontsize=TEXT, va="center")
    # on chip: the blocks in shared memory, the scores made and dropped there
    ax.add_patch(Rectangle((0.02, 0.95), W - 0.04, 1.3, fc=tint(COMPUTE, 0.08), ec=COMPUTE, lw=0.8))
    ax.text(0.09, 1.0, "on chip:\none thread\nblock", fontsize=SMALL, va="bottom", color=COMPUTE)
    by, bh = 1.55, 0.4
    items = [("Qᵢ", block_rows, "C2", "Q"), ("Kⱼ", block_cols, "C0", "K"), ("Vⱼ", block_cols, "C0", "V"),
             ("Oᵢ", block_rows, "C2", "O")]
    mid = (2.75 + by + bh) / 2
    for name, rows_, colour, strip in items:
        x = strips[strip]
        bx = x + sw / 2 - 0.33
        box(ax, bx, by, 0.66, bh, "", colour, fill=tint(colour, 0.45))
        ax.text(bx + 0.33, by + bh * 0.68, name, fontsize=TEXT, ha="center", va="center")
        ax.text(bx + 0.33, by + bh * 0.28, f"{rows_} × {d}", fontsize=SMALL, ha="center", va="center")
        if strip == "O":
            arrow(ax, (x + sw / 2, by + bh), (x + sw / 2, top - hgt), colour=colour, width=1.2)
        else:
            arrow(ax, (x + sw / 2, top - hgt), (x + sw / 2, by + bh), colour=colour, width=1.2)
    ax.text(strips["Q"] + sw / 2 + 0.07, mid, "once", fontsize=SMALL, va="center")
    ax.text((strips["K"] + strips["V"]) / 2 + sw / 2, mid, f"{tc} blocks,\nin turn", fontsize=SMALL,
            va="center", ha="center")
    ax.text(strips["O"] + sw / 2 - 0.07, mid, "once,\nfinished", fontsize=SMALL, va="center", ha="right")
    sx = strips["K"] - 0.12
    sw_ = strips["O"] + sw + 0.05 - sx
    box(ax, sx, 1.03, sw_, 0.42, "", "0.35", fill=tint("0.5", 0.2))
    ax.text(sx + sw_ / 2, 1.33, f"Sᵢⱼ = Qᵢ Kⱼᵀ: {block_rows} × {block_cols}, {score_dtype.upper()}",
            fontsize=SMALL, ha="center", va="center")
    ax.text(sx + sw_ / 2, 1.13, "made, used and dropped here", fontsize=SMALL, ha="center", va="center", color="0.3")
    ax.text(0.05, 0.87, f"HBM traffic at N = {fmt.num(N)}: {fmt.bytes_si(flash.bytes_)}, against\n"
            f"{fmt.bytes_si(std.bytes_)} for standard attention, which writes S and P",
            fontsize=SMALL, va="top")
    crop(fig, ax, 0.5)
    return fig


# ----------------------------------------------------------------- chapter 4: CUDA threads

def thread_hierarchy(grid, block, sm_count: int, device_label: str):
    """CUDA's levels beside the hardware that runs them: a grid of blocks dealt out to the SMs,
    one block's threads coloured by the warp ``calc.cuda.warp_of`` puts them in, and one warp."""
    from calc import cuda

    W = MAX_WIDTH_IN
    H = 4.1
    fig, ax = canvas(W, H)
    tx = 1.75                                                     # the hardware column
    # the grid: an icon of at most 8 × 8 blocks
    gx, gy = min(grid.x, 8), min(grid.y, 8)
    c = 0.1
    top = H - 0.3
    ax.text(0.05, H - 0.04, f"Grid: {fmt.num(grid.x)} × {fmt.num(grid.y)} blocks", fontsize=TEXT, va="top",
            weight="bold")
    for i in range(gy):
        for j in range(gx):
            on = (i, j) == (1, 2)
            ax.add_patch(Rectangle((0.1 + j * c, top - (i + 1) * c), c * 0.85, c * 0.85,
                                   fc=tint("C0", 0.7 if on else 0.2), ec="C0", lw=0.4))
    if grid.x > gx or grid.y > gy:
        ax.text(0.1 + gx * c + 0.03, top - gy * c / 2, "…", fontsize=TEXT, va="center")
    ax.text(tx, top - 0.1, f"dealt out to the {device_label}'s\n{fmt.num(sm_count)} SMs as room appears,\n"
            "in any order", fontsize=SMALL, va="top")
    # one block: its threads, coloured by warp
    btop = top - gy * c - 0.45
    ax.text(0.05, btop + 0.25, f"Block: {block.x} × {block.y} = {fmt.num(block.count)} threads, "
            f"{fmt.count(cuda.warps_per_block(block.count), 'warp')}", fontsize=TEXT, va="top", weight="bold")
    cc = min(0.085, 1.5 / block.x)
    colours = ("C1", "C2", "C4", "C5", "C6", "C8", "C9", "C0")
    for y_ in range(block.y):
        for x_ in range(block.x):
            w, _ = cuda.warp_of(cuda.Dim3(x_, y_, 0), block)
            ax.add_patch(Rectangle((0.1 + x_ * cc, btop - (y_ + 1) * cc), cc * 0.9, cc * 0.9,
                                   fc=tint(colours[w % len(colours)], 0.55), ec="none"))
    ax.text(tx, btop - 0.05, "one SM runs them all at\nonce; they share its shared\n"
            "memory and wait together\nat __syncthreads()", fontsize=SMALL, va="top")
    ax.text(tx, btop - block.y * cc + 0.02, "a colour = one warp", fontsize=SMALL, va="bottom", color="0.3")
    # one warp
    wtop = btop - block.y * cc - 0.42
    ax.text(0.05, wtop + 0.25, f"Warp: {cuda.WARP_SIZE} consecutive threads",
            fontsize=TEXT, va="top", weight="bold")
    lw_ = 1.5 / cuda.WARP_SIZE
    for lane in range(cuda.WARP_SIZE):
        ax.add_patch(Rectangle((0.1 + lane * lw_, wtop - 0.2), lw_ * 0.85, 0.17, fc=tint(colours[0], 0.55),
                               ec=colours[0], lw=0.3))
    ax.text(0.1, wtop - 0.24, "lane 0", fontsize=SMALL, va="top", color="0.3")
    ax.text(0.1 + 1.5, wtop - 0.24, f"{cuda.WARP_SIZE - 1}", fontsize=SMALL, va="top", ha="right", color="0.3")
    ax.text(tx, wtop - 0.03, "issued one instruction\nat a time for all its lanes", fontsize=SMALL, va="top")
    crop(fig, ax, wtop - 0.5)
    return fig


def waves(blocks_total: int, sm_count: int, blocks_per_sm: int):
    """A grid's blocks in waves: each wave fills every SM's ``blocks_per_sm`` slots, the last
    only partly (the tail). One bar a wave, as high as the slots of the whole GPU."""
    import math

    per_wave = sm_count * blocks_per_sm
    n = math.ceil(blocks_total / per_wave)
    W = MAX_WIDTH_IN
    H = 2.5
    fig, ax = canvas(W, H)
    x0, bar_h, base = 0.1, 1.5, 0.5
    width = (W - x0 - 0.05) / n
    for k in range(n):
        used = min(per_wave, blocks_total - k * per_wave)
        x = x0 + k * width
        ax.add_patch(Rectangle((x, base), width * 0.85, bar_h, fc=tint(IDLE, 0.3), ec="0.45", lw=0.8))
        colour = "C0" if used == per_wave else MEMORY
        ax.add_patch(Rectangle((x, base), width * 0.85, bar_h * used / per_wave, fc=tint(colour, 0.55),
                               ec=colour, lw=0.8))
        tail = used < per_wave
        ax.text(x + width * 0.425, base + bar_h * used / per_wave / 2,
                f"{fmt.num(used)}\nblocks" + (f",\n{fmt.pct(used / per_wave)}\nof a wave" if tail else ""),
                fontsize=SMALL, ha="center", va="center")
        ax.text(x + width * 0.425, base - 0.05, f"wave {k + 1}" + (" (tail)" if tail else ""), fontsize=SMALL,
                ha="center", va="top", color=MEMORY if tail else "black")
        if tail and bar_h * (1 - used / per_wave) > 0.15:
            ax.text(x + width * 0.425, base + bar_h * (1 + used / per_wave) / 2, "idle", fontsize=SMALL,
                    ha="center", va="center", color="0.3")
    ax.text(0.05, H - 0.04, f"{fmt.num(blocks_total)} blocks; a wave = {fmt.num(sm_count)} SMs × "
            f"{blocks_per_sm} = {fmt.num(per_wave)} blocks", fontsize=SMALL, va="top")
    ax.annotate("", (W - 0.05, 0.2), (x0, 0.2),
                arrowprops=dict(arrowstyle="-|>", color="0.3", lw=1, mutation_scale=7, shrinkA=0, shrinkB=0))
    ax.text(x0, 0.12, "time", fontsize=SMALL, va="top", color="0.3")
    crop(fig, ax, -0.05)
    return fig


# ----------------------------------------------------------------- chapter 5: tiling and systolic arrays

def fringe_tiles(cases):
    """Each (n, T): an n × n output drawn to scale on its grid of T × T tiles
    (``calc.tiling.tile_count``); the part of the tiles outside the matrix is hatched."""
    W = MAX_WIDTH_IN
    side = 1.45
    H = side + 1.0
    fig, ax = canvas(W, H)
    for k, (n, T) in enumerate(cases):
        tc = tiling.tile_count(n, n, T)
        span = tc.rows * T
        u = side / span
        x0, y0 = 0.1 + k * (side + 0.3), 0.62
        ax.add_patch(Rectangle((x0, y0), side, side, fc="white", ec="0.5", lw=0.6, hatch="////"))
        ax.add_patch(Rectangle((x0, y0 + side - n * u), n * u, n * u, fc=solid("C0", 0.55), ec="C0", lw=0.8))
        for i in range(tc.rows + 1):
            ax.plot([x0 + i * T * u] * 2, [y0, y0 + side], color="0.2", lw=0.9)
            ax.plot([x0, x0 + side], [y0 + i * T * u] * 2, color="0.2", lw=0.9)
        ax.text(x0, H - 0.04, f"{fmt.num(n)} × {fmt.num(n)} output,\n{fmt.num(T)} × {fmt.num(T)} tiles",
                fontsize=TEXT, va="top", weight="bold")
        ax.text(x0, y0 - 0.06, f"{fmt.count(tc.total, 'tile')}, {fmt.num(tc.partial)} partial\n"
                f"{fmt.pct(tc.utilisation)} of slots useful", fontsize=SMALL, va="top")
    crop(fig, ax, 0.12)
    return fig


def dataflows(M: int, K: int, N: int, R: int, C: int, dtype: str = "fp16"):
    """The three dataflows of C = AB on an R × C array: which operand sits in the PEs, which
    stream through, and how often each crosses between buffer and array (``calc.systolic.traffic``,
    reads per element)."""
    from calc import systolic

    flows = (("weight", "Weight-stationary", "B"), ("output", "Output-stationary", "C"),
             ("input", "Input-stationary", "A"))
    colours = {"A": "C1", "B": "C0", "C": "C2"}
    W = MAX_WIDTH_IN
    panel = 1.42
    H = panel * 3 + 0.62
    fig, ax = canvas(W, H)
    ax.text(0.05, H - 0.04, f"Crossings per element between buffer and array,\nfor M × K × N = {fmt.num(M)} × {fmt.num(K)} × "
            f"{fmt.num(N)}\non a {R} × {C} array", fontsize=SMALL, va="top", color="0.3")
    g, c = 4, 0.15
    for p, (key, title, still) in enumerate(flows):
        t = systolic.traffic(M, K, N, R, C, key, dtype)
        top = H - 0.62 - p * panel
        ax.text(0.05, top, f"{title}: {still} stays in the PEs", fontsize=TEXT, va="top", weight="bold")
        gx, gy = 0.55, top - 0.5 - g * c
        for i in range(g):
            for j in range(g):
                ax.add_patch(Rectangle((gx + j * c, gy + i * c), c * 0.88, c * 0.88,
                                       fc=tint(colours[still], 0.55), ec=colours[still], lw=0.5))
        ax.text(gx + g * c / 2, gy + g * c / 2, still, fontsize=TEXT, ha="center", va="center", weight="bold")
        for m in (m for m in "ABC" if m != still):
            col = colours[m]
            if m == "A":                                    # A enters from the left
                arrow(ax, (gx - 0.35, gy + g * c / 2), (gx - 0.04, gy + g * c / 2), colour=col, width=1.4)
                ax.text(gx - 0.38, gy + g * c / 2, "A", fontsize=TEXT, ha="right", va="center", color=col)
            elif m == "B":                                  # B from the top
                arrow(ax, (gx + g * c / 2, gy + g * c + 0.24), (gx + g * c / 2, gy + g * c + 0.02), colour=col,
                      width=1.4)
                ax.text(gx + g * c / 2 + 0.06, gy + g * c + 0.15, "B", fontsize=TEXT, va="center", color=col)
            else:                                           # partial sums of C leave at the bottom
                arrow(ax, (gx + g * c / 2, gy - 0.02), (gx + g * c / 2, gy - 0.24), colour=col, width=1.4)
                ax.text(gx + g * c / 2 + 0.06, gy - 0.15, "C (partial sums)", fontsize=SMALL, va="center",
                        color=col)
        times = (("A", t.a_reads / (M * K), "read"), ("B", t.b_reads / (K * N), "read"),
                 ("C", t.c_writes / (M * N), "written"))
        lines = [f"{m} {verb} " + (fmt.count(int(x), "time") if float(x).is_integer() else f"{fmt.num(x)} times")
                 for m, x, verb in times]
        ax.text(1.6, gy + g * c / 2, "\n".join(lines), fontsize=SMALL, va="center", linespacing=1.4)
    crop(fig, ax, H - 0.62 - 3 * panel + 0.05)
    return fig


def standard_attention(N: int, d: int, dtype: str = "fp16"):
    """Standard attention as three kernels, a row each, with the matrices drawn to scale (N × d
    strips, N × N squares): every kernel reads its inputs from HBM and writes its output there,
    so S and P each cross twice. The total is ``calc.attention.naive``'s."""
    from calc import attention

    s = size_bytes(dtype)
    nd, nn = N * d * s, N * N * s
    total = attention.naive(N, d, dtype).bytes_
    assert 4 * nd + 4 * nn == total, "the three kernels' traffic is Algorithm 0's"
    W = MAX_WIDTH_IN
    sq = 0.62
    strip = max(sq * d / N, 0.04)
    row = sq + 0.55
    H = 3 * row + 0.95
    fig, ax = canvas(W, H)

    def mat(x, y, w, h, name, colour):
        ax.add_patch(Rectangle((x, y + sq - h), w, h, fc=tint(colour, 0.5), ec=colour, lw=0.8))
        ax.text(x + w / 2, y + sq + 0.03, name, fontsize=TEXT, ha="center", va="bottom")
        return x + w

    tall, wide = (strip, sq), (sq, strip)                    # N × d and d × N
    steps = [
        ([("Q", tall, "C2"), ("Kᵀ", wide, "C0")], "S = QKᵀ", ("S", (sq, sq), MEMORY), 2 * nd, nn),
        ([("S", (sq, sq), MEMORY)], "softmax", ("P", (sq, sq), MEMORY), nn, nn),
        ([("P", (sq, sq), MEMORY), ("V", tall, "C0")], "O = PV", ("O", tall, "C2"), nn + nd, nd),
    ]
    ax.text(0.05, H - 0.04, f"N = {fmt.num(N)}, d = {fmt.num(d)}, {dtype.upper()}: an N × d matrix is "
            f"{fmt.bytes_iec(nd)},\nan N × N one {fmt.bytes_iec(nn)}", fontsize=SMALL, va="top", color="0.3")
    for k, (ins, op, (oname, (ow, oh), ocol), read, wrote) in enumerate(steps):
        y = H - 0.62 - (k + 1) * row + 0.35
        x = 0.1
        for name, (w, h), colour in ins:
            x = mat(x, y, w, h, name, colour) + 0.1
        kx = 1.55
        arrow(ax, (x - 0.04, y + sq / 2), (kx - 0.03, y + sq / 2), width=1)
        box(ax, kx, y + sq / 2 - 0.18, 0.78, 0.36, op, "0.3", fill=tint("0.5", 0.15), size=SMALL)
        arrow(ax, (kx + 0.8, y + sq / 2), (kx + 0.98, y + sq / 2), width=1)
        mat(kx + 1.02, y, ow, oh, oname, ocol)
        ax.text(0.1, y - 0.06, f"kernel {k + 1}: reads {fmt.bytes_iec(read)}, writes {fmt.bytes_iec(wrote)}",
                fontsize=SMALL, va="top")
    ax.text(0.05, 0.04, f"HBM traffic in all: {fmt.bytes_si(total)}; S and P alone,\nwritten and read "
            f"back, are {fmt.pct(4 * nn / total)} of it", fontsize=SMALL, va="bottom")
    return fig


def sm_anatomy(device):
    """One streaming multiprocessor of ``device`` (a ``calc.specs`` GPU): its sub-partitions,
    each with a warp scheduler, a slice of the register file and a Tensor Core, over the SRAM that
    L1 and shared memory split; below it, the L2 and HBM that all the SMs share."""
    lim = device.limits
    parts = lim.sub_partitions
    regs = device.value("register_file_per_sm_bytes")
    tcs = device.value("tensor_cores") / device.sm_count / parts if device.has("tensor_cores") else None
    tc_line = ("" if tcs is None else "\n" + (fmt.count(int(tcs), "Tensor Core") if float(tcs).is_integer()
                                              else f"{fmt.num(tcs)} Tensor Cores"))
    W = MAX_WIDTH_IN
    H = 3.55
    fig, ax = canvas(W, H)
    sm_top, sm_bottom = H - 0.05, 1.2
    ax.add_patch(FancyBboxPatch((0.03, sm_bottom), W - 0.06, sm_top - sm_bottom,
                                boxstyle="round,pad=0,rounding_size=0.06", fc="white", ec=COMPUTE, lw=1.2))
    ax.text(0.12, sm_top - 0.06, f"One SM of the {device.label}", fontsize=TEXT, va="top", weight="bold",
            color=COMPUTE)
    cols = 2
    pw, ph = (W - 0.06 - 0.1 * (cols + 1)) / cols, 0.62
    for k in range(parts):
        r, c = divmod(k, cols)
        x = 0.13 + c * (pw + 0.1)
        y = sm_top - 0.3 - (r + 1) * (ph + 0.08)
        box(ax, x, y, pw, ph, "", COMPUTE)
        ax.text(x + 0.07, y + ph - 0.06, f"warp scheduler\nregisters: {fmt.bytes_iec(regs / parts)}{tc_line}",
                fontsize=SMALL, va="top", linespacing=1.25)
    rows = -(-parts // cols)
    y_l1 = sm_top - 0.3 - rows * (ph + 0.08) - 0.42
    box(ax, 0.13, y_l1, W - 0.26, 0.36, "", "C2")
    ax.text(W / 2, y_l1 + 0.18, f"L1 + shared memory: {fmt.bytes_iec(device.value('l1_smem_per_sm_bytes'))}"
            f" (up to {fmt.bytes_iec(lim.smem_per_sm_bytes)} shared)", fontsize=SMALL, ha="center", va="center")
    ax.set_ylim(0, H)
    # beneath: the whole GPU
    arrow(ax, (W / 2, sm_bottom - 0.01), (W / 2, 0.97), width=1.2, style="<|-|>")
    ax.text(W / 2 + 0.08, 1.085, f"× {fmt.num(device.sm_count)} SMs", fontsize=SMALL, va="center")
    box(ax, 0.03, 0.56, W - 0.06, 0.4, f"L2 cache: {fmt.bytes_iec(device.value('l2_bytes'))}, shared by all SMs",
        "0.35", size=SMALL)
    arrow(ax, (W / 2, 0.55), (W / 2, 0.42), width=1.2, style="<|-|>")
    box(ax, 0.03, 0.02, W - 0.06, 0.38, f"{device.value('mem_type')}: {fmt.bytes_iec(device.mem_capacity_bytes)}",
        MEMORY, size=SMALL)
    return fig
