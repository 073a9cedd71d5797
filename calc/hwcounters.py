"""The simulator's counts beside hardware counters others measured and published (issue #41).

``PUBLISHED``: counters from Nsight Compute runs and NVIDIA's guide, each with its value, unit and
source. The functions below run the same kernels in the simulator and give its figure for each;
``agreements()`` pairs them, and the hardware appendix prints the pairs and ``check()``s each, so a
change to the simulator that breaks an agreement stops the build.

What the simulator leaves out, and so what these figures do not test: the L1 on loads (it counts
sectors requested, which is what ``l1tex__t_sectors`` counts whether they hit or not), timing, and
the L2's real policy (its HBM bytes come from an LRU model of the L2, an estimate).
"""
from __future__ import annotations

from dataclasses import dataclass

from .sim import Array, compile_kernel, launch
from .sim import kernels

LEI_MAO = ("Lei Mao, \"CUDA Coalesced Memory Access\" (2023), Nsight Compute on a naive FP32 GEMM",
           "https://leimao.github.io/blog/CUDA-Coalesced-Memory-Access/", "mao2023coalesced")
MOJO_32 = ("Modular, Mojo GPU Puzzles, Puzzle 32 \"Bank Conflicts\", Nsight Compute",
           "https://puzzles.modular.com/puzzle_32/conflict_free_patterns.html", "modular2025puzzle32")
BEST_PRACTICES = ("NVIDIA, CUDA C++ Best Practices Guide, \"Coalesced Access to Global Memory\"",
                  "https://docs.nvidia.com/cuda/cuda-c-best-practices-guide/", "nvidia2024bestpractices")


@dataclass(frozen=True)
class Published:
    """One published hardware figure: what was measured, its value and unit, and where."""
    key: str
    what: str
    value: float
    unit: str
    source: str
    url: str
    cite: str


def _p(key, what, value, unit, src):
    return Published(key, what, value, unit, *src)


PUBLISHED = {p.key: p for p in (
    _p("gemm_naive_ld", "naive FP32 GEMM, threadIdx.x indexes the row: load sectors per request", 16.5,
       "sectors/request", LEI_MAO),
    _p("gemm_naive_st", "naive FP32 GEMM, threadIdx.x indexes the row: store sectors per request", 32,
       "sectors/request", LEI_MAO),
    _p("gemm_coalesced_ld", "the same GEMM, threadIdx.x indexes the column: load sectors per request", 2.5,
       "sectors/request", LEI_MAO),
    _p("gemm_coalesced_st", "the same GEMM, threadIdx.x indexes the column: store sectors per request", 4,
       "sectors/request", LEI_MAO),
    _p("shared_two_way", "8,192 FP32 elements, 256 threads a block, one two-way shared access each", 256,
       "bank conflicts", MOJO_32),
    _p("shared_no_conflict", "the same, each lane its own bank", 0, "bank conflicts", MOJO_32),
    _p("coalesced_aligned", "a warp reading 32 consecutive aligned FP32 words", 4, "sectors", BEST_PRACTICES),
    _p("coalesced_misaligned", "the same, one word off alignment", 5, "sectors", BEST_PRACTICES),
    _p("coalesced_stride2", "a warp reading every second FP32 word", 8, "sectors", BEST_PRACTICES),
    _p("coalesced_stride32", "a warp reading one FP32 word in every 32 (large strides)", 32, "sectors",
       BEST_PRACTICES),
)}


# ------------------------------------------------------------------ the kernels the sources profiled

HEAD = "from numba import cuda\nimport numba\n\n"

