"""Attention kernels as runnable pseudocode: four ways to compute O = softmax(Q Kᵀ) V.

Matrices are lists of lists of floats: Q and K are N×d, V is N×dv, O is N×dv.
The scale is 1, as in the paper's Algorithm 0 and ``attention.reference``.
The chapter on attention prints these functions with ``inspect.getsource``,
so each is written to be read; the cost of each (FLOPs and HBM traffic at
real sizes) is in ``calc.attention``.

- ``attention_naive``       S = Q Kᵀ, P = softmax(S), O = P V, one matrix at a time
- ``attention_per_output``  the same, structured as one "thread" per output element
- ``attention_tiled``       both products tile by tile (``matmul_tiled``)
- ``attention_flash``       FlashAttention's forward pass (Dao et al. 2022, Algorithm 1)
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from .attention import Matrix, reference, softmax_row
from .intensity import _dims


def dot(x, y) -> float:
    """Σ_t x_t·y_t."""
    return sum(a * b for a, b in zip(x, y))


def attention_naive(Q: Matrix, K: Matrix, V: Matrix) -> list[list[float]]:
    """Standard attention: S = Q Kᵀ (N×N), P = softmax(S) row by row, O = P V.

    The softmax subtracts the row maximum m in the numerator and in the
    denominator: p_j = exp(s_j − m) / Σ_k exp(s_k − m).
    """
    S = [[dot(q, k) for k in K] for q in Q]
    P = []
    for row in S:
        m = max(row)
        e = [math.exp(s - m) for s in row]
        total = sum(e)
        P.append([x / total for x in e])
    return [[sum(p[j] * V[j][c] for j in range(len(V))) for c in range(len(V[0]))] for p in P]


def attention_per_output(Q: Matrix, K: Matrix, V: Matrix) -> list[list[float]]:
    """Three launches, one "thread" per output element, no reuse between threads.

    Launch 1: thread (i, j) computes S[i][j] = q_i · k_j.
    Launch 2: thread i makes three passes over row i of S (max, sum, normalise).
    Launch 3: thread (i, c) computes O[i][c] = Σ_j P[i][j]·V[j][c].
    """
    N, n_keys, dv = len(Q), len(K), len(V[0])

    def score_thread(i, j):
        return sum(Q[i][t] * K[j][t] for t in range(len(Q[i])))

    def softmax_thread(i):
        m = max(S[i])
        total = sum(math.exp(s - m) for s in S[i])
        return [math.exp(s - m) / total for s in S[i]]

    def output_thread(i, c):
        return sum(P[i][j] * V[j][c] for j in range(n_keys))

    S = [[score_thread(i, j) for j in range(n_keys)] for i in range(N)]
    P = [softmax_thread(i) for i in range(N)]
    return [[output_thread(i, c) for c in range(dv)] for i in range(N)]


def matmul_tiled(A: Matrix, B: Matrix, T: int) -> list[list[float]]:
    """C = A B, one T×T tile of C at a time (Kirk & Hwu's shared-memory kernel).

    For each output tile, each phase copies a T×T tile of A and of B (the
    "shared memory" tiles a and b) and adds their product into the C tile.
    Fringe tiles are simply smaller.
    """
    _dims(T=T)
    M, n_inner, N = len(A), len(B), len(B[0])
    C = [[0.0] * N for _ in range(M)]
    for i0 in range(0, M, T):
        for j0 in range(0, N, T):
            for k0 in range(0, n_inner, T):
                a = [row[k0:k0 + T] for row in A[i0:i0 + T]]
                b = [row[j0:j0 + T] for row in B[k0:k0 + T]]
                for i in range(len(a)):
                    for j in range(len(b[0])):
                        C[i0 + i][j0 + j] += sum(a[i][k] * b[k][j] for k in range(len(b)))
    return C


def attention_tiled(Q: Matrix, K: Matrix, V: Matrix, tile: int) -> list[list[float]]:
    """Both products tiled (S = Q Kᵀ, O = P V); S and P are still whole N×N matrices."""
    Kt = [list(col) for col in zip(*K)]
    S = matmul_tiled(Q, Kt, tile)
    P = [softmax_row(row) for row in S]
    return matmul_tiled(P, V, tile)


def attention_flash(Q: Matrix, K: Matrix, V: Matrix, block_rows: int, block_cols: int) -> list[list[float]]:
    """FlashAttention's forward pass (Dao et al. 2022, Algorithm 1), one row at a time.

    For each block of block_cols keys (outer loop) and each block of block_rows
    queries (inner loop), row i keeps a running maximum m_i, a running sum ℓ_i
    and an output O_i that is always normalised by ℓ_i:
      m_new = max(m_i, m̃),  ℓ_new = e^(m_i − m_new)·ℓ_i + e^(m̃ − m_new)·ℓ̃
      O_i  ← (ℓ_i·e^(m_i − m_new)·O_i + e^(m̃ − m_new)·P̃ V_j) / ℓ_new
    where m̃ = max of the block's scores, P̃ = exp(scores − m̃) and ℓ̃ = Σ P̃.
    S and P never exist as N×N matrices.
    """
    _dims(block_rows=block_rows, block_cols=block_cols)
    N, dv = len(Q), len(V[0])
    O = [[0.0] * dv for _ in range(N)]
    ell = [0.0] * N
    m = [-math.inf] * N
    for j0 in range(0, len(K), block_cols):
        Kj, Vj = K[j0:j0 + block_cols], V[j0:j0 + block_cols]
        for i0 in range(0, N, block_rows):
            for i in range(i0, min(i0 + block_rows, N)):
                s = [dot(Q[i], k) for k in Kj]
                m_blk = max(s)
                p = [math.exp(x - m_blk) for x in s]
                l_blk = sum(p)
                m_new = max(m[i], m_blk)
                old, new = math.exp(m[i] - m_new), math.exp(m_blk - m_new)
                l_new = old * ell[i] + new * l_blk
                pv = [dot(p, [v[c] for v in Vj]) for c in range(dv)]
                O[i] = [(ell[i] * old * O[i][c] + new * pv[c]) / l_new for c in range(dv)]
                ell[i], m[i] = l_new, m_new
    return O


#: The four kernels by the names the widgets and the chapter use.
KERNELS: dict[str, Callable] = {
    "naive": attention_naive,
    "per-output": attention_per_output,
    "tiled": attention_tiled,
    "flash": attention_flash,
}


def run(kernel: str, Q: Matrix, K: Matrix, V: Matrix, tile: int = 2, block_rows: int = 2,
        block_cols: int = 2) -> list[list[float]]:
    """Run the kernel named ``kernel`` (a key of ``KERNELS``), passing only the sizes it takes."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; known: {', '.join(KERNELS)}")
    if kernel == "tiled":
        return attention_tiled(Q, K, V, tile)
    if kernel == "flash":
        return attention_flash(Q, K, V, block_rows, block_cols)
    return KERNELS[kernel](Q, K, V)


