import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc.occupancy import occupancy


def test_register_limited_example_cc80():
    """By the CUDA Occupancy Calculator's rules (cuda_occupancy.h), cc 8.0, 256 threads,
    64 registers/thread, no shared memory: a warp gets 64·32 = 2048 registers, each of
    the 4 sub-partitions (16,384 registers) holds 8 warps, so 32 warps = 4 blocks of 8 warps:
    50% occupancy, limited by registers."""
    r = occupancy("8.0", 256, 64, 0)
    assert (r.active_blocks, r.active_warps, r.occupancy, r.limiter) == (4, 32, 0.5, "registers")


def test_shared_memory_example_with_reserved_kilobyte():
    """cc 8.0, 48 KB of shared memory per block: each block is charged 48 KB + 1 KB reserved,
    so floor(164 / 49) = 3 blocks fit (seed 001 says floor(164/48) = 3; the answer survives
    the reserved kilobyte)."""
    r = occupancy("8.0", 256, 32, 48 * 1024)
    assert r.active_blocks == 3 and r.limiter == "shared memory"
    assert r.smem_charged_per_block == 49 * 1024


def test_reserved_kilobyte_can_cost_a_block():
    # 32 KB blocks: without the reservation 164 // 32 = 5 fit; with it, 164 // 33 = 4
    assert occupancy("8.0", 128, 32, 32 * 1024).active_blocks == 4
    # Turing (7.5) reserves nothing: 64 KB // 32 KB = 2
    assert occupancy("7.5", 128, 32, 32 * 1024).active_blocks == 2


def test_full_occupancy_and_block_limit():
    r = occupancy("9.0", 1024, 32, 0)
    assert r.occupancy == 1.0 and r.active_blocks == 2
    small = occupancy("8.0", 32, 16, 0)  # 1-warp blocks: capped at 32 blocks per SM
    assert small.active_blocks == 32 and small.limiter == "blocks" and small.occupancy == 0.5


def test_register_rounding_granularity():
    # 33 registers/thread -> 1056 per warp -> rounded to 1280
    assert occupancy("8.0", 256, 33).regs_per_warp == 1280


def test_ties_report_every_binding_limit():
    r = occupancy("8.0", 1024, 32, 0)
    assert set(r.limiters) >= {"warps", "registers"}


def test_device_names_and_cc_strings_agree():
    assert occupancy("h100-sxm", 256, 64) == occupancy("9.0", 256, 64)


@pytest.mark.parametrize("args,match", [
    (("8.0", 2048, 32), "2048 threads per block exceeds the limit of 1024"),
    (("8.0", 256, 300), "300 registers per thread exceeds the limit of 255"),
    (("8.0", 1024, 255), "262,144 registers per block"),
    (("8.0", 128, 32, 200 * 1024), "exceeds the 167,936 bytes available"),
    (("5.0", 128), "unknown device '5.0'"),
])
def test_impossible_blocks_raise(args, match):
    with pytest.raises(ValueError, match=match):
        occupancy(*args)


def test_carveout_choice():
    assert occupancy("8.0", 256, 32, 20 * 1024, smem_carveout_kib=100).active_blocks == 4
    with pytest.raises(ValueError, match="carveout 50 KB is not supported"):
        occupancy("8.0", 256, 32, 0, smem_carveout_kib=50)


@given(st.sampled_from(["7.5", "8.0", "8.6", "8.9", "9.0"]), st.integers(1, 1024), st.integers(0, 64),
       st.integers(0, 40 * 1024))
def test_occupancy_is_a_fraction_and_limits_are_respected(cc, threads, regs, smem):
    r = occupancy(cc, threads, regs, smem)
    assert 0 <= r.occupancy <= 1
    assert r.active_blocks == min(r.limits.values())
    assert r.active_blocks * threads <= {"7.5": 1024, "8.6": 1536, "8.9": 1536}.get(cc, 2048)


@given(st.integers(1, 1024), st.integers(1, 200))
def test_more_registers_never_raise_occupancy(threads, regs):
    try:
        more = occupancy("8.0", threads, regs + 8)
    except ValueError:
        return
    assert more.active_warps <= occupancy("8.0", threads, regs).active_warps


def test_shared_memory_is_charged_in_the_unit_of_its_compute_capability():
    # cuda_occupancy.h: 256-byte units up to compute major 7, 128-byte units from 8
    from calc import occupancy as occ, specs
    assert occ.smem_charged(100, specs.COMPUTE_CAPABILITIES["7.5"]) == 256
    assert occ.smem_charged(100, specs.COMPUTE_CAPABILITIES["8.0"]) == 128 + 1024   # plus the reserved KiB