# Each kernel is Numba CUDA text, as the book's others (calc.sim.kernels.SOURCES): the simulator
# compiles it, and the same text runs under numba-cuda on a GPU.
SOURCES = {
    "gemm_naive": HEAD + """@cuda.jit
def gemm_naive(A, B, C, n):
    # Lei Mao's naive GEMM: threadIdx.x indexes the row of C, so a warp reads 32 rows of A.
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if i < n and j < n:
        acc = 0.0
        for k in range(n):
            acc += A[i * n + k] * B[k * n + j]
        C[i * n + j] = acc
""",
    "gemm_coalesced": HEAD + """@cuda.jit
def gemm_coalesced(A, B, C, n):
    # The same GEMM with threadIdx.x indexing the column: a warp reads one row of B, 32 wide.
    j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if i < n and j < n:
        acc = 0.0
        for k in range(n):
            acc += A[i * n + k] * B[k * n + j]
        C[i * n + j] = acc
""",
    "shared_two_way": HEAD + """TPB = 256
TWO_TPB = 512

@cuda.jit
def shared_two_way(inp, out, n):
    # One conflict-free shared store, then one read in which lanes l and l + 16 share a bank.
    s = cuda.shared.array(TWO_TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    s[t] = inp[i]
    s[t + TPB] = inp[i]
    cuda.syncthreads()
    out[i] = (s[2 * t] + 10.0) * 2.0                # word 2 * lane: two lanes per bank
""",
    "shared_no_conflict": HEAD + """TWO_TPB = 512

@cuda.jit
def shared_no_conflict(inp, out, n):
    s = cuda.shared.array(TWO_TPB, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    s[t] = inp[i]
    cuda.syncthreads()
    out[i] = (s[t] + 10.0) * 2.0                    # word lane: each lane its own bank
""",
}
gemm_naive = compile_kernel(SOURCES["gemm_naive"])
gemm_coalesced = compile_kernel(SOURCES["gemm_coalesced"])
shared_two_way = compile_kernel(SOURCES["shared_two_way"])
shared_no_conflict = compile_kernel(SOURCES["shared_no_conflict"])

GEMMS = {"naive": gemm_naive, "coalesced": gemm_coalesced}


def run_gemm(order: str = "naive", n: int = 32, block=(32, 8)):
    """One GEMM launch of n × n FP32 matrices (small integers), blocks of ``block`` threads."""
    A = Array("A", [float((k * 7) % 5 - 2) for k in range(n * n)])
    B = Array("B", [float((k * 3) % 7 - 3) for k in range(n * n)])
    C = Array("C", n * n)
    bx, by = block
    return launch(GEMMS[order], (-(-n // bx), -(-n // by)), block, (A, B, C, n))


def gemm_sectors_per_request(order: str, n: int = 32) -> tuple:
    """(load, store) sectors per request of ``run_gemm`` (Nsight Compute's
    l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum / l1tex__t_requests_..._{ld,st}.sum)."""
    t = run_gemm(order, n).totals
    return _whole(t.load_sectors / t.global_loads), _whole(t.store_sectors / t.global_stores)


def _whole(x: float):
    return int(x) if x == int(x) else x


TPB = 256


def shared_conflicts(kernel, n: int = 8192) -> int:
    """Bank conflicts (extra wavefronts) of ``kernel`` over ``n`` elements, TPB threads a block."""
    inp = Array("inp", [float(k % 13) for k in range(n)])
    r = launch(kernel, n // TPB, TPB, (inp, Array("out", n), n))
    return r.totals.bank_conflicts


def simulated() -> dict:
    """The simulator's figure for each key of PUBLISHED."""
    nl, ns = gemm_sectors_per_request("naive")
    cl, cs = gemm_sectors_per_request("coalesced")
    return {
        "gemm_naive_ld": nl, "gemm_naive_st": ns, "gemm_coalesced_ld": cl, "gemm_coalesced_st": cs,
        "shared_two_way": shared_conflicts(shared_two_way),
        "shared_no_conflict": shared_conflicts(shared_no_conflict),
        "coalesced_aligned": kernels.warp_read(1).sectors,
        "coalesced_misaligned": kernels.warp_read(1, offset=1).sectors,
        "coalesced_stride2": kernels.warp_read(2).sectors,
        "coalesced_stride32": kernels.warp_read(32).sectors,
    }


def transpose_column_read() -> dict:
    """The padded transpose (no published counter to set beside it; kernels/ncu measures it):
    wavefronts of a warp's column read of the 32 × 32 tile, unpadded and with tile[32][33]."""
    return {"unpadded": kernels.transpose_read_passes(0), "padded": kernels.transpose_read_passes(1)}


def agreements() -> list:
    """(Published, the simulator's figure, equal?) for every published figure."""
    sim = simulated()
    return [(p, sim[k], abs(sim[k] - p.value) < 1e-9) for k, p in PUBLISHED.items()]
