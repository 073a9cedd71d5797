"""Three exercises' reference solutions, hand-written in the book's Numba CUDA dialect (issue #41).

Fixtures for tests/kernels/test_numba_sim.py and tests/calc/test_gpuscript.py until the branch that
converts every kernel of the book (``sim``) merges: after it, the chapters' own solutions are in this
dialect and these stay as *correct alternatives* (another way to write the same kernel, which must
give the same output under Numba's simulator and ours). Keyed by exercise id."""

REDUCTION = '''\
from numba import cuda
import numba

TPB = 256


@cuda.jit
def reduce(g_in, g_out, n):
    sdata = cuda.shared.array(TPB, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    sdata[tid] = g_in[i] if i < n else 0.0
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if tid < s:                           # a prefix: whole warps while s >= 32
            sdata[tid] += sdata[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        g_out[cuda.blockIdx.x] = sdata[0]
'''

COPY = '''\
from numba import cuda


@cuda.jit
def copy(A, B, n):
    i = cuda.grid(1)
    if i < n:
        B[i] = A[i]
'''

TRANSPOSE = '''\
from numba import cuda
import numba


@cuda.jit
def transpose(A, B, rows, cols):
    tile = cuda.shared.array((32, 33), numba.float32)   # one column of padding
    x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    for k in range(0, 32, 8):
        y = cuda.blockIdx.y * 32 + cuda.threadIdx.y + k
        if x < cols and y < rows:
            tile[cuda.threadIdx.y + k, cuda.threadIdx.x] = A[y * cols + x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * 32 + cuda.threadIdx.x         # column of B (a row of A)
    for k in range(0, 32, 8):
        y = cuda.blockIdx.x * 32 + cuda.threadIdx.y + k # row of B (a column of A)
        if x < rows and y < cols:
            B[y * rows + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + k]
'''

# a wrong one: correct launch, wrong values (the check must say FAIL, naming B[0])
COPY_WRONG = COPY.replace("B[i] = A[i]", "B[i] = A[i] * 2.0")

SOLUTIONS = {"ex-gpu-reduction": REDUCTION, "ex-coalesced-copy": COPY, "ex-gpu-transpose": TRANSPOSE}
