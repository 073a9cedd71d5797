"""Figures for the chapters "Inside a GPU" and "The CUDA thread hierarchy".

Each function draws one figure from ``calc`` numbers onto a new matplotlib
figure and returns it; the chapter cell only chooses the inputs. Occupancy
comes from ``calc.occupancy``, sectors from the warp simulator (``calc.sim``), bank
conflicts from ``calc.cuda.bank_conflicts`` and thread ownership from a
``calc.sim`` launch's record of who wrote what.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

from calc import cuda, fmt, occupancy
from calc.sim import counts_of, sectors_of
from calc.sim import kernels as simkernels

_DTYPE_OF_SIZE = {4: "fp32", 2: "fp16", 1: "int8", 8: "fp64"}

COLOURS = ("C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9")


def occupancy_or_zero(cc: str, threads: int, regs: int = 32, smem: int = 0) -> float:
    """Occupancy, or 0 where the block cannot launch at all."""
    try:
        return occupancy.occupancy(cc, threads, regs, smem).occupancy
    except ValueError:
        return 0.0


def occupancy_curves(cc: str, block_sizes: list[int], regs: list[int],
                     smem_cc: list[str], smem_kib: list[int], smem_threads: int, smem_regs: int):
    """Two panels: occupancy against registers per thread (one line per block size, on ``cc``)
    and against shared memory per block (one line per compute capability)."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(7.2, 3.0), sharey=True)
    for T, colour in zip(block_sizes, COLOURS):
        a.step(regs, [occupancy_or_zero(cc, T, r) for r in regs], where="post", color=colour,
               lw=1.3, label=f"{T} threads/block")
    a.set_xlabel("Registers per thread")
    a.set_ylabel("Occupancy (active / max warps)")
    a.set_title(f"Registers (cc {cc}, no shared memory)", fontsize=9)
    a.set_xlim(regs[0], regs[-1])
    a.set_ylim(0, 1.05)
    a.legend(frameon=False, fontsize=8, loc="upper right")
    for c, colour, ls in zip(smem_cc, ("C0", "C3"), ("-", "--")):
        b.step(smem_kib, [occupancy_or_zero(c, smem_threads, smem_regs, k * 1024) for k in smem_kib],
               where="post", color=colour, ls=ls, lw=1.3, label=f"cc {c}")
    b.set_xlabel("Shared memory per block (KiB)")
    b.set_title(f"Shared memory ({smem_threads} threads, {smem_regs} regs)", fontsize=9)
    b.set_xlim(smem_kib[0], smem_kib[-1])
    b.legend(frameon=False, fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def coalescing_patterns(patterns: list[tuple[str, int, int, int]], span_bytes: int):
    """One row per (label, stride in elements, element bytes, base byte address): each lane's
    element as a dot, the 32-byte sectors it touches shaded, 128-byte lines outlined."""
    fig, ax = plt.subplots(figsize=(6.6, 0.55 * len(patterns) + 0.9))
    for row, (label, stride, elem, base) in enumerate(patterns):
        y = len(patterns) - 1 - row
        if base % elem:
            raise ValueError(f"{label}: a base address of {base} bytes is not a whole number of {elem}-byte elements")
        load = simkernels.warp_read_instr(stride, _DTYPE_OF_SIZE[elem], offset=base // elem)
        addrs = [a - load.base for a in load.addresses()]      # bytes from the array's start
        sectors = {a // cuda.SECTOR_BYTES for a in addrs}
        if sectors != {x - load.base // cuda.SECTOR_BYTES for x in sectors_of(load)}:
            raise AssertionError(f"{label}: the shaded sectors are not the simulator's")
        for s in sectors:
            if s * cuda.SECTOR_BYTES < span_bytes:
                ax.add_patch(Rectangle((s * cuda.SECTOR_BYTES, y - 0.3), cuda.SECTOR_BYTES, 0.6,
                                       color="C1", alpha=0.35, lw=0))
        shown = [a for a in addrs if a < span_bytes]
        ax.plot([a + elem / 2 for a in shown], [y] * len(shown), "o", color="C0", ms=2.2)
        c = counts_of(load)
        more = "" if len(shown) == len(addrs) else f"; {fmt.count(len(addrs) - len(shown), 'lane')} off the right"
        ax.text(span_bytes + 8, y, f"{fmt.count(c.sectors, 'sector')}, {fmt.count(c.lines, 'line')}\n"
                f"{fmt.num(c.bytes_moved)} B moved for {fmt.num(c.bytes_requested)} B{more}", va="center", fontsize=7.5)
    for x in range(0, span_bytes + 1, cuda.LINE_BYTES):
        ax.axvline(x, color="0.3", lw=0.8)
    ax.set_yticks(range(len(patterns)), [p[0] for p in reversed(patterns)], fontsize=8)
    ax.set_xlim(0, span_bytes)
    ax.set_ylim(-0.6, len(patterns) - 0.4)
    ax.set_xticks(range(0, span_bytes + 1, cuda.LINE_BYTES))
    ax.set_xlabel(f"Byte address (vertical lines: {cuda.LINE_BYTES}-byte lines; "
                  f"shading: {cuda.SECTOR_BYTES}-byte sectors moved)")
    ax.grid(False)
    fig.tight_layout()
    return fig


def bank_conflict_bars(strides: list[int]):
    """Passes (the simulator's wavefronts, ``simkernels.warp_shared_read``) of a warp reading
    4-byte word ``lane · stride`` of shared memory."""
    fig, ax = plt.subplots(figsize=(6.4, 2.4))
    ways = [simkernels.warp_shared_read(s).wavefronts for s in strides]
    ax.bar([str(s) for s in strides], ways, color=["C2" if w == 1 else "C3" for w in ways])
    for i, w in enumerate(ways):
        ax.text(i, w + 0.4, f"{w}", ha="center", fontsize=7.5)
    ax.set_xlabel("Stride between lanes (4-byte words)")
    ax.set_ylabel("Shared-memory passes")
    ax.set_ylim(0, max(ways) * 1.15)
    return fig


def ownership(run, buffer: str, rows: int, cols: int, grid, block):
    """The output matrix of a ``calc.sim`` launch (its ``Report``): each element coloured by the block
    that wrote it and labelled with the writer's global linear thread number."""
    writers = run.writer_of(buffer)
    ids = run.thread_ids(buffer)
    fig, ax = plt.subplots(figsize=(0.42 * cols + 1.2, 0.42 * rows + 0.8))
    for (r, c), (b, _t) in writers.items():
        k = cuda.linear_block(b, grid)
        ax.add_patch(Rectangle((c, r), 1, 1, color=COLOURS[k % len(COLOURS)], alpha=0.45, lw=0))
        ax.text(c + 0.5, r + 0.5, str(ids[(r, c)]), ha="center", va="center", fontsize=7)
    for c in range(0, cols + 1, block.x):
        ax.axvline(c, color="0.2", lw=1.2)
    for r in range(0, rows + 1, block.y):
        ax.axhline(r, color="0.2", lw=1.2)
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_xticks([c + 0.5 for c in range(cols)], [str(c) for c in range(cols)], fontsize=7)
    ax.set_yticks([r + 0.5 for r in range(rows)], [str(r) for r in range(rows)], fontsize=7)
    ax.set_xlabel("column (x)")
    ax.set_ylabel("row (y)")
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    ax.grid(False)
    ax.set_aspect("equal")
    return fig
