"""The checks a wrong kernel cannot pass (issue #42), on the book's own exercises: each kernel here
is one a learner plausibly writes, sent through calc.exercises exactly as the page's worker sends
it (``handle``), and each assertion names the cause the message must give. The adversarial suite
per exercise is tests/calc/test_exercise_adversaries.py; this file holds the mechanisms (inputs
kept, two measured sizes, the spread budget, the build's coverage rules, what a check tries)."""
from __future__ import annotations

import json
import re
import textwrap

import pytest

from calc import exercises as E

HEAD = "from numba import cuda\nimport numba\nimport math\n\n"


@pytest.fixture(scope="module")
def book():
    return {ex.id: ex for ex in E.read_book(".", E.book_chapters("."))}


def check(book, ex_id: str, body: str) -> dict:
    """The page's Check of a kernel text, as the worker sends it (the page data from the build)."""
    ex = book[ex_id]
    req = {"op": "check", "code": HEAD + textwrap.dedent(body), "exercise": E.page_data(ex)}
    return json.loads(E.handle(json.dumps(req)))


def line_of(code: str, needle: str) -> int:
    """The 1-based line of ``needle`` in the kernel text as sent (HEAD included)."""
    lines = (HEAD + textwrap.dedent(code)).split("\n")
    return next(i for i, ln in enumerate(lines, 1) if needle in ln)


# ------------------------------------------------------------------ inputs hold their contents

SAXPY_OVERWRITES_X = """
@cuda.jit
def saxpy(a, X, Y, n):
    T = cuda.gridDim.x * cuda.blockDim.x
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    while i < n:
        Y[i] = a * X[i] + Y[i]
        X[i] = 0.0                      # "done with it"
        i += T
"""


def test_a_kernel_that_overwrites_its_input_fails_naming_the_input_and_the_line(book):
    r = check(book, "ex-cuda-grid-stride", SAXPY_OVERWRITES_X)
    assert not r["passed"] and r["stage"] == "mismatch"
    assert "changed its input X" in r["message"] and "launch-time contents" in r["message"]
    assert r["line"] == line_of(SAXPY_OVERWRITES_X, "X[i] = 0.0")


SAXPY_NO_LOOP = """
@cuda.jit
def saxpy(a, X, Y, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        Y[i] = a * X[i] + Y[i]
"""


def test_an_element_no_thread_wrote_says_so_not_only_its_value(book):
    """The grid-stride exercise's grid is smaller than n: without the loop, elements past the grid
    keep their input, and the message says that nobody wrote them (it gave only two numbers)."""
    r = check(book, "ex-cuda-grid-stride", SAXPY_NO_LOOP)
    assert not r["passed"] and r["stage"] == "mismatch"
    assert re.search(r"no thread wrote Y\[\d+\], which still holds its launch-time value", r["message"])


# ------------------------------------------------------------------ budgets at two sizes

COPY_TUNED_TO_4096 = """
@cuda.jit
def copy(A, B, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    t = i % 256
    j = i - t + (t % 8) * 32 + t // 8 if i < n - n % 256 else i   # strided in whole blocks
    if n == 4096:
        j = i
    if i < n:
        B[j] = A[j]
"""


def test_a_kernel_coalesced_only_at_the_measured_size_fails_at_the_other(book):
    spec = E.spec_of(book["ex-coalesced-copy"])
    assert len(spec.measured) == 2 and spec.measure == 4096
    r = check(book, "ex-coalesced-copy", COPY_TUNED_TO_4096)
    assert not r["passed"] and r["stage"] == "budget"
    assert "at size 1,000" in r["message"] and "sectors_per_request" in r["message"]


def test_every_book_check_measures_its_budgets_at_two_sizes(book):
    one = [i for i, ex in book.items() if E.spec_of(ex).budgets and len(E.spec_of(ex).measured) < 2]
    assert not one, f"budgets measured at one size only: {one}"


# ------------------------------------------------------------------ the work spread over the threads

SERIAL_COPY = """
@cuda.jit
def copy(A, B, n):
    if cuda.blockIdx.x == 0 and cuda.threadIdx.x == 0:
        for i in range(n):                 # one thread of the grid does it all
            B[i] = A[i]
"""

