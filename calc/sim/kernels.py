"""The book's canonical kernels, written in Numba's CUDA dialect (``calc.sim.lang``), with their launches.

Each kernel is the CUDA kernel the chapters describe, line for line, kept as text
(``SOURCES[name]``: a whole Numba CUDA module, the same text ``kernels/ncu`` runs under real
Numba on a GPU; ``source(name, **constants)`` is that text with module constants replaced, as a
launch with another block or tile size needs, since a shared array's shape is a compile-time
constant); ``kernel(name, **constants)`` is it compiled for the simulator. Each
``run_*`` function makes the arrays, launches it and returns the
``calc.sim.Report`` (its arrays, inputs and output, are ``report.arrays``). Tests check their
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

import random

from .counts import Counts, Instr, counts_of
from .lang import compile_kernel, with_constants
from .launch import launch
from .memory import Array

TILE = 32

#: each canonical kernel's Numba CUDA text, by kernel name
SOURCES: dict = {}

SOURCES["copy_strided"] = """\
from numba import cuda


@cuda.jit
def copy_strided(A, B, n, stride):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        B[i] = A[i * stride]
"""

SOURCES["read_strided"] = """\
from numba import cuda


@cuda.jit
def read_strided(A, out, stride, offset):
    lane = cuda.threadIdx.x
    out[lane] = A[lane * stride + offset]
"""

SOURCES["read_shared_strided"] = """\
from numba import cuda
import numba

STRIDE = 1
WORDS = 33                                       # 32 * STRIDE + 1


@cuda.jit
def read_shared_strided(out, stride):
    s = cuda.shared.array(WORDS, numba.float32)
    lane = cuda.threadIdx.x
    for k in range(lane, WORDS, 32):             # the warp fills the array first
        s[k] = 0.0
    cuda.syncthreads()
    out[lane] = s[lane * stride]
"""

SOURCES["read_shared_gather"] = """\
from numba import cuda
import numba

N = 32                                           # elements of the shared array
DTYPE = numba.float32


@cuda.jit
def read_shared_gather(out, elements):
    s = cuda.shared.array(N, DTYPE)
    lane = cuda.threadIdx.x
    for k in range(lane, N, 32):                 # the warp fills the array first
        s[k] = 0.0
    cuda.syncthreads()
    out[lane] = s[elements[lane]]
"""

SOURCES["transpose_shared"] = """\
from numba import cuda
import numba

TILE = 32
TILE_COLS = 32                                   # 32 + pad: 33 gives each row one word of padding


@cuda.jit
def transpose_shared(A, B, n):
    tile = cuda.shared.array((TILE, TILE_COLS), numba.float32)   # __shared__ float tile[32][32 + pad]
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    tile[cuda.threadIdx.y, cuda.threadIdx.x] = A[y * n + x]   # a warp reads a row of A: coalesced
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    B[y * n + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]   # a warp reads a column of the tile
"""

SOURCES["reduce_interleaved"] = """\
from numba import cuda
import numba

TPB = 256                                        # threads per block


@cuda.jit
def reduce_interleaved(g_in, g_out):
    sdata = cuda.shared.array(TPB, numba.float32)
    tid = cuda.threadIdx.x
    sdata[tid] = g_in[cuda.blockIdx.x * cuda.blockDim.x + tid]
    cuda.syncthreads()
    s = 1
    while s < cuda.blockDim.x:
        if tid % (2 * s) == 0:                   # only every 2s-th thread works: divergent
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        g_out[cuda.blockIdx.x] = sdata[0]
"""

SOURCES["reduce_strided"] = """\
from numba import cuda
import numba

TPB = 256                                        # threads per block


@cuda.jit
def reduce_strided(g_in, g_out):
    sdata = cuda.shared.array(TPB, numba.float32)
    tid = cuda.threadIdx.x
    sdata[tid] = g_in[cuda.blockIdx.x * cuda.blockDim.x + tid]
    cuda.syncthreads()
    s = 1
    while s < cuda.blockDim.x:
        index = 2 * s * tid                      # contiguous threads, strided shared index
        if index < cuda.blockDim.x:
            sdata[index] += sdata[index + s]
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        g_out[cuda.blockIdx.x] = sdata[0]
"""

SOURCES["reduce_sequential"] = """\
from numba import cuda
import numba

