import inspect
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc import attention, kernels


def all_outputs(Q, K, V, tile=2, block_rows=2, block_cols=2):
    return {name: kernels.run(name, Q, K, V, tile, block_rows, block_cols) for name in kernels.KERNELS}


def test_every_kernel_matches_the_reference():
    Q, K, V = kernels.random_inputs(6, 4, seed=1)
    for name, O in all_outputs(Q, K, V, tile=4, block_rows=2, block_cols=4).items():
        c = kernels.check(O, Q, K, V)
        assert c.max_abs_error < 1e-12, name
        assert c.ok(), name


@given(
    n=st.integers(1, 7),
    d=st.integers(1, 5),
    seed=st.integers(0, 10_000),
    tile=st.integers(1, 8),
    block_rows=st.integers(1, 8),
    block_cols=st.integers(1, 8),
)
def test_kernels_agree_on_any_small_shape_and_blocking(n, d, seed, tile, block_rows, block_cols):
    Q, K, V = kernels.random_inputs(n, d, seed)
    ref = attention.reference(Q, K, V)
    for name, O in all_outputs(Q, K, V, tile, block_rows, block_cols).items():
        err = max(abs(o - r) for orow, rrow in zip(O, ref) for o, r in zip(orow, rrow))
        assert err < 1e-12, (name, err)


def test_naive_is_the_reference_computation_exactly():
    Q, K, V = kernels.random_inputs(5, 3, seed=7)
    assert kernels.attention_naive(Q, K, V) == attention.reference(Q, K, V)


def test_large_scores_do_not_overflow():
    # scores of about 10^4: exp(s) alone would overflow; every kernel subtracts a maximum
    Q, K, V = kernels.random_inputs(4, 2, seed=3)
    Q = [[100 * x for x in row] for row in Q]
    K = [[100 * x for x in row] for row in K]
    for name, O in all_outputs(Q, K, V, block_cols=1).items():
        assert all(math.isfinite(x) for row in O for x in row), name
        assert kernels.check(O, Q, K, V).max_abs_error < 1e-9, name


def test_flash_with_one_key_block_is_the_naive_softmax():
    Q, K, V = kernels.random_inputs(5, 3, seed=2)
    O = kernels.attention_flash(Q, K, V, block_rows=5, block_cols=5)
    assert kernels.check(O, Q, K, V).max_abs_error < 1e-15


def test_tiled_matmul_with_fringe_tiles():
    A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    B = [[1.0, 0.0], [0.0, 1.0], [2.0, 3.0]]
    assert kernels.matmul_tiled(A, B, 2) == [[7.0, 11.0], [16.0, 23.0]]


def test_check_reports_error_and_row_sums():
    Q, K, V = kernels.random_inputs(3, 2, seed=0)
    O = kernels.attention_naive(Q, K, V)
    O[1][0] += 0.5
    c = kernels.check(O, Q, K, V)
    assert math.isclose(c.max_abs_error, 0.5, rel_tol=1e-12)
    assert len(c.row_sums) == 3 and c.max_row_sum_error < 1e-12
    assert not c.ok()


def test_check_rejects_a_wrong_shape():
    Q, K, V = kernels.random_inputs(3, 2, seed=0)
    with pytest.raises(ValueError, match="shape"):
        kernels.check([[0.0, 0.0]], Q, K, V)


def test_random_inputs_are_reproducible_and_shaped():
    a = kernels.random_inputs(4, 3, seed=11)
    assert a == kernels.random_inputs(4, 3, seed=11)
    assert a != kernels.random_inputs(4, 3, seed=12)
    assert all(len(M) == 4 and all(len(r) == 3 for r in M) for M in a)


def test_bad_sizes_are_rejected():
    Q, K, V = kernels.random_inputs(2, 2)
    with pytest.raises(ValueError):
        kernels.attention_flash(Q, K, V, 0, 1)
    with pytest.raises(ValueError):
        kernels.attention_tiled(Q, K, V, 0)
    with pytest.raises(ValueError, match="unknown kernel"):
        kernels.run("fast", Q, K, V)


def test_kernel_sources_are_short_enough_to_print():
    for fn in kernels.KERNELS.values():
        assert len(inspect.getsource(fn).splitlines()) <= 40, fn.__name__
