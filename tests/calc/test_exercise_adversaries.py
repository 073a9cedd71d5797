"""The adversarial suite of issue #42: for every one of the book's 19 exercises, the wrong kernels
a learner plausibly writes (each must be rejected, and its message must give the cause and, where
one line is at fault, that line), the correct alternatives a learner may write (each must pass),
and the cheats a learner may try to make Check say "passed" (each must be refused, naming the
line). Every kernel is sent through ``calc.exercises.handle`` exactly as the page's worker sends it.

A wrong kernel marks the line its message must name with ``# <-`` (two lines for a race: the
message may name either access). A cause is a tuple: the result's ``kind`` or ``stage``, then words
the message itself must hold; a list of such tuples accepts any one of them (a missing barrier is
a race or a read of an element no thread wrote yet, depending on which thread runs first).

Holes the simulator (calc/sim, branch sim) still has are ``xfail(strict=True)`` with the hole in
one line: when the simulator closes one, its test XPASSes and fails, and the mark comes off."""
from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from typing import Optional

import pytest

from calc import exercises as E

HEAD = "from numba import cuda\nimport numba\nimport math\n\n"
MARK = "# <-"

# causes (see the module's docstring)
OOB = ("OutOfBounds", "outside")
RACE = ("Race", "race")
UNINIT = ("UninitializedRead", "wrote")   # "before any thread wrote it", or after a barrier "which no thread ... wrote"
BARRIER_MISSING = [RACE, UNINIT]
DIVERGENT_BARRIER = ("BarrierError", "syncthreads")
MISMATCH = ("mismatch", "expected")
UNWRITTEN = [("mismatch", "was never written"), ("mismatch", "no thread wrote")]
INPUT = ("mismatch", "changed its input")
ZERODIV = ("KernelException", "ZeroDivisionError")
REFUSED = ("compile",)


def budget(*words: str) -> tuple:
    return ("budget",) + words


OVERFLOW = ("mismatch", "exp overflowed FP32", "subtract the row's maximum")   # calc.sim.arith: exp past 88.72 is inf
DEVICE_LINE = "a race inside a device function names the kernel's line that called it (sim)"


@dataclass(frozen=True)
class Kernel:
    ex: str
    name: str
    code: str
    cause: object = None        # a tuple of words, or a list of them (any one); None: must pass
    xfail: Optional[str] = None

    @property
    def text(self) -> str:
        body = textwrap.dedent(self.code).strip("\n") + "\n"
        return body if body.startswith(("from numba", "import")) else HEAD + body

    @property
    def lines(self) -> list:
        return [i for i, ln in enumerate(self.text.split("\n"), 1) if MARK in ln]


def W(ex, name, cause, code, xfail=None) -> Kernel:
    return Kernel(ex, name, code, cause, xfail)


def OK(ex, name, code, xfail=None) -> Kernel:
    return Kernel(ex, name, code, None, xfail)


@pytest.fixture(scope="module")
def book():
    return {ex.id: ex for ex in E.read_book(".", E.book_chapters("."))}


_PAGE: dict = {}


def check(book, ex_id: str, code: str) -> dict:
    """The page's Check of a kernel text, as the worker sends it (the page data from the build)."""
    if ex_id not in _PAGE:
        _PAGE[ex_id] = E.page_data(book[ex_id])
    req = {"op": "check", "code": code, "exercise": _PAGE[ex_id]}
    return json.loads(E.handle(json.dumps(req)))


def shown(r: dict) -> str:
    return " ".join(str(r.get(k) or "") for k in ("kind", "stage", "message"))


def gives(cause, r: dict) -> bool:
    """Whether a result gives ``cause`` (a tuple, or a list of tuples: any one)."""
    alts = cause if isinstance(cause, list) else [cause]
    return any(alt[0] in (r.get("kind"), r.get("stage")) and all(
        w.lower() in r["message"].lower() for w in alt[1:]) for alt in alts)


def assert_rejected(k: Kernel, r: dict) -> None:
    assert not r["passed"], f"{k.ex} / {k.name}: a wrong kernel PASSED: {r['message']}"
    assert gives(k.cause, r), f"{k.ex} / {k.name}: rejected, but not for {k.cause}: {shown(r)}"
    assert "yield" not in r["message"], f"{k.ex} / {k.name}: the message speaks the old dialect: {r['message']}"
    if k.lines:
        assert r.get("line") in k.lines and f"line {r.get('line')}" in r["message"], (
            f"{k.ex} / {k.name}: the message should name line {' or '.join(map(str, k.lines))}: "
            f"line={r.get('line')}, {shown(r)}")


# ================================================================== wrong kernels, per exercise