LANE0_COPY = """
@cuda.jit
def copy(A, B, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if cuda.threadIdx.x % 32 == 0:
        for j in range(i, min(i + 32, n)):  # lane 0 of each warp copies the warp's 32
            B[j] = A[j]
"""


@pytest.mark.parametrize("code", [SERIAL_COPY, LANE0_COPY], ids=["one-thread", "lane-0"])
def test_a_serial_copy_meets_sectors_per_request_but_not_the_spread_budget(book, code):
    r = check(book, "ex-coalesced-copy", code)
    assert not r["passed"] and r["stage"] == "budget"
    assert "global_requests" in r["message"]
    assert all(b["ok"] for b in r["budgets"] if b["name"] == "sectors_per_request")


def test_validate_refuses_a_check_with_no_budget_on_the_spread():
    src = textwrap.dedent("""
        sizes = [1, 33, 4096]
        def inputs(n, rng):
            return (Array("A", n), Array("B", n), n)
        def launch_shape(n):
            return ((n + 255) // 256,), (256,)
        def expected(n, A, B, _n):
            return {"B": A.data}
        budgets = ["sectors_per_request <= 4", "hbm_bytes <= 8 * 4096"]
    """)
    problems = E.validate_check(src, first_line=10)
    assert any("spread over the threads" in m and line == 18 for line, m in problems), problems
    ok = src.replace('"hbm_bytes <= 8 * 4096"]', '"hbm_bytes <= 8 * 4096", "global_requests <= 2 * reference"]')
    assert not E.validate_check(ok)


# ------------------------------------------------------------------ what the build requires of a check

def _exercise(book, ex_id, **replace):
    ex = book[ex_id]
    check_src = ex.check
    for old, new in replace.items():
        assert old in check_src, old
        check_src = check_src.replace(old, new)
    copy = E.Exercise(**{**ex.__dict__, "check": check_src})
    return copy, E.spec_of(copy)


def test_the_build_refuses_a_check_whose_sizes_are_all_whole_blocks(book):
    ex, spec = _exercise(book, "ex-coalesced-copy",
                         **{"sizes = [1, 31, 33, 256, 1000, 4096]": "sizes = [256, 4096]"})
    problems = E.coverage(ex, spec)
    assert any("whole number of blocks" in m for _, m in problems), problems
    assert not E.coverage(book["ex-coalesced-copy"], E.spec_of(book["ex-coalesced-copy"]))


def test_the_build_refuses_a_barrier_kernel_checked_only_on_one_warp_blocks_unless_told_why(book):
    ex = book["ex-attn-softmax"]
    assert "one_warp_blocks" in ex.check
    stripped = E.Exercise(**{**ex.__dict__, "check": re.sub(r"one_warp_blocks = .*\n", "", ex.check)})
    problems = E.coverage(stripped, E.spec_of(stripped))
    assert any("more than one warp per block" in m for _, m in problems), problems
    assert not E.coverage(ex, E.spec_of(ex))


@pytest.mark.parametrize("ex_id", ["ex-attn-softmax", "ex-attn-flash", "ex-serving-gemv", "ex-serving-gqa"])
def test_a_one_warp_reference_without_any_one_of_its_barriers_is_rejected(book, ex_id):
    """Why one_warp_blocks is allowed: the race check compares every pair of a block's threads,
    its own warp's lanes too, so dropping any barrier of these references is caught."""
    ex = book[ex_id]
    spec = E.spec_of(ex)
    lines = ex.solution.split("\n")
    barriers = [i for i, ln in enumerate(lines) if "syncthreads()" in ln]
    assert barriers
    for i in barriers:
        indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
        mutated = "\n".join(indent + "pass" if j == i else ln for j, ln in enumerate(lines))
        r = E.check_code(mutated, spec, ref_code=ex.solution)
        assert not r["passed"], f"{ex_id} passes without the barrier on its line {i + 1}"
        assert r["stage"] == "error" and r["kind"] in ("Race", "UninitializedRead"), r["message"]


def test_the_solutions_appendix_says_what_each_check_tries(book):
    ex = book["ex-coalesced-copy"]
    text = E.tries(E.spec_of(ex))
    assert "6 sizes" in text and "1,000 (<<<4 × 256>>>)" in text
    assert "values from" in text and "launch-time contents" in text
    assert "sizes 4,096 and 1,000" in text and "`global_requests <= 2 * reference`" in text
