"""The book's exercises hold wrong kernels to account (issue #29: the anchors' checkers let wrong
solutions pass). The build already runs every reference (it must pass) and every starter (it must
fail); these tests try the *other* wrong kernels a reader is likely to write, each a small edit of
the reference, and assert that the check stops each one for the reason the exercise teaches.
They run on the chapters' own exercise blocks, so a change of a budget or of the sizes that lets a
probe through fails here."""

from pathlib import Path

import pytest

from calc import exercises as E

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ["roofline", "gpu", "cuda-threads", "attention", "tiling-systolic", "serving"]
#: chapters with one exercise so far (the communication chapter's reduce step)
ONE_EXERCISE = ["communication"]


@pytest.fixture(scope="module")
def book():
    return {ex.id: ex for ex in E.read_book(str(ROOT))}


def edit(code: str, old: str, new: str) -> str:
    assert old in code, f"probe no longer applies: {old!r} is not in the reference"
    return code.replace(old, new)


def drop_line(code: str, needle: str, which: int = 0) -> str:
    lines = code.split("\n")
    hits = [k for k, ln in enumerate(lines) if needle in ln]
    assert len(hits) > which, f"probe no longer applies: {needle!r}"
    del lines[hits[which]]
    return "\n".join(lines)


SERIAL_LOADER = "(range({}) if t == 0 else ())"

HARRIS_2 = """TPB = 256

def reduce(g_in, g_out, n):
    sdata = cuda.shared.array(TPB, numba.float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    sdata[tid] = g_in[i] if i < n else 0.0
    cuda.syncthreads()
    s = 1
    while s < cuda.blockDim.x:
        index = 2 * s * tid                   # packed threads, strided words
        if index < cuda.blockDim.x:
            sdata[index] += sdata[index + s]
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        g_out[cuda.blockIdx.x] = sdata[0]
"""

REGISTER_LOOP = """        for k in range(16):
            a = (As[ty, k], As[ty + 8, k])       # two registers of A
            b = (Bs[k, tx], Bs[k, tx + 8])       # two registers of B
            for i in range(2):
                for j in range(2):
                    acc[i][j] += a[i] * b[j]
"""
SHARED_LOOP = """        for i in range(2):
            for j in range(2):
                for k in range(16):
                    acc[i][j] += As[ty + 8 * i, k] * Bs[k, tx + 8 * j]
"""

# (exercise, how the reference is made wrong, the stage the check must stop at, the failing figure)
PROBES = [
    ("ex-comm-reduce-step", "forgets the slice's offset",
     lambda c: edit(c, "B[off + i] += R[i]", "B[i] += R[i]"), "mismatch", None),
    ("ex-comm-reduce-step", "copies the slice instead of adding it",
     lambda c: edit(c, "B[off + i] += R[i]", "B[off + i] = R[i]"), "mismatch", None),
    ("ex-comm-reduce-step", "a block per element of a warp's run (strided again)",
     lambda c: edit(c, "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x"),
     "budget", "sectors_per_request"),
    ("ex-roofline-fuse", "one thread does it all",
     lambda c: "def fused(A, B, C, D, T, n):\n    if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:\n"
               "        for i in range(n):\n            D[i] = (A[i] + B[i]) * C[i]\n",
     "budget", "hbm_bytes"),
    ("ex-gpu-float4", "no scalar tail",
     lambda c: edit(c, "    else:\n        for j in range(4 * i, n):        # the tail: at most three elements\n"
                       "            B[j] = A[j]", ""),
     "mismatch", None),
    ("ex-gpu-transpose", "no padding column",
     lambda c: edit(c, '(32, 33)', '(32, 32)'), "budget", "bank_conflicts"),
    ("ex-gpu-transpose", "one thread does it all",
     lambda c: "def transpose(A, B, rows, cols):\n"
               "    if cuda.blockIdx.x + cuda.blockIdx.y + cuda.threadIdx.x + cuda.threadIdx.y == 0:\n"
               "        for y in range(rows):\n            for x in range(cols):\n"
               "                B[x * rows + y] = A[y * cols + x]\n",
     "budget", "global_requests"),
    ("ex-gpu-reduction", "Harris's second kernel (strided index)",
     lambda c: HARRIS_2, "budget", "bank_conflicts"),
    ("ex-cuda-scores", "bounds checked, but x on the query",
     lambda c: edit(edit(c, "i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y", "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"),
                    "j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y"),
     "budget", "store_sectors_per_request"),
    ("ex-cuda-heads", "head in z but x on the query",
     lambda c: edit(edit(c, "i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y", "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"),
                    "j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y"),
     "budget", "store_sectors_per_request"),
    ("ex-cuda-grid-stride", "one thread does it all",
     lambda c: "def saxpy(a, X, Y, n):\n    if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:\n"
               "        for i in range(n):\n            Y[i] = a * X[i] + Y[i]\n",
     "budget", "global_requests"),
    ("ex-attn-softmax", "lane 0 walks the row",
     lambda c: edit(c, "cols_t = range(t, cols, cuda.blockDim.x)", "cols_t = range(cols) if t == 0 else range(0)"),
     "budget", "hbm_bytes"),   # correct, but with no L2 each one-lane request moves a whole sector
    ("ex-attn-flash", "l not rescaled",
     lambda c: drop_line(c, "l *= alpha"), "mismatch", None),
    ("ex-attn-flash", "o not rescaled",
     lambda c: drop_line(c, "o = [ok * alpha for ok in o]"), "mismatch", None),
    ("ex-attn-flash", "one thread copies the key blocks",
     lambda c: edit(c, "for e in range(t, Bc * d, cuda.blockDim.x):", "for e in " + SERIAL_LOADER.format("Bc * d") + ":"),
     "budget", "global_requests"),
    ("ex-tiling-matmul", "no barrier before the next phase",
     lambda c: drop_line(c, "cuda.syncthreads()", which=1), "error", None),
    ("ex-tiling-matmul", "no barrier after the tiles' loads",
     lambda c: drop_line(c, "cuda.syncthreads()", which=0), "error", None),
    ("ex-tiling-matmul", "no guard at the ragged edge",
     lambda c: edit(c, "A[row * n + a] if row < n and a < n else 0.0", "A[row * n + a]"), "error", None),
    ("ex-tiling-matmul", "the tile of A stored transposed",
     lambda c: edit(edit(c, "As[ty, tx] = A", "As[tx, ty] = A"), "acc += As[ty, k]", "acc += As[k, ty]"),
     "budget", "bank_conflicts"),
    ("ex-tiling-registers", "operands reused from registers, rows not padded",
     lambda c: edit(edit(c, 'As = cuda.shared.array((16, 24)', 'As = cuda.shared.array((16, 16)'),
                    'Bs = cuda.shared.array((16, 24)', 'Bs = cuda.shared.array((16, 16)'), "budget", "bank_conflicts"),
    ("ex-tiling-registers", "rows padded, every FMA reads shared memory",
     lambda c: edit(c, REGISTER_LOOP, SHARED_LOOP), "budget", "shared_loads"),
    ("ex-serving-gemv", "each lane walks its own chunk of the row",
     lambda c: edit(c, "    for k in range(lane, K, 32):          # 32 neighbouring weights per request\n",
                    "    c = (K + 31) // 32\n    for k in range(lane * c, min(K, lane * c + c)):\n"),
     "budget", "load_sectors_per_request"),
    ("ex-serving-gqa", "one thread copies the cache",
     lambda c: edit(c, "for e in range(t, 32 * d, 32):", "for e in " + SERIAL_LOADER.format("32 * d") + ":"),
     "budget", "global_requests"),
    ("ex-serving-paged", "the cache read as if contiguous",
     lambda c: edit(c, "row = table[t // 16] * 16 + t % 16", "row = t"), "mismatch", None),
]


