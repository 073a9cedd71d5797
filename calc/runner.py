"""A tiny kernel runner: execute a Python "kernel" over a CUDA-style grid.

A kernel is a function ``kernel(blockIdx, threadIdx, blockDim, gridDim, *args)``
whose index arguments are ``cuda.Dim3``. Arrays it writes should be wrapped in
``Buffer`` so that every write is recorded with the thread that made it; the
block-grid widget colours output elements by the writing thread, and
``Run.races()`` finds elements written by more than one thread.

Threads run one after another (block by block, x fastest), so a kernel that
depends on ``__syncthreads`` between phases is out of scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Optional

from .cuda import Dim3, DimLike, dim3, linear_block, linear_thread

MAX_THREADS = 1_000_000  # a guard: the runner is for teaching-size grids


@dataclass(frozen=True)
class Write:
    """One store: which thread wrote which element of which buffer."""

    buffer: str
    index: Hashable
    value: Any
    block: Dim3
    thread: Dim3


class Buffer:
    """A list (1D) or nested list (2D, indexed ``buf[i, j]``) that records writes."""

    def __init__(self, name: str, data):
        self.name = name
        self.data = data
        self._run: Optional["Run"] = None

    def _locate(self, index):
        if isinstance(index, tuple):
            target = self.data
            for i in index[:-1]:
                target = target[i]
            return target, index[-1]
        return self.data, index

    def __getitem__(self, index):
        target, last = self._locate(index)
        if self._run is not None:
            self._run.reads += 1
        return target[last]

    def __setitem__(self, index, value) -> None:
        target, last = self._locate(index)
        target[last] = value
        if self._run is not None:
            self._run._record(self.name, index, value)

    def __len__(self) -> int:
        return len(self.data)


@dataclass
class Run:
    """The record of one launch."""

    grid: Dim3
    block: Dim3
    writes: list = field(default_factory=list)
    reads: int = 0
    _current: tuple = (Dim3(0, 0, 0), Dim3(0, 0, 0))

    def _record(self, name, index, value) -> None:
        b, t = self._current
        self.writes.append(Write(name, index, value, b, t))

    def writer_of(self, buffer: str) -> dict:
        """``{index: (block, thread)}`` of the last write to each element of ``buffer``."""
        return {w.index: (w.block, w.thread) for w in self.writes if w.buffer == buffer}

    def races(self) -> dict:
        """``{(buffer, index): [(block, thread), ...]}`` for elements written by more than one thread."""
        by: dict = {}
        for w in self.writes:
            who = (w.block, w.thread)
            lst = by.setdefault((w.buffer, w.index), [])
            if who not in lst:
                lst.append(who)
        return {k: v for k, v in by.items() if len(v) > 1}

    def thread_ids(self, buffer: str) -> dict:
        """``{index: global linear thread id}`` of each element's writer."""
        n = self.block.count
        return {i: linear_block(b, self.grid) * n + linear_thread(t, self.block)
                for i, (b, t) in self.writer_of(buffer).items()}


def run(kernel: Callable, grid: DimLike, block: DimLike, *args) -> Run:
    """Run ``kernel`` for every thread of ``<<<grid, block>>>``, recording ``Buffer`` writes.

    Raises ValueError for empty or oversized launches (more than 1,000,000 threads).
    """
    g, b = dim3(grid), dim3(block)
    for what, v in (("grid", g), ("block", b)):
        if min(v) < 1:
            raise ValueError(f"every {what} dimension must be >= 1, got {tuple(v)}")
    if g.count * b.count > MAX_THREADS:
        raise ValueError(
            f"{g.count * b.count:,} threads is more than this teaching runner allows ({MAX_THREADS:,})"
        )
    record = Run(g, b)
    buffers = [a for a in args if isinstance(a, Buffer)]
    for buf in buffers:
        buf._run = record
    try:
        for block_idx in g.indices():
            for thread_idx in b.indices():
                record._current = (block_idx, thread_idx)
                kernel(block_idx, thread_idx, b, g, *args)
    finally:
        for buf in buffers:
            buf._run = None
    return record
