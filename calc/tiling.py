"""Tiled matrix multiply: tile counts, global-memory traffic, shared memory.

The kernel modelled is the shared-memory tiled matmul of Kirk & Hwu
(*Programming Massively Parallel Processors*, ch. 5): each block computes a
T×T tile of C = A[M,K] @ B[K,N]; in each of ceil(K/T) phases it loads a T×T
tile of A and of B into shared memory. Out-of-range elements of fringe tiles
are not loaded (the kernel writes zeros to shared memory instead).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator, Union

from .dtypes import size_bytes
from .intensity import _dims


@dataclass(frozen=True)
class TileCount:
    """How an M×N output splits into T×T tiles."""

    rows: int  # tiles along M
    cols: int  # tiles along N
    full: int  # tiles entirely inside the matrix
    partial: int  # fringe tiles
    utilisation: float  # useful outputs / (tiles × T²)

    @property
    def total(self) -> int:
        return self.rows * self.cols


def tile_count(M: int, N: int, T: int) -> TileCount:
    """Tiles = ceil(M/T)·ceil(N/T); utilisation = M·N / (tiles·T²) (the fringe wastes threads)."""
    _dims(M=M, N=N, T=T)
    rows, cols = math.ceil(M / T), math.ceil(N / T)
    full = (M // T) * (N // T)
    return TileCount(rows, cols, full, rows * cols - full, (M * N) / (rows * cols * T * T))


def naive_global_loads(M: int, N: int, K: int) -> int:
    """Element loads of the untiled kernel (one thread per output, no reuse): 2·M·N·K."""
    _dims(M=M, N=N, K=K)
    return 2 * M * N * K


def tiled_global_loads(M: int, N: int, K: int, T: int) -> int:
    """Element loads of the T×T tiled kernel: M·K·ceil(N/T) + K·N·ceil(M/T).

    Each row of A is loaded once per tile column, each column of B once per
    tile row. T = 1 gives the naive 2·M·N·K; when T divides M and N the
    reduction is exactly a factor of T.
    """
    _dims(M=M, N=N, K=K, T=T)
    return M * K * math.ceil(N / T) + K * N * math.ceil(M / T)


def traffic_bytes(M: int, N: int, K: int, T: int, dtype: str = "fp32", include_output: bool = True) -> float:
    """Global-memory bytes of the tiled kernel: loads·s (+ M·N·s for writing C)."""
    s = size_bytes(dtype)
    return tiled_global_loads(M, N, K, T) * s + (M * N * s if include_output else 0)


def tiled_intensity(M: int, N: int, K: int, T: int, dtype: str = "fp32", include_output: bool = True) -> float:
    """FLOP per global byte of the tiled kernel: 2·M·N·K / traffic_bytes.

    With loads only and fp32, this is T/4: 0.25 FLOP/B untiled, 4 FLOP/B for 16×16 tiles.
    """
    return 2 * M * N * K / traffic_bytes(M, N, K, T, dtype, include_output)


def smem_bytes_per_block(T: int, dtype: str = "fp32", stages: int = 1) -> float:
    """Shared memory for one A tile and one B tile: 2·T²·s·stages (stages=2 for double buffering)."""
    _dims(T=T, stages=stages)
    return 2 * T * T * size_bytes(dtype) * stages


def largest_tile(device, dtype: str = "fp32", stages: int = 1, one_thread_per_output: bool = True,
                 multiple_of: int = 1) -> int:
    """Largest T whose tiles fit the device's per-block shared memory (opt-in maximum).

    With ``one_thread_per_output`` (the Kirk & Hwu kernel), T² threads must also fit
    in a block (≤ 1024, so T ≤ 32). ``device`` is a ``specs.Device`` or its name.
    """
    from . import specs

    dev = specs.device(device) if isinstance(device, str) else device
    lim = dev.limits
    _dims(multiple_of=multiple_of)
    best = 0
    T = multiple_of
    while smem_bytes_per_block(T, dtype, stages) <= lim.smem_per_block_optin_bytes:
        if not one_thread_per_output or T * T <= lim.max_threads_per_block:
            best = T
        elif one_thread_per_output:
            break
        T += multiple_of
    if best == 0:
        raise ValueError(f"no tile that is a multiple of {multiple_of} fits {dev.name}")
    return best


def frames(M: int, N: int, K: int, T: int) -> Iterator[dict[str, Union[int, tuple]]]:
    """Steps of the tiled kernel for an animation, one per (output tile, phase).

    Each frame: ``tile`` (row, col) of C, ``phase`` p, the A tile rows/cols and
    B tile rows/cols loaded into shared memory (half-open ranges clipped to the
    matrix), and ``loads_so_far`` (elements read from global memory).
    """
    _dims(M=M, N=N, K=K, T=T)
    loads = 0
    for bi in range(math.ceil(M / T)):
        for bj in range(math.ceil(N / T)):
            rows = (bi * T, min(M, (bi + 1) * T))
            cols = (bj * T, min(N, (bj + 1) * T))
            for p in range(math.ceil(K / T)):
                ks = (p * T, min(K, (p + 1) * T))
                loads += (rows[1] - rows[0]) * (ks[1] - ks[0]) + (ks[1] - ks[0]) * (cols[1] - cols[0])
                yield {
                    "tile": (bi, bj),
                    "phase": p,
                    "a_rows": rows,
                    "a_cols": ks,
                    "b_rows": ks,
                    "b_cols": cols,
                    "loads_so_far": loads,
                }