WRONG = [
    # ---------------------------------------------------------------- ex-roofline-fuse
    W("ex-roofline-fuse", "guard i <= n", OOB, """
        @cuda.jit
        def fused(A, B, C, D, T, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i <= n:
                t = A[i] + B[i]                      # <-
                D[i] = t * C[i]
        """),
    W("ex-roofline-fuse", "no guard", OOB, """
        @cuda.jit
        def fused(A, B, C, D, T, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            t = A[i] + B[i]                          # <-
            D[i] = t * C[i]
        """),
    W("ex-roofline-fuse", "precedence: a + b * c", MISMATCH, """
        @cuda.jit
        def fused(A, B, C, D, T, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                D[i] = A[i] + B[i] * C[i]            # <-
        """),
    W("ex-roofline-fuse", "the intermediate through global T (the starter)", budget("hbm_bytes"), """
        @cuda.jit
        def fused(A, B, C, D, T, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                T[i] = A[i] + B[i]
                D[i] = T[i] * C[i]
        """),
    W("ex-roofline-fuse", "blockDim taken as 128: blocks overlap", RACE, """
        @cuda.jit
        def fused(A, B, C, D, T, n):
            i = cuda.blockIdx.x * 128 + cuda.threadIdx.x
            if i < n:
                D[i] = (A[i] + B[i]) * C[i]          # <-
        """),
    W("ex-roofline-fuse", "A reused as the intermediate", INPUT, """
        @cuda.jit
        def fused(A, B, C, D, T, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                A[i] = A[i] + B[i]                   # <-
                D[i] = A[i] * C[i]
        """),
    W("ex-roofline-fuse", "one thread does it all", budget("global_requests"), """
        @cuda.jit
        def fused(A, B, C, D, T, n):
            if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
                for i in range(n):
                    D[i] = (A[i] + B[i]) * C[i]
        """),
    W("ex-roofline-fuse", "strided index (threadIdx * gridDim)", budget("hbm_bytes"), """
        @cuda.jit
        def fused(A, B, C, D, T, n):
            i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x
            if i < n:
                D[i] = (A[i] + B[i]) * C[i]
        """),

    # ---------------------------------------------------------------- ex-roofline-horner
    W("ex-roofline-horner", "X[i] read in the loop (the starter)", budget("hbm_bytes"), """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                y = c[7]
                for k in range(6, -1, -1):
                    y = y * X[i] + c[k]
                Y[i] = y
        """),
    W("ex-roofline-horner", "loop stops before c[0]", MISMATCH, """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                x = X[i]
                y = c[7]
                for k in range(6, 0, -1):
                    y = y * x + c[k]
                Y[i] = y                             # <-
        """),
    W("ex-roofline-horner", "guard i < n + 1", OOB, """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n + 1:
                x = X[i]                             # <-
                y = c[7]
                for k in range(6, -1, -1):
                    y = y * x + c[k]
                Y[i] = y
        """),
    W("ex-roofline-horner", "no guard", OOB, """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            x = X[i]                                 # <-
            y = c[7]
            for k in range(6, -1, -1):
                y = y * x + c[k]
            Y[i] = y
        """),
    W("ex-roofline-horner", "coefficients in the wrong order", MISMATCH, """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                x = X[i]
                y = c[0]
                for k in range(1, 8):
                    y = y * x + c[k]
                Y[i] = y                             # <-
        """),
    W("ex-roofline-horner", "X overwritten with the result", INPUT, """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                x = X[i]
                y = c[7]
                for k in range(6, -1, -1):
                    y = y * x + c[k]
                X[i] = y                             # <-
                Y[i] = y
        """),
    W("ex-roofline-horner", "lane 0 of each warp does the warp's 32", budget("global_requests"), """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if cuda.threadIdx.x % 32 == 0:
                for j in range(i, min(i + 32, n)):
                    x = X[j]
                    y = c[7]
                    for k in range(6, -1, -1):
                        y = y * x + c[k]
                    Y[j] = y
        """),
    W("ex-roofline-horner", "a coefficient overwritten", ("KernelException", "TypeError"), """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                x = X[i]
                y = c[7]
                for k in range(6, -1, -1):
                    y = y * x + c[k]
                Y[i] = y
                c[1] = 5.0                           # <-
        """),
    W("ex-roofline-horner", "the coefficients as scratch space", ("KernelException", "append"), """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                x = X[i]
                y = c[7]
                for k in range(6, -1, -1):
                    y = y * x + c[k]
                Y[i] = y
            c.append(1.0)                            # <-
        """),
    W("ex-roofline-horner", "written one element to the right", UNWRITTEN, """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i + 1 < n:
                x = X[i]
                y = c[7]
                for k in range(6, -1, -1):
                    y = y * x + c[k]
                Y[i + 1] = y                         # <-
        """),

    # ---------------------------------------------------------------- ex-gpu-divergence
    W("ex-gpu-divergence", "even and odd lanes (the starter)", budget("divergent"), """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            e = cuda.blockIdx.x * (cuda.blockDim.x // 2) + t // 2
            if e < n:
                if t % 2 == 0:
                    P[e] = A[e] * A[e]
                else:
                    Q[e] = math.exp(A[e])
        """),
    W("ex-gpu-divergence", "guard e <= n", OOB, """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            half = cuda.blockDim.x // 2
            e = cuda.blockIdx.x * half + t % half
            if e <= n:
                if t < half:
                    P[e] = A[e] * A[e]               # <-
                else:
                    Q[e] = math.exp(A[e])
        """),
    W("ex-gpu-divergence", "t <= half: lane 0 of warp 4 squares", RACE, """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            half = cuda.blockDim.x // 2
            e = cuda.blockIdx.x * half + t % half
            if e < n:
                if t <= half:
                    P[e] = A[e] * A[e]               # <-
                else:
                    Q[e] = math.exp(A[e])
        """),
    W("ex-gpu-divergence", "no guard", OOB, """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            half = cuda.blockDim.x // 2
            e = cuda.blockIdx.x * half + t % half
            if t < half:
                P[e] = A[e] * A[e]                   # <-
            else:
                Q[e] = math.exp(A[e])
        """),
    W("ex-gpu-divergence", "the jobs swapped", MISMATCH, """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            half = cuda.blockDim.x // 2
            e = cuda.blockIdx.x * half + t % half
            if e < n:
                if t < half:
                    P[e] = math.exp(A[e])            # <-
                else:
                    Q[e] = A[e] * A[e]
        """),
    W("ex-gpu-divergence", "blockDim where half belongs", UNWRITTEN, """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            half = cuda.blockDim.x // 2
            e = cuda.blockIdx.x * cuda.blockDim.x + t % half
            if e < n:
                if t < half:
                    P[e] = A[e] * A[e]               # <-
                else:
                    Q[e] = math.exp(A[e])
        """),
    W("ex-gpu-divergence", "the second half indexed by t, not t - half", [RACE, OOB] + UNWRITTEN, """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            half = cuda.blockDim.x // 2
            if t < half:
                e = cuda.blockIdx.x * half + t
                if e < n:
                    P[e] = A[e] * A[e]
            else:
                e = cuda.blockIdx.x * half + t
                if e < n:
                    Q[e] = math.exp(A[e])            # <-
        """),
    W("ex-gpu-divergence", "split by half-warps", budget("divergent"), """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            w, lane = t // 32, t % 32
            e = cuda.blockIdx.x * 128 + w * 16 + lane % 16
            if e < n:
                if lane < 16:
                    P[e] = A[e] * A[e]
                else:
                    Q[e] = math.exp(A[e])
        """),

    # ---------------------------------------------------------------- ex-coalesced-copy
    W("ex-coalesced-copy", "strided (the starter)", budget("sectors_per_request"), """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x
            if i < n:
                B[i] = A[i]
        """),
    W("ex-coalesced-copy", "guard i <= n", OOB, """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i <= n:
                B[i] = A[i]                          # <-
        """),
    W("ex-coalesced-copy", "no guard", OOB, """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            B[i] = A[i]                              # <-
        """),
    W("ex-coalesced-copy", "reversed", MISMATCH, """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                B[i] = A[n - 1 - i]                  # <-
        """),
    W("ex-coalesced-copy", "guard for the measured size only", OOB, """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < 4096:
                B[i] = A[i]                          # <-
        """),
    W("ex-coalesced-copy", "one thread of the grid", budget("global_requests"), """
        @cuda.jit
        def copy(A, B, n):
            if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
                for i in range(n):
                    B[i] = A[i]
        """),
    W("ex-coalesced-copy", "lane 0 of each warp", budget("global_requests"), """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if cuda.threadIdx.x % 32 == 0:
                for j in range(i, min(i + 32, n)):
                    B[j] = A[j]
        """),
    W("ex-coalesced-copy", "coalesced only when n == 4096", budget("sectors_per_request", "1,000"), """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            t = i % 256
            j = i - t + (t % 8) * 32 + t // 8 if i < n - n % 256 else i   # strided in whole blocks
            if n == 4096:
                j = i
            if i < n:
                B[j] = A[j]
        """),
    W("ex-coalesced-copy", "shifted by one: B[i - 1]", OOB, """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                B[i - 1] = A[i - 1]                  # <-
        """),
    W("ex-coalesced-copy", "zeroes A behind it", INPUT, """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                B[i] = A[i]
                A[i] = 0.0                           # <-
        """),
    W("ex-coalesced-copy", "two threads per element", RACE, """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                B[i // 2] = A[i // 2]                # <-
        """),

    # ---------------------------------------------------------------- ex-gpu-float4
    W("ex-gpu-float4", "four scalar copies a thread (the starter)", budget("global_requests"), """
        @cuda.jit
        def copy4(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            for k in range(4):
                j = 4 * i + k
                if j < n:
                    B[j] = A[j]
        """),
    W("ex-gpu-float4", "the last whole vector sent to the tail", budget("global_requests"), """
        @cuda.jit
        def copy4(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if 4 * i + 4 < n:
                B.vec(4)[i] = A.vec(4)[i]
            else:
                for j in range(4 * i, n):
                    B[j] = A[j]
        """),
    W("ex-gpu-float4", "vector guard 4i + 3 <= n", OOB, """
        @cuda.jit
        def copy4(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if 4 * i + 3 <= n:
                B.vec(4)[i] = A.vec(4)[i]            # <-
            else:
                for j in range(4 * i, n):
                    B[j] = A[j]
        """),
    W("ex-gpu-float4", "no tail", UNWRITTEN, """
        @cuda.jit
        def copy4(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if 4 * i + 3 < n:
                B.vec(4)[i] = A.vec(4)[i]            # <-
        """),
    W("ex-gpu-float4", "the tail loop runs to n for everyone", RACE, """
        @cuda.jit
        def copy4(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if 4 * i + 3 < n:
                B.vec(4)[i] = A.vec(4)[i]            # <-
            for j in range(4 * i, n):
                B[j] = A[j]                          # <-
        """),
    W("ex-gpu-float4", "vector index 4i", OOB, """
        @cuda.jit
        def copy4(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if 16 * i + 3 < 4 * n:
                B.vec(4)[4 * i] = A.vec(4)[4 * i]    # <-
            else:
                for j in range(4 * i, n):
                    B[j] = A[j]
        """),
    W("ex-gpu-float4", "vec(2) views, launched for vec(4)", UNWRITTEN, """
        @cuda.jit
        def copy4(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if 2 * i + 1 < n:
                B.vec(2)[i] = A.vec(2)[i]            # <-
            elif 2 * i < n:
                B[2 * i] = A[2 * i]
        """),
    W("ex-gpu-float4", "lane 0 copies the warp's vectors", budget("global_requests"), """
        @cuda.jit
        def copy4(A, B, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if cuda.threadIdx.x % 32 == 0:
                for v in range(i, i + 32):
                    if 4 * v + 3 < n:
                        B.vec(4)[v] = A.vec(4)[v]
                    else:
                        for j in range(4 * v, n):
                            B[j] = A[j]
        """),

    # ---------------------------------------------------------------- ex-gpu-transpose
    W("ex-gpu-transpose", "no barrier", BARRIER_MISSING, """
        @cuda.jit
        def transpose(A, B, rows, cols):
            tile = cuda.shared.array((32, 33), numba.float32)
            x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.y * 32 + cuda.threadIdx.y + k
                if x < cols and y < rows:
                    tile[cuda.threadIdx.y + k, cuda.threadIdx.x] = A[y * cols + x]
            x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.x * 32 + cuda.threadIdx.y + k
                if x < rows and y < cols:
                    B[y * rows + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + k]   # <-
        """),
    W("ex-gpu-transpose", "no padding", budget("bank_conflicts"), """
        @cuda.jit
        def transpose(A, B, rows, cols):
            tile = cuda.shared.array((32, 32), numba.float32)
            x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.y * 32 + cuda.threadIdx.y + k
                if x < cols and y < rows:
                    tile[cuda.threadIdx.y + k, cuda.threadIdx.x] = A[y * cols + x]
            cuda.syncthreads()
            x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.x * 32 + cuda.threadIdx.y + k
                if x < rows and y < cols:
                    B[y * rows + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + k]   # <-
        """),
    W("ex-gpu-transpose", "no tile (the starter)", budget("sectors_per_request"), """
        @cuda.jit
        def transpose(A, B, rows, cols):
            x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.y * 32 + cuda.threadIdx.y + k
                if x < cols and y < rows:
                    B[x * rows + y] = A[y * cols + x]   # <-
        """),
    W("ex-gpu-transpose", "write guard with rows and cols swapped", UNINIT, """
        @cuda.jit
        def transpose(A, B, rows, cols):
            tile = cuda.shared.array((32, 33), numba.float32)
            x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.y * 32 + cuda.threadIdx.y + k
                if x < cols and y < rows:
                    tile[cuda.threadIdx.y + k, cuda.threadIdx.x] = A[y * cols + x]
            cuda.syncthreads()
            x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.x * 32 + cuda.threadIdx.y + k
                if x < cols and y < rows:
                    B[y * rows + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + k]   # <-
        """),
    W("ex-gpu-transpose", "the tile read untransposed", [UNINIT, MISMATCH], """
        @cuda.jit
        def transpose(A, B, rows, cols):
            tile = cuda.shared.array((32, 33), numba.float32)
            x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.y * 32 + cuda.threadIdx.y + k
                if x < cols and y < rows:
                    tile[cuda.threadIdx.y + k, cuda.threadIdx.x] = A[y * cols + x]
            cuda.syncthreads()
            x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.x * 32 + cuda.threadIdx.y + k
                if x < rows and y < cols:
                    B[y * rows + x] = tile[cuda.threadIdx.y + k, cuda.threadIdx.x]   # <-
        """),
    W("ex-gpu-transpose", "the barrier inside the guard", DIVERGENT_BARRIER, """
        @cuda.jit
        def transpose(A, B, rows, cols):
            tile = cuda.shared.array((32, 33), numba.float32)
            x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.y * 32 + cuda.threadIdx.y + k
                if x < cols and y < rows:
                    tile[cuda.threadIdx.y + k, cuda.threadIdx.x] = A[y * cols + x]
                    cuda.syncthreads()                                           # <-
            x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.x * 32 + cuda.threadIdx.y + k
                if x < rows and y < cols:
                    B[y * rows + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + k]
        """),
    W("ex-gpu-transpose", "rows stepped by 4 with a 32 x 8 block", RACE, """
        @cuda.jit
        def transpose(A, B, rows, cols):
            tile = cuda.shared.array((32, 33), numba.float32)
            x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
            for k in range(0, 32, 4):
                y = cuda.blockIdx.y * 32 + cuda.threadIdx.y + k
                if x < cols and y < rows:
                    tile[cuda.threadIdx.y + k, cuda.threadIdx.x] = A[y * cols + x]   # <-
            cuda.syncthreads()
            x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.x * 32 + cuda.threadIdx.y + k
                if x < rows and y < cols:
                    B[y * rows + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + k]
        """),
    W("ex-gpu-transpose", "right only for square matrices", [MISMATCH, OOB, UNINIT], """
        @cuda.jit
        def transpose(A, B, rows, cols):
            tile = cuda.shared.array((32, 33), numba.float32)
            x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.y * 32 + cuda.threadIdx.y + k
                if x < cols and y < rows:
                    tile[cuda.threadIdx.y + k, cuda.threadIdx.x] = A[y * rows + x]
            cuda.syncthreads()
            x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
            for k in range(0, 32, 8):
                y = cuda.blockIdx.x * 32 + cuda.threadIdx.y + k
                if x < rows and y < cols:
                    B[y * rows + x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + k]   # <-
        """),

    # ---------------------------------------------------------------- ex-gpu-reduction
    W("ex-gpu-reduction", "interleaved, divergent (the starter)", budget("divergent"), """
        TPB = 256

        @cuda.jit
        def reduce(g_in, g_out, n):
            sdata = cuda.shared.array(TPB, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            sdata[tid] = g_in[i] if i < n else 0.0
            cuda.syncthreads()
            s = 1
            while s < cuda.blockDim.x:
                if tid % (2 * s) == 0:
                    sdata[tid] += sdata[tid + s]
                cuda.syncthreads()
                s *= 2
            if tid == 0:
                g_out[cuda.blockIdx.x] = sdata[0]
        """),
    W("ex-gpu-reduction", "no barrier after the load", BARRIER_MISSING, """
        TPB = 256

        @cuda.jit
        def reduce(g_in, g_out, n):
            sdata = cuda.shared.array(TPB, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            sdata[tid] = g_in[i] if i < n else 0.0
            s = cuda.blockDim.x // 2
            while s > 0:
                if tid < s:
                    sdata[tid] += sdata[tid + s]     # <-
                cuda.syncthreads()
                s //= 2
            if tid == 0:
                g_out[cuda.blockIdx.x] = sdata[0]
        """),
    W("ex-gpu-reduction", "no barrier in the tree", BARRIER_MISSING, """
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
                if tid < s:
                    sdata[tid] += sdata[tid + s]     # <-
                s //= 2
            if tid == 0:
                g_out[cuda.blockIdx.x] = sdata[0]
        """),
    W("ex-gpu-reduction", "the barrier inside if tid < s", DIVERGENT_BARRIER, """
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
                if tid < s:
                    sdata[tid] += sdata[tid + s]
                    cuda.syncthreads()               # <-
                s //= 2
            if tid == 0:
                g_out[cuda.blockIdx.x] = sdata[0]
        """),
    W("ex-gpu-reduction", "no load guard", OOB, """
        TPB = 256

        @cuda.jit
        def reduce(g_in, g_out, n):
            sdata = cuda.shared.array(TPB, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            sdata[tid] = g_in[i]                     # <-
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 0:
                if tid < s:
                    sdata[tid] += sdata[tid + s]
                cuda.syncthreads()
                s //= 2
            if tid == 0:
                g_out[cuda.blockIdx.x] = sdata[0]
        """),
    W("ex-gpu-reduction", "stops at s > 1", MISMATCH, """
        TPB = 256

        @cuda.jit
        def reduce(g_in, g_out, n):
            sdata = cuda.shared.array(TPB, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            sdata[tid] = g_in[i] if i < n else 0.0
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 1:
                if tid < s:
                    sdata[tid] += sdata[tid + s]
                cuda.syncthreads()
                s //= 2
            if tid == 0:
                g_out[cuda.blockIdx.x] = sdata[0]    # <-
        """),
    W("ex-gpu-reduction", "strided index 2 s tid: bank conflicts", budget("bank_conflicts"), """
        TPB = 256

        @cuda.jit
        def reduce(g_in, g_out, n):
            sdata = cuda.shared.array(TPB, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            sdata[tid] = g_in[i] if i < n else 0.0
            cuda.syncthreads()
            s = 1
            while s < cuda.blockDim.x:
                index = 2 * s * tid
                if index < cuda.blockDim.x:
                    sdata[index] += sdata[index + s]
                cuda.syncthreads()
                s *= 2
            if tid == 0:
                g_out[cuda.blockIdx.x] = sdata[0]
        """),
    W("ex-gpu-reduction", "thread 0 adds the block serially", budget("divergent"), """
        TPB = 256

        @cuda.jit
        def reduce(g_in, g_out, n):
            sdata = cuda.shared.array(TPB, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            sdata[tid] = g_in[i] if i < n else 0.0
            cuda.syncthreads()
            if tid == 0:
                acc = 0.0
                for k in range(cuda.blockDim.x):
                    acc += sdata[k]
                g_out[cuda.blockIdx.x] = acc
        """),
    W("ex-gpu-reduction", "atomics into a zeroed accumulator, no barrier after the zero", RACE, """
        @cuda.jit
        def reduce(g_in, g_out, n):
            acc = cuda.shared.array(1, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            if tid == 0:
                acc[0] = 0.0                         # <-
            if i < n:
                cuda.atomic.add(acc, 0, g_in[i])     # <-
            cuda.syncthreads()
            if tid == 0:
                g_out[cuda.blockIdx.x] = acc[0]
        """),
    W("ex-gpu-reduction", "shared memory zeroed in block 0 only", UNINIT, """
        TPB = 256

        @cuda.jit
        def reduce(g_in, g_out, n):
            sdata = cuda.shared.array(TPB, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            if cuda.blockIdx.x == 0:
                sdata[tid] = 0.0
            cuda.syncthreads()
            if i < n:
                sdata[tid] += g_in[i]                # <-
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 0:
                if tid < s:
                    sdata[tid] += sdata[tid + s]
                cuda.syncthreads()
                s //= 2
            if tid == 0:
                g_out[cuda.blockIdx.x] = sdata[0]
        """),
    W("ex-gpu-reduction", "global atomics into an output never zeroed", UNINIT, """
        @cuda.jit
        def reduce(g_in, g_out, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                cuda.atomic.add(g_out, cuda.blockIdx.x, g_in[i])   # <-
        """),
    W("ex-gpu-reduction", "atomics, the last thread reads with no barrier", RACE, """
        @cuda.jit
        def reduce(g_in, g_out, n):
            acc = cuda.shared.array(1, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.blockIdx.x * cuda.blockDim.x + tid
            if tid == 0:
                acc[0] = 0.0
            cuda.syncthreads()
            if i < n:
                cuda.atomic.add(acc, 0, g_in[i])
            if tid == cuda.blockDim.x - 1:
                g_out[cuda.blockIdx.x] = acc[0]      # <-
        """),

    # ---------------------------------------------------------------- ex-gpu-complex
    W("ex-gpu-complex", "two scalar reads at 2t (the starter)", budget("bank_conflicts"), """
        TPB = 64

        @cuda.jit
        def power(X, P, n):
            s = cuda.shared.array(128, numba.float32)
            t = cuda.threadIdx.x
            base = 2 * cuda.blockIdx.x * cuda.blockDim.x
            for k in (t, t + cuda.blockDim.x):
                if base + k < 2 * n:
                    s[k] = X[base + k]
            cuda.syncthreads()
            i = cuda.blockIdx.x * cuda.blockDim.x + t
            if i < n:
                re = s[2 * t]                        # <-
                im = s[2 * t + 1]
                P[i] = re * re + im * im
        """),
    W("ex-gpu-complex", "no barrier", BARRIER_MISSING, """
        TPB = 64

        @cuda.jit
        def power(X, P, n):
            s = cuda.shared.array(128, numba.float32)
            t = cuda.threadIdx.x
            base = 2 * cuda.blockIdx.x * cuda.blockDim.x
            for k in (t, t + cuda.blockDim.x):
                if base + k < 2 * n:
                    s[k] = X[base + k]
            i = cuda.blockIdx.x * cuda.blockDim.x + t
            if i < n:
                re, im = s.vec(2)[t]                 # <-
                P[i] = re * re + im * im
        """),
    W("ex-gpu-complex", "no read guard", UNINIT, """
        TPB = 64

        @cuda.jit
        def power(X, P, n):
            s = cuda.shared.array(128, numba.float32)
            t = cuda.threadIdx.x
            base = 2 * cuda.blockIdx.x * cuda.blockDim.x
            for k in (t, t + cuda.blockDim.x):
                if base + k < 2 * n:
                    s[k] = X[base + k]
            cuda.syncthreads()
            i = cuda.blockIdx.x * cuda.blockDim.x + t
            re, im = s.vec(2)[t]                     # <-
            P[i] = re * re + im * im
        """),
    W("ex-gpu-complex", "load guard base + k <= 2n", OOB, """
        TPB = 64

        @cuda.jit
        def power(X, P, n):
            s = cuda.shared.array(128, numba.float32)
            t = cuda.threadIdx.x
            base = 2 * cuda.blockIdx.x * cuda.blockDim.x
            for k in (t, t + cuda.blockDim.x):
                if base + k <= 2 * n:
                    s[k] = X[base + k]               # <-
            cuda.syncthreads()
            i = cuda.blockIdx.x * cuda.blockDim.x + t
            if i < n:
                re, im = s.vec(2)[t]
                P[i] = re * re + im * im
        """),
    W("ex-gpu-complex", "re² − im²", MISMATCH, """
        TPB = 64

        @cuda.jit
        def power(X, P, n):
            s = cuda.shared.array(128, numba.float32)
            t = cuda.threadIdx.x
            base = 2 * cuda.blockIdx.x * cuda.blockDim.x
            for k in (t, t + cuda.blockDim.x):
                if base + k < 2 * n:
                    s[k] = X[base + k]
            cuda.syncthreads()
            i = cuda.blockIdx.x * cuda.blockDim.x + t
            if i < n:
                re, im = s.vec(2)[t]
                P[i] = re * re - im * im             # <-
        """),
    W("ex-gpu-complex", "second load at t + 1", [UNINIT, RACE], """
        TPB = 64

        @cuda.jit
        def power(X, P, n):
            s = cuda.shared.array(128, numba.float32)
            t = cuda.threadIdx.x
            base = 2 * cuda.blockIdx.x * cuda.blockDim.x
            for k in (t, t + 1):
                if base + k < 2 * n:
                    s[k] = X[base + k]               # <-
            cuda.syncthreads()
            i = cuda.blockIdx.x * cuda.blockDim.x + t
            if i < n:
                re, im = s.vec(2)[t]
                P[i] = re * re + im * im
        """),
    W("ex-gpu-complex", "the barrier inside the read guard", DIVERGENT_BARRIER, """
        TPB = 64

        @cuda.jit
        def power(X, P, n):
            s = cuda.shared.array(128, numba.float32)
            t = cuda.threadIdx.x
            base = 2 * cuda.blockIdx.x * cuda.blockDim.x
            for k in (t, t + cuda.blockDim.x):
                if base + k < 2 * n:
                    s[k] = X[base + k]
            i = cuda.blockIdx.x * cuda.blockDim.x + t
            if i < n:
                cuda.syncthreads()                   # <-
                re, im = s.vec(2)[t]
                P[i] = re * re + im * im
        """),
    W("ex-gpu-complex", "block offset without the factor 2", [MISMATCH, RACE, UNINIT], """
        TPB = 64

        @cuda.jit
        def power(X, P, n):
            s = cuda.shared.array(128, numba.float32)
            t = cuda.threadIdx.x
            base = cuda.blockIdx.x * cuda.blockDim.x
            for k in (t, t + cuda.blockDim.x):
                if base + k < 2 * n:
                    s[k] = X[base + k]
            cuda.syncthreads()
            i = cuda.blockIdx.x * cuda.blockDim.x + t
            if i < n:
                re, im = s.vec(2)[t]
                P[i] = re * re + im * im             # <-
        """),

    # ---------------------------------------------------------------- ex-cuda-scores
    W("ex-cuda-scores", "no guard, query in x (the starter)", OOB, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            val = 0.0
            for k in range(d):
                val += Q[i * d + k] * K[j * d + k]   # <-
            S[i * N + j] = val
        """),
    W("ex-cuda-scores", "query in x, guarded: strided stores", budget("store_sectors_per_request"), """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            if i < N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[i * d + k] * K[j * d + k]
                S[i * N + j] = val                   # <-
        """),
    W("ex-cuda-scores", "guard i <= N", OOB, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i <= N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[i * d + k] * K[j * d + k]   # <-
                S[i * N + j] = val
        """),
    W("ex-cuda-scores", "guard on the row only", OOB, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < N:
                val = 0.0
                for k in range(d):
                    val += Q[i * d + k] * K[j * d + k]   # <-
                S[i * N + j] = val
        """),
    W("ex-cuda-scores", "range(d - 1)", MISMATCH, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < N and j < N:
                val = 0.0
                for k in range(d - 1):
                    val += Q[i * d + k] * K[j * d + k]
                S[i * N + j] = val                   # <-
        """),
    W("ex-cuda-scores", "S transposed", MISMATCH, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[i * d + k] * K[j * d + k]
                S[j * N + i] = val                   # <-
        """),
    W("ex-cuda-scores", "Q's row stride N instead of d", [OOB, MISMATCH], """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[i * N + k] * K[j * d + k]   # <-
                S[i * N + j] = val
        """),
    W("ex-cuda-scores", "one thread a row", budget("global_requests"), """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            if i < N and cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
                for j in range(N):
                    val = 0.0
                    for k in range(d):
                        val += Q[i * d + k] * K[j * d + k]
                    S[i * N + j] = val
        """),
    W("ex-cuda-scores", "the run size's N built in", OOB, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < 20 and j < 20:
                val = 0.0
                for k in range(d):
                    val += Q[i * d + k] * K[j * d + k]   # <-
                S[i * N + j] = val
        """),

    # ---------------------------------------------------------------- ex-cuda-heads
    W("ex-cuda-heads", "one head only (the starter)", [RACE] + UNWRITTEN, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[i * d + k] * K[j * d + k]
                S[i * N + j] = val                   # <-
        """),
    W("ex-cuda-heads", "head offset N * N in Q and K", [OOB, MISMATCH], """
        @cuda.jit
        def scores(Q, K, S, N, d):
            h = cuda.blockIdx.z
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < N and j < N:
                q0 = h * N * N
                val = 0.0
                for k in range(d):
                    val += Q[q0 + i * d + k] * K[q0 + j * d + k]   # <-
                S[h * N * N + i * N + j] = val       # <-
        """),
    W("ex-cuda-heads", "head offset h * d", MISMATCH, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            h = cuda.blockIdx.z
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[h * d + i * d + k] * K[h * d + j * d + k]
                S[h * N * N + i * N + j] = val       # <-
        """),
    W("ex-cuda-heads", "guard i <= N", [OOB, RACE], """
        @cuda.jit
        def scores(Q, K, S, N, d):
            h = cuda.blockIdx.z
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i <= N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[h * N * d + i * d + k] * K[h * N * d + j * d + k]   # <-
                S[h * N * N + i * N + j] = val       # <-
        """),
    W("ex-cuda-heads", "no guard", OOB, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            h = cuda.blockIdx.z
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            val = 0.0
            for k in range(d):
                val += Q[h * N * d + i * d + k] * K[h * N * d + j * d + k]   # <-
            S[h * N * N + i * N + j] = val
        """),
    W("ex-cuda-heads", "S without the head's offset", RACE, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            h = cuda.blockIdx.z
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[h * N * d + i * d + k] * K[h * N * d + j * d + k]
                S[i * N + j] = val                   # <-
        """),
    W("ex-cuda-heads", "S's head stride for N = 32 built in", OOB, """
        @cuda.jit
        def scores(Q, K, S, N, d):
            h = cuda.blockIdx.z
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[h * N * d + i * d + k] * K[h * N * d + j * d + k]
                S[h * 32 * 32 + i * N + j] = val     # <-
        """),
    W("ex-cuda-heads", "head in x, column in z", [OOB, MISMATCH, RACE, UNWRITTEN], """
        @cuda.jit
        def scores(Q, K, S, N, d):
            h = cuda.blockIdx.x
            i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
            j = cuda.blockIdx.z * cuda.blockDim.x + cuda.threadIdx.x
            if i < N and j < N:
                val = 0.0
                for k in range(d):
                    val += Q[h * N * d + i * d + k] * K[h * N * d + j * d + k]
                S[h * N * N + i * N + j] = val
        """),

    # ---------------------------------------------------------------- ex-cuda-grid-stride
    W("ex-cuda-grid-stride", "a contiguous chunk a thread (the starter)", budget("sectors_per_request"), """
        @cuda.jit
        def saxpy(a, X, Y, n):
            t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            T = cuda.gridDim.x * cuda.blockDim.x
            chunk = (n + T - 1) // T
            for i in range(t * chunk, min(n, (t + 1) * chunk)):
                Y[i] += a * X[i]                     # <-
        """),
    W("ex-cuda-grid-stride", "no loop", UNWRITTEN, """
        @cuda.jit
        def saxpy(a, X, Y, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                Y[i] += a * X[i]                     # <-
        """),
    W("ex-cuda-grid-stride", "stride blockDim", RACE, """
        @cuda.jit
        def saxpy(a, X, Y, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            while i < n:
                Y[i] += a * X[i]                     # <-
                i += cuda.blockDim.x
        """),
    W("ex-cuda-grid-stride", "while i <= n", OOB, """
        @cuda.jit
        def saxpy(a, X, Y, n):
            T = cuda.gridDim.x * cuda.blockDim.x
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            while i <= n:
                Y[i] += a * X[i]                     # <-
                i += T
        """),
    W("ex-cuda-grid-stride", "X zeroed when done", INPUT, """
        @cuda.jit
        def saxpy(a, X, Y, n):
            T = cuda.gridDim.x * cuda.blockDim.x
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            while i < n:
                Y[i] = a * X[i] + Y[i]
                X[i] = 0.0                           # <-
                i += T
        """),
    W("ex-cuda-grid-stride", "stride T + 1", UNWRITTEN, """
        @cuda.jit
        def saxpy(a, X, Y, n):
            T = cuda.gridDim.x * cuda.blockDim.x
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            while i < n:
                Y[i] += a * X[i]                     # <-
                i += T + 1
        """),
    W("ex-cuda-grid-stride", "forgets + Y", MISMATCH, """
        @cuda.jit
        def saxpy(a, X, Y, n):
            T = cuda.gridDim.x * cuda.blockDim.x
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            while i < n:
                Y[i] = a * X[i]                      # <-
                i += T
        """),
    W("ex-cuda-grid-stride", "one thread of the grid", budget("global_requests"), """
        @cuda.jit
        def saxpy(a, X, Y, n):
            if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
                for i in range(n):
                    Y[i] += a * X[i]
        """),

    # ---------------------------------------------------------------- ex-attn-softmax
    W("ex-attn-softmax", "no maximum subtracted", OVERFLOW, """
        TPB = 32

        @cuda.jit
        def softmax(X, Y, rows, cols):
            red = cuda.shared.array(TPB, numba.float32)
            t, r = cuda.threadIdx.x, cuda.blockIdx.x
            cols_t = range(t, cols, cuda.blockDim.x)
            e = [math.exp(X[r * cols + j]) for j in cols_t]   # <-
            l = 0.0
            for x in e:
                l += x
            l = block_sum(red, l)
            for j, x in zip(cols_t, e):
                Y[r * cols + j] = x / l

        @cuda.jit(device=True)
        def block_sum(red, x):
            t = cuda.threadIdx.x
            red[t] = x
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 0:
                if t < s:
                    red[t] += red[t + s]
                cuda.syncthreads()
                s //= 2
            total = red[0]
            cuda.syncthreads()
            return total
        """),
    W("ex-attn-softmax", "three passes over X (the starter)", budget("hbm_bytes"), """
        TPB = 32

        @cuda.jit
        def softmax(X, Y, rows, cols):
            red = cuda.shared.array(TPB, numba.float32)
            t, r = cuda.threadIdx.x, cuda.blockIdx.x
            m = -math.inf
            for j in range(t, cols, cuda.blockDim.x):
                m = max(m, X[r * cols + j])
            m = block_reduce(red, m, True)
            l = 0.0
            for j in range(t, cols, cuda.blockDim.x):
                l += math.exp(X[r * cols + j] - m)
            l = block_reduce(red, l, False)
            for j in range(t, cols, cuda.blockDim.x):
                Y[r * cols + j] = math.exp(X[r * cols + j] - m) / l

        @cuda.jit(device=True)
        def block_reduce(red, x, is_max):
            t = cuda.threadIdx.x
            red[t] = x
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 0:
                if t < s:
                    red[t] = max(red[t], red[t + s]) if is_max else red[t] + red[t + s]
                cuda.syncthreads()
                s //= 2
            total = red[0]
            cuda.syncthreads()
            return total
        """),
    W("ex-attn-softmax", "no barrier after reading the total", BARRIER_MISSING, """
        TPB = 32

        @cuda.jit
        def softmax(X, Y, rows, cols):
            red = cuda.shared.array(TPB, numba.float32)
            t, r = cuda.threadIdx.x, cuda.blockIdx.x
            cols_t = range(t, cols, cuda.blockDim.x)
            v = [X[r * cols + j] for j in cols_t]
            m = -math.inf
            for x in v:
                m = max(m, x)
            m = block_reduce(red, m, True)
            e = [math.exp(x - m) for x in v]
            l = 0.0
            for x in e:
                l += x
            l = block_reduce(red, l, False)
            for j, x in zip(cols_t, e):
                Y[r * cols + j] = x / l

        @cuda.jit(device=True)
        def block_reduce(red, x, is_max):
            t = cuda.threadIdx.x
            red[t] = x                               # <-
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 0:
                if t < s:
                    red[t] = max(red[t], red[t + s]) if is_max else red[t] + red[t + s]
                cuda.syncthreads()
                s //= 2
            return red[0]                            # <-
        """, xfail=DEVICE_LINE),
    W("ex-attn-softmax", "no barrier after the store", BARRIER_MISSING, """
        TPB = 32

        @cuda.jit
        def softmax(X, Y, rows, cols):
            red = cuda.shared.array(TPB, numba.float32)
            t, r = cuda.threadIdx.x, cuda.blockIdx.x
            cols_t = range(t, cols, cuda.blockDim.x)
            v = [X[r * cols + j] for j in cols_t]
            m = -math.inf
            for x in v:
                m = max(m, x)
            m = block_reduce(red, m, True)
            e = [math.exp(x - m) for x in v]
            l = 0.0
            for x in e:
                l += x
            l = block_reduce(red, l, False)
            for j, x in zip(cols_t, e):
                Y[r * cols + j] = x / l

        @cuda.jit(device=True)
        def block_reduce(red, x, is_max):
            t = cuda.threadIdx.x
            red[t] = x
            s = cuda.blockDim.x // 2
            while s > 0:
                if t < s:
                    red[t] = max(red[t], red[t + s]) if is_max else red[t] + red[t + s]   # <-
                cuda.syncthreads()
                s //= 2
            total = red[0]
            cuda.syncthreads()
            return total
        """),
    W("ex-attn-softmax", "the last column skipped", UNWRITTEN, """
        TPB = 32

        @cuda.jit
        def softmax(X, Y, rows, cols):
            red = cuda.shared.array(TPB, numba.float32)
            t, r = cuda.threadIdx.x, cuda.blockIdx.x
            cols_t = range(t, cols - 1, cuda.blockDim.x)
            v = [X[r * cols + j] for j in cols_t]
            m = -math.inf
            for x in v:
                m = max(m, x)
            m = block_reduce(red, m, True)
            e = [math.exp(x - m) for x in v]
            l = 0.0
            for x in e:
                l += x
            l = block_reduce(red, l, False)
            for j, x in zip(cols_t, e):
                Y[r * cols + j] = x / l              # <-

        @cuda.jit(device=True)
        def block_reduce(red, x, is_max):
            t = cuda.threadIdx.x
            red[t] = x
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 0:
                if t < s:
                    red[t] = max(red[t], red[t + s]) if is_max else red[t] + red[t + s]
                cuda.syncthreads()
                s //= 2
            total = red[0]
            cuda.syncthreads()
            return total
        """),
    W("ex-attn-softmax", "each lane's own sum, not the row's", [MISMATCH, ZERODIV], """
        TPB = 32

        @cuda.jit
        def softmax(X, Y, rows, cols):
            red = cuda.shared.array(TPB, numba.float32)
            t, r = cuda.threadIdx.x, cuda.blockIdx.x
            cols_t = range(t, cols, cuda.blockDim.x)
            v = [X[r * cols + j] for j in cols_t]
            m = -math.inf
            for x in v:
                m = max(m, x)
            m = block_reduce(red, m, True)
            e = [math.exp(x - m) for x in v]
            l = 0.0
            for x in e:
                l += x
            for j, x in zip(cols_t, e):
                Y[r * cols + j] = x / l              # <-: lanes without a column divide 0 by 0

        @cuda.jit(device=True)
        def block_reduce(red, x, is_max):
            t = cuda.threadIdx.x
            red[t] = x
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 0:
                if t < s:
                    red[t] = max(red[t], red[t + s]) if is_max else red[t] + red[t + s]
                cuda.syncthreads()
                s //= 2
            total = red[0]
            cuda.syncthreads()
            return total
        """),
    W("ex-attn-softmax", "row offset r * rows", [MISMATCH, RACE, OOB], """
        TPB = 32

        @cuda.jit
        def softmax(X, Y, rows, cols):
            red = cuda.shared.array(TPB, numba.float32)
            t, r = cuda.threadIdx.x, cuda.blockIdx.x
            cols_t = range(t, cols, cuda.blockDim.x)
            v = [X[r * rows + j] for j in cols_t]
            m = -math.inf
            for x in v:
                m = max(m, x)
            m = block_reduce(red, m, True)
            e = [math.exp(x - m) for x in v]
            l = 0.0
            for x in e:
                l += x
            l = block_reduce(red, l, False)
            for j, x in zip(cols_t, e):
                Y[r * cols + j] = x / l              # <-

        @cuda.jit(device=True)
        def block_reduce(red, x, is_max):
            t = cuda.threadIdx.x
            red[t] = x
            cuda.syncthreads()
            s = cuda.blockDim.x // 2
            while s > 0:
                if t < s:
                    red[t] = max(red[t], red[t + s]) if is_max else red[t] + red[t + s]
                cuda.syncthreads()
                s //= 2
            total = red[0]
            cuda.syncthreads()
            return total
        """),
    W("ex-attn-softmax", "lane 0 does the row", budget("global_requests"), """
        @cuda.jit
        def softmax(X, Y, rows, cols):
            r = cuda.blockIdx.x
            if cuda.threadIdx.x == 0:
                m = -math.inf
                v = [X[r * cols + j] for j in range(cols)]
                for x in v:
                    m = max(m, x)
                e = [math.exp(x - m) for x in v]
                l = 0.0
                for x in e:
                    l += x
                for j in range(cols):
                    Y[r * cols + j] = e[j] / l
        """),

    # ---------------------------------------------------------------- ex-attn-flash (helpers below)
]

