"""FLOPs and bytes of common kernels, and their arithmetic intensity.

Traffic model: each operand is read from main memory once and each result is
written once (the best a single kernel can do without caching across kernels).
FLOP counts: a multiply-add is 2 FLOPs; the per-element FLOP conventions of
the non-matmul operators are stated in each docstring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

from .dtypes import size_bytes


def _count(name: str, x: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or x < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {x!r}")
    return x


def _dims(**dims: int) -> None:
    for name, x in dims.items():
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise ValueError(f"{name} must be a positive integer, got {x!r}")


@dataclass(frozen=True)
class Cost:
    """Work and main-memory traffic of one kernel (or a sum of kernels)."""

    name: str
    flops: float
    bytes_: float

    def __post_init__(self) -> None:
        if self.flops < 0 or self.bytes_ < 0:
            raise ValueError(f"{self.name}: flops and bytes must be >= 0")

    @property
    def intensity(self) -> float:
        """Arithmetic intensity ``flops / bytes_`` in FLOP/byte (inf if no traffic)."""
        if self.bytes_ == 0:
            return math.inf
        return self.flops / self.bytes_

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(f"{self.name} + {other.name}", self.flops + other.flops, self.bytes_ + other.bytes_)

    def scaled(self, k: float, name: Optional[str] = None) -> "Cost":
        """``k`` copies of this kernel (e.g. batch × heads)."""
        if k < 0:
            raise ValueError(f"scale must be >= 0, got {k}")
        return Cost(name or self.name, self.flops * k, self.bytes_ * k)


Kernel = Cost  # alias used by some chapters


def gemm(M: int, N: int, K: int, dtype: str = "fp16", out_dtype: Optional[str] = None) -> Cost:
    """C[M,N] = A[M,K] @ B[K,N].

    flops = 2·M·N·K; bytes = (M·K + K·N)·s_in + M·N·s_out (A, B read once, C written once).
    """
    _dims(M=M, N=N, K=K)
    s_in, s_out = size_bytes(dtype), size_bytes(out_dtype or dtype)
    return Cost(f"gemm {M}x{N}x{K} {dtype}", 2 * M * N * K, (M * K + K * N) * s_in + M * N * s_out)


def gemv(M: int, K: int, dtype: str = "fp16") -> Cost:
    """y[M] = A[M,K] @ x[K] (a decode step's matrix-vector product).

    flops = 2·M·K; bytes = (M·K + K + M)·s. Intensity → 2/s FLOP/byte for large M, K:
    every weight is used once.
    """
    _dims(M=M, K=K)
    s = size_bytes(dtype)
    return Cost(f"gemv {M}x{K} {dtype}", 2 * M * K, (M * K + K + M) * s)


def decode_matmul(batch: int, d_in: int, d_out: int, dtype: str = "fp16") -> Cost:
    """A weight matrix [d_in, d_out] applied to ``batch`` tokens: ``gemm(batch, d_out, d_in)``.

    Intensity grows with ``batch`` because each weight byte is reused ``batch`` times.
    """
    cost = gemm(batch, d_out, d_in, dtype)
    return Cost(f"decode matmul batch={batch} {d_in}->{d_out} {dtype}", cost.flops, cost.bytes_)


def elementwise(n: int, dtype: str = "fp32", flops_per_elem: float = 1, inputs: int = 2,
                outputs: int = 1) -> Cost:
    """An elementwise op over ``n`` elements: flops = n·f; bytes = n·(inputs + outputs)·s."""
    _count("n", n)
    _count("inputs", inputs)
    _count("outputs", outputs)
    if flops_per_elem < 0:
        raise ValueError(f"flops_per_elem must be >= 0, got {flops_per_elem}")
    s = size_bytes(dtype)
    return Cost(f"elementwise n={n} {dtype}", n * flops_per_elem, n * (inputs + outputs) * s)


#: GELU, tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))):
#: x³ (2) + scale (1) + add (1) + scale (1) + tanh (1) + add (1) + 0.5·x (1) + multiply (1)
GELU_FLOPS_PER_ELEM = 9
#: LayerNorm: mean (1) + variance (3) + normalise (2) + scale and shift (2)
LAYERNORM_FLOPS_PER_ELEM = 8
#: softmax: max (1) + subtract (1) + exp (1) + sum (1) + divide (1)
SOFTMAX_FLOPS_PER_ELEM = 5


def gelu(n: int, dtype: str = "fp16") -> Cost:
    """GELU on ``n`` elements: flops = 9·n (tanh form, tanh counted as 1); bytes = 2·n·s."""
    c = elementwise(n, dtype, GELU_FLOPS_PER_ELEM, inputs=1, outputs=1)
    return Cost(f"gelu n={n} {dtype}", c.flops, c.bytes_)


def layernorm(rows: int, cols: int, dtype: str = "fp16") -> Cost:
    """LayerNorm over the last axis: flops = 8·rows·cols; bytes = (2·rows·cols + 2·cols)·s
    (read x, write y, read γ and β)."""
    _dims(rows=rows, cols=cols)
    s = size_bytes(dtype)
    return Cost(f"layernorm {rows}x{cols} {dtype}", LAYERNORM_FLOPS_PER_ELEM * rows * cols,
                (2 * rows * cols + 2 * cols) * s)


def softmax(rows: int, cols: int, dtype: str = "fp16") -> Cost:
    """Row softmax: flops = 5·rows·cols; bytes = 2·rows·cols·s (one read, one write)."""
    _dims(rows=rows, cols=cols)
    s = size_bytes(dtype)
    return Cost(f"softmax {rows}x{cols} {dtype}", SOFTMAX_FLOPS_PER_ELEM * rows * cols, 2 * rows * cols * s)


def conv_output_size(size: int, kernel: int, stride: int = 1, padding: int = 0) -> int:
    """Output extent: ``floor((size + 2·padding − kernel) / stride) + 1``."""
    _dims(size=size, kernel=kernel, stride=stride)
    _count("padding", padding)
    out = (size + 2 * padding - kernel) // stride + 1
    if out < 1:
        raise ValueError(f"kernel {kernel} does not fit input {size} with padding {padding}")
    return out


def conv2d(N: int, C: int, H: int, W: int, K: int, R: int, S: int, stride: int = 1,
           padding: int = 0, dtype: str = "fp16") -> Cost:
    """Direct 2D convolution, NCHW input, K filters of C×R×S.

    P, Q = output height, width; flops = 2·N·K·P·Q·C·R·S;
    bytes = (N·C·H·W + K·C·R·S + N·K·P·Q)·s.
    """
    _dims(N=N, C=C, K=K)
    P = conv_output_size(H, R, stride, padding)
    Q = conv_output_size(W, S, stride, padding)
    s = size_bytes(dtype)
    flops = 2 * N * K * P * Q * C * R * S
    bytes_ = (N * C * H * W + K * C * R * S + N * K * P * Q) * s
    return Cost(f"conv2d N{N} C{C} {H}x{W} K{K} {R}x{S} s{stride} p{padding} {dtype}", flops, bytes_)


def fused_chain(n: int, dtype: str = "fp16", flops_per_op: Sequence[float] = (1, 1, 1),
                extra_inputs_per_op: Optional[Sequence[int]] = None) -> tuple[Cost, Cost]:
    """A chain of elementwise ops run as separate kernels vs one fused kernel.

    Unfused: op k reads its input and ``extra_k`` other tensors and writes its
    output: bytes = n·s·Σ(2 + extra_k). Fused: the chain input and all extra
    tensors are read once and only the final output is written:
    bytes = n·s·(2 + Σ extra_k). FLOPs are the same: n·Σ f_k.
    Returns ``(unfused, fused)``.
    """
    _count("n", n)
    ops = list(flops_per_op)
    if not ops:
        raise ValueError("a chain needs at least one op")
    extras = list(extra_inputs_per_op) if extra_inputs_per_op is not None else [0] * len(ops)
    if len(extras) != len(ops):
        raise ValueError("extra_inputs_per_op must have one entry per op")
    s = size_bytes(dtype)
    flops = n * sum(ops)
    unfused = Cost(f"{len(ops)} separate kernels", flops, n * s * sum(2 + e for e in extras))
    fused = Cost(f"{len(ops)} ops fused", flops, n * s * (2 + sum(extras)))
    return unfused, fused
