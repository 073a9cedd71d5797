"""The book's canonical kernels, written for ``calc.warpsim``, with their launches.

Each kernel is the CUDA kernel the chapters describe, line for line; each
``run_*`` function makes the arrays, launches it and returns the
``warpsim.Report`` (its arrays, inputs and output, are ``report.arrays``). Tests check their
counts against the hardware's arithmetic, chapters print them, and the
exercises use them as reference solutions.

- ``copy_strided``        B[i] = A[i·stride]: coalescing (CUDA Best Practices Guide)
- ``warp_read``           one warp reading A[lane·stride + offset]: the counts of that one load
- ``warp_shared_read``    one warp reading word lane·stride of a shared array: its wavefronts
- ``warp_shared_gather``  one warp reading any 32 elements of a shared array: its wavefronts
- ``transpose_shared``    32×32 tiles through shared memory, with or without a padded row
                          (``transpose_read_passes``: the wavefronts of its column read)
- ``reduce_interleaved``  Harris's reduction #1: interleaved addressing, divergent branch
- ``reduce_strided``      Harris's #2: interleaved addressing, strided index (bank conflicts)
- ``reduce_sequential``   Harris's #3: sequential addressing
- ``matmul_tiled``        Kirk & Hwu's shared-memory tiled matmul (``calc.tiling`` counts its traffic)
- ``attention_scores``    S = Q Kᵀ, one thread per score (the CUDA thread hierarchy chapter's kernel)
- ``naive_attention``     standard attention (the paper's Algorithm 0) as three launches: scores,
                          a row softmax, P V; S and P go through HBM
- ``flash_attention``     FlashAttention's forward pass with query blocks outer (FlashAttention-2's
                          order, the attention chapter's Kernel 4): one thread per query row

Sources: M. Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007);
Kirk & Hwu, *Programming Massively Parallel Processors*, ch. 5; M. Harris,
"An Efficient Matrix Transpose in CUDA C/C++" (NVIDIA blog, 2013); Dao et al.,
"FlashAttention" (NeurIPS 2022) and Dao, "FlashAttention-2" (2023) for the loop orders.
"""

from __future__ import annotations

import math
import random

from .warpsim import (
    Array, Counts, Instr, add, blockDim, blockIdx, counts_of, div, exp, fma, fmax, launch, mul, shared, sub,
    syncthreads, threadIdx,
)

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


def read_strided(A, out, stride, offset):
    lane = threadIdx.x
    out[lane] = A[lane * stride + offset]


def warp_read_instr(stride: int = 1, dtype: str = "fp32", offset: int = 0) -> Instr:
    """The warp instruction of ``read_strided`` for one warp: lane i reads element
    ``i·stride + offset`` of an aligned array (``offset`` in elements)."""
    if stride < 0 or offset < 0:
        raise ValueError(f"stride and offset must be >= 0, got {stride}, {offset}")
    n = 31 * stride + offset + 1
    A = Array("A", [0.0] * n, dtype)
    r = launch(read_strided, 1, 32, (A, Array("out", 32, dtype), stride, offset))
    return next(i for i in r.record if i.kind == "ld")


def warp_read(stride: int = 1, dtype: str = "fp32", offset: int = 0) -> Counts:
    """Counts of one warp's load of ``A[lane·stride + offset]``: sectors, lines, bytes requested
    and moved, efficiency (the simulator's answer to ``calc.cuda.coalescing``)."""
    return counts_of(warp_read_instr(stride, dtype, offset))


def read_shared_strided(out, stride):
    s = shared("s", 32 * stride + 1)
    lane = threadIdx.x
    for k in range(lane, 32 * stride + 1, 32):     # the warp fills the array first
        s[k] = 0.0
    yield syncthreads()
    out[lane] = s[lane * stride]


def warp_shared_read(stride: int) -> Counts:
    """Counts of one warp's shared-memory load of 4-byte word ``lane·stride``: ``wavefronts``
    is the number of passes (the simulator's answer to ``calc.cuda.bank_conflicts``)."""
    if stride < 0:
        raise ValueError(f"stride must be >= 0, got {stride}")
    r = launch(read_shared_strided, 1, 32, (Array("out", 32), stride))
    return counts_of(next(i for i in r.record if i.kind == "ld" and i.space == "shared"))


def read_shared_gather(out, elements, n, dtype):
    s = shared("s", n, dtype)
    lane = threadIdx.x
    for k in range(lane, n, 32):                   # the warp fills the array first
        s[k] = 0.0
    yield syncthreads()
    out[lane] = s[elements[lane]]


