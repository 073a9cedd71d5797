import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc import intensity as it


def test_square_gemm_matches_the_textbook_count():
    # 4096³ FP16: 2·4096³ FLOPs over 3·4096²·2 bytes -> 1365.3 FLOP/byte
    c = it.gemm(4096, 4096, 4096, "fp16")
    assert c.flops == 2 * 4096**3
    assert c.bytes_ == 3 * 4096**2 * 2
    assert math.isclose(c.intensity, 4096 / 3)


def test_gemv_intensity_is_about_one_flop_per_fp16_byte():
    c = it.gemv(8192, 8192, "fp16")
    assert math.isclose(c.intensity, 1.0, rel_tol=1e-3)


def test_decode_intensity_grows_with_batch():
    small, large = it.decode_matmul(1, 4096, 4096), it.decode_matmul(64, 4096, 4096)
    assert large.intensity > 30 * small.intensity


def test_elementwise_add_fp32_is_one_twelfth():
    assert math.isclose(it.elementwise(10**6, "fp32").intensity, 1 / 12)


def test_gelu_layernorm_softmax_are_memory_bound_on_any_gpu():
    for c in (it.gelu(1 << 20, "fp16"), it.layernorm(4096, 4096, "fp16"), it.softmax(4096, 4096, "fp16")):
        assert c.intensity < 10


def test_conv2d_counts():
    # 3x3 conv, 64->64 channels, 56x56, padding 1, batch 1
    c = it.conv2d(1, 64, 56, 56, 64, 3, 3, stride=1, padding=1, dtype="fp16")
    assert c.flops == 2 * 64 * 56 * 56 * 64 * 9
    assert c.bytes_ == (64 * 56 * 56 + 64 * 64 * 9 + 64 * 56 * 56) * 2
    assert it.conv_output_size(224, 7, 2, 3) == 112
    with pytest.raises(ValueError):
        it.conv_output_size(2, 5)


def test_fusion_divides_traffic_by_chain_length():
    unfused, fused = it.fused_chain(1000, "fp16", (1, 1, 1, 1))
    assert unfused.flops == fused.flops
    assert unfused.bytes_ == 4 * fused.bytes_


def test_fusion_with_a_residual_input():
    unfused, fused = it.fused_chain(10, "fp32", (1, 1), extra_inputs_per_op=(0, 1))
    assert unfused.bytes_ == 10 * 4 * (2 + 3)
    assert fused.bytes_ == 10 * 4 * 3


@pytest.mark.parametrize("call", [
    lambda: it.gemm(0, 1, 1), lambda: it.gemm(-4, 1, 1), lambda: it.elementwise(-1),
    lambda: it.layernorm(1, 0), lambda: it.gemm(2, 2, 2, "fp12"),
])
def test_invalid_sizes_raise(call):
    with pytest.raises(ValueError):
        call()


def test_costs_add():
    c = it.gemm(2, 2, 2) + it.gelu(4)
    assert c.flops == 16 + 36


@given(st.integers(1, 512), st.integers(1, 512), st.integers(1, 512))
def test_gemm_intensity_bounded_by_smallest_dimension(M, N, K):
    # fp32: I = MNK / (2(MK + KN + MN)) and MK + KN + MN > (product)/min-dim, so I < min(M,N,K)/2
    c = it.gemm(M, N, K, "fp32")
    assert c.intensity <= min(M, N, K) / 2 + 1e-9


@given(st.integers(1, 10**6), st.lists(st.integers(0, 10), min_size=1, max_size=8))
def test_fusion_never_increases_traffic(n, flops):
    unfused, fused = it.fused_chain(n, "bf16", flops)
    assert fused.bytes_ <= unfused.bytes_
