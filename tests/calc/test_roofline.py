import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from calc import roofline as rl
from calc.specs import device

pos = st.floats(min_value=1e-3, max_value=1e18, allow_nan=False, allow_infinity=False)
inten = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)


def test_seed_toy_processor_worked_example():
    # seed 002: 400 FLOP/s, 100 B/s -> ideal 4 FLOP/B; AI 2 is memory-bound at 200 FLOP/s,
    # AI 16 is compute-bound at 400 FLOP/s.
    toy = device("toy")
    peak, bw = toy.peak_flops("fp32"), toy.mem_bw
    assert rl.ridge_point(peak, bw) == 4
    assert rl.attainable(2, peak, bw) == 200
    assert rl.regime(2, peak, bw) == "memory-bound"
    assert rl.attainable(16, peak, bw) == 400
    assert rl.regime(16, peak, bw) == "compute-bound"


def test_h100_dense_fp16_ridge_is_about_295():
    h = device("h100-sxm")
    assert round(rl.ridge_point(h.peak_flops("fp16"), h.mem_bw)) == 295


def test_time_lower_bound_is_the_larger_of_compute_and_memory_time():
    assert rl.time_lower_bound(400, 100, 400, 100) == 1.0
    assert rl.time_lower_bound(800, 100, 400, 100) == 2.0
    assert rl.time_lower_bound(400, 300, 400, 100) == 3.0


def test_mfu():
    assert rl.mfu(494.7e12, 989.4e12) == 0.5


@pytest.mark.parametrize("args", [(-1, 1, 1), (1, 0, 1), (1, 1, -5), (1, math.nan, 1)])
def test_invalid_inputs_raise(args):
    with pytest.raises(ValueError):
        rl.attainable(*args)


@given(inten, pos, pos)
def test_attainable_never_exceeds_either_roof(i, peak, bw):
    p = rl.attainable(i, peak, bw)
    assert p <= peak
    assert p <= i * bw * (1 + 1e-12)


@given(inten, inten, pos, pos)
def test_attainable_is_monotone_in_intensity(a, b, peak, bw):
    lo, hi = sorted((a, b))
    assert rl.attainable(lo, peak, bw) <= rl.attainable(hi, peak, bw)


@given(pos, pos)
def test_both_roofs_meet_at_the_ridge(peak, bw):
    r = rl.ridge_point(peak, bw)
    assert math.isclose(rl.attainable(r, peak, bw), peak, rel_tol=1e-9)
    assert rl.regime(r * 0.999, peak, bw) == "memory-bound"
    assert rl.regime(r * 1.001, peak, bw) == "compute-bound"


@given(st.floats(0, 1e15), st.floats(0, 1e15), pos, pos)
def test_time_lower_bound_matches_attainable(flops, bytes_, peak, bw):
    assume(bytes_ > 0 and flops > 0)
    t = rl.time_lower_bound(flops, bytes_, peak, bw)
    assert math.isclose(flops / t, rl.attainable(flops / bytes_, peak, bw), rel_tol=1e-9)


def test_multiple_ceilings_name_the_binding_roof():
    a100 = device("a100-sxm-40gb")
    ceilings = [
        rl.Ceiling("FP32 vector", "compute", a100.peak_flops("fp32")),
        rl.Ceiling("HBM", "memory", a100.mem_bw),
    ]
    assert rl.attainable_multi(1, ceilings) == (a100.mem_bw, "HBM")
    assert rl.attainable_multi(100, ceilings) == (19.5e12, "FP32 vector")
    tensor = [rl.Ceiling("FP16 tensor", "compute", 312e12), rl.Ceiling("L2", "memory", 7e12)]
    p, name = rl.attainable_multi(10, tensor)
    assert name == "L2" and p == 70e12


def test_ceiling_validation_and_need_for_both_kinds():
    with pytest.raises(ValueError):
        rl.Ceiling("x", "magic", 1)
    with pytest.raises(ValueError):
        rl.attainable_multi(1, [rl.Ceiling("c", "compute", 1)])


def test_ceilings_for_a_device():
    names = [c.name for c in rl.ceilings_for(device("h100-sxm"), ("fp32", "fp16"), l2_bw=10e12)]
    assert names == ["fp32 peak", "fp16 peak", "HBM", "L2"]


def test_curve_is_log_spaced_and_includes_the_ridge():
    pts = rl.curve(400, 100, 0.1, 1000, 50)
    xs = [x for x, _ in pts]
    assert xs[0] == 0.1 and xs[-1] == 1000 and 4 in xs
    assert xs == sorted(xs)
    assert all(p == rl.attainable(x, 400, 100) for x, p in pts)
    with pytest.raises(ValueError):
        rl.curve(400, 100, 10, 1, 5)
