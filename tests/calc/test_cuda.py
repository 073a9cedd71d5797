import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc import cuda
from calc.cuda import Dim3


def test_1d_global_index():
    assert cuda.global_index_1d(2, 256, 5) == 517
    with pytest.raises(ValueError):
        cuda.global_index_1d(0, 256, 256)


def test_2d_and_3d_coordinates():
    assert cuda.global_coords((1, 2), (16, 16), (3, 4)) == Dim3(19, 36, 0)
    assert cuda.global_coords(Dim3(1, 1, 1), Dim3(8, 4, 2), Dim3(7, 3, 1)) == Dim3(15, 7, 3)
    with pytest.raises(ValueError, match="threadIdx.y=4 is outside blockDim.y=4"):
        cuda.global_coords((0, 0), (4, 4), (0, 4))


def test_linear_numbering_is_x_fastest():
    assert cuda.linear_thread((1, 0, 0), (4, 4, 4)) == 1
    assert cuda.linear_thread((0, 1, 0), (4, 4, 4)) == 4
    assert cuda.linear_thread((0, 0, 1), (4, 4, 4)) == 16
    assert cuda.global_linear((1, 0), (32, 2), (0, 1), (4, 1)) == 64 + 32


def test_warp_membership_in_a_2d_block():
    # a 16×16 block: rows 0 and 1 form warp 0; thread (0, 2) starts warp 1
    assert cuda.warp_of((15, 1), (16, 16)) == (0, 31)
    assert cuda.warp_of((0, 2), (16, 16)) == (1, 0)
    assert cuda.warps_per_block(33) == 2


def test_contiguous_fp32_warp_load_touches_four_sectors():
    c = cuda.coalescing(1, 4)
    assert (c.sectors, c.lines, c.efficiency) == (4, 1, 1.0)


def test_misaligned_contiguous_load_touches_five_sectors_and_two_lines():
    c = cuda.coalescing(1, 4, base_addr=16)
    assert (c.sectors, c.lines) == (5, 2)


def test_strided_loads_waste_bandwidth():
    c = cuda.coalescing(32, 4)
    assert (c.sectors, c.lines) == (32, 32)
    assert c.efficiency == 1 / 8
    assert cuda.coalescing(2, 4).sectors == 8


def test_broadcast_reads_one_sector():
    assert cuda.coalescing(0, 4).sectors == 1


def test_bank_conflicts_by_stride():
    assert cuda.bank_conflicts(1) == 1
    assert cuda.bank_conflicts(2) == 2
    assert cuda.bank_conflicts(32) == 32
    assert cuda.bank_conflicts(33) == 1  # the padded-row trick
    assert cuda.bank_conflicts(0) == 1  # broadcast
    assert cuda.bank_of(128) == 0 and cuda.bank_of(132) == 1


def test_valid_launch_passes():
    cuda.validate_launch((1024, 1024), (16, 16), "a100-sxm-80gb", shared_bytes=48 * 1024, regs_per_thread=64)


@pytest.mark.parametrize("grid,block,kw,match", [
    (1, 1025, {}, "blockDim.x = 1,025 exceeds the limit of 1,024 on the NVIDIA A100"),
    (1, (1, 1, 65), {}, "blockDim.z = 65 exceeds the limit of 64"),
    (1, (32, 32, 2), {}, "2,048 threads per block"),
    ((1, 65536), 32, {}, "gridDim.y = 65,536 exceeds the limit of 65,535"),
    (2**31, 32, {}, "gridDim.x = 2,147,483,648 exceeds"),
    (1, 0, {}, "blockDim.x must be a positive integer"),
    (1, 256, {"shared_bytes": 164 * 1024}, "exceeds the maximum of 166,912 bytes"),
    (1, 256, {"regs_per_thread": 256}, "256 registers per thread exceeds the limit of 255"),
    (1, 1024, {"regs_per_thread": 128}, "131,072 registers per block"),
])
def test_invalid_launches_name_the_broken_limit(grid, block, kw, match):
    with pytest.raises(ValueError, match=match):
        cuda.validate_launch(grid, block, "a100-sxm-80gb", **kw)


def test_hopper_allows_more_shared_memory_per_block():
    cuda.validate_launch(1, 128, "h100-sxm", shared_bytes=200 * 1024)
    with pytest.raises(ValueError):
        cuda.validate_launch(1, 128, "a100-sxm-80gb", shared_bytes=200 * 1024)


@given(st.integers(1, 8), st.integers(0, 64), st.sampled_from([1, 2, 4, 8, 16]))
def test_stride_one_needs_the_fewest_sectors(elem_bytes_pow, stride, elem_bytes):
    base = cuda.coalescing(1, elem_bytes)
    assert cuda.coalescing(max(stride, 1), elem_bytes).sectors >= base.sectors


@given(st.integers(0, 1000))
def test_bank_conflict_degree_is_gcd_with_32(stride):
    import math

    expected = 1 if stride == 0 else math.gcd(stride, 32)
    assert cuda.bank_conflicts(stride) == expected


@given(st.integers(1, 16), st.integers(1, 16), st.integers(1, 4))
def test_linear_thread_numbers_are_a_bijection(x, y, z):
    block = Dim3(x, y, z)
    ids = [cuda.linear_thread(t, block) for t in block.indices()]
    assert ids == list(range(block.count))


def test_tensor_core_multiples_are_sixteen_bytes_of_the_dtype():
    assert cuda.tensor_core_multiple("fp16") == 8
    assert cuda.tensor_core_multiple("bf16") == 8
    assert cuda.tensor_core_multiple("tf32") == 4
    assert cuda.tensor_core_multiple("int8") == 16
    assert cuda.tensor_core_multiple("fp64") == 2
    assert cuda.tensor_core_multiple("fp16", cuda.TC_ALIGN_BYTES_A100) == 64
    with pytest.raises(ValueError):
        cuda.tensor_core_multiple("fp64", 4)


def test_pad_to_multiple():
    assert cuda.pad_to_multiple(50257, 8) == 50264
    assert cuda.pad_to_multiple(64, 8) == 64
    assert cuda.pad_to_multiple(0, 8) == 0
    with pytest.raises(ValueError):
        cuda.pad_to_multiple(5, 0)


def test_validate_launch_and_occupancy_share_the_register_rule():
    # 800 threads = 25 warps of 2,560 registers = 64,000, under 65,536; but the block is
    # charged 28 warps (rounded to the 4 sub-partitions, cuda_occupancy.h's regsAssumedPerCTA),
    # 71,680 registers: both refuse it, with the same message
    from calc import occupancy, specs
    with pytest.raises(ValueError, match="71,680 registers per block") as launch:
        cuda.validate_launch(1, 800, "a100-sxm-80gb", regs_per_thread=80)
    with pytest.raises(ValueError) as occ:
        occupancy.occupancy("8.0", 800, 80)
    assert str(launch.value) == str(occ.value)
    # at 72 registers (2,304 per warp × 28 = 64,512) it fits in both
    cuda.validate_launch(1, 800, "a100-sxm-80gb", regs_per_thread=72)
    assert occupancy.occupancy("8.0", 800, 72).active_blocks == 1
    lim = specs.compute_capability("8.0")
    assert cuda.regs_assumed_per_block(800, 80, lim) == 71_680
