import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc import tiling
from calc.roofline import attainable
from calc.specs import device


def test_kirk_hwu_16x16_tiles_cut_global_loads_16x():
    """Kirk & Hwu, PMPP (4th ed.), ch. 5: with 16×16 tiles each element loaded from global
    memory is used 16 times, reducing global memory traffic by a factor of 16."""
    n = 1024
    assert tiling.naive_global_loads(n, n, n) / tiling.tiled_global_loads(n, n, n, 16) == 16


def test_kirk_hwu_a100_example():
    """PMPP (4th ed.), ch. 5: the untiled kernel does 0.25 FLOP per byte (2 FLOPs per two
    4-byte loads), so on an A100 with 1555 GB/s it is capped at 389 GFLOPS; 16×16 tiles
    raise this to 4 FLOP/B and 6220 GFLOPS, still far below the 19,500 GFLOPS FP32 peak."""
    a100 = device("a100-sxm-40gb")
    n = 1024
    naive_i = tiling.tiled_intensity(n, n, n, 1, "fp32", include_output=False)
    tiled_i = tiling.tiled_intensity(n, n, n, 16, "fp32", include_output=False)
    assert naive_i == 0.25 and tiled_i == 4.0
    assert math.isclose(attainable(naive_i, a100.peak_flops("fp32"), a100.mem_bw), 388.75e9)
    assert math.isclose(attainable(tiled_i, a100.peak_flops("fp32"), a100.mem_bw), 6220e9)


def test_fringe_tiles_and_wasted_threads():
    t = tiling.tile_count(100, 100, 32)
    assert (t.rows, t.cols, t.total, t.full, t.partial) == (4, 4, 16, 9, 7)
    assert math.isclose(t.utilisation, 10000 / (16 * 1024))
    assert tiling.tile_count(128, 64, 32).utilisation == 1.0


def test_shared_memory_per_tile():
    assert tiling.smem_bytes_per_block(16, "fp32") == 2 * 16 * 16 * 4
    assert tiling.smem_bytes_per_block(64, "fp16", stages=2) == 2 * 64 * 64 * 2 * 2


def test_largest_tile_on_each_device():
    # one thread per output: at most 32×32 = 1024 threads
    assert tiling.largest_tile("a100-sxm-40gb") == 32
    # free of the thread limit, A100's 163 KB (166,912 B) per block holds two 144×144 fp32
    # tiles (165,888 B); 145 would need 168,200 B
    assert tiling.largest_tile("a100-sxm-40gb", "fp32", one_thread_per_output=False) == 144
    # H100's 227 KB (232,448 B): two 170×170 fp32 tiles (231,200 B); 171 would need 233,928 B
    assert tiling.largest_tile("h100-sxm", "fp32", one_thread_per_output=False) == 170
    # fp16, multiples of 16: 240 (230,400 B); 256 would need 262,144 B
    assert tiling.largest_tile("h100-sxm", "fp16", one_thread_per_output=False, multiple_of=16) == 240


def test_frames_walk_every_tile_and_phase():
    frames = list(tiling.frames(40, 40, 40, 16))
    assert len(frames) == 3 * 3 * 3
    assert frames[0]["tile"] == (0, 0) and frames[0]["phase"] == 0
    assert frames[-1]["a_rows"] == (32, 40)
    assert frames[-1]["loads_so_far"] == tiling.tiled_global_loads(40, 40, 40, 16)


def test_invalid_tile_sizes_raise():
    with pytest.raises(ValueError):
        tiling.tile_count(10, 10, 0)
    with pytest.raises(ValueError):
        tiling.tiled_global_loads(10, -1, 10, 4)


dims = st.integers(1, 300)


@given(dims, dims, dims, st.integers(1, 64))
def test_traffic_falls_as_tiles_grow(M, N, K, T):
    assert tiling.tiled_global_loads(M, N, K, T + 1) <= tiling.tiled_global_loads(M, N, K, T)


@given(dims, dims, dims, st.integers(1, 64))
def test_tiling_never_loads_more_than_naive_nor_less_than_once(M, N, K, T):
    loads = tiling.tiled_global_loads(M, N, K, T)
    assert M * K + K * N <= loads <= tiling.naive_global_loads(M, N, K)


@given(st.integers(1, 20), st.integers(1, 20), st.integers(1, 32))
def test_reduction_is_exactly_T_when_T_divides(a, b, T):
    M, N, K = a * T, b * T, 7
    assert tiling.naive_global_loads(M, N, K) == T * tiling.tiled_global_loads(M, N, K, T)


@given(dims, dims, st.integers(1, 64))
def test_utilisation_in_unit_interval(M, N, T):
    u = tiling.tile_count(M, N, T).utilisation
    assert 0 < u <= 1
