"""Attention: FLOPs and HBM traffic of four implementations, and a reference.

Shapes follow Dao et al. 2022 (FlashAttention): Q, K, V, O are N×d; S = QKᵀ and
P = softmax(S) are N×N. Traffic is counted in elements and converted with the
dtype size; ``batch_heads`` multiplies everything (one attention per head).

- ``naive``: Algorithm 0 of the paper (S and P written to and read from HBM);
  with ``include_backward`` adds the standard backward pass (Algorithm 3).
- ``one_thread_per_output``: the loop nest run with no reuse at all, every
  load a DRAM access (the book's first, unparallelised kernel).
- ``tiled``: the two matmuls tiled in shared memory (T×T), S and P still in HBM.
- ``flash``: Algorithm 1 (forward) and Algorithm 4 (backward), block sizes from
  the SRAM size M: Bc = ceil(M / 4d), Br = min(Bc, d).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

from .dtypes import size_bytes
from .intensity import SOFTMAX_FLOPS_PER_ELEM, Cost, _dims
from .sources import Source, Spec
from .tiling import tiled_global_loads

#: Dao et al. 2022, Figure 2 (left): GPT-2 medium's attention (N = 1024, d = 64, 16 heads,
#: batch 64), forward and backward, profiled on an A100. Measured figures, as printed.
DAO_FIG2 = Source("FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness "
                  "(Dao et al.)", "NeurIPS", 2022, "dao2022flashattention", where="Figure 2 (left)")
PAPER_FIG2 = {
    "standard": {"gflops": Spec(66.6, "GFLOP", DAO_FIG2), "hbm_gb": Spec(40.3, "GB", DAO_FIG2),
                 "runtime_ms": Spec(41.7, "ms", DAO_FIG2)},
    "flash": {"gflops": Spec(75.2, "GFLOP", DAO_FIG2), "hbm_gb": Spec(4.4, "GB", DAO_FIG2),
              "runtime_ms": Spec(7.3, "ms", DAO_FIG2)},
}
#: Dao et al. 2022 leave M, the on-chip SRAM, a parameter of the analysis; Section 3.2 calls its
#: typical value "around 100KB". Their background (Section 2.1) gives the A100 "192KB of on-chip
#: SRAM per each of 108 streaming multiprocessors". Which M a count uses is the counter's choice.
PAPER_M_TYPICAL = Spec(100e3, "B", DAO_FIG2.at("Section 3.2"), "'around 100KB'")
PAPER_A100_SRAM = Spec(192 * 1024, "B", DAO_FIG2.at("Section 2.1"), "'192KB of on-chip SRAM per each of 108 SMs'")

#: FLOPs per score element of the softmax backward: dS = P ∘ (dP − rowsum(dP ∘ P))
SOFTMAX_BWD_FLOPS_PER_ELEM = 4


def _matmul_flops(N: int, d: int) -> int:
    return 2 * N * N * d


def naive(N: int, d: int, dtype: str = "fp16", batch_heads: int = 1, include_backward: bool = False) -> Cost:
    """Standard attention, S and P materialised in HBM.

    Forward (Algorithm 0): elements = 4·N·d + 4·N² (read Q, K; write S; read S,
    write P; read P, V; write O). Backward (Algorithm 3): 8·N·d + 7·N².
    FLOPs: forward 4·N²·d + 5·N²; backward 8·N²·d + 4·N².
    """
    _dims(N=N, d=d, batch_heads=batch_heads)
    elems = 4 * N * d + 4 * N * N
    flops = 2 * _matmul_flops(N, d) + SOFTMAX_FLOPS_PER_ELEM * N * N
    if include_backward:
        elems += 8 * N * d + 7 * N * N
        flops += 4 * _matmul_flops(N, d) + SOFTMAX_BWD_FLOPS_PER_ELEM * N * N
    name = f"standard attention N={N} d={d}" + (" fwd+bwd" if include_backward else "")
    return Cost(name, flops * batch_heads, elems * size_bytes(dtype) * batch_heads)


def one_thread_per_output(N: int, d: int, dtype: str = "fp16", batch_heads: int = 1) -> Cost:
    """The three loop nests with no reuse: every load is a DRAM access.

    S: each of N² outputs reads a row of Q and a row of K (2·N²·d) and is written (N²).
    softmax: each row is read three times (max, sum, normalise) and written: 3·N² + N².
    O: each of N·d outputs reads a row of P and a column of V (2·N²·d) and is written (N·d).
    """
    _dims(N=N, d=d, batch_heads=batch_heads)
    elems = (2 * N * N * d + N * N) + (3 * N * N + N * N) + (2 * N * N * d + N * d)
    flops = 2 * _matmul_flops(N, d) + SOFTMAX_FLOPS_PER_ELEM * N * N
    return Cost(f"one thread per output N={N} d={d}", flops * batch_heads,
                elems * size_bytes(dtype) * batch_heads)


def tiled(N: int, d: int, tile: int, dtype: str = "fp16", batch_heads: int = 1) -> Cost:
    """QKᵀ and PV as T×T shared-memory tiled matmuls; S and P still go through HBM.

    elements = loads(QKᵀ) + N² (write S) + 2·N² (softmax read S, write P)
             + loads(PV) + N·d (write O), with loads from ``tiling.tiled_global_loads``.
    """
    _dims(N=N, d=d, tile=tile, batch_heads=batch_heads)
    elems = (tiled_global_loads(N, N, d, tile) + N * N + 2 * N * N
             + tiled_global_loads(N, d, N, tile) + N * d)
    flops = 2 * _matmul_flops(N, d) + SOFTMAX_FLOPS_PER_ELEM * N * N
    return Cost(f"tiled attention N={N} d={d} T={tile}", flops * batch_heads,
                elems * size_bytes(dtype) * batch_heads)


@dataclass(frozen=True)
class FlashBlocks:
    """Block sizes of FlashAttention for an SRAM of ``m_elements`` elements."""

    m_elements: int
    Bc: int
    Br: int
    Tc: int
    Tr: int


def flash_blocks(N: int, d: int, sram_bytes: float, dtype: str = "fp16") -> FlashBlocks:
    """Bc = ceil(M / 4d), Br = min(Bc, d), Tc = ceil(N/Bc), Tr = ceil(N/Br), M = sram_bytes / s.

    Requires d ≤ M (Theorem 2's range starts at M = d); block sizes larger than N are capped at N.
    """
    _dims(N=N, d=d)
    M = int(sram_bytes // size_bytes(dtype))
    if M < d:
        raise ValueError(f"SRAM of {sram_bytes} bytes holds {M} {dtype} elements, fewer than d={d}")
    Bc = min(math.ceil(M / (4 * d)), N)
    Br = min(Bc, d, N)
    return FlashBlocks(M, Bc, Br, math.ceil(N / Bc), math.ceil(N / Br))


def flash(N: int, d: int, dtype: str = "fp16", sram_bytes: float = 192 * 1024, batch_heads: int = 1,
          include_backward: bool = False) -> Cost:
    """FlashAttention HBM traffic, counted line by line from the paper's algorithms.

    Forward (Algorithm 1): initialise O, ℓ, m in HBM (N·d + 2·N writes); read K, V
    once (2·N·d); for each of Tc column blocks, read Q, O, ℓ, m and write O, ℓ, m
    for all rows: Tc·(3·N·d + 4·N). Backward (Algorithm 4): initialise dQ, dK, dV
    (3·N·d); read K, V (2·N·d); per column block read Q, O, dO, dQ, ℓ, m and
    write dQ: Tc·(5·N·d + 2·N); write dK, dV (2·N·d).
    Θ(N²·d²/M) as Theorem 2 states, since Tc ≈ 4·N·d/M.
    FLOPs: forward as standard; backward recomputes S and P (10·N²·d + 4·N²).
    """
    _dims(N=N, d=d, batch_heads=batch_heads)
    b = flash_blocks(N, d, sram_bytes, dtype)
    elems = (N * d + 2 * N) + 2 * N * d + b.Tc * (3 * N * d + 4 * N)
    flops = 2 * _matmul_flops(N, d) + SOFTMAX_FLOPS_PER_ELEM * N * N
    if include_backward:
        elems += 3 * N * d + 2 * N * d + b.Tc * (5 * N * d + 2 * N) + 2 * N * d
        flops += 5 * _matmul_flops(N, d) + SOFTMAX_BWD_FLOPS_PER_ELEM * N * N
    name = f"FlashAttention N={N} d={d} M={b.m_elements}" + (" fwd+bwd" if include_backward else "")
    return Cost(name, flops * batch_heads, elems * size_bytes(dtype) * batch_heads)


LSE_BYTES = size_bytes("fp32")   # the log-sum-exp a forward pass keeps per row, for the backward


def flash_query_outer(N: int, d: int, block_rows: int, dtype: str = "fp16", batch_heads: int = 1) -> Cost:
    """FlashAttention forward with the loops swapped (query blocks outer, as in FlashAttention-2).

    Each block of ``block_rows`` queries keeps its output on chip and streams all of K
    and V: elements = N·d (read Q) + Tr·2·N·d (read K, V once per query block)
    + N·d (write O), Tr = ceil(N / block_rows), in ``dtype``; plus the log-sum-exp of each
    row, N values in FP32 whatever ``dtype`` is (kernels/attention_flash.cu writes floats).
    FLOPs as standard attention.
    """
    _dims(N=N, d=d, block_rows=block_rows, batch_heads=batch_heads)
    Tr = math.ceil(N / block_rows)
    elems = N * d + Tr * 2 * N * d + N * d
    bytes_ = elems * size_bytes(dtype) + N * LSE_BYTES
    flops = 2 * _matmul_flops(N, d) + SOFTMAX_FLOPS_PER_ELEM * N * N
    return Cost(f"FlashAttention (query blocks outer) N={N} d={d} Br={block_rows}", flops * batch_heads,
                bytes_ * batch_heads)


# ----------------------------------------------------------------- reference maths

Matrix = Sequence[Sequence[float]]


def softmax_row(row: Sequence[float]) -> list[float]:
    """Numerically stable softmax: p_j = exp(x_j − max x) / Σ_k exp(x_k − max x).

    The numerator and the denominator subtract the *same* maximum, so the
    result equals the textbook softmax and never overflows.
    """
    if not row:
        raise ValueError("softmax of an empty row is undefined")
    m = max(row)
    exps = [math.exp(x - m) for x in row]
    total = sum(exps)
    return [e / total for e in exps]


def reference(Q: Matrix, K: Matrix, V: Matrix, scale: Optional[float] = None) -> list[list[float]]:
    """O = softmax(scale · Q Kᵀ) V in plain Python (row softmax).

    ``scale`` defaults to 1 (the paper's Algorithm 0); transformers use 1/√d.
    """
    if not Q or not K or not V:
        raise ValueError("Q, K and V must be non-empty")
    d = len(Q[0])
    if any(len(r) != d for r in Q) or any(len(r) != d for r in K):
        raise ValueError("Q and K rows must all have the same length d")
    if len(K) != len(V):
        raise ValueError(f"K has {len(K)} rows but V has {len(V)}")
    dv = len(V[0])
    tau = 1.0 if scale is None else scale
    out = []
    for q in Q:
        scores = [tau * sum(qi * ki for qi, ki in zip(q, k)) for k in K]
        p = softmax_row(scores)
        out.append([sum(p[j] * V[j][c] for j in range(len(V))) for c in range(dv)])
    return out


@dataclass(frozen=True)
class OnlineStep:
    """State of the online softmax after consuming ``x[start:stop]``."""

    start: int
    stop: int
    block_max: float
    m: float  # running maximum
    l: float  # running Σ exp(x_j − m)
    rescale: float  # factor exp(m_old − m) applied to the old sum


def online_softmax_steps(row: Sequence[float], block: int = 1) -> list[OnlineStep]:
    """The online softmax (Milakov & Gimelshein 2018) one block at a time.

    m_new = max(m, max(x_blk)); l_new = l·exp(m − m_new) + Σ_blk exp(x_j − m_new).
    After the last step, softmax(x)_j = exp(x_j − m) / l.
    """
    if not row:
        raise ValueError("empty row")
    _dims(block=block)
    m, l = -math.inf, 0.0
    steps = []
    for start in range(0, len(row), block):
        blk = row[start:start + block]
        bmax = max(blk)
        m_new = max(m, bmax)
        rescale = math.exp(m - m_new) if m != -math.inf else 0.0
        l = l * rescale + sum(math.exp(x - m_new) for x in blk)
        m = m_new
        steps.append(OnlineStep(start, start + len(blk), bmax, m, l, rescale))
    return steps


def online_softmax(row: Sequence[float], block: int = 1) -> list[float]:
    """softmax(row) computed from the final online state: exp(x_j − m) / l."""
    last = online_softmax_steps(row, block)[-1]
    return [math.exp(x - last.m) / last.l for x in row]