FLASH_HEAD = """
BC = 32
TILE = 128

@cuda.jit
def flash(Q, K, V, O, L, N, d):
    Bc = BC
    Ks = cuda.shared.array(TILE, numba.float32)
    Vs = cuda.shared.array(TILE, numba.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    live = i < N
    q = [(Q[i * d + k] * (1 / math.sqrt(d))) if live else 0.0 for k in range(d)]
    m, l, o = -math.inf, 0.0, [0.0] * d
    for j0 in range(0, N, Bc):
"""
FLASH_LOAD = """
        for e in range(t, Bc * d, cuda.blockDim.x):
            if j0 * d + e < N * d:
                Ks[e] = K[j0 * d + e]
                Vs[e] = V[j0 * d + e]
        cuda.syncthreads()
"""
FLASH_SCORES = """
        if live:
            nb = min(Bc, N - j0)
            s = []
            for c in range(nb):
                acc = 0.0
                for k in range(d):
                    acc += q[k] * Ks[c * d + k]
                s.append(acc)
            m_new = m
            for x in s:
                m_new = max(m_new, x)
            alpha = math.exp(m - m_new) if m > -math.inf else 0.0
            p = [math.exp(x - m_new) for x in s]
"""
FLASH_RESCALE = """
            l *= alpha
            o = [(ok * alpha) for ok in o]
"""
FLASH_ACC = """
            for c in range(nb):
                l += p[c]
                o = [(p[c] * Vs[c * d + k] + o[k]) for k in range(d)]
            m = m_new
        cuda.syncthreads()
"""
FLASH_OUT = """
    if live:
        for k in range(d):
            O[i * d + k] = o[k] * (1 / l)
        L[i] = m + math.log(l)
"""


