"""calc.sim.lang: kernels written in Numba's CUDA dialect run on the simulator as written (#41)."""
import pytest

from calc.sim import Array, KernelError, KernelSyntaxError, compile_kernel, launch

HEAD = "from numba import cuda\nimport numba\nimport math\n\n"


def k(body: str, **kw):
    return compile_kernel(HEAD + body, **kw)


def both(kernel, grid, block, make):
    """The reports of both executors on fresh arrays (they must agree)."""
    out = []
    for vector in (True, False):
        args = make()
        out.append((launch(kernel, grid, block, args, vector=vector), args))
    (rw, aw), (rt, at) = out
    assert rw.totals.as_dict() == rt.totals.as_dict()
    assert len(rw.record) == len(rt.record)
    return rw, rt, aw, at


def test_plain_operators_count_flops_on_floats_only():
    kern = k("""@cuda.jit
def saxpy(a, X, Y, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = i * 2 + 1 - 1
    if i < n:
        Y[i] = a * X[i] + Y[i]
""")
    n = 64
    rw, rt, _, at = both(kern, 1, 64, lambda: (2.0, Array("X", [1.0] * n), Array("Y", [3.0] * n), n))
    assert rw.executor == "warp" and rt.executor == "thread"
    assert rw.flops == 2 * n                       # one fused multiply-add per element, index math free
    assert at[2].data == [5.0] * n
    flop_instrs = [i for i in rt.record if i.kind == "flop"]
    assert len(flop_instrs) == 2                   # one instruction per warp


def test_acc_plus_equals_a_times_b_counts_two():
    kern = k("""@cuda.jit
def dot(A, B, out, n):
    t = cuda.threadIdx.x
    acc = 0.0
    for j in range(n):
        acc += A[t * n + j] * B[j]
    out[t] = acc
""")
    n = 8
    rw, rt, aw, _ = both(kern, 1, 32, lambda: (Array("A", [1.0] * (32 * n)), Array("B", [2.0] * n),
                                                 Array("out", 32), n))
    assert rw.flops == 32 * n * 2
    assert aw[2].data == [16.0] * 32


def test_integer_arrays_and_int_params_count_nothing():
    kern = k("""@cuda.jit
def idx(I, out, n):
    t = cuda.threadIdx.x
    out[t] = I[t] * n + I[t] // 2
""")
    rw, rt, aw, _ = both(kern, 1, 32, lambda: (Array("I", list(range(32)), "int32"), Array("out", 32, "int32"), 3))
    assert rw.flops == 0 and aw[1].data[5] == 17


def test_max_and_exp_count_like_fmax_and_exp():
    kern = k("""@cuda.jit
def f(S, P, n):
    t = cuda.threadIdx.x
    m = -math.inf
    for j in range(n):
        m = max(m, S[t * n + j])
    P[t] = math.exp(S[t * n] - m)
""")
    n = 4
    rw, rt, aw, _ = both(kern, 1, 32, lambda: (Array("S", [float(j) for j in range(32 * n)]), Array("P", 32), n))
    assert rw.flops == 32 * (n + 2)


def test_barrier_in_a_device_function():
    kern = k("""TPB = 64

@cuda.jit(device=True)
def block_sum(s, tid):
    step = TPB // 2
    while step > 0:
        if tid < step:
            s[tid] += s[tid + step]
        cuda.syncthreads()
        step //= 2
    return s[0]

@cuda.jit
def total(X, out):
    s = cuda.shared.array(TPB, numba.float32)
    tid = cuda.threadIdx.x
    s[tid] = X[tid]
    cuda.syncthreads()
    v = block_sum(s, tid)
    if tid == 0:
        out[0] = v
""")
    assert kern.__name__ == "total"                # the kernel, not the helper defined first
    r = launch(kern, 1, 64, (Array("X", [1.0] * 64), out := Array("out", 1)))
    assert out.data == [64.0] and r.flops == 63


def test_two_dimensional_shared_array_and_local_array():
    kern = k("""TILE = 32
COLS = 33

@cuda.jit
def tr(A, B, n):
    tile = cuda.shared.array((TILE, COLS), numba.float32)
    regs = cuda.local.array(2, numba.float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    regs[0] = A[y * n + x]
    tile[cuda.threadIdx.y, cuda.threadIdx.x] = regs[0]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    B[y * n + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]
""")
    n = 64
    rw, rt, aw, _ = both(kern, (2, 2), (32, 32), lambda: (Array("A", [float(v) for v in range(n * n)]),
                                                         Array("B", n * n), n))
    assert aw[1].data[1] == float(n) and rw.totals.bank_conflicts == 0


@pytest.mark.parametrize("body, words", [
    ("@cuda.jit\ndef f(A, n):\n    s = cuda.shared.array(n, numba.float32)\n", ["shape", "constant", "n"]),
    ("@cuda.jit\ndef f(A):\n    cuda.threadfence()\n", ["cuda.threadfence", "not supported"]),
    ("import os\n", ["import os"]),
    ("@cuda.jit\ndef f(A):\n    A[0] = numba.float128(1)\n", ["numba.float128", "not supported"]),
    ("@cuda.jit\ndef f(A):\n    x = cuda.syncthreads()\n", ["statement"]),
])
def test_outside_the_subset_is_refused_naming_line_and_feature(body, words):
    with pytest.raises(KernelSyntaxError) as e:
        k(body)
    assert e.value.line is not None and e.value.line > 4
    for w in words:
        assert w in str(e.value)


def test_errors_name_the_readers_line():
    kern = k("""@cuda.jit
def f(A, n):
    i = cuda.threadIdx.x
    A[i + n] = 1.0
""")
    with pytest.raises(KernelError) as e:
        launch(kern, 1, 32, (Array("A", 32), 1))
    assert e.value.line == 8