def warp_shared_gather(elements, dtype: str = "fp32") -> Counts:
    """Counts of one warp's shared-memory load in which lane i reads element ``elements[i]``
    (32 of them) of an array of ``dtype``: ``wavefronts`` is the number of passes."""
    elements = list(elements)
    if len(elements) != 32 or min(elements) < 0:
        raise ValueError(f"need 32 non-negative element indices, got {elements!r}")
    r = launch(read_shared_gather, 1, 32, (Array("out", 32, dtype), elements, max(elements) + 1, dtype))
    return counts_of(next(i for i in r.record if i.kind == "ld" and i.space == "shared"))


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


def transpose_read_passes(pad: int) -> int:
    """Wavefronts of each warp's column read of the tile in ``transpose_shared`` (one 32 × 32 block):
    32 unpadded, 1 with ``tile[32][33]``."""
    r = run_transpose(TILE, pad)
    passes = {counts_of(i).wavefronts for i in r.record if i.kind == "ld" and i.space == "shared"}
    if len(passes) != 1:
        raise AssertionError(f"the warps of the transpose read the tile in different passes: {sorted(passes)}")
    return passes.pop()


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


def small_ints(rng: random.Random, lo: int, hi: int, count: int) -> list:
    """``[float(rng.randint(lo, hi)) for _ in range(count)]``, the same values from the same
    generator state, about ten times faster (in Pyodide, 8,192 ``randint`` calls cost more than
    simulating the 64×64 matmul they feed). ``randint`` draws ``getrandbits(k)`` for the range's
    bit length k until a draw falls inside it (``random.Random._randbelow``, CPython 3.2 to 3.14);
    the test suite holds this to ``randint``."""
    width = hi - lo + 1
    k = width.bit_length()
    bits = rng.getrandbits
    out = []
    for _ in range(count):
        r = bits(k)
        while r >= width:
            r = bits(k)
        out.append(float(lo + r))
    return out