def flash(head=FLASH_HEAD, load=FLASH_LOAD, scores=FLASH_SCORES, rescale=FLASH_RESCALE, acc=FLASH_ACC,
          out=FLASH_OUT) -> str:
    """The flash reference in parts, one of which a wrong kernel replaces."""
    return "".join(p.strip("\n") + "\n" for p in (head, load, scores, rescale, acc, out))


def _sub(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new)


WRONG += [
    W("ex-attn-flash", "no running maximum: plain exp, no rescaling", OVERFLOW, flash(
        scores=_sub(_sub(FLASH_SCORES, "m_new = max(m_new, x)", "pass"), "math.exp(x - m_new)", "math.exp(x)"),
        rescale="\n", out=_sub(FLASH_OUT, "m + math.log(l)", "math.log(l)"))),
    W("ex-attn-flash", "two passes over K (the starter's traffic)", budget("hbm_bytes"),
      flash(head=FLASH_HEAD.replace("    for j0 in range(0, N, Bc):\n", """
    for j0 in range(0, N, Bc):                   # a first pass, for nothing but its traffic
        for e in range(t, Bc * d, cuda.blockDim.x):
            if j0 * d + e < N * d:
                Ks[e] = K[j0 * d + e]
        cuda.syncthreads()
        if live:
            for c in range(min(Bc, N - j0)):
                m = max(m, Ks[c * d] * 0.0 + m)
        cuda.syncthreads()
    for j0 in range(0, N, Bc):
"""))),
    W("ex-attn-flash", "no barrier after the tile's load", BARRIER_MISSING,
      flash(load=_sub(FLASH_LOAD, "        cuda.syncthreads()\n", ""),
            scores=_sub(FLASH_SCORES, "acc += q[k] * Ks[c * d + k]", "acc += q[k] * Ks[c * d + k]   " + MARK))),
    W("ex-attn-flash", "no barrier before the next tile", BARRIER_MISSING,
      flash(acc=_sub(FLASH_ACC, "        cuda.syncthreads()\n", ""),
            load=_sub(FLASH_LOAD, "Ks[e] = K[j0 * d + e]", "Ks[e] = K[j0 * d + e]   " + MARK),
            scores=_sub(FLASH_SCORES, "acc += q[k] * Ks[c * d + k]", "acc += q[k] * Ks[c * d + k]   " + MARK))),
    W("ex-attn-flash", "o not rescaled", MISMATCH,
      flash(rescale=_sub(FLASH_RESCALE, "o = [(ok * alpha) for ok in o]", "pass"),
            out=_sub(FLASH_OUT, "O[i * d + k] = o[k] * (1 / l)", "O[i * d + k] = o[k] * (1 / l)   " + MARK))),
    W("ex-attn-flash", "l not rescaled", MISMATCH,
      flash(rescale=_sub(FLASH_RESCALE, "l *= alpha", "pass"),
            out=_sub(FLASH_OUT, "O[i * d + k] = o[k] * (1 / l)", "O[i * d + k] = o[k] * (1 / l)   " + MARK))),
    W("ex-attn-flash", "no guard on the tile's load", OOB,
      flash(load=_sub(_sub(FLASH_LOAD, "            if j0 * d + e < N * d:\n", "            if True:\n"),
                      "Ks[e] = K[j0 * d + e]", "Ks[e] = K[j0 * d + e]   " + MARK))),
    W("ex-attn-flash", "no guard on the output", [OOB, ZERODIV],
      flash(out=_sub(_sub(FLASH_OUT, "    if live:\n", "    if True:\n"),
                     "O[i * d + k] = o[k] * (1 / l)", "O[i * d + k] = o[k] * (1 / l)   " + MARK))),
    W("ex-attn-flash", "the running maximum never kept", MISMATCH,
      flash(acc=_sub(FLASH_ACC, "            m = m_new\n", ""),
            out=_sub(_sub(FLASH_OUT, "O[i * d + k] = o[k] * (1 / l)", "O[i * d + k] = o[k] * (1 / l)   " + MARK),
                     "L[i] = m + math.log(l)", "L[i] = m + math.log(l)   " + MARK))),
    W("ex-attn-flash", "L never written", UNWRITTEN, flash(out=_sub(FLASH_OUT, "L[i] = m + math.log(l)", "pass"))),
    W("ex-attn-flash", "scores not scaled by 1/sqrt(d)", MISMATCH,
      flash(head=_sub(FLASH_HEAD, "(Q[i * d + k] * (1 / math.sqrt(d)))", "Q[i * d + k]"),
            out=_sub(_sub(FLASH_OUT, "O[i * d + k] = o[k] * (1 / l)", "O[i * d + k] = o[k] * (1 / l)   " + MARK),
                     "L[i] = m + math.log(l)", "L[i] = m + math.log(l)   " + MARK))),
]

