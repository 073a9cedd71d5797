"""calc.sim.warp: a launch run a warp at a time gives the per-thread executor's report, exactly.

Each kernel here runs twice, ``launch(..., vector=False)`` (every thread alone, the reference) and
``vector=True`` (a warp's lanes as one, handing the launch back to the per-thread executor when the
lanes part or anything goes wrong); the two reports must agree field by field: every warp
instruction of the record, the arrays' contents, the counts, the table, HBM bytes; or the same
error, message, thread, line, array, index and the arrays as the error left them."""
import math

import pytest

from calc import sim as ws
from calc.sim import Array, compile_kernel, launch
from calc.sim import kernels as sk
# The executors' own protocol, below the kernel language: what calc.sim.lang compiles a Numba
# kernel into (shared arrays made by name, a barrier a yield of syncthreads(), the counted
# arithmetic as calls). These tests drive the executors with kernels written that way directly.
from calc.sim.arith import add, div, exp, fma, fmax, mul, sub
from calc.sim.lang import _atomic_add as atomic_add
from calc.sim.memory import blockDim, blockIdx, gridDim, shared, syncthreads, threadIdx


def _instr(i):
    arr = i.array
    a = None if arr is None else (arr.name, arr.space, arr.dtype, arr.shape, arr.base)
    return (i.block, i.warp, i.epoch, i.line, i.kind, a, i.base, i.size, i.lanes, i.index, i.live,
            i.site[0].co_name, i.site[1])


def _outcome(make_args, kernel, grid, block, vector, **kw):
    args = make_args()
    arrays = [a for a in args if isinstance(a, Array)]
    try:
        r = launch(kernel, grid, block, args, vector=vector, **kw)
    except ws.KernelError as e:
        return ("error", type(e).__name__, str(e), e.block, e.thread, e.line, e.array, e.index,
                [a.data for a in arrays]), None
    t = r.traffic
    return ("report", [_instr(i) for i in r.record], {n: a.data for n, a in r.arrays.items()},
            r.totals.as_dict(), r.table(), r.per_block, (t.read_bytes, t.write_bytes, t.l2_read_hits),
            r.to_dict()), r.executor


def same(make_args, kernel, grid, block, **kw) -> str:
    """Assert both executors agree; return which one the vector launch ended on."""
    want, how = _outcome(make_args, kernel, grid, block, False, **kw)
    assert how in (None, "thread")
    got, how = _outcome(make_args, kernel, grid, block, True, **kw)
    assert got == want
    return how


def _floats(name, n, seed=1):
    return Array(name, [float((k * 7 + seed) % 13) - 6.0 for k in range(n)])


# ------------------------------------------------------------------ the canonical kernels