def random_inputs(n: int, d: int, seed: int = 0) -> tuple[list, list, list]:
    """Q, K, V of shape n×d with entries drawn from N(0, 1) by ``random.Random(seed)``.

    The same seed gives the same matrices in CPython and in Pyodide.
    """
    _dims(n=n, d=d)
    rng = random.Random(seed)

    def matrix():
        return [[rng.gauss(0.0, 1.0) for _ in range(d)] for _ in range(n)]

    Q = matrix()
    K = matrix()
    V = matrix()
    return Q, K, V


@dataclass(frozen=True)
class Check:
    """A kernel's output compared with ``attention.reference``."""

    max_abs_error: float  # max over i, c of |O[i][c] − O_ref[i][c]|
    row_sums: tuple  # Σ_j P[i][j] for each row i of P = softmax(Q Kᵀ)

    @property
    def max_row_sum_error(self) -> float:
        """max_i |Σ_j P[i][j] − 1|."""
        return max(abs(s - 1.0) for s in self.row_sums)

    def ok(self, tol: float = 1e-9) -> bool:
        """Both errors at most ``tol``."""
        return self.max_abs_error <= tol and self.max_row_sum_error <= tol


def check(O: Matrix, Q: Matrix, K: Matrix, V: Matrix) -> Check:
    """Compare O with the reference softmax(Q Kᵀ) V and sum each row of P."""
    ref = reference(Q, K, V)
    if len(O) != len(ref) or any(len(r) != len(s) for r, s in zip(O, ref)):
        raise ValueError("O does not have the shape of softmax(Q Kᵀ) V")
    err = max(abs(o - r) for orow, rrow in zip(O, ref) for o, r in zip(orow, rrow))
    sums = tuple(sum(softmax_row([dot(q, k) for k in K])) for q in Q)
    return Check(err, sums)