MATMUL = """
@cuda.jit
def matmul(A, B, C, n):
    As = cuda.shared.array((8, 8), numba.float32)
    Bs = cuda.shared.array((8, 8), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * 8 + ty
    col = cuda.blockIdx.x * 8 + tx
    acc = 0.0
    for p in range((n + 7) // 8):
        a = p * 8 + tx
        b = p * 8 + ty
        As[ty, tx] = A[row * n + a] if row < n and a < n else 0.0
        Bs[ty, tx] = B[b * n + col] if b < n and col < n else 0.0
        cuda.syncthreads()
        for k in range(8):
            acc += As[ty, k] * Bs[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row * n + col] = acc
"""

REGISTERS = """
@cuda.jit
def matmul(A, B, C, n):
    As = cuda.shared.array((16, 24), numba.float32)
    Bs = cuda.shared.array((16, 24), numba.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    r0, c0 = cuda.blockIdx.y * 16, cuda.blockIdx.x * 16
    acc = [[0.0, 0.0], [0.0, 0.0]]
    for p in range((n + 15) // 16):
        for u in (0, 8):
            for v in (0, 8):
                a, b = p * 16 + tx + v, p * 16 + ty + u
                r, c = r0 + ty + u, c0 + tx + v
                As[ty + u, tx + v] = A[r * n + a] if r < n and a < n else 0.0
                Bs[ty + u, tx + v] = B[b * n + c] if b < n and c < n else 0.0
        cuda.syncthreads()
        for k in range(16):
            a = (As[ty, k], As[ty + 8, k])
            b = (Bs[k, tx], Bs[k, tx + 8])
            for i in range(2):
                for j in range(2):
                    acc[i][j] += a[i] * b[j]
        cuda.syncthreads()
    for i in range(2):
        for j in range(2):
            r, c = r0 + ty + 8 * i, c0 + tx + 8 * j
            if r < n and c < n:
                C[r * n + c] = acc[i][j]
"""


def edit(text: str, *pairs) -> str:
    """``text`` with each (old, new) replaced once; ``old`` must be there."""
    for old, new in pairs:
        assert text.count(old) >= 1, old
        text = text.replace(old, new, 1)
    return text


WRONG += [
    # ---------------------------------------------------------------- ex-tiling-matmul
    W("ex-tiling-matmul", "untiled (the starter)", budget("hbm_bytes"), """
        @cuda.jit
        def matmul(A, B, C, n):
            row = cuda.blockIdx.y * 8 + cuda.threadIdx.y
            col = cuda.blockIdx.x * 8 + cuda.threadIdx.x
            if row < n and col < n:
                acc = 0.0
                for k in range(n):
                    acc += A[row * n + k] * B[k * n + col]   # <-
                C[row * n + col] = acc
        """),
    W("ex-tiling-matmul", "no barrier after the loads", BARRIER_MISSING, edit(MATMUL,
        ("        cuda.syncthreads()\n        for k", "        for k"),
        ("acc += As[ty, k] * Bs[k, tx]", "acc += As[ty, k] * Bs[k, tx]   " + MARK))),
    W("ex-tiling-matmul", "no barrier after the products", BARRIER_MISSING, edit(MATMUL,
        ("            acc += As[ty, k] * Bs[k, tx]\n        cuda.syncthreads()\n",
         "            acc += As[ty, k] * Bs[k, tx]\n"),
        ("As[ty, tx] = A[row * n + a] if row < n and a < n else 0.0",
         "As[ty, tx] = A[row * n + a] if row < n and a < n else 0.0   " + MARK),
        ("Bs[ty, tx] = B[b * n + col] if b < n and col < n else 0.0",
         "Bs[ty, tx] = B[b * n + col] if b < n and col < n else 0.0   " + MARK),
        ("acc += As[ty, k] * Bs[k, tx]", "acc += As[ty, k] * Bs[k, tx]   " + MARK))),
    W("ex-tiling-matmul", "no zeros past the edge", UNINIT, edit(MATMUL,
        ("        As[ty, tx] = A[row * n + a] if row < n and a < n else 0.0\n"
         "        Bs[ty, tx] = B[b * n + col] if b < n and col < n else 0.0\n",
         "        if row < n and a < n:\n            As[ty, tx] = A[row * n + a]\n"
         "        if b < n and col < n:\n            Bs[ty, tx] = B[b * n + col]\n"),
        ("acc += As[ty, k] * Bs[k, tx]", "acc += As[ty, k] * Bs[k, tx]   " + MARK))),
    W("ex-tiling-matmul", "no guard on the loads", OOB, edit(MATMUL,
        ("A[row * n + a] if row < n and a < n else 0.0", "A[row * n + a]   " + MARK))),
    W("ex-tiling-matmul", "A's tile stored transposed", MISMATCH, edit(MATMUL,
        ("As[ty, tx] = A", "As[tx, ty] = A"), ("C[row * n + col] = acc", "C[row * n + col] = acc   " + MARK))),
    W("ex-tiling-matmul", "phases rounded down", MISMATCH, edit(MATMUL,
        ("range((n + 7) // 8)", "range(n // 8)"), ("C[row * n + col] = acc", "C[row * n + col] = acc   " + MARK))),
    W("ex-tiling-matmul", "no guard on the output", OOB, edit(MATMUL,
        ("    if row < n and col < n:\n        C[row * n + col] = acc", "    C[row * n + col] = acc   " + MARK))),
    W("ex-tiling-matmul", "the barrier inside the output's guard", DIVERGENT_BARRIER, edit(MATMUL,
        ("    if row < n and col < n:\n        C[row * n + col] = acc",
         "    if row < n and col < n:\n        cuda.syncthreads()   " + MARK + "\n        C[row * n + col] = acc"))),
    W("ex-tiling-matmul", "B's tile read by row", MISMATCH, edit(MATMUL,
        ("As[ty, k] * Bs[k, tx]", "As[ty, k] * Bs[tx, k]"), ("C[row * n + col] = acc", "C[row * n + col] = acc   " + MARK))),

    # ---------------------------------------------------------------- ex-tiling-registers
    W("ex-tiling-registers", "one FMA per two shared loads (the starter)", budget("shared_loads"), """
        @cuda.jit
        def matmul(A, B, C, n):
            As = cuda.shared.array((16, 16), numba.float32)
            Bs = cuda.shared.array((16, 16), numba.float32)
            tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
            r0, c0 = cuda.blockIdx.y * 16, cuda.blockIdx.x * 16
            acc = [[0.0, 0.0], [0.0, 0.0]]
            for p in range((n + 15) // 16):
                for u in (0, 8):
                    for v in (0, 8):
                        a, b = p * 16 + tx + v, p * 16 + ty + u
                        r, c = r0 + ty + u, c0 + tx + v
                        As[ty + u, tx + v] = A[r * n + a] if r < n and a < n else 0.0
                        Bs[ty + u, tx + v] = B[b * n + c] if b < n and c < n else 0.0
                cuda.syncthreads()
                for i in range(2):
                    for j in range(2):
                        for k in range(16):
                            acc[i][j] += As[ty + 8 * i, k] * Bs[k, tx + 8 * j]
                cuda.syncthreads()
            for i in range(2):
                for j in range(2):
                    r, c = r0 + ty + 8 * i, c0 + tx + 8 * j
                    if r < n and c < n:
                        C[r * n + c] = acc[i][j]
        """),
    W("ex-tiling-registers", "unpadded rows", budget("bank_conflicts"), edit(REGISTERS,
        ("cuda.shared.array((16, 24), numba.float32)", "cuda.shared.array((16, 16), numba.float32)"),
        ("cuda.shared.array((16, 24), numba.float32)", "cuda.shared.array((16, 16), numba.float32)"))),
    W("ex-tiling-registers", "no barrier after the loads", BARRIER_MISSING, edit(REGISTERS,
        ("        cuda.syncthreads()\n        for k", "        for k"),
        ("a = (As[ty, k], As[ty + 8, k])", "a = (As[ty, k], As[ty + 8, k])   " + MARK))),
    W("ex-tiling-registers", "no barrier after the products", BARRIER_MISSING, edit(REGISTERS,
        ("                    acc[i][j] += a[i] * b[j]\n        cuda.syncthreads()\n",
         "                    acc[i][j] += a[i] * b[j]\n"),
        ("As[ty + u, tx + v] = A[r * n + a] if r < n and a < n else 0.0",
         "As[ty + u, tx + v] = A[r * n + a] if r < n and a < n else 0.0   " + MARK),
        ("Bs[ty + u, tx + v] = B[b * n + c] if b < n and c < n else 0.0",
         "Bs[ty + u, tx + v] = B[b * n + c] if b < n and c < n else 0.0   " + MARK),
        ("a = (As[ty, k], As[ty + 8, k])", "a = (As[ty, k], As[ty + 8, k])   " + MARK),
        ("b = (Bs[k, tx], Bs[k, tx + 8])", "b = (Bs[k, tx], Bs[k, tx + 8])   " + MARK))),
    W("ex-tiling-registers", "no guard on the output", OOB, edit(REGISTERS,
        ("            if r < n and c < n:\n                C[r * n + c] = acc[i][j]",
         "            C[r * n + c] = acc[i][j]   " + MARK))),
    W("ex-tiling-registers", "only half of each tile loaded", UNINIT, edit(REGISTERS,
        ("for u in (0, 8):", "for u in (0,):"), ("a = (As[ty, k], As[ty + 8, k])", "a = (As[ty, k], As[ty + 8, k])   " + MARK))),
    W("ex-tiling-registers", "the 2 x 2 outputs swapped", MISMATCH, edit(REGISTERS,
        ("acc[i][j] += a[i] * b[j]", "acc[j][i] += a[i] * b[j]"),
        ("C[r * n + c] = acc[i][j]", "C[r * n + c] = acc[i][j]   " + MARK))),
    W("ex-tiling-registers", "accumulators in cuda.local.array, never zeroed", UNINIT, edit(REGISTERS,
        ("    acc = [[0.0, 0.0], [0.0, 0.0]]\n", "    acc = cuda.local.array(4, numba.float32)\n"),
        ("acc[i][j] += a[i] * b[j]", "acc[2 * i + j] += a[i] * b[j]   " + MARK),
        ("C[r * n + c] = acc[i][j]", "C[r * n + c] = acc[2 * i + j]"))),
    W("ex-tiling-registers", "no guard on the loads", OOB, edit(REGISTERS,
        ("A[r * n + a] if r < n and a < n else 0.0", "A[r * n + a]   " + MARK))),
    W("ex-tiling-registers", "outputs 1 apart, not 8", [RACE, MISMATCH], edit(REGISTERS,
        ("r, c = r0 + ty + 8 * i, c0 + tx + 8 * j", "r, c = r0 + ty + i, c0 + tx + j"),
        ("C[r * n + c] = acc[i][j]", "C[r * n + c] = acc[i][j]   " + MARK))),
]

