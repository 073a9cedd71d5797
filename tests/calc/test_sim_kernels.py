"""calc.sim.kernels: the helpers chapters use agree with calc.cuda's closed-form arithmetic, and the
kernels compute what they claim."""
import pytest
from hypothesis import given, strategies as st

from calc import cuda
from calc.sim import Array, l2_traffic, launch
from calc.sim import kernels as sk


@given(stride=st.integers(0, 80), offset=st.integers(0, 40), dtype=st.sampled_from(["fp32", "fp16", "int8", "fp64"]))
def test_warp_read_is_calc_cudas_coalescing(stride, offset, dtype):
    size = {"fp32": 4, "fp16": 2, "int8": 1, "fp64": 8}[dtype]
    got, want = sk.warp_read(stride, dtype, offset), cuda.coalescing(stride, size, base_addr=offset * size)
    assert (got.sectors, got.lines, got.bytes_requested, got.bytes_moved) == \
        (want.sectors, want.lines, want.bytes_requested, want.bytes_moved)


def test_warp_shared_read_is_the_gcd_rule():
    # lane i reads word i·s: gcd(s, 32) words share a bank (a stride of 0 is one broadcast word)
    assert [sk.warp_shared_read(s).wavefronts for s in range(0, 66)] == [cuda.bank_conflicts(s) for s in range(0, 66)]


def test_transpose_read_passes():
    assert sk.transpose_read_passes(0) == 32 and sk.transpose_read_passes(1) == 1


def test_attention_scores_warp0_counts_and_values():
    N, d = 64, 8
    w = sk.attention_scores_warp0(N, d)
    lanes = [(t // 16, t % 16) for t in range(32)]     # warp 0 of a 16 × 16 block: two half-rows
    for name, addrs in [("S", [(i * N + j) * 4 for i, j in lanes]), ("K", [j * d * 4 for _, j in lanes]),
                        ("Q", [i * d * 4 for i, _ in lanes])]:
        want = cuda.coalescing_of(addrs, 4)
        assert (w[name].sectors, w[name].bytes_requested) == (want.sectors, want.bytes_requested), name
    Q = Array("Q", [float(k % 5) for k in range(20 * 3)])
    K = Array("K", [float(k % 3) for k in range(20 * 3)])
    S = Array("S", 20 * 20)
    launch(sk.attention_scores, (2, 2), (16, 16), (Q, K, S, 20, 3))   # the grid overhangs S
    assert S.data == [sum(Q.data[i * 3 + k] * K.data[j * 3 + k] for k in range(3)) for i in range(20) for j in range(20)]


def test_helpers_reject_negative_strides():
    with pytest.raises(ValueError):
        sk.warp_read(-1)
    with pytest.raises(ValueError):
        sk.warp_shared_read(-2)


def test_naive_attention_moves_calc_attentions_bytes_and_flops():
    from calc import attention

    N, d = 32, 16
    reports = sk.naive_attention(N, d, "fp16")
    want = attention.naive(N, d, "fp16")
    # through a cold 40 MB L2 per launch, each launch reads its inputs and writes its output once:
    # (Q, K, S) + (S, P) + (P, V, O) = 4·N·d + 4·N² elements of 2 bytes; FLOPs 4·N²·d + 5·N²
    assert sum(r.hbm_bytes for r in reports) == want.bytes_ == (4 * N * d + 4 * N * N) * 2
    assert sum(r.flops for r in reports) == want.flops
    rows = lambda name, r: [r.arrays[name].data[i * d:(i + 1) * d] for i in range(N)]  # noqa: E731
    ref = attention.reference(rows("Q", reports[0]), rows("K", reports[0]), rows("V", reports[2]))
    O = reports[2].arrays["O"].data
    assert max(abs(O[i * d + c] - ref[i][c]) for i in range(N) for c in range(d)) < 1e-9


@given(elements=st.lists(st.integers(0, 200), min_size=32, max_size=32), dtype=st.sampled_from(["fp32", "fp16"]))
def test_warp_shared_gather_is_calc_cudas_degree(elements, dtype):
    # a single phase (accesses of at most 4 bytes): passes = the busiest bank's distinct words
    size = 4 if dtype == "fp32" else 2
    assert sk.warp_shared_gather(elements, dtype).wavefronts == \
        cuda.bank_conflict_degree_of([e * size for e in elements])


def test_flash_attention_moves_calc_attentions_bytes():
    from calc import attention

    N, d, BR, BC = 64, 16, 32, 16
    no_l2 = sk.run_flash_attention(N, d, BR, BC, l2_bytes=0)
    # every load reaches HBM: Q once, K and V once per query block (N / BR of them), O once, in fp16,
    # and the FP32 log-sum-exp of each row: calc.attention's Kernel 4 count
    assert no_l2.hbm_bytes == attention.flash_query_outer(N, d, BR, "fp16").bytes_ \
        == (N * d + (N // BR) * 2 * N * d + N * d) * 2 + N * 4
    # all of it coalesced; through the A100's L2 only the first touch of Q, K and V reaches HBM
    assert no_l2.totals.efficiency == 1
    assert l2_traffic(no_l2.record, 40 << 20).hbm_bytes == 4 * N * d * 2 + N * 4
    rows = lambda name: [no_l2.arrays[name].data[i * d:(i + 1) * d] for i in range(N)]  # noqa: E731
    ref = attention.reference(rows("Q"), rows("K"), rows("V"))
    O = no_l2.arrays["O"].data
    assert max(abs(O[i * d + c] - ref[i][c]) for i in range(N) for c in range(d)) < 1e-9


def test_small_ints_are_randints_values():
    import random
    for lo, hi, seed in [(-3, 3, 0), (0, 9, 1), (-99, 99, 2), (5, 5, 3), (0, 1, 4), (0, 255, 5)]:
        a, b = random.Random(seed), random.Random(seed)
        assert sk.small_ints(a, lo, hi, 500) == [float(b.randint(lo, hi)) for _ in range(500)]
        assert a.random() == b.random()          # and the generator is left in the same state
