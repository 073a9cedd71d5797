import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc import systolic as sa


def test_peak_macs_per_cycle_of_a_tpu_mxu():
    assert sa.macs_per_cycle(128, 128) == 16384


def test_single_tile_cycles_include_fill_and_drain():
    # one 4×4 weight tile, 10 input rows: 10 + 4 + 4 − 2 = 16 cycles (+4 to load weights)
    assert sa.cycles(10, 4, 4, 4, 4, include_weight_load=False) == 16
    assert sa.cycles(10, 4, 4, 4, 4) == 20


def test_utilisation_approaches_one_for_long_streams():
    short = sa.utilisation(8, 128, 128, 128, 128)
    long = sa.utilisation(100_000, 128, 128, 128, 128)
    assert short < 0.05 and long > 0.99


def test_small_matrices_waste_a_large_array():
    # a 32-wide product on a 128×128 array uses at most 1/16 of the PEs
    assert sa.utilisation(10_000, 32, 32, 128, 128) < 1 / 16


def test_stationary_operand_is_read_once():
    M, K, N, R, C = 256, 512, 384, 128, 128
    assert sa.traffic(M, K, N, R, C, "weight").b_reads == K * N
    assert sa.traffic(M, K, N, R, C, "output").c_writes == M * N
    assert sa.traffic(M, K, N, R, C, "input").a_reads == M * K
    with pytest.raises(ValueError, match="unknown dataflow"):
        sa.traffic(M, K, N, R, C, "row")


def test_systolic_mac_is_cheaper_than_vector_mac():
    e = sa.energy_per_mac_j(128, 128, "fp16")
    # vector: 2.0 pJ + 2 × (16/64 × 20 pJ) = 12 pJ; systolic: 2.0 + (2/128) × 5 pJ ≈ 2.08 pJ
    assert math.isclose(e["vector"], 12e-12)
    assert math.isclose(e["systolic"], 2e-12 + (2 / 128) * 5e-12)
    assert e["vector"] / e["systolic"] > 5


def test_pulse_frames_compute_the_product():
    A = [[1, 2], [3, 4], [5, 6]]
    B = [[7, 8, 9, 10], [11, 12, 13, 14]]
    frames = list(sa.frames(A, B))
    assert len(frames) == 2 + 3 + 4 - 2
    expected = [[sum(A[i][k] * B[k][j] for k in range(2)) for j in range(4)] for i in range(3)]
    assert frames[-1]["acc"] == expected
    assert frames[0]["active"] == [(0, 0, 0)]


@given(st.integers(1, 300), st.integers(1, 300), st.integers(1, 300), st.integers(1, 64), st.integers(1, 64))
def test_utilisation_in_unit_interval(M, K, N, R, C):
    assert 0 < sa.utilisation(M, K, N, R, C) <= 1


@given(st.integers(1, 200), st.integers(1, 200), st.integers(1, 200), st.integers(1, 32), st.integers(1, 32))
def test_every_dataflow_reads_each_operand_at_least_once(M, K, N, R, C):
    for flow in ("weight", "output", "input"):
        t = sa.traffic(M, K, N, R, C, flow)
        assert t.a_reads >= M * K and t.b_reads >= K * N and t.c_writes >= M * N