@pytest.mark.parametrize("eid,what,wrong,stage,figure", PROBES, ids=[f"{p[0]}: {p[1]}" for p in PROBES])
def test_a_likely_wrong_kernel_fails_for_its_reason(book, eid, what, wrong, stage, figure):
    ex = book[eid]
    spec = E.spec_of(ex)
    result = E.check_code(wrong(ex.solution), spec, ref_code=ex.solution)
    assert not result["passed"], f"{eid}: '{what}' passes the check"
    assert result["stage"] == stage, result["message"]
    if figure:
        failed = {b["name"] for b in result["budgets"] if not b["ok"]}
        assert figure in failed, result["message"]


def test_every_chapter_from_the_roofline_on_has_two_exercises_and_the_book_fifteen(book):
    per = {c: [e for e in book.values() if e.path == f"chapters/{c}.qmd"] for c in CHAPTERS}
    assert all(len(v) >= 2 for v in per.values()), {c: len(v) for c, v in per.items()}
    assert len(book) >= 15
    assert all(any(e.path == f"chapters/{c}.qmd" for e in book.values()) for c in ONE_EXERCISE)


def test_the_tiled_matmuls_likely_mistakes_are_told_what_and_where(book):
    """A reader's three likely mistakes in the tiled matmul get a message that names the cause and
    the line, not only a wrong number: the missing second barrier is a race between two warps with
    both lines, the unguarded edge an index outside A at the load, the untiled kernel its bytes and
    by how much they pass the budget."""
    ex = book["ex-tiling-matmul"]
    spec = E.spec_of(ex)
    lines = ex.solution.split("\n")
    line_of = lambda text: next(k + 1 for k, ln in enumerate(lines) if text in ln)

    r = E.check_code(drop_line(ex.solution, "cuda.syncthreads()", which=1), spec)
    assert r["line"] == line_of("acc += As[ty, k]"), r["message"]
    assert "(another warp) writes on line" in r["message"] and "a cuda.syncthreads() must come between" \
        in r["message"], r["message"]
    written = int(r["message"].split("writes on line ")[1].split()[0])
    assert written in (line_of("As[ty, tx] ="), line_of("Bs[ty, tx] =")), r["message"]

    r = E.check_code(edit(ex.solution, "A[row * n + a] if row < n and a < n else 0.0", "A[row * n + a]"), spec)
    assert r["line"] == line_of("As[ty, tx] =") and "is outside global array A" in r["message"], r["message"]

    # Run (one size, two phases) already shows the race, before the reader presses Check
    r = E.run_code(drop_line(ex.solution, "cuda.syncthreads()", which=1), spec)
    assert not r["ok"] and "(another warp)" in r["message"], r["message"]

    r = E.check_code(ex.starter, spec, ref_code=ex.solution)
    assert r["stage"] == "budget" and "hbm_bytes is" in r["message"] and "times the limit" in r["message"], \
        r["message"]
