"""calc.collectives against numbers derived here by hand and against nccl-tests' definitions.

A hand count of ring all-reduce, p = 4 GPUs, a buffer of S bytes cut into 4 chunks of S/4:

    reduce-scatter, 3 steps: every GPU sends one chunk (S/4) to its right-hand neighbour,
        which adds it to its own copy of that chunk. After 3 steps each chunk on one GPU
        holds the sum of all 4 GPUs' copies.
    all-gather, 3 steps: every GPU sends one finished chunk (S/4) on, which is copied.
    total: 6 steps = 2(p - 1); each GPU sends 6 x S/4 = 1.5 S = 2(p - 1)/p x S and receives
    the same. With links of B bytes/s per direction, t = 1.5 S / B, so
    algbw = S / t = B / 1.5 and busbw = algbw x 2(p - 1)/p = B: the link's bandwidth, which
    is what nccl-tests' PERFORMANCE.md says bus bandwidth is for.
"""

import math

import pytest

from calc import collectives as c
from calc import specs

PAIRS = [(col, alg) for col in c.COLLECTIVES for alg in c.ALGORITHMS
         if not (alg == "tree" and col != "all-reduce")]


# -- nccl-tests' bus-bandwidth factors (doc/PERFORMANCE.md, 'Summary'), typed from the document

@pytest.mark.parametrize("p", [2, 3, 4, 8, 16, 64, 1024])
def test_busbw_factors_are_nccl_tests(p):
    assert c.busbw_factor("all-reduce", p) == pytest.approx(2 * (p - 1) / p)
    assert c.busbw_factor("reduce-scatter", p) == pytest.approx((p - 1) / p)
    assert c.busbw_factor("all-gather", p) == pytest.approx((p - 1) / p)
    assert c.busbw_factor("all-to-all", p) == pytest.approx((p - 1) / p)
    assert c.busbw_factor("broadcast", p) == 1


def test_busbw_factor_for_eight_gpus_is_seven_quarters():
    assert c.busbw_factor("all-reduce", 8) == 1.75


# -- the hand count in the module docstring

def test_ring_all_reduce_hand_count_p4():
    st = c.steps("all-reduce", "ring", 4)
    assert len(st) == 6
    assert [s.phase for s in st] == ["reduce-scatter"] * 3 + ["all-gather"] * 3
    for s in st:
        assert len(s.transfers) == 4                                # every GPU sends one chunk
        assert sorted(t.src for t in s.transfers) == [0, 1, 2, 3]
        assert all(t.dst == (t.src + 1) % 4 for t in s.transfers)   # to its right-hand neighbour
    assert all(t.op == "reduce" for s in st[:3] for t in s.transfers)
    assert all(t.op == "copy" for s in st[3:] for t in s.transfers)
    S = 4e6
    assert c.bytes_per_gpu_sent("all-reduce", "ring", 4, S) == 1.5 * S
    assert all(sent == recv == 1.5 * S for sent, recv in c.bytes_sent_received("all-reduce", "ring", 4, S))


def test_ring_all_reduce_state_after_reduce_scatter_and_at_the_end():
    p = 4
    half = c.chunk_state("all-reduce", "ring", p, p - 1)
    for g in range(p):                       # GPU g holds chunk g summed over everyone
        assert half[g][g] == {0, 1, 2, 3}
    end = c.chunk_state("all-reduce", "ring", p, 2 * (p - 1))
    assert all(x == {0, 1, 2, 3} for row in end for x in row)
    start = c.chunk_state("all-reduce", "ring", p, 0)
    assert all(start[g][k] == {g} for g in range(p) for k in range(p))


def test_ring_time_gives_bus_bandwidth_equal_to_the_link():
    link = specs.link("nvlink4")
    for col in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        bw = c.busbw(col, "ring", 8, 1e12, link, alpha_s=0.0)
        assert bw == pytest.approx(link.bw_per_direction)