def test_copy_and_strided_copy_run_a_warp_at_a_time():
    for n, stride, block in [(4096, 1, 256), (1024, 2, 128), (256, 32, 64)]:
        assert same(lambda: (_floats("A", n * stride), Array("B", n), n, stride), sk.copy_strided,
                    -(-n // block), block) == "warp"


def test_copy_with_a_ragged_tail_gives_the_same_report():
    # n = 1000: the last warp's lanes part at `if i < n` (divergence): the per-thread executor runs it
    assert same(lambda: (_floats("A", 1000), Array("B", 1000), 1000, 1), sk.copy_strided, 4, 256) == "thread"


@pytest.mark.parametrize("pad", [0, 1])
def test_transpose(pad):
    assert same(lambda: (_floats("A", 64 * 64), Array("B", 64 * 64), 64),
                sk.kernel("transpose_shared", TILE_COLS=32 + pad), (2, 2), (32, 32)) == "warp"


@pytest.mark.parametrize("n,T", [(32, 16), (32, 32), (48, 16)])
def test_tiled_matmul(n, T):
    assert same(lambda: (_floats("A", n * n), _floats("B", n * n, 3), Array("C", n * n), n),
                sk.kernel("matmul_tiled", T=T), (n // T, n // T), (T, T)) == "warp"


@pytest.mark.parametrize("name", ["interleaved", "strided", "sequential"])
def test_harris_reductions(name):
    # they diverge (a branch on tid): the per-thread executor's report, through the fallback
    same(lambda: (_floats("g_in", 512), Array("g_out", 2)), sk.kernel(sk.REDUCTIONS[name]), 2, 256)


def test_attention_kernels():
    N, d = 32, 16
    assert same(lambda: (_floats("Q", N * d), _floats("K", N * d, 2), Array("S", N * N), N, d),
                sk.attention_scores, (2, 2), (16, 16)) == "warp"
    assert same(lambda: (_floats("S", N * N), Array("P", N * N), N), sk.softmax_rows, 1, 32) == "warp"
    same(lambda: (_floats("P", N * N), _floats("V", N * d), Array("O", N * d), N, d), sk.attention_pv,
         (1, 2), (16, 16))
    same(lambda: (_floats("Q", 32 * 8), _floats("K", 32 * 8, 2), _floats("V", 32 * 8, 3), Array("O", 32 * 8),
                  Array("L", 32), 32), sk.kernel("flash_attention", BR=32, BC=16, D=8, DTYPE="fp32"), 1, 32)


def test_the_canonical_runs_report_the_warp_executor():
    assert sk.run_copy(4096).executor == "warp"
    assert sk.run_matmul(64, 16).executor == "warp"
    assert sk.run_transpose(64, 1).executor == "warp"


# ------------------------------------------------------------------ kernels built to part the lanes


def k_branch(A, B):
    i = threadIdx.x
    if i % 3 == 0:
        B[i] = mul(A[i], 2.0)
    else:
        B[i] = A[i + 1]


def k_oob(A, B):
    i = threadIdx.x
    B[i] = A[i * 3]                     # lanes 11 and up read past A's 32 elements


def k_race_late_write(A, B):
    i = threadIdx.x
    j = int(A[31 - i])                  # thread 31 reads A[0] ...
    B[i] = j
    A[i] = 5.0                          # ... which thread 0 writes: a race, whatever the order


def k_race_index(A, B):
    i = threadIdx.x
    v = A[(i + 1) % 32]                 # reads an element its neighbour writes, then uses it as an index
    A[i] = 3.0
    B[i] = A[int(v) % 32]


def k_uninit(B):
    s = shared("s", 64)
    i = threadIdx.x
    s[i] = 1.0
    yield syncthreads()
    B[i] = s[i + 32]                    # never written


def k_steps(A):
    x = 0.0
    while True:
        x = add(x, A[threadIdx.x])


def k_divergent_barrier(A):
    if threadIdx.x < 40:
        yield syncthreads()
    A[threadIdx.x] = 1.0


def k_two_barriers(A):
    if threadIdx.x < 32:
        yield syncthreads()
    else:
        yield syncthreads()
    A[threadIdx.x] = 1.0


def k_cross_block(A, B):
    i = blockIdx.x * blockDim.x + threadIdx.x
    B[i] = A[(i + 32) % 64]
    A[i] = 0.0                          # block 0 writes what block 1 read


def k_everything(A, M, out, n):
    # uniform control, every counted operation, 2-D row spelling, broadcast reads, a partial warp
    t = threadIdx.x + blockDim.x * threadIdx.y
    g = blockIdx.x * blockDim.x * blockDim.y + t
    tile = shared("tile", (4, 24))
    tile[threadIdx.y][threadIdx.x] = M[g % 4, (g * 5) % 24]
    yield syncthreads()
    a = tile[threadIdx.y, (threadIdx.x + 1) % 24]
    b = A[0] + A[g % n] * 0.5
    c = fmax(a, b)
    c = add(c, sub(a, b))
    c = div(c, 3.0) if n > 2 else c
    c = fma(c, exp(-abs(a) * 0.1), mul(b, 2.0))
    q, r = divmod(g, 7)
    c = c + max(n, 3) - min(r, r - 1) + round(c, 2) + math.floor(c) + (g // 2) ** 2 - (g << 1) + (g & 5) - (g | 2)
    if c == c and n > 0:
        out[g] = c
    yield syncthreads()


def k_row_overrun(M, out):
    out[threadIdx.x] = M[threadIdx.x % 2][threadIdx.x]        # j past the row's 24 columns: per-dimension check


def k_row_bool(M, out):
    out[threadIdx.x] = M[threadIdx.x % 2][threadIdx.x < 16]   # a bool column: an error per thread


def k_is(A, B):
    i = threadIdx.x
    B[i] = A[i] if A is not None else 0.0


def k_handler(A, B):
    i = threadIdx.x
    try:
        B[i] = A[i + 16]
    except IndexError:
        B[i] = -1.0


def k_float_index(A, B):
    B[threadIdx.x] = A[threadIdx.x * 1.0]


def k_bool_store(A, B):
    B[threadIdx.x < 16] = A[threadIdx.x]


def k_range_lanes(A, B):
    for k in range(threadIdx.x, 64, 32):
        B[k] = A[k]


def k_zero_div(A, B):
    B[threadIdx.x] = div(1.0, A[threadIdx.x])


@pytest.mark.parametrize("kernel,make,grid,block,how", [
    (k_branch, lambda: (_floats("A", 33), Array("B", 32)), 1, 32, "thread"),
    (k_oob, lambda: (_floats("A", 32), Array("B", 32)), 1, 32, "error"),
    (k_race_late_write, lambda: (_floats("A", 32), Array("B", 32)), 1, 32, "error"),
    (k_race_index, lambda: (_floats("A", 32), Array("B", 32)), 1, 32, "error"),
    (k_uninit, lambda: (Array("B", 32),), 1, 32, "error"),
    (k_divergent_barrier, lambda: (Array("A", 64),), 1, 64, "error"),
    (k_two_barriers, lambda: (Array("A", 64),), 1, 64, "error"),
    (k_cross_block, lambda: (_floats("A", 64), Array("B", 64)), 2, 32, "error"),
    (k_everything, lambda: (_floats("A", 200), Array("M", [float(k % 11) for k in range(96)], shape=(4, 24)),
                            Array("out", 144), 144), 2, (24, 3), "warp"),
    (k_row_overrun, lambda: (Array("M", [0.0] * 48, shape=(2, 24)), Array("out", 32)), 1, 32, "error"),
    (k_row_bool, lambda: (Array("M", [0.0] * 48, shape=(2, 24)), Array("out", 32)), 1, 32, "error"),
    (k_is, lambda: (_floats("A", 32), Array("B", 32)), 1, 32, "thread"),
    (k_handler, lambda: (_floats("A", 32), Array("B", 32)), 1, 32, None),   # caught, and still the launch fails (#42)
    (k_float_index, lambda: (_floats("A", 32), Array("B", 32)), 1, 32, "error"),
    (k_bool_store, lambda: (_floats("A", 32), Array("B", 32)), 1, 32, "error"),
    (k_range_lanes, lambda: (_floats("A", 64), Array("B", 64)), 1, 32, "thread"),
    (k_zero_div, lambda: ([Array("A", [1.0] * 5 + [0.0] + [1.0] * 26), Array("B", 32)]), 1, 32, "error"),
])
def test_kernels_that_part_the_lanes_give_the_same_report_or_error(kernel, make, grid, block, how):
    got = same(lambda: tuple(make()), kernel, grid, block)
    assert got == (None if how == "error" else how)


def test_the_step_limit_is_the_per_thread_one():
    assert same(lambda: (_floats("A", 32),), k_steps, 1, 32, max_steps=5_000) is None
    with pytest.raises(ws.StepLimit, match="step limit"):
        launch(k_steps, 1, 32, (_floats("A", 32),), max_steps=5_000)


def test_a_kernel_just_under_the_step_limit_runs_a_warp_at_a_time():
    def k(A, B):
        B[threadIdx.x] = A[threadIdx.x]          # 2 × 64 steps
    assert same(lambda: (_floats("A", 64), Array("B", 64)), k, 1, 64, max_steps=129) == "warp"
    assert same(lambda: (_floats("A", 64), Array("B", 64)), k, 1, 64, max_steps=128) is None


def test_arguments_a_kernel_could_change_per_lane_keep_it_per_thread():
    def k(A, seen):
        seen.append(A[threadIdx.x])
    got = []
    r = launch(k, 1, 32, (_floats("A", 32), got))
    assert r.executor == "thread" and len(got) == 32


def test_a_mutable_default_keeps_it_per_thread():
    def k(A, seen=[]):
        seen.append(A[threadIdx.x])
    r = launch(k, 1, 32, (_floats("A", 32),))
    assert r.executor == "thread" and len(k.__defaults__[0]) == 32


def test_kernels_from_text_with_an_error_name_the_same_line():
    text = "def k(A, B, n):\n    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x\n    B[i] = A[i + 1]\n"
    kern = compile_kernel(text)
    assert same(lambda: (_floats("A", 64), Array("B", 64), 64), kern, 2, 32) is None   # lane 31 of block 1
    good = compile_kernel(text.replace("i + 1", "i"))
    assert same(lambda: (_floats("A", 64), Array("B", 64), 64), good, 2, 32) == "warp"


def test_a_fallback_leaves_the_arrays_as_the_per_thread_run_does():
    A = _floats("A", 33)
    before = list(A.data)
    r = launch(k_branch, 1, 32, (A, Array("B", 32)))
    assert r.executor == "thread" and A.data == before
    assert r.arrays["B"].data == [A.data[i] * 2.0 if i % 3 == 0 else A.data[i + 1] for i in range(32)]
