import pytest

from calc.cuda import Dim3
from calc.runner import Buffer, run


def vector_add(blockIdx, threadIdx, blockDim, gridDim, a, b, out):
    i = blockIdx.x * blockDim.x + threadIdx.x
    if i < len(out):
        out[i] = a[i] + b[i]


def test_vector_add_with_a_partial_last_block():
    n = 10
    a, b = list(range(n)), [10 * x for x in range(n)]
    out = Buffer("out", [0] * n)
    r = run(vector_add, 3, 4, a, b, out)
    assert out.data == [11 * x for x in range(n)]
    assert len(r.writes) == n  # the two idle threads of block 2 write nothing
    assert r.writer_of("out")[9] == (Dim3(2, 0, 0), Dim3(1, 0, 0))
    assert r.thread_ids("out") == {i: i for i in range(n)}
    assert r.races() == {}


def test_2d_kernel_records_writer_of_each_element():
    def fill(bi, ti, bd, gd, m):
        row, col = bi.y * bd.y + ti.y, bi.x * bd.x + ti.x
        m[row, col] = (row, col)

    m = Buffer("m", [[None] * 4 for _ in range(4)])
    r = run(fill, (2, 2), (2, 2), m)
    assert m.data[3][1] == (3, 1)
    assert r.writer_of("m")[(3, 1)] == (Dim3(0, 1, 0), Dim3(1, 1, 0))


def test_races_are_detected():
    def everyone_writes_zero(bi, ti, bd, gd, out):
        out[0] = ti.x

    out = Buffer("out", [None])
    r = run(everyone_writes_zero, 1, 4, out)
    assert len(r.races()[("out", 0)]) == 4


def test_reads_are_counted():
    out = Buffer("out", [0] * 4)
    src = Buffer("src", [1, 2, 3, 4])
    r = run(lambda bi, ti, bd, gd, s, o: o.__setitem__(ti.x, s[ti.x]), 1, 4, src, out)
    assert r.reads == 4 and out.data == [1, 2, 3, 4]


def test_oversized_and_empty_launches_raise():
    with pytest.raises(ValueError, match="more than this teaching runner allows"):
        run(vector_add, 10_000, 1024)
    with pytest.raises(ValueError):
        run(vector_add, 0, 32)
