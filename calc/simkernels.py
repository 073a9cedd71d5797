"""The book's canonical kernels, written for ``calc.warpsim``, with their launches.

Each kernel is the CUDA kernel the chapters describe, line for line; each
``run_*`` function makes the arrays, launches it and returns the
``warpsim.Report`` (its arrays, inputs and output, are ``report.arrays``). Tests check their
counts against the hardware's arithmetic, chapters print them, and the
exercises use them as reference solutions.

- ``copy_strided``        B[i] = A[i·stride]: coalescing (CUDA Best Practices Guide)
- ``transpose_shared``    32×32 tiles through shared memory, with or without a padded row
- ``reduce_interleaved``  Harris's reduction #1: interleaved addressing, divergent branch
- ``reduce_strided``      Harris's #2: interleaved addressing, strided index (bank conflicts)
- ``reduce_sequential``   Harris's #3: sequential addressing
- ``matmul_tiled``        Kirk & Hwu's shared-memory tiled matmul (``calc.tiling`` counts its traffic)

Sources: M. Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007);
Kirk & Hwu, *Programming Massively Parallel Processors*, ch. 5; M. Harris,
"An Efficient Matrix Transpose in CUDA C/C++" (NVIDIA blog, 2013).
"""

from __future__ import annotations

import random

from .warpsim import Array, blockDim, blockIdx, fma, launch, shared, syncthreads, threadIdx

TILE = 32


def copy_strided(A, B, n, stride):
    i = blockIdx.x * blockDim.x + threadIdx.x
    if i < n:
        B[i] = A[i * stride]


def run_copy(n: int = 4096, stride: int = 1, block: int = 256, dtype: str = "fp32", **kw):
    """``copy_strided`` over ``n`` outputs, one thread each."""
    A = Array("A", [float(k % 251) for k in range(n * stride)], dtype)
    B = Array("B", n, dtype)
    return launch(copy_strided, -(-n // block), block, (A, B, n, stride), **kw)


def transpose_shared(A, B, n, pad):
    tile = shared("tile", (TILE, TILE + pad))     # __shared__ float tile[32][32 + pad]
    x = blockIdx.x * TILE + threadIdx.x
    y = blockIdx.y * TILE + threadIdx.y
    tile[threadIdx.y, threadIdx.x] = A[y * n + x]   # a warp reads a row of A: coalesced
    yield syncthreads()
    x = blockIdx.y * TILE + threadIdx.x
    y = blockIdx.x * TILE + threadIdx.y
    B[y * n + x] = tile[threadIdx.x, threadIdx.y]   # a warp reads a column of the tile
    

def run_transpose(n: int = 64, pad: int = 0, **kw):
    """``transpose_shared`` of an n × n FP32 matrix (n a multiple of 32), blocks of 32 × 32."""
    A = Array("A", [float(k) for k in range(n * n)])
    B = Array("B", n * n)
    return launch(transpose_shared, (n // TILE, n // TILE), (TILE, TILE), (A, B, n, pad), **kw)


def reduce_interleaved(g_in, g_out):
    sdata = shared("sdata", blockDim.x)
    tid = threadIdx.x
    sdata[tid] = g_in[blockIdx.x * blockDim.x + tid]
    yield syncthreads()
    s = 1
    while s < blockDim.x:
        if tid % (2 * s) == 0:                     # only every 2s-th thread works: divergent
            sdata[tid] = sdata[tid] + sdata[tid + s]
        yield syncthreads()
        s *= 2
    if tid == 0:
        g_out[blockIdx.x] = sdata[0]


def reduce_strided(g_in, g_out):
    sdata = shared("sdata", blockDim.x)
    tid = threadIdx.x
    sdata[tid] = g_in[blockIdx.x * blockDim.x + tid]
    yield syncthreads()
    s = 1
    while s < blockDim.x:
        index = 2 * s * tid                        # contiguous threads, strided shared index
        if index < blockDim.x:
            sdata[index] = sdata[index] + sdata[index + s]
        yield syncthreads()
        s *= 2
    if tid == 0:
        g_out[blockIdx.x] = sdata[0]


def reduce_sequential(g_in, g_out):
    sdata = shared("sdata", blockDim.x)
    tid = threadIdx.x
    sdata[tid] = g_in[blockIdx.x * blockDim.x + tid]
    yield syncthreads()
    s = blockDim.x // 2
    while s > 0:
        if tid < s:                                # the first s threads: whole warps while s >= 32
            sdata[tid] = sdata[tid] + sdata[tid + s]
        yield syncthreads()
        s //= 2
    if tid == 0:
        g_out[blockIdx.x] = sdata[0]


REDUCTIONS = {"interleaved": reduce_interleaved, "strided": reduce_strided, "sequential": reduce_sequential}


def run_reduce(kernel: str = "sequential", n: int = 1024, block: int = 256, seed: int = 0, **kw):
    """One of Harris's reductions over ``n`` values (a multiple of ``block``): one partial sum per block."""
    rng = random.Random(seed)
    g_in = Array("g_in", [float(rng.randint(0, 9)) for _ in range(n)])
    g_out = Array("g_out", n // block)
    return launch(REDUCTIONS[kernel], n // block, block, (g_in, g_out), **kw)


def matmul_tiled(A, B, C, n, T):
    As = shared("As", (T, T))
    Bs = shared("Bs", (T, T))
    tx, ty = threadIdx.x, threadIdx.y
    row = blockIdx.y * T + ty
    col = blockIdx.x * T + tx
    acc = 0.0
    for p in range(n // T):
        As[ty, tx] = A[row * n + p * T + tx]
        Bs[ty, tx] = B[(p * T + ty) * n + col]
        yield syncthreads()
        for k in range(T):
            acc = fma(As[ty, k], Bs[k, tx], acc)
        yield syncthreads()
    C[row * n + col] = acc


def run_matmul(n: int = 64, T: int = 16, seed: int = 0, **kw):
    """C = A·B for n × n FP32 matrices (n a multiple of T), T × T tiles, one thread per output."""
    rng = random.Random(seed)
    A = Array("A", [float(rng.randint(-3, 3)) for _ in range(n * n)])
    B = Array("B", [float(rng.randint(-3, 3)) for _ in range(n * n)])
    C = Array("C", n * n)
    return launch(matmul_tiled, (n // T, n // T), (T, T), (A, B, C, n, T), **kw)