def test_alpha_beta_time_by_hand():
    link = specs.link("ib-ndr-400")               # 50 GB/s per direction, 2.7 us a step
    S, p = 1e9, 16
    hand = 2 * (p - 1) * 2.7e-6 + 2 * (p - 1) / p * S / 50e9
    assert c.time_s("all-reduce", "ring", p, S, link) == pytest.approx(hand)
    assert c.time_s("all-reduce", "ring", p, S, link, alpha_s=0, base_s=1e-3) == pytest.approx(
        1e-3 + 2 * (p - 1) / p * S / 50e9)


def test_small_messages_hit_the_latency_floor():
    link = specs.link("nvlink4")
    t_small = c.time_s("all-reduce", "ring", 8, 8, link)
    assert t_small == pytest.approx(14 * 0.6e-6, rel=1e-3)       # 14 steps of 0.6 us; the bytes are nothing
    n_half = c.half_bandwidth_bytes("all-reduce", "ring", 8, link)
    assert c.busbw("all-reduce", "ring", 8, n_half, link) == pytest.approx(link.bw_per_direction / 2)


# -- every schedule against its closed forms and its end state, derived independently

@pytest.mark.parametrize("col,alg", PAIRS)
@pytest.mark.parametrize("p", [1, 2, 3, 4, 5, 8, 13])
def test_schedule_counts_match_closed_forms(col, alg, p):
    st = c.steps(col, alg, p)
    assert len(st) == c.step_count(col, alg, p)
    counted = c.bytes_sent_received(col, alg, p, 1.0)
    if p > 1:
        assert max(s for s, _ in counted) == pytest.approx(c.bytes_per_gpu_sent(col, alg, p, 1.0))
        assert max(r for _, r in counted) == pytest.approx(c.bytes_per_gpu_received(col, alg, p, 1.0))


@pytest.mark.parametrize("col,alg", PAIRS)
@pytest.mark.parametrize("p", [2, 3, 4, 8, 9])
def test_each_collective_ends_where_its_definition_says(col, alg, p):
    end = c.chunk_state(col, alg, p, len(c.steps(col, alg, p)))
    everyone = set(range(p))
    if col == "all-reduce":
        assert all(x == everyone for row in end for x in row)
    elif col == "reduce-scatter":
        assert all(end[g][g] == everyone for g in range(p))
    elif col in ("all-gather", "all-to-all"):
        assert all(end[g][k] == {k} for g in range(p) for k in range(p))
    else:
        assert all(x == {0} for row in end for x in row)


@pytest.mark.parametrize("p", [5, 8, 16, 64])
def test_double_binary_tree_sends_twice_the_buffer(p):
    # each GPU is an inner node of one tree (its half up once, down to two children) and a leaf of
    # the other (its half up, then back): 3 x S/2 + S/2 = 2S at most; NCCL's tree runs at half the
    # bus bandwidth (src/graph/tuning.cc: ratio .5), i.e. 2S / B.
    assert c.bytes_per_gpu_sent("all-reduce", "tree", p, 1.0) == pytest.approx(2.0)
    assert c.step_count("all-reduce", "tree", p) == 2 * int(math.log2(p))


def test_switch_all_reduce_sends_each_buffer_once():
    # NVLS: each GPU sends S into the switch and takes S back: S / B, not 2(p-1)/p x S / B
    p, S = 8, 1e9
    assert c.bytes_per_gpu_sent("all-reduce", "switch", p, S) == S
    link = specs.link("nvlink4")
    ring = c.time_s("all-reduce", "ring", p, S, link, alpha_s=0)
    switch = c.time_s("all-reduce", "switch", p, S, link, alpha_s=0)
    assert ring / switch == pytest.approx(2 * (p - 1) / p)


def test_switch_all_gather_sends_a_shard_and_receives_the_rest():
    assert c.bytes_per_gpu_sent("all-gather", "switch", 8, 8.0) == 1.0
    assert c.bytes_per_gpu_received("all-gather", "switch", 8, 8.0) == 7.0


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="known: all-reduce"):
        c.steps("allreduce", "ring", 4)
    with pytest.raises(ValueError, match="never as a tree"):
        c.steps("all-gather", "tree", 4)
    with pytest.raises(ValueError, match="whole number of GPUs"):
        c.steps("all-reduce", "ring", 0)