GEMV = """
@cuda.jit
def gemv(W, x, y, M, K):
    m, lane = cuda.blockIdx.x, cuda.threadIdx.x
    red = cuda.shared.array(32, numba.float32)
    acc = 0.0
    for k in range(lane, K, 32):
        acc += W[m * K + k] * x[k]
    red[lane] = acc
    cuda.syncthreads()
    s = 16
    while s > 0:
        if lane < s:
            red[lane] += red[lane + s]
        cuda.syncthreads()
        s //= 2
    if lane == 0:
        y[m] = red[0]
"""

GQA = """
CHUNK = 128

@cuda.jit
def gqa(Q, K, V, O, T, d, G):
    h, t = cuda.blockIdx.x, cuda.threadIdx.x
    Ks = cuda.shared.array(CHUNK, numba.float32)
    Vs = cuda.shared.array(CHUNK, numba.float32)
    mine = t < G
    qh = h * G + t
    q = [Q[qh * d + k] / math.sqrt(d) for k in range(d)] if mine else None
    m, l, o = -math.inf, 0.0, [0.0] * d
    for j0 in range(0, T, 32):
        for e in range(t, 32 * d, 32):
            if j0 * d + e < T * d:
                Ks[e] = K[(h * T + j0) * d + e]
                Vs[e] = V[(h * T + j0) * d + e]
        cuda.syncthreads()
        if mine:
            for c in range(min(32, T - j0)):
                s = 0.0
                for k in range(d):
                    s += q[k] * Ks[c * d + k]
                m_new = max(m, s)
                alpha, p = math.exp(m - m_new), math.exp(s - m_new)
                l = l * alpha + p
                o = [(o[k] * alpha + p * Vs[c * d + k]) for k in range(d)]
                m = m_new
        cuda.syncthreads()
    if mine:
        for k in range(d):
            O[qh * d + k] = o[k] / l
"""

PAGED = """
@cuda.jit
def scores(q, K, table, S, T, d):
    t = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if t < T:
        row = table[t // 16] * 16 + t % 16
        key = K.vec(8)[row]
        s = 0.0
        for k in range(d):
            s += q[k] * key[k]
        S[t] = s
"""

WRONG += [
    # ---------------------------------------------------------------- ex-serving-gemv
    W("ex-serving-gemv", "lane 0 does the row (the starter)", budget("global_loads"), """
        @cuda.jit
        def gemv(W, x, y, M, K):
            m = cuda.blockIdx.x
            if cuda.threadIdx.x == 0:
                acc = 0.0
                for k in range(K):
                    acc += W[m * K + k] * x[k]   # <-
                y[m] = acc
        """),
    W("ex-serving-gemv", "no barrier after the partial sums", BARRIER_MISSING, edit(GEMV,
        ("    red[lane] = acc\n    cuda.syncthreads()\n", "    red[lane] = acc\n"),
        ("red[lane] += red[lane + s]", "red[lane] += red[lane + s]   " + MARK))),
    W("ex-serving-gemv", "no barrier in the tree", BARRIER_MISSING, edit(GEMV,
        ("            red[lane] += red[lane + s]\n        cuda.syncthreads()\n",
         "            red[lane] += red[lane + s]   " + MARK + "\n"))),
    W("ex-serving-gemv", "a contiguous slice of the row a lane", budget("load_sectors_per_request"), edit(GEMV,
        ("    for k in range(lane, K, 32):\n", "    c = (K + 31) // 32\n    for k in range(lane * c, min(K, lane * c + c)):\n"),
        ("acc += W[m * K + k] * x[k]", "acc += W[m * K + k] * x[k]   " + MARK))),
    W("ex-serving-gemv", "the last weight skipped", MISMATCH, edit(GEMV,
        ("range(lane, K, 32)", "range(lane, K - 1, 32)"), ("y[m] = red[0]", "y[m] = red[0]   " + MARK))),
    W("ex-serving-gemv", "the row strided by 16 with 32 lanes", MISMATCH, edit(GEMV,
        ("range(lane, K, 32)", "range(lane, K, 16)"), ("y[m] = red[0]", "y[m] = red[0]   " + MARK))),
    W("ex-serving-gemv", "the tree starts at 8", MISMATCH, edit(GEMV,
        ("s = 16", "s = 8"), ("y[m] = red[0]", "y[m] = red[0]   " + MARK))),
    W("ex-serving-gemv", "every lane stores y[m]", RACE, edit(GEMV,
        ("    if lane == 0:\n        y[m] = red[0]", "    y[m] = red[0]   " + MARK))),
    W("ex-serving-gemv", "x indexed by lane", MISMATCH, edit(GEMV,
        ("acc += W[m * K + k] * x[k]", "acc += W[m * K + k] * x[lane]"), ("y[m] = red[0]", "y[m] = red[0]   " + MARK))),
    W("ex-serving-gemv", "atomics into red[0], zeroed by lane 0 with no barrier", RACE, """
        @cuda.jit
        def gemv(W, x, y, M, K):
            m, lane = cuda.blockIdx.x, cuda.threadIdx.x
            red = cuda.shared.array(1, numba.float32)
            if lane == 0:
                red[0] = 0.0                         # <-
            acc = 0.0
            for k in range(lane, K, 32):
                acc += W[m * K + k] * x[k]
            cuda.atomic.add(red, 0, acc)             # <-
            cuda.syncthreads()
            if lane == 0:
                y[m] = red[0]
        """),

    # ---------------------------------------------------------------- ex-serving-gqa
    W("ex-serving-gqa", "no running maximum", OVERFLOW, edit(GQA,
        ("m_new = max(m, s)", "m_new = 0.0"))),
    W("ex-serving-gqa", "one query head at a time (the starter)", budget("hbm_bytes"), """
        CHUNK = 128

        @cuda.jit
        def gqa(Q, K, V, O, T, d, G):
            h, t = cuda.blockIdx.x, cuda.threadIdx.x
            Ks = cuda.shared.array(CHUNK, numba.float32)
            Vs = cuda.shared.array(CHUNK, numba.float32)
            for g in range(G):
                qh = h * G + g
                q = [Q[qh * d + k] / math.sqrt(d) for k in range(d)] if t == 0 else None
                m, l, o = -math.inf, 0.0, [0.0] * d
                for j0 in range(0, T, 32):
                    for e in range(t, 32 * d, 32):
                        if j0 * d + e < T * d:
                            Ks[e] = K[(h * T + j0) * d + e]   # <-
                            Vs[e] = V[(h * T + j0) * d + e]
                    cuda.syncthreads()
                    if t == 0:
                        for c in range(min(32, T - j0)):
                            s = 0.0
                            for k in range(d):
                                s += q[k] * Ks[c * d + k]
                            m_new = max(m, s)
                            alpha, p = math.exp(m - m_new), math.exp(s - m_new)
                            l = l * alpha + p
                            o = [(o[k] * alpha + p * Vs[c * d + k]) for k in range(d)]
                            m = m_new
                    cuda.syncthreads()
                if t == 0:
                    for k in range(d):
                        O[qh * d + k] = o[k] / l
        """),
    W("ex-serving-gqa", "no barrier after the chunk's load", BARRIER_MISSING, edit(GQA,
        ("                Vs[e] = V[(h * T + j0) * d + e]\n        cuda.syncthreads()\n",
         "                Vs[e] = V[(h * T + j0) * d + e]\n"),
        ("s += q[k] * Ks[c * d + k]", "s += q[k] * Ks[c * d + k]   " + MARK))),
    W("ex-serving-gqa", "no barrier before the next chunk", BARRIER_MISSING, edit(GQA,
        ("                m = m_new\n        cuda.syncthreads()\n", "                m = m_new\n"),
        ("Ks[e] = K[(h * T + j0) * d + e]", "Ks[e] = K[(h * T + j0) * d + e]   " + MARK),
        ("Vs[e] = V[(h * T + j0) * d + e]", "Vs[e] = V[(h * T + j0) * d + e]   " + MARK),
        ("s += q[k] * Ks[c * d + k]", "s += q[k] * Ks[c * d + k]   " + MARK),
        ("for k in range(d)]\n                m = m_new", "for k in range(d)]   " + MARK + "\n                m = m_new"))),
    W("ex-serving-gqa", "no guard on the chunk's load", OOB, edit(GQA,
        ("            if j0 * d + e < T * d:\n", "            if True:\n"),
        ("Ks[e] = K[(h * T + j0) * d + e]", "Ks[e] = K[(h * T + j0) * d + e]   " + MARK))),
    W("ex-serving-gqa", "every group reads head 0's cache", MISMATCH, edit(GQA,
        ("Ks[e] = K[(h * T + j0) * d + e]", "Ks[e] = K[j0 * d + e]"),
        ("Vs[e] = V[(h * T + j0) * d + e]", "Vs[e] = V[j0 * d + e]"),
        ("O[qh * d + k] = o[k] / l", "O[qh * d + k] = o[k] / l   " + MARK))),
    W("ex-serving-gqa", "o not rescaled", MISMATCH, edit(GQA,
        ("o[k] * alpha + p * Vs[c * d + k]", "o[k] + p * Vs[c * d + k]"),
        ("O[qh * d + k] = o[k] / l", "O[qh * d + k] = o[k] / l   " + MARK))),
    W("ex-serving-gqa", "mine = t <= G", [OOB, RACE], edit(GQA, ("mine = t < G", "mine = t <= G"))),
    W("ex-serving-gqa", "scores not scaled by 1/sqrt(d)", MISMATCH, edit(GQA,
        ("Q[qh * d + k] / math.sqrt(d)", "Q[qh * d + k]"),
        ("O[qh * d + k] = o[k] / l", "O[qh * d + k] = o[k] / l   " + MARK))),

    # ---------------------------------------------------------------- ex-serving-paged
    W("ex-serving-paged", "as if the cache were contiguous (the starter)", MISMATCH, edit(PAGED,
        ("row = table[t // 16] * 16 + t % 16", "row = t"), ("S[t] = s", "S[t] = s   " + MARK))),
    W("ex-serving-paged", "the block's number taken as its first row", MISMATCH, edit(PAGED,
        ("table[t // 16] * 16 + t % 16", "table[t // 16] + t % 16"), ("S[t] = s", "S[t] = s   " + MARK))),
    W("ex-serving-paged", "block and row swapped", [OOB, MISMATCH], edit(PAGED,
        ("table[t // 16] * 16 + t % 16", "table[t % 16] * 16 + t // 16   " + MARK))),
    W("ex-serving-paged", "no guard", OOB, edit(PAGED,
        ("    if t < T:\n", "    if True:\n"), ("S[t] = s", "S[t] = s   " + MARK))),
    W("ex-serving-paged", "guard t <= T", OOB, edit(PAGED,
        ("if t < T:", "if t <= T:"), ("S[t] = s", "S[t] = s   " + MARK))),
    W("ex-serving-paged", "q read from the cache's pool", MISMATCH, edit(PAGED,
        ("s += q[k] * key[k]", "s += K[k] * key[k]"), ("S[t] = s", "S[t] = s   " + MARK))),
    W("ex-serving-paged", "the last dimension dropped", MISMATCH, edit(PAGED,
        ("range(d)", "range(d - 1)"), ("S[t] = s", "S[t] = s   " + MARK))),
    W("ex-serving-paged", "the block table overwritten", INPUT, edit(PAGED,
        ("        S[t] = s", "        S[t] = s\n        table[t // 16] = 0   " + MARK))),

    # ---------------------------------------------------------------- ex-comm-reduce-step
    W("ex-comm-reduce-step", "strided (the starter)", budget("sectors_per_request"), """
        @cuda.jit
        def reduce_step(B, R, off, n):
            i = cuda.threadIdx.x * cuda.gridDim.x + cuda.blockIdx.x
            if i < n:
                B[off + i] += R[i]                   # <-
        """),
    W("ex-comm-reduce-step", "the offset forgotten", MISMATCH, """
        @cuda.jit
        def reduce_step(B, R, off, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                B[i] += R[i]                         # <-
        """),
    W("ex-comm-reduce-step", "stores instead of adding", MISMATCH, """
        @cuda.jit
        def reduce_step(B, R, off, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                B[off + i] = R[i]                    # <-
        """),
    W("ex-comm-reduce-step", "guard i <= n", OOB, """
        @cuda.jit
        def reduce_step(B, R, off, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i <= n:
                B[off + i] += R[i]                   # <-
        """),
    W("ex-comm-reduce-step", "no guard", OOB, """
        @cuda.jit
        def reduce_step(B, R, off, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            B[off + i] += R[i]                       # <-
        """),
    W("ex-comm-reduce-step", "the incoming chunk overwritten", INPUT, """
        @cuda.jit
        def reduce_step(B, R, off, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                B[off + i] += R[i]
                R[i] = B[off + i]                    # <-
        """),
    W("ex-comm-reduce-step", "one thread of the grid", budget("global_requests"), """
        @cuda.jit
        def reduce_step(B, R, off, n):
            if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
                for i in range(n):
                    B[off + i] += R[i]
        """),
    W("ex-comm-reduce-step", "offset multiplied in", [OOB, MISMATCH], """
        @cuda.jit
        def reduce_step(B, R, off, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                B[off * i] += R[i]                   # <-
        """),
]


