"""Systolic arrays (Kung 1982): cycles, utilisation, dataflows, energy.

Array: R rows × C columns of processing elements (PEs), one MAC per PE per
cycle. Product: A[M,K] @ B[K,N].

Timing model (weight-stationary, as in a TPU MXU): B is cut into
ceil(K/R)·ceil(N/C) weight tiles of R×C. For each tile the weights are loaded
(R cycles, optional), then the M rows of A stream through; because inputs are
skewed one cycle per row and column, a pass takes M + R + C − 2 cycles
(fill + steady state + drain).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

from . import energy
from .dtypes import size_bits, size_bytes
from .intensity import _dims


def macs_per_cycle(R: int, C: int) -> int:
    """Peak MACs per cycle: R·C (one per PE)."""
    _dims(R=R, C=C)
    return R * C


def weight_tiles(K: int, N: int, R: int, C: int) -> int:
    """Number of R×C weight tiles covering B[K,N]: ceil(K/R)·ceil(N/C)."""
    _dims(K=K, N=N, R=R, C=C)
    return math.ceil(K / R) * math.ceil(N / C)


def cycles(M: int, K: int, N: int, R: int, C: int, include_weight_load: bool = True) -> int:
    """Cycles for A[M,K] @ B[K,N]: tiles·(M + R + C − 2 [+ R to load weights])."""
    _dims(M=M)
    per_tile = M + R + C - 2 + (R if include_weight_load else 0)
    return weight_tiles(K, N, R, C) * per_tile


def utilisation(M: int, K: int, N: int, R: int, C: int, include_weight_load: bool = True) -> float:
    """Useful MACs / (PEs × cycles) = M·K·N / (R·C·cycles)."""
    return M * K * N / (macs_per_cycle(R, C) * cycles(M, K, N, R, C, include_weight_load))


@dataclass(frozen=True)
class Traffic:
    """Elements moved between the on-chip buffer and the array for one product."""

    dataflow: str
    a_reads: int
    b_reads: int
    c_writes: int
    bytes_: float

    @property
    def total_elements(self) -> int:
        return self.a_reads + self.b_reads + self.c_writes


def traffic(M: int, K: int, N: int, R: int, C: int, dataflow: str = "weight", dtype: str = "fp16") -> Traffic:
    """Buffer↔array traffic for each dataflow (the stationary operand is read exactly once).

    - weight-stationary (R×C tile of B held): A read ceil(N/C) times, B once,
      partial sums of C written ceil(K/R) times.
    - output-stationary (R×C tile of C held): A read ceil(N/C) times, B ceil(M/R) times, C once.
    - input-stationary (R×C tile of Aᵀ held, K along rows): A once, B ceil(M/C) times,
      C written ceil(K/R) times.
    """
    _dims(M=M, K=K, N=N, R=R, C=C)
    if dataflow == "weight":
        a, b, c = M * K * math.ceil(N / C), K * N, M * N * math.ceil(K / R)
    elif dataflow == "output":
        a, b, c = M * K * math.ceil(N / C), K * N * math.ceil(M / R), M * N
    elif dataflow == "input":
        a, b, c = M * K, K * N * math.ceil(M / C), M * N * math.ceil(K / R)
    else:
        raise ValueError(f"unknown dataflow {dataflow!r}; known: weight, output, input")
    return Traffic(dataflow, a, b, c, (a + b + c) * size_bytes(dtype))


def energy_per_mac_j(R: int, C: int, dtype: str = "fp16", buffer: str = "sram_32kb",
                     hop_j: float = 0.0) -> dict[str, float]:
    """Energy per MAC for a vector unit and for an R×C systolic array.

    vector:   E_mac + 2·E_buf    (both operands fetched from the buffer for every MAC)
    systolic: E_mac + (1/R + 1/C)·E_buf + 2·hop_j  (each operand fetched once, then
              passed PE to PE; an operand entering on the left is reused by C PEs,
              one entering on top by R PEs)
    E_buf is a ``size_bits(dtype)``-wide access to ``buffer`` (Horowitz 2014);
    ``hop_j`` is the register-to-register hop, not in Horowitz's table, so 0 by default.
    """
    _dims(R=R, C=C)
    if hop_j < 0:
        raise ValueError("hop energy cannot be negative")
    mac = energy.mac_energy_j(dtype)
    buf = energy.access_energy_j(buffer, size_bits(dtype))
    return {
        "mac": mac,
        "buffer_access": buf,
        "vector": mac + 2 * buf,
        "systolic": mac + (1 / R + 1 / C) * buf + 2 * hop_j,
    }


def frames(A: list, B: list) -> Iterator[dict]:
    """Cycle-by-cycle states of an output-stationary array computing A[R,K] @ B[K,C].

    A enters from the left skewed by row, B from the top skewed by column: PE
    (i, j) at cycle t multiplies A[i][k]·B[k][j] with k = t − i − j when
    0 ≤ k < K. Each frame: ``cycle``, ``active`` [(i, j, k)], ``acc`` (the R×C
    partial sums after the cycle). The last frame holds A @ B; there are
    K + R + C − 2 frames.
    """
    if not A or not B or len(A[0]) != len(B):
        raise ValueError("A must be R×K and B must be K×C with matching K")
    R, K, C = len(A), len(B), len(B[0])
    acc = [[0.0] * C for _ in range(R)]
    for t in range(K + R + C - 2):
        active = []
        for i in range(R):
            for j in range(C):
                k = t - i - j
                if 0 <= k < K:
                    acc[i][j] += A[i][k] * B[k][j]
                    active.append((i, j, k))
        yield {"cycle": t, "active": active, "acc": [row[:] for row in acc]}