TPB = 256                                        # threads per block


@cuda.jit
def reduce_sequential(g_in, g_out):
    sdata = cuda.shared.array(TPB, numba.float32)
    tid = cuda.threadIdx.x
    sdata[tid] = g_in[cuda.blockIdx.x * cuda.blockDim.x + tid]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:                              # the first s threads: whole warps while s >= 32
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        g_out[cuda.blockIdx.x] = sdata[0]
"""

SOURCES["matmul_tiled"] = """\
from numba import cuda
import numba

T = 16                                           # the tile: T × T threads per block


@cuda.jit
def matmul_tiled(A, B, C, n):
    As = cuda.shared.array((T, T), numba.float32)
    Bs = cuda.shared.array((T, T), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    acc = 0.0
    for p in range(n // T):
        As[ty, tx] = A[row * n + p * T + tx]
        Bs[ty, tx] = B[(p * T + ty) * n + col]
        cuda.syncthreads()
        for k in range(T):
            acc += As[ty, k] * Bs[k, tx]
        cuda.syncthreads()
    C[row * n + col] = acc
"""

SOURCES["attention_scores"] = """\
from numba import cuda


@cuda.jit
def attention_scores(Q, K, S, N, d):
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y   # query
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x   # key
    if i < N and j < N:
        val = 0.0
        for k in range(d):
            val += Q[i * d + k] * K[j * d + k]
        S[i * N + j] = val
"""

SOURCES["softmax_rows"] = """\
from numba import cuda
import math


@cuda.jit
def softmax_rows(S, P, N):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x   # one thread per row
    if i < N:
        m = -math.inf
        for j in range(N):                       # pass 1: the row maximum
            m = max(m, S[i * N + j])
        total = 0.0
        for j in range(N):                       # pass 2: e = exp(s - m), and their sum
            e = math.exp(S[i * N + j] - m)
            P[i * N + j] = e
            total += e
        for j in range(N):                       # pass 3: normalise
            P[i * N + j] = P[i * N + j] / total
"""

SOURCES["attention_pv"] = """\
from numba import cuda


@cuda.jit
def attention_pv(P, V, O, N, d):
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y   # query
    c = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x   # output column
    if i < N and c < d:
        acc = 0.0
        for j in range(N):
            acc += P[i * N + j] * V[j * d + c]
        O[i * d + c] = acc
"""

SOURCES["flash_attention"] = """\
from numba import cuda
import numba
import math

BR = 32                                          # query rows per block (one thread each)
BC = 16                                          # keys per tile
D = 16                                           # head dimension
DTYPE = numba.types.float16                         # the element type of Q, K, V and O


@cuda.jit
def flash_attention(Q, K, V, O, L, N):
    t = cuda.threadIdx.x                         # one thread per query row of the block
    row0 = cuda.blockIdx.x * BR
    Qs = cuda.shared.array((BR, D), DTYPE)
    Ks = cuda.shared.array((BC, D), DTYPE)
    Vs = cuda.shared.array((BC, D), DTYPE)
    Os = cuda.shared.array((BR, D), DTYPE)
    for f in range(t, BR * D, BR):               # the block's Q tile, read once, coalesced
        r, c = divmod(f, D)
        Qs[r, c] = Q[(row0 + r) * D + c]
    m, ell = -math.inf, 0.0                      # running maximum and sum of this row
    acc = cuda.local.array(D, numba.float32)     # the row of O, unnormalised, in registers
    for k in range(D):
        acc[k] = 0.0
    s = cuda.local.array(BC, numba.float32)
    cuda.syncthreads()
    for j0 in range(0, N, BC):                   # stream K and V, one tile of BC keys at a time
        for f in range(t, BC * D, BR):
            r, c = divmod(f, D)
            Ks[r, c] = K[(j0 + r) * D + c]
            Vs[r, c] = V[(j0 + r) * D + c]
        cuda.syncthreads()
        m_new = m
        for jj in range(BC):                     # this row's scores against the tile
            x = 0.0
            for k in range(D):
                x += Qs[t, k] * Ks[jj, k]
            s[jj] = x
            m_new = max(m_new, x)
        rescale = math.exp(m - m_new)            # e^(m_old - m_new): 0 on the first tile
        ell *= rescale
        for k in range(D):
            acc[k] *= rescale
        for jj in range(BC):
            p = math.exp(s[jj] - m_new)
            ell += p
            for k in range(D):
                acc[k] += p * Vs[jj, k]
        m = m_new
        cuda.syncthreads()                       # before the next tile overwrites Ks and Vs
    for k in range(D):
        Os[t, k] = acc[k] / ell
    L[row0 + t] = m + math.log(ell)              # the log-sum-exp, kept for the backward pass
    cuda.syncthreads()
    for f in range(t, BR * D, BR):               # write the O tile, coalesced
        r, c = divmod(f, D)
        O[(row0 + r) * D + c] = Os[r, c]
"""

_COMPILED: dict = {}


def source(name: str, **constants) -> str:
    """``SOURCES[name]`` with module constants replaced (``source("reduce_sequential", TPB=128)``)."""
    return with_constants(SOURCES[name], constants) if constants else SOURCES[name]


def kernel(name: str, **constants):
    """The canonical kernel ``name`` compiled for the simulator (cached per constants)."""
    key = (name, tuple(sorted(constants.items())))
    fn = _COMPILED.get(key)
    if fn is None:
        fn = _COMPILED[key] = compile_kernel(source(name, **constants), name, filename=f"<{name}>")
    return fn


def run_copy(n: int = 4096, stride: int = 1, block: int = 256, dtype: str = "fp32", **kw):
    """``copy_strided`` over ``n`` outputs, one thread each."""
    A = Array("A", [float(k % 251) for k in range(n * stride)], dtype)
    B = Array("B", n, dtype)
    return launch(kernel("copy_strided"), -(-n // block), block, (A, B, n, stride), **kw)


def warp_read_instr(stride: int = 1, dtype: str = "fp32", offset: int = 0) -> Instr:
    """The warp instruction of ``read_strided`` for one warp: lane i reads element
    ``i·stride + offset`` of an aligned array (``offset`` in elements)."""
    if stride < 0 or offset < 0:
        raise ValueError(f"stride and offset must be >= 0, got {stride}, {offset}")
    n = 31 * stride + offset + 1
    A = Array("A", [0.0] * n, dtype)
    r = launch(kernel("read_strided"), 1, 32, (A, Array("out", 32, dtype), stride, offset))
    return next(i for i in r.record if i.kind == "ld")


def warp_read(stride: int = 1, dtype: str = "fp32", offset: int = 0) -> Counts:
    """Counts of one warp's load of ``A[lane·stride + offset]``: sectors, lines, bytes requested
    and moved, efficiency (the simulator's answer to ``calc.cuda.coalescing``)."""
    return counts_of(warp_read_instr(stride, dtype, offset))


def warp_shared_read(stride: int) -> Counts:
    """Counts of one warp's shared-memory load of 4-byte word ``lane·stride``: ``wavefronts``
    is the number of passes (the simulator's answer to ``calc.cuda.bank_conflicts``)."""
    if stride < 0:
        raise ValueError(f"stride must be >= 0, got {stride}")
    k = kernel("read_shared_strided", STRIDE=stride, WORDS=32 * stride + 1)
    r = launch(k, 1, 32, (Array("out", 32), stride))
    return counts_of(next(i for i in r.record if i.kind == "ld" and i.space == "shared"))


def warp_shared_gather(elements, dtype: str = "fp32") -> Counts:
    """Counts of one warp's shared-memory load in which lane i reads element ``elements[i]``
    (32 of them) of an array of ``dtype``: ``wavefronts`` is the number of passes."""
    elements = list(elements)
    if len(elements) != 32 or min(elements) < 0:
        raise ValueError(f"need 32 non-negative element indices, got {elements!r}")
    k = kernel("read_shared_gather", N=max(elements) + 1, DTYPE=dtype)
    r = launch(k, 1, 32, (Array("out", 32, dtype), Array("elements", elements, "int32")))
    return counts_of(next(i for i in r.record if i.kind == "ld" and i.space == "shared"))


def run_transpose(n: int = 64, pad: int = 0, **kw):
    """``transpose_shared`` of an n × n FP32 matrix (n a multiple of 32), blocks of 32 × 32."""
    A = Array("A", [float(k) for k in range(n * n)])
    B = Array("B", n * n)
    k = kernel("transpose_shared", TILE_COLS=TILE + pad)
    return launch(k, (n // TILE, n // TILE), (TILE, TILE), (A, B, n), **kw)


def transpose_read_passes(pad: int) -> int:
    """Wavefronts of each warp's column read of the tile in ``transpose_shared`` (one 32 × 32 block):
    32 unpadded, 1 with ``tile[32][33]``."""
    r = run_transpose(TILE, pad)
    passes = {counts_of(i).wavefronts for i in r.record if i.kind == "ld" and i.space == "shared"}
    if len(passes) != 1:
        raise AssertionError(f"the warps of the transpose read the tile in different passes: {sorted(passes)}")
    return passes.pop()


REDUCTIONS = {"interleaved": "reduce_interleaved", "strided": "reduce_strided", "sequential": "reduce_sequential"}


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


def run_reduce(kernel_name: str = "sequential", n: int = 1024, block: int = 256, seed: int = 0, **kw):
    """One of Harris's reductions over ``n`` values (a multiple of ``block``): one partial sum per block."""
    rng = random.Random(seed)
    g_in = Array("g_in", small_ints(rng, 0, 9, n))
    g_out = Array("g_out", n // block)
    return launch(kernel(REDUCTIONS[kernel_name], TPB=block), n // block, block, (g_in, g_out), **kw)


def run_matmul(n: int = 64, T: int = 16, seed: int = 0, **kw):
    """C = A·B for n × n FP32 matrices (n a multiple of T), T × T tiles, one thread per output."""
    rng = random.Random(seed)
    A = Array("A", small_ints(rng, -3, 3, n * n))
    B = Array("B", small_ints(rng, -3, 3, n * n))
    C = Array("C", n * n)
    return launch(kernel("matmul_tiled", T=T), (n // T, n // T), (T, T), (A, B, C, n), **kw)


def attention_scores_warp0(N: int, d: int, block=(16, 16)) -> dict:
    """``{"Q": Counts, "K": Counts, "S": Counts}``: warp 0 of block (0, 0) of ``attention_scores``,
    its first load of Q and of K (k = 0) and its store to S. Only block (0, 0) is run, so S holds
    just the rows that block writes (the counts depend on addresses within a row and the row pitch)."""
    bx, by = block
    rows = min(N, by)
    Q = Array("Q", [1.0] * (N * d))
    K = Array("K", [1.0] * (N * d))
    S = Array("S", rows * N)
    r = launch(kernel("attention_scores"), 1, block, (Q, K, S, N, d))
    out = {}
    for ins in r.record:
        if ins.block == 0 and ins.warp == 0 and ins.kind != "flop" and ins.array.name not in out:
            out[ins.array.name] = counts_of(ins)
    return out


def naive_attention(N: int, d: int, dtype: str = "fp16", seed: int = 0, **kw) -> list:
    """Standard attention as three launches (``attention_scores``, ``softmax_rows``, ``attention_pv``),
    S and P in global memory: the three ``Report``s (O is ``reports[2].arrays["O"]``). Each launch
    starts with a cold L2, so with a large L2 its HBM bytes are what it must read and write once."""
    rng = random.Random(seed)
    Q, K, V = (Array(name, [rng.uniform(-1, 1) for _ in range(N * d)], dtype) for name in "QKV")
    S, P, O = Array("S", N * N, dtype), Array("P", N * N, dtype), Array("O", N * d, dtype)
    t = 16
    return [
        launch(kernel("attention_scores"), (-(-N // t), -(-N // t)), (t, t), (Q, K, S, N, d), **kw),
        launch(kernel("softmax_rows"), -(-N // 32), 32, (S, P, N), **kw),
        launch(kernel("attention_pv"), (-(-d // t), -(-N // t)), (t, t), (P, V, O, N, d), **kw),
    ]


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
    k = kernel("flash_attention", BR=block_rows, BC=block_cols, D=d, DTYPE=dtype)
    return launch(k, N // block_rows, block_rows, (Q, K, V, O, L, N), **kw)


def __getattr__(name: str):
    """``kernels.copy_strided`` and the like: the canonical kernel compiled with its text's constants."""
    if name in SOURCES:
        return kernel(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