def test_measured_figures_carry_their_source():
    m = c.H100_8X_ALLREDUCE_BUSBW_PEAK
    assert m.source.key == "austin2025scalingbookgpus" and m.value < specs.link("nvlink4").bw_per_direction


@pytest.mark.parametrize("p", [2, 3, 5, 8, 9])
def test_disjoint_rings_cover_every_directed_link_of_a_mesh_once(p):
    # A full mesh of p GPUs has p(p-1) directed links; p-1 rings of p links each use them all,
    # so the rings must each visit every GPU and share no link.
    rings = c.disjoint_rings(p)
    arcs = [(r[i], r[(i + 1) % p]) for r in rings for i in range(p)]
    assert len(rings) == p - 1 and all(sorted(r) == list(range(p)) for r in rings)
    assert len(set(arcs)) == len(arcs) == p * (p - 1)


@pytest.mark.parametrize("p", [1, 4, 6])
def test_disjoint_rings_say_where_none_exist(p):
    with pytest.raises(ValueError, match="link-disjoint rings"):
        c.disjoint_rings(p)


def test_nccl_tree_steps_chain_inside_a_server_and_tree_between_servers():
    # NCCL's tuning.cc: a tree all-reduce pays 2 x ((GPUs per node - 1) intra-node + log2(nodes) network)
    # latencies. By hand: 1,024 GPUs in 128 servers of 8 -> 2 x (7 + 7) = 28; one server of 8 -> 2 x 7 = 14,
    # the ring's 2(p - 1) there too; 1,000 GPUs in 125 servers -> log2i(125) = 6 -> 2 x (7 + 6) = 26.
    assert c.nccl_tree_steps(1024, 8) == 28
    assert c.nccl_tree_steps(8, 8) == 14 == c.step_count("all-reduce", "ring", 8)
    assert c.nccl_tree_steps(1000, 8) == 26
    assert c.nccl_tree_steps(16, 1) == 2 * 4          # one GPU a server: the book's binary tree over GPUs
    assert c.nccl_tree_steps(16, 1) == c.step_count("all-reduce", "tree", 16)
    with pytest.raises(ValueError, match="whole servers"):
        c.nccl_tree_steps(12, 8)


def test_nccl_credits_an_h100_nvlink_with_the_measured_plateau():
    # NCCL src/graph/topo.h: SM90_NVLINK_BW 20.6 GB/s per link and direction; the H100 has 18 NVLinks
    # (900 GB/s / 2 / 25 GB/s). 18 x 20.6 = 370.8 GB/s, scaling-book's measured "close to 370GB/s".
    nvl4 = specs.link("nvlink4")
    assert c.nccl_nvlink_bw(nvl4) == pytest.approx(370.8e9)
    assert c.nccl_nvlink_bw(nvl4) == pytest.approx(c.H100_8X_ALLREDUCE_BUSBW_PEAK.value, rel=0.01)
    assert c.nccl_nvlink_bw(specs.link("nvlink3")) == pytest.approx(12 * 20.0e9)   # A100: 12 links x 20.0
    with pytest.raises(ValueError, match="NVLinks with a sourced link count"):
        c.nccl_nvlink_bw(specs.link("ib-ndr-400"))


def test_pytorch_ddp_bucket_is_25_mib():
    # torch/nn/parallel/distributed.py: bucket_cap_mb defaults to 25 and is read as MiB, 25 x 1024 x 1024
    assert c.DDP_BUCKET_BYTES == 26_214_400 and c.PYTORCH_DDP.key == "pytorch2026ddp"


def test_nccl_latency_constants_as_tuning_cc_prints_them():
    # src/graph/tuning.cc at 5067397: baseLatencies Ring {6.6 LL, 14.0 LL128, 8.4 Simple};
    # hwLatencies NVLINK Ring {0.6, 1.9, 3.4}, PCI Ring {1.0, 2.5, 5.7}, NET Ring {2.7, 4.0, 14.0} (µs)
    assert c.BASE_LATENCY_S == 6.6e-6 and c.SIMPLE_BASE_LATENCY_S == 8.4e-6 and c.SIMPLE_NVLINK_ALPHA_S == 3.4e-6
    assert [specs.link(n).latency_us for n in ("nvlink4", "pcie5x16", "ib-ndr-400")] == [0.6, 1.0, 2.7]
    # the Predict's tiny all-reduce on 8 GPUs: 6.6 + 14 x 0.6 = 15.0 µs
    assert c.time_s("all-reduce", "ring", 8, 4, specs.link("nvlink4"), base_s=c.BASE_LATENCY_S) == pytest.approx(
        15.0e-6, rel=1e-3)