def run_reduce(kernel: str = "sequential", n: int = 1024, block: int = 256, seed: int = 0, **kw):
    """One of Harris's reductions over ``n`` values (a multiple of ``block``): one partial sum per block."""
    rng = random.Random(seed)
    g_in = Array("g_in", small_ints(rng, 0, 9, n))
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
    A = Array("A", small_ints(rng, -3, 3, n * n))
    B = Array("B", small_ints(rng, -3, 3, n * n))
    C = Array("C", n * n)
    return launch(matmul_tiled, (n // T, n // T), (T, T), (A, B, C, n, T), **kw)


def attention_scores(Q, K, S, N, d):
    i = blockIdx.y * blockDim.y + threadIdx.y     # query
    j = blockIdx.x * blockDim.x + threadIdx.x     # key
    if i < N and j < N:
        val = 0.0
        for k in range(d):
            val = fma(Q[i * d + k], K[j * d + k], val)
        S[i * N + j] = val


def attention_scores_warp0(N: int, d: int, block=(16, 16)) -> dict:
    """``{"Q": Counts, "K": Counts, "S": Counts}``: warp 0 of block (0, 0) of ``attention_scores``,
    its first load of Q and of K (k = 0) and its store to S. Only block (0, 0) is run, so S holds
    just the rows that block writes (the counts depend on addresses within a row and the row pitch)."""
    bx, by = block
    rows = min(N, by)
    Q = Array("Q", [1.0] * (N * d))
    K = Array("K", [1.0] * (N * d))
    S = Array("S", rows * N)
    r = launch(attention_scores, 1, block, (Q, K, S, N, d))
    out = {}
    for ins in r.record:
        if ins.block == 0 and ins.warp == 0 and ins.kind != "flop" and ins.array.name not in out:
            out[ins.array.name] = counts_of(ins)
    return out


def softmax_rows(S, P, N):
    i = blockIdx.x * blockDim.x + threadIdx.x        # one thread per row
    if i < N:
        m = -math.inf
        for j in range(N):                           # pass 1: the row maximum
            m = fmax(m, S[i * N + j])
        total = 0.0
        for j in range(N):                           # pass 2: e = exp(s - m), and their sum
            e = exp(sub(S[i * N + j], m))
            P[i * N + j] = e
            total = add(total, e)
        for j in range(N):                           # pass 3: normalise
            P[i * N + j] = div(P[i * N + j], total)


def attention_pv(P, V, O, N, d):
    i = blockIdx.y * blockDim.y + threadIdx.y        # query
    c = blockIdx.x * blockDim.x + threadIdx.x        # output column
    if i < N and c < d:
        acc = 0.0
        for j in range(N):
            acc = fma(P[i * N + j], V[j * d + c], acc)
        O[i * d + c] = acc


def naive_attention(N: int, d: int, dtype: str = "fp16", seed: int = 0, **kw) -> list:
    """Standard attention as three launches (``attention_scores``, ``softmax_rows``, ``attention_pv``),
    S and P in global memory: the three ``Report``s (O is ``reports[2].arrays["O"]``). Each launch
    starts with a cold L2, so with a large L2 its HBM bytes are what it must read and write once."""
    rng = random.Random(seed)
    Q, K, V = (Array(name, [rng.uniform(-1, 1) for _ in range(N * d)], dtype) for name in "QKV")
    S, P, O = Array("S", N * N, dtype), Array("P", N * N, dtype), Array("O", N * d, dtype)
    t = 16
    return [
        launch(attention_scores, (-(-N // t), -(-N // t)), (t, t), (Q, K, S, N, d), **kw),
        launch(softmax_rows, -(-N // 32), 32, (S, P, N), **kw),
        launch(attention_pv, (-(-d // t), -(-N // t)), (t, t), (P, V, O, N, d), **kw),
    ]


def flash_attention(Q, K, V, O, L, N, d, BC):
    BR = blockDim.x
    t = threadIdx.x                                  # one thread per query row of the block
    row0 = blockIdx.x * BR
    Qs = shared("Qs", (BR, d), Q.dtype)
    Ks = shared("Ks", (BC, d), K.dtype)
    Vs = shared("Vs", (BC, d), V.dtype)
    Os = shared("Os", (BR, d), O.dtype)
    for f in range(t, BR * d, BR):                   # the block's Q tile, read once, coalesced
        r, c = divmod(f, d)
        Qs[r, c] = Q[(row0 + r) * d + c]
    m, ell = -math.inf, 0.0                          # running maximum and sum of this row
    acc = [0.0] * d                                  # the row of O, unnormalised, in registers
    yield syncthreads()
    for j0 in range(0, N, BC):                       # stream K and V, one tile of BC keys at a time
        for f in range(t, BC * d, BR):
            r, c = divmod(f, d)
            Ks[r, c] = K[(j0 + r) * d + c]
            Vs[r, c] = V[(j0 + r) * d + c]
        yield syncthreads()
        s = [0.0] * BC
        m_new = m
        for jj in range(BC):                         # this row's scores against the tile
            x = 0.0
            for k in range(d):
                x = fma(Qs[t, k], Ks[jj, k], x)
            s[jj] = x
            m_new = fmax(m_new, x)
        rescale = exp(sub(m, m_new))                 # e^(m_old - m_new): 0 on the first tile
        ell = mul(ell, rescale)
        for k in range(d):
            acc[k] = mul(acc[k], rescale)
        for jj in range(BC):
            p = exp(sub(s[jj], m_new))
            ell = add(ell, p)
            for k in range(d):
                acc[k] = fma(p, Vs[jj, k], acc[k])
        m = m_new
        yield syncthreads()                          # before the next tile overwrites Ks and Vs
    for k in range(d):
        Os[t, k] = div(acc[k], ell)
    L[row0 + t] = m + math.log(ell)                  # the log-sum-exp, kept for the backward pass
    yield syncthreads()
    for f in range(t, BR * d, BR):                   # write the O tile, coalesced
        r, c = divmod(f, d)
        O[(row0 + r) * d + c] = Os[r, c]


def run_flash_attention(N: int = 64, d: int = 16, block_rows: int = 32, block_cols: int = 16,
                        dtype: str = "fp16", seed: int = 0, **kw):
    """``flash_attention`` on random Q, K, V (N × d, ``dtype``), ``block_rows`` query rows per block
    (one thread each), ``block_cols`` keys per tile; N a multiple of both. O is ``report.arrays["O"]``,
    the log-sum-exp (FP32) ``report.arrays["L"]``."""
    if N % block_rows or N % block_cols:
        raise ValueError(f"N = {N} must be a multiple of block_rows = {block_rows} and block_cols = {block_cols}")
    rng = random.Random(seed)
    Q, K, V = (Array(name, [rng.uniform(-1, 1) for _ in range(N * d)], dtype) for name in "QKV")
    O, L = Array("O", N * d, dtype), Array("L", N, "fp32")
    return launch(flash_attention, N // block_rows, block_rows, (Q, K, V, O, L, N, d, block_cols), **kw)