def _param(k: Kernel):
    marks = [pytest.mark.xfail(strict=True, reason=k.xfail)] if k.xfail else []
    return pytest.param(k, id=f"{k.ex[3:]}: {k.name}", marks=marks)


@pytest.mark.parametrize("k", [_param(k) for k in WRONG])
def test_a_wrong_kernel_is_rejected_with_its_cause_and_line(book, k):
    assert_rejected(k, check(book, k.ex, k.text))


def test_every_exercise_has_seven_wrong_kernels(book):
    ids = set(book)
    assert len(ids) == 19
    counts = {i: sum(k.ex == i for k in WRONG) for i in ids}
    assert not {i: c for i, c in counts.items() if c < 7}, counts
    assert {k.ex for k in WRONG} <= ids


# ================================================================== correct alternatives: each must pass

ALTERNATIVES = [
    OK("ex-roofline-fuse", "a device function defined first", """
        @cuda.jit(device=True)
        def add_mul(a, b, c):
            return (a + b) * c

        @cuda.jit
        def fused(A, B, C, D, T, n):
            i = cuda.grid(1)
            if i < n:
                D[i] = add_mul(A[i], B[i], C[i])
        """),
    OK("ex-roofline-fuse", "a grid-stride while loop", """
        @cuda.jit
        def fused(A, B, C, D, T, n):
            i = cuda.grid(1)
            while i < n:
                D[i] = (A[i] + B[i]) * C[i]
                i += cuda.gridsize(1)
        """),
    OK("ex-roofline-horner", "a while loop", """
        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if i < n:
                x = X[i]
                y = c[7]
                k = 6
                while k >= 0:
                    y = y * x + c[k]
                    k -= 1
                Y[i] = y
        """),
    OK("ex-roofline-horner", "a step function defined first", """
        @cuda.jit(device=True)
        def step(y, x, ck):
            return c_plus(y * x, ck)

        @cuda.jit(device=True)
        def c_plus(a, b):
            return a + b

        @cuda.jit
        def horner(X, Y, c, n):
            i = cuda.grid(1)
            if i < n:
                x = X[i]
                y = c[7]
                for k in range(6, -1, -1):
                    y = step(y, x, c[k])
                Y[i] = y
        """),
    OK("ex-gpu-divergence", "the element from the warp's number", """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            w, lane = t // 32, t % 32
            half = cuda.blockDim.x // 2
            if w < 4:
                e = cuda.blockIdx.x * half + w * 32 + lane
                if e < n:
                    P[e] = A[e] * A[e]
            else:
                e = cuda.blockIdx.x * half + (w - 4) * 32 + lane
                if e < n:
                    Q[e] = math.exp(A[e])
        """),
    OK("ex-gpu-divergence", "the first four warps do both jobs, the others none", """
        @cuda.jit
        def two_jobs(A, P, Q, n):
            t = cuda.threadIdx.x
            e = cuda.blockIdx.x * 128 + t
            if t < 128 and e < n:
                P[e] = A[e] * A[e]
                Q[e] = math.exp(A[e])
        """),
    OK("ex-coalesced-copy", "cuda.grid(1)", """
        @cuda.jit
        def copy(A, B, n):
            i = cuda.grid(1)
            if i < n:
                B[i] = A[i]
        """),
    OK("ex-coalesced-copy", "the kernel under a name of the reader's own", """
        @cuda.jit
        def my_copy(A, B, n):
            i = cuda.grid(1)
            if i < n:
                B[i] = A[i]
        """),
    OK("ex-coalesced-copy", "a grid-stride for loop", """
        @cuda.jit
        def copy(A, B, n):
            for i in range(cuda.grid(1), n, cuda.gridsize(1)):
                B[i] = A[i]
        """),
    OK("ex-gpu-float4", "the tail in a while loop, a helper first", """
        @cuda.jit(device=True)
        def tail(A, B, j, n):
            while j < n:
                B[j] = A[j]
                j += 1

        @cuda.jit
        def copy4(A, B, n):
            i = cuda.grid(1)
            if 4 * i + 3 < n:
                B.vec(4)[i] = A.vec(4)[i]
            else:
                tail(A, B, 4 * i, n)
        """),
    OK("ex-gpu-transpose", "module constants for the tile", """
        TILE = 32
        PADDED = 33                          # TILE + 1 (a shape is a literal or a constant's name)
        ROWS = 8

        @cuda.jit
        def transpose(A, B, rows, cols):
            tile = cuda.shared.array((TILE, PADDED), numba.float32)
            tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
            x = cuda.blockIdx.x * TILE + tx
            k = 0
            while k < TILE:
                y = cuda.blockIdx.y * TILE + ty + k
                if x < cols and y < rows:
                    tile[ty + k, tx] = A[y * cols + x]
                k += ROWS
            cuda.syncthreads()
            x = cuda.blockIdx.y * TILE + tx
            for k in range(0, TILE, ROWS):
                y = cuda.blockIdx.x * TILE + ty + k
                if x < rows and y < cols:
                    B[y * rows + x] = tile[tx, ty + k]
        """),
    OK("ex-gpu-reduction", "the tree in a device function", """
        TPB = 256

        @cuda.jit(device=True)
        def tree(sdata, tid):
            s = TPB // 2
            while s > 0:
                if tid < s:
                    sdata[tid] = sdata[tid] + sdata[tid + s]
                cuda.syncthreads()
                s >>= 1

        @cuda.jit
        def reduce(g_in, g_out, n):
            sdata = cuda.shared.array(TPB, numba.float32)
            tid = cuda.threadIdx.x
            i = cuda.grid(1)
            sdata[tid] = g_in[i] if i < n else 0.0
            cuda.syncthreads()
            tree(sdata, tid)
            if tid == 0:
                g_out[cuda.blockIdx.x] = sdata[0]
        """),
    OK("ex-gpu-reduction", "global atomics, each block zeroing its own sum first", """
        @cuda.jit
        def reduce(g_in, g_out, n):
            i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
            if cuda.threadIdx.x == 0:
                g_out[cuda.blockIdx.x] = 0.0
            cuda.syncthreads()
            if i < n:
                cuda.atomic.add(g_out, cuda.blockIdx.x, g_in[i])
        """),
    OK("ex-gpu-complex", "the vector read through a helper", """
        TPB = 64

        @cuda.jit(device=True)
        def norm2(re, im):
            return re * re + im * im

        @cuda.jit
        def power(X, P, n):
            s = cuda.shared.array(128, numba.float32)
            t = cuda.threadIdx.x
            base = 2 * cuda.blockIdx.x * cuda.blockDim.x
            for k in range(t, 2 * cuda.blockDim.x, cuda.blockDim.x):
                if base + k < 2 * n:
                    s[k] = X[base + k]
            cuda.syncthreads()
            i = cuda.grid(1)
            if i < n:
                v = s.vec(2)[t]
                P[i] = norm2(v[0], v[1])
        """),
    OK("ex-cuda-scores", "cuda.grid(2), acc = acc + q * k, keys in reverse", """
        @cuda.jit
        def scores(Q, K, S, N, d):
            j, i = cuda.grid(2)
            if i < N and j < N:
                acc = 0.0
                for k in range(d - 1, -1, -1):
                    acc = acc + Q[i * d + k] * K[j * d + k]
                S[i * N + j] = acc
        """),
    OK("ex-cuda-heads", "cuda.grid(3) and a dot-product helper", """
        @cuda.jit(device=True)
        def dot(Q, K, qa, ka, d):
            acc = 0.0
            for k in range(d):
                acc += Q[qa + k] * K[ka + k]
            return acc

        @cuda.jit
        def scores(Q, K, S, N, d):
            j, i, h = cuda.grid(3)
            if i < N and j < N:
                S[(h * N + i) * N + j] = dot(Q, K, (h * N + i) * d, (h * N + j) * d, d)
        """),
    OK("ex-cuda-grid-stride", "a for loop over range(start, n, T)", """
        @cuda.jit
        def saxpy(a, X, Y, n):
            for i in range(cuda.grid(1), n, cuda.gridsize(1)):
                Y[i] = Y[i] + a * X[i]
        """),
    OK("ex-attn-softmax", "the helpers defined before the kernel", """
        TPB = 32

        @cuda.jit(device=True)
        def block_max(red, x):
            t = cuda.threadIdx.x
            red[t] = x
            cuda.syncthreads()
            s = TPB // 2
            while s > 0:
                if t < s:
                    red[t] = max(red[t], red[t + s])
                cuda.syncthreads()
                s //= 2
            total = red[0]
            cuda.syncthreads()
            return total

        @cuda.jit(device=True)
        def block_sum(red, x):
            t = cuda.threadIdx.x
            red[t] = x
            cuda.syncthreads()
            s = TPB // 2
            while s > 0:
                if t < s:
                    red[t] += red[t + s]
                cuda.syncthreads()
                s //= 2
            total = red[0]
            cuda.syncthreads()
            return total

        @cuda.jit
        def softmax(X, Y, rows, cols):
            red = cuda.shared.array(TPB, numba.float32)
            t, r = cuda.threadIdx.x, cuda.blockIdx.x
            v = cuda.local.array(8, numba.float32)
            n = 0
            m = -math.inf
            for j in range(t, cols, TPB):
                v[n] = X[r * cols + j]
                m = max(m, v[n])
                n += 1
            m = block_max(red, m)
            l = 0.0
            for c in range(n):
                v[c] = math.exp(v[c] - m)
                l += v[c]
            l = block_sum(red, l)
            for c in range(n):
                Y[r * cols + t + c * TPB] = v[c] / l
        """),
    OK("ex-attn-flash", "a dot-product helper first, fma spelled out", flash(
        head="""
@cuda.jit(device=True)
def dot(q, Ks, c, d):
    acc = 0.0
    for k in range(d):
        acc = q[k] * Ks[c * d + k] + acc
    return acc

""" + FLASH_HEAD,
        scores=_sub(FLASH_SCORES, """                acc = 0.0
                for k in range(d):
                    acc += q[k] * Ks[c * d + k]
                s.append(acc)""", "                s.append(dot(q, Ks, c, d))"))),
    OK("ex-tiling-matmul", "module constants, k in reverse", edit(MATMUL,
        ("@cuda.jit\ndef matmul", "T = 8\n\n@cuda.jit\ndef matmul"),
        ("cuda.shared.array((8, 8), numba.float32)", "cuda.shared.array((T, T), numba.float32)"),
        ("cuda.shared.array((8, 8), numba.float32)", "cuda.shared.array((T, T), numba.float32)"),
        ("for k in range(8):", "for k in range(T - 1, -1, -1):"))),
    OK("ex-tiling-registers", "four scalar accumulators", edit(REGISTERS,
        ("    acc = [[0.0, 0.0], [0.0, 0.0]]\n", "    c00 = c01 = c10 = c11 = 0.0\n"),
        ("""            for i in range(2):
                for j in range(2):
                    acc[i][j] += a[i] * b[j]""", """            c00 += a[0] * b[0]
            c01 += a[0] * b[1]
            c10 += a[1] * b[0]
            c11 += a[1] * b[1]"""),
        ("C[r * n + c] = acc[i][j]", "C[r * n + c] = (c00 if j == 0 else c01) if i == 0 else (c10 if j == 0 else c11)"))),
    OK("ex-serving-gemv", "the tree over a tuple of strides", edit(GEMV,
        ("""    s = 16
    while s > 0:
        if lane < s:
            red[lane] += red[lane + s]
        cuda.syncthreads()
        s //= 2""", """    for s in (16, 8, 4, 2, 1):
        if lane < s:
            red[lane] = red[lane] + red[lane + s]
        cuda.syncthreads()"""))),
    OK("ex-serving-gqa", "the score in a helper defined first", edit(GQA,
        ("@cuda.jit\ndef gqa", "@cuda.jit(device=True)\ndef score(q, Ks, c, d):\n    s = 0.0\n    for k in range(d):\n"
                              "        s += q[k] * Ks[c * d + k]\n    return s\n\n@cuda.jit\ndef gqa"),
        ("""                s = 0.0
                for k in range(d):
                    s += q[k] * Ks[c * d + k]
""", "                s = score(q, Ks, c, d)\n"))),
    OK("ex-serving-paged", "divmod, and eight scalar loads a key", edit(PAGED,
        ("        row = table[t // 16] * 16 + t % 16\n        key = K.vec(8)[row]\n",
         "        blk, r = divmod(t, 16)\n        row = table[blk] * 16 + r\n"),
        ("s += q[k] * key[k]", "s += q[k] * K[row * d + k]"))),
    OK("ex-serving-paged", "the query iterated over (for k, qk in enumerate(q))", edit(PAGED,
        ("        for k in range(d):\n            s += q[k] * key[k]", "        for k, qk in enumerate(q):\n            s += qk * key[k]"))),
    OK("ex-comm-reduce-step", "cuda.grid(1), the add spelled out", """
        @cuda.jit
        def reduce_step(B, R, off, n):
            i = cuda.grid(1)
            if i < n:
                B[off + i] = B[off + i] + R[i]
        """),
]