def test_a_ring_across_servers_shares_its_network_bytes_among_the_servers_ports():
    # 64 GPUs, 8 a server, NVLink 4 inside (450 GB/s a direction), one NDR port (50 GB/s) per GPU: each GPU
    # sends 2·63/64·S; its port carries an eighth of it, so the servers' 8 ports (400 GB/s) set the pace, not
    # NVLink; 2·63 = 126 steps pay NDR's 2.7 µs. By hand for S = 1 GB: 1.96875e9 / 400e9 + 126 × 2.7e-6.
    nvl4, ndr = specs.link("nvlink4"), specs.link("ib-ndr-400")
    t = c.time_s_across_servers("all-reduce", 64, 1e9, 8, nvl4, ndr)
    assert t == pytest.approx(2 * 63 / 64 * 1e9 / 400e9 + 126 * 2.7e-6)
    # one GPU a server: every byte through its own port, the flat ring over the network
    assert c.time_s_across_servers("all-reduce", 64, 1e9, 1, nvl4, ndr) == c.time_s("all-reduce", "ring", 64, 1e9, ndr)
    # one server: NVLink alone
    assert c.time_s_across_servers("all-gather", 8, 1e9, 8, nvl4, ndr) == c.time_s("all-gather", "ring", 8, 1e9, nvl4)
    # NVLink 5 (900 GB/s) outruns 8 ports: the ports set the pace, 2.25 times NVLink's own time
    nvl5 = specs.link("nvlink5")
    wire = c.time_s_across_servers("reduce-scatter", 64, 1e9, 8, nvl5, ndr, alpha_s=0)
    assert wire == pytest.approx(63 / 64 * 1e9 / 400e9)
    with pytest.raises(ValueError, match="all-to-all across servers"):
        c.time_s_across_servers("all-to-all", 64, 1e9, 8, nvl4, ndr)
    with pytest.raises(ValueError, match="do not split into servers"):
        c.time_s_across_servers("all-reduce", 12, 1e9, 8, nvl4, ndr)


def test_nccl_charges_a_ring_broadcast_p_steps_where_the_books_chain_takes_2p_minus_2():
    # src/graph/tuning.cc: nsteps = 2(nRanks-1) for AllReduce, nRanks-1 for ReduceScatter/AllGather,
    # nRanks otherwise (Broadcast, Reduce)
    assert [c.nccl_ring_steps(col, 8) for col in ("all-reduce", "all-gather", "reduce-scatter", "broadcast")] \
        == [14, 7, 7, 8]
    assert c.step_count("broadcast", "ring", 8) == 14
    for col in ("all-reduce", "all-gather", "reduce-scatter"):
        assert c.nccl_ring_steps(col, 8) == c.step_count(col, "ring", 8)
    with pytest.raises(ValueError):
        c.nccl_ring_steps("all-to-all", 8)


def test_nccl_time_adds_the_base_latency_once_where_the_link_has_nccl_latencies():
    nvl4 = specs.link("nvlink4")
    # issue 47: the stepper's 227 us for 64 MiB on 4 GPUs left out the 6.6 us the chapter's model adds
    plain = c.time_s("all-reduce", "ring", 4, 64 * 2**20, nvl4)
    assert c.nccl_time_s("all-reduce", "ring", 4, 64 * 2**20, nvl4) == pytest.approx(plain + 6.6e-6)
    assert round(c.nccl_time_s("all-reduce", "ring", 4, 64 * 2**20, nvl4) * 1e6) == 234
    ici = specs.link("tpu-v5p-ici")          # no NCCL latency: no base either
    assert c.nccl_time_s("all-reduce", "ring", 4, 1e6, ici) == c.time_s("all-reduce", "ring", 4, 1e6, ici)