@pytest.mark.parametrize("k", [_param(k) for k in ALTERNATIVES])
def test_a_correct_alternative_passes(book, k):
    r = check(book, k.ex, k.text)
    assert r["passed"], f"{k.ex} / {k.name}: a correct kernel is rejected: {shown(r)}"


def test_every_exercise_has_a_correct_alternative(book):
    assert set(book) == {k.ex for k in ALTERNATIVES}


# ================================================================== cheats: each refused, naming its line

def _kernel_def(lines: list) -> int:
    """Index of the kernel's ``def`` line in a reference: the @cuda.jit function without device=True."""
    for i, ln in enumerate(lines):
        if ln.startswith("def ") and i and lines[i - 1].strip() == "@cuda.jit":
            return i
    raise AssertionError("no @cuda.jit kernel in the reference")


def wrap(solution: str, top: str = "", body: str = "") -> tuple:
    """The reference with ``top`` after its imports and ``body`` as its kernel's first lines
    (``{A}`` in them: an array argument; ``{k}``: the kernel's name) -> (text, the line the
    refusal must name: the one marked ``# <-``, else the first added)."""
    lines = solution.rstrip("\n").split("\n")
    d = _kernel_def(lines)
    name, args = re.match(r"def (\w+)\((.*)\):", lines[d]).groups()
    params = [p.strip() for p in args.split(",")]
    array = next(p for p in params if re.search(rf"\b{p}\[", solution) or re.search(rf"\b{p}\.vec", solution))
    fill = lambda t: textwrap.dedent(t.replace("{A}", array).replace("{k}", name)).strip("\n").split("\n")
    if body:
        lines[d + 1:d + 1] = ["    " + ln for ln in fill(body)]
    if top:
        last_import = max(i for i, ln in enumerate(lines) if ln.startswith(("import ", "from ")))
        lines[last_import + 1:last_import + 1] = [""] + fill(top)
    text = "\n".join(lines) + "\n"
    first = (top or body).strip("\n").split("\n")[0]
    marked = [i for i, ln in enumerate(lines, 1) if MARK in ln]
    return text, marked[0] if marked else next(i for i, ln in enumerate(lines, 1) if ln.strip() == fill(first)[0].strip())



CHEATS = [
    # walking frames to the expected values
    ("import sys, sys._getframe", "import sys   # <-", "f = sys._getframe(1)", None),
    ("import inspect", "import inspect   # <-", "f = inspect.currentframe()", None),
    ("a generator's gi_frame and f_back", "", "g = (x for x in range(1))\nf = g.gi_frame.f_back   # <-", None),
    ("f_back of a frame reached otherwise", "", "f = range(1).f_back", None),
    # importing and monkeypatching the checker
    ("import calc.exercises", "import calc.exercises   # <-", "calc.exercises.check_code = None", None),
    ("from calc import exercises", "from calc import exercises   # <-", "exercises.handle = None", None),
    ("__import__", "", "E = __import__('calc.exercises')", None),
    ("importlib", "import importlib   # <-", "E = importlib.import_module('calc.exercises')", None),
    ("an import inside the kernel", "", "import calc.exercises", None),
    # a float whose __eq__ is always true
    ("a float subclass", "class Yes(float):\n    def __eq__(self, other):\n        return True", "", None),
    ("a float subclass made by type()", "", "Yes = type('Yes', (float,), {'__eq__': lambda s, o: True})", None),
    # Python state outside the simulator's arrays
    ("a module-level dict accumulator", "ACC = {}", "", None),
    ("a module-level list accumulator", "ACC = [0.0]", "", None),
    ("global state", "TOTAL = 0.0", "global TOTAL   # <-\nTOTAL = 0.0", None),
    ("a mutable default argument", "def keep(x, acc=[]):\n    acc.append(x)\n    return acc", "", None),
    ("state on the kernel function", "", "{k}.total = 0.0", None),
    ("state on an imported module", "import math", "math.pi = 3.0   # <-", None),
    ("the simulator's element type changed", "import numba", "numba.float32 = numba.float16   # <-", None),
    ("the launch's shape changed", "", "cuda.gridDim.x = 1", None),
    ("an array's attributes rewritten", "", "{A}.itemsize = 0", None),
    # swallowed errors, and leaving the interpreter
    ("try/except around an out-of-bounds write", "", "try:\n    {A}[10 ** 9] = 0.0\nexcept Exception:\n    pass", None),
    ("raise SystemExit", "", "raise SystemExit(0)", None),
    ("exit()", "", "exit()", None),
    ("with, to suppress an error", "", "with open('x') as f:\n    pass", None),
    # reflective escapes
    ("eval", "", "x = eval('1')", None),
    ("exec", "", "exec('x = 1')", None),
    ("getattr to the raw storage", "", "d = getattr({A}, 'data')", None),
    ("the raw storage by name", "", "d = {A}.data", None),
    ("__class__ and __subclasses__", "", "s = ().__class__.__bases__[0].__subclasses__()", None),
    ("vars and globals", "", "g = globals()", None),
    ("a lambda", "", "f = lambda x: x", None),
]


@pytest.mark.parametrize("name,top,body,hole", [
    pytest.param(*c, id=c[0], marks=[pytest.mark.xfail(strict=True, reason=c[3])] if c[3] else []) for c in CHEATS])
@pytest.mark.parametrize("ex_id", sorted({k.ex for k in WRONG}))
def test_a_cheat_is_refused_naming_its_line(book, ex_id, name, top, body, hole):
    text, line = wrap(book[ex_id].solution, top, body)
    r = check(book, ex_id, text)
    assert not r["passed"], f"{ex_id} / {name}: the cheat PASSED: {r['message']}"
    assert r["stage"] == "compile", f"{ex_id} / {name}: not refused before running: {shown(r)}"
    assert r["line"] == line and f"line {line}" in r["message"], (
        f"{ex_id} / {name}: the refusal should name line {line}: {shown(r)}")


# ================================================================== what a kernel stores, and what it may not do to the check

STORE = """
@cuda.jit
def copy(A, B, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        B[i] = {value}                       # <-
"""


@pytest.mark.parametrize("value", ["A[i] + 0j", "10 ** 400", "(A[i],)", "[A[i]]", "None", "'passed'", "A",
                                   "math.nan", "1e308 * 10.0", "divmod(7, 2)", "range(3)", "cuda"])
def test_a_stored_value_that_is_not_a_number_of_the_array_fails(book, value):
    """A complex equal to the answer (0.5 + 0j == 0.5) passed, and 10 ** 400 made the comparison
    raise OverflowError out of handle; an element must hold an int or a float, not a subclass."""
    k = W("ex-coalesced-copy", value, [MISMATCH, ("compile",), ("KernelException",)], STORE.replace("{value}", value))
    assert_rejected(k, check(book, k.ex, k.text))


def test_a_kernel_the_simulator_fails_on_is_an_error_not_an_exception_out_of_handle(book, monkeypatch):
    """A.itemsize = 0 made the race check divide by zero, and the exception left handle (the page
    would show an internal error). Whatever the simulator raises, the check fails with a message
    (the attribute store is refused now, so the simulator is made to fail here by hand)."""
    from calc import sim
    _PAGE.setdefault("ex-coalesced-copy", E.page_data(book["ex-coalesced-copy"]))  # the build's part, unbroken

    def broken(*a, **k):
        raise ZeroDivisionError("integer division or modulo by zero")
    monkeypatch.setattr(sim, "launch", broken)
    r = check(book, "ex-coalesced-copy", book["ex-coalesced-copy"].solution)
    assert not r["passed"] and r["stage"] == "error" and r["kind"] == "ZeroDivisionError", r
    assert "the simulator failed on your kernel (ZeroDivisionError" in r["message"], r["message"]


def test_one_check_cannot_change_the_simulator_for_the_next(book):
    """A first Check setting numba.float32 = numba.float16 (in the simulator's own numba, shared by
    every kernel of the worker) let the next Check of the complex starter pass: its shared array
    became fp16 and its bank conflicts went away."""
    from calc.sim import lang
    kept = lang.numba.float32
    try:
        first = check(book, "ex-gpu-complex", HEAD + "@cuda.jit\ndef power(X, P, n):\n    numba.float32 = numba.float16\n")
        assert first["stage"] == "compile" and first["line"] == 7, first
        r = check(book, "ex-gpu-complex", book["ex-gpu-complex"].starter)
        assert not r["passed"] and "bank_conflicts" in r["message"], r["message"]
    finally:
        lang.numba.float32 = kept


def test_the_kernel_checked_is_the_exercises_function_not_an_earlier_draft(book):
    """A text holding a correct draft under another name and the exercise's kernel, wrong (the
    starter): the exercise's function is what is checked."""
    for ex_id, ex in book.items():
        draft = re.sub(r"^def (\w+)\(", r"def draft_\1(", ex.solution, count=1, flags=re.M)
        r = check(book, ex_id, draft.rstrip() + "\n\n\n" + ex.starter)
        assert not r["passed"], f"{ex_id}: the starter passed, behind a correct draft defined first"


def test_verify_reports_a_failing_reference_even_when_the_starter_is_right(book):
    """The build's verify ran the starter's check after a failing reference, and the starter's
    budgets launched the reference for its figures: the simulator's OutOfBounds left verify (a
    traceback for the author, not a file:line problem)."""
    ex = book["ex-coalesced-copy"]
    broken = E.Exercise(**{**ex.__dict__, "starter": ex.solution,
                           "solution": ex.solution.replace("    if i < n:\n        B[i] = A[i]", "    B[i] = A[i]")})
    assert broken.solution != ex.solution
    problems = E.verify(broken)
    assert len(problems) == 1 and "reference solution of #ex-coalesced-copy fails" in problems[0][1], problems
    assert "outside" in problems[0][1]


# ================================================================== holes left for the simulator and the lead's design

AFTER_BARRIER = [k for k in WRONG if k.name in (
    "write guard with rows and cols swapped", "no read guard", "no zeros past the edge", "only half of each tile loaded")]


@pytest.mark.parametrize("k", AFTER_BARRIER, ids=[k.name for k in AFTER_BARRIER])
def test_a_read_no_thread_wrote_behind_a_barrier_says_so(book, k):
    r = check(book, k.ex, k.text)
    assert r.get("kind") == "UninitializedRead", shown(r)
    assert "must come between" not in r["message"] and "no thread of this block wrote" in r["message"], r["message"]


COPY_TUNED_TO_BOTH = """
@cuda.jit
def copy(A, B, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    t = i % 256
    j = i - t + (t % 8) * 32 + t // 8 if i < n - n % 256 else i
    if n == 4096 or n == 1000:               # the two sizes the Solutions appendix says are measured
        j = i
    if i < n:
        B[j] = A[j]
"""


@pytest.mark.xfail(strict=True, reason="budgets are measured at two fixed sizes the Solutions appendix prints: a "
                                       "kernel efficient at those two alone passes (checker: measure at a size drawn "
                                       "per check, or at every size)")
def test_a_kernel_efficient_only_at_the_published_measured_sizes_fails(book):
    r = check(book, "ex-coalesced-copy", HEAD + COPY_TUNED_TO_BOTH)
    assert not r["passed"], r["message"]


RACY = [k for k in WRONG if not k.xfail and any(c in (RACE, UNINIT) for c in (
    k.cause if isinstance(k.cause, list) else [k.cause]))]


@pytest.mark.parametrize("k", [_param(k) for k in RACY])
def test_the_per_thread_executor_rejects_the_same_races(book, k, monkeypatch):
    """The simulator runs a kernel a warp at a time when it can and per thread otherwise, with a
    race check each (#42: the warp executor had a copy of it). Forced per thread, every racy or
    barrier-missing kernel is rejected just as it is by default."""
    from calc.sim import warp
    _PAGE.setdefault(k.ex, E.page_data(book[k.ex]))
    monkeypatch.setattr(warp, "eligible", lambda *a, **kw: False)
    assert_rejected(k, check(book, k.ex, k.text))
