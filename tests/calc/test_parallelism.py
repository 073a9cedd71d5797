"""calc.parallelism against published figures and hand counts."""
import pytest

from calc import llm, parallelism as P, specs
from calc.sources import Source


def fake_link(name, gbps, latency_us):
    """A link with round numbers, so that the expected times below can be counted by hand."""
    return specs.Link(name, name, "scale-up", gbps, latency_us, Source("round numbers", "this test", 2026, None))


FAST, SLOW = fake_link("fast", 400.0, 1.0), fake_link("slow", 50.0, 10.0)
H100 = specs.device("h100-sxm")
L8, L70, L405 = llm.model("llama3-8b"), llm.model("llama3-70b"), llm.model("llama3-405b")


def plan(**kw):
    base = dict(model=L8, device=H100, gpus=8, tp=1, pp=1, scale_up=FAST, scale_out=SLOW,
                micro_batch=1, global_batch=64, seq_len=4096, zero=0)
    return P.Plan(**{**base, **kw})


def test_mixed_precision_adam_is_16_bytes_a_parameter_and_zero_divides_it_as_figure_1():
    # ZeRO paper, Figure 1: a 7.5B-parameter model on 64 GPUs needs 120 GB per GPU without ZeRO,
    # 31.4 GB with P_os, 16.6 GB with P_os+g and 1.9 GB with P_os+g+p.
    psi, nd = 7.5e9, 64
    per_stage = [sum(P.model_state_bytes(psi, z, nd)) / 1e9 for z in (0, 1, 2, 3)]
    assert [round(x, 1) for x in per_stage] == [120.0, 31.4, 16.6, 1.9]
    assert sum(P.model_state_bytes(1, 0, 1)) == 16


def test_bubble_is_p_minus_1_over_m_plus_p_minus_1():
    # GPipe / Narayanan et al.: with p = 4 stages and m = 8 micro-batches the pipeline idles
    # 3 of 11 slots; relative to the ideal compute that is (p - 1) / m = 3/8.
    assert P.bubble_fraction(4, 8) == pytest.approx(3 / 11)
    assert P.bubble_fraction(1, 8) == 0
    st = P.step(plan(gpus=8, pp=4, global_batch=16))        # dp = 2, m = 16 / 2 = 8
    assert st.bubble_s / st.compute_s == pytest.approx(3 / 8)


def test_layer_activations_follow_korthikanti_table_2():
    # Hand count: s = 2048, b = 1, h = 12288 (GPT-3), t = 8: 34 · 2048 · 12288 / 8 = 106,954,752 B;
    # full recomputation keeps only the input, 2 · 2048 · 12288 = 50,331,648 B.
    assert P.layer_activation_bytes(2048, 1, 12288, 8, False) == 106_954_752
    assert P.layer_activation_bytes(2048, 1, 12288, 8, True) == 50_331_648


def test_six_n_d_gives_the_llama_3_405b_budget():
    # Llama 3 paper, Section 1/3: the 405B model was pre-trained on 15.6T tokens with 3.8e25 FLOPs.
    flops = P.training_flops(L405, int(15.6e12), 8192, attention=False)
    assert round(flops / 1e25, 1) == 3.8
    # the attention term: 6 · L · s · d_attn per token; for the 8B at 4096 tokens
    # 6 · 32 · 4096 · 4096 = 3,221,225,472 FLOPs a token
    assert P.training_flops(L8, 1, 4096) - P.training_flops(L8, 1, 4096, attention=False) == 3_221_225_472
    assert P.training_flops(L8, 1, 4096, recompute=True, attention=False) == 8 * L8.params


def test_compute_time_is_flops_over_gpus_peak_and_utilisation():
    p = plan(utilisation=0.5)
    expected = P.training_flops(L8, 64 * 4096, 4096) / (8 * 989.4e12 * 0.5)
    assert P.compute_time_s(p) == pytest.approx(expected)


def test_data_parallel_all_reduce_is_a_ring_over_the_right_link():
    # 8 GPUs, dp = 8, one node: ring all-reduce of 2 bytes × 8.03e9 parameters over FAST:
    # 2·7/8 of the bytes at 400 GB/s plus 2·7 latencies of 1 µs.
    n = 2 * L8.params
    assert P.dp_bytes(plan()) == n
    assert P.dp_time_s(plan(overlap=False)) == pytest.approx(2 * 7 / 8 * n / 400e9 + 14 * 1e-6)
    # 16 GPUs over two nodes of 8: each GPU's port carries 1/8 of its ring bytes (NCCL's rings leave a node
    # through different GPUs' ports), 8 x 50 = 400 GB/s, as fast as FAST: 2·15/16 of the bytes at 400 GB/s,
    # plus 2·15 latencies of the scale-out link's 10 µs
    assert P.dp_time_s(plan(gpus=16)) == pytest.approx(2 * 15 / 16 * n / 400e9 + 30 * 10e-6)
    # nodes of 4: four ports, 200 GB/s, set the pace
    assert P.dp_time_s(plan(gpus=16, gpus_per_node=4)) == pytest.approx(2 * 15 / 16 * n / 200e9 + 30 * 10e-6)
    # tp = 8 fills each node: every DP group has one GPU a node, whose one port carries all its bytes
    p8 = plan(gpus=16, tp=8, global_batch=8)
    assert P.dp_time_s(p8) == pytest.approx(2 * 1 / 2 * P.dp_bytes(p8) / 50e9 + 2 * 10e-6)
    # ZeRO-3: two all-gathers and a reduce-scatter, 1.5 times the all-reduce's bytes
    z3 = P.dp_time_s(plan(zero=3))
    assert z3 == pytest.approx(3 * 7 / 8 * n / 400e9 + 21 * 1e-6)


def test_tensor_parallel_all_reduces_per_layer_and_micro_batch():
    # tp = 8 in one node, dp = 1, 8 micro-batches of 1 × 4096 tokens: each layer does 4
    # all-reduces of 2 · 4096 · 4096 B = 32 MiB; 32 layers × 8 micro-batches × 4 = 1024 of them.
    p = plan(tp=8, global_batch=8)
    msg = 2 * 4096 * 4096
    one = 2 * 7 / 8 * msg / 400e9 + 14 * 1e-6
    assert P.tp_time_s(p) == pytest.approx(1024 * one)
    assert P.tp_time_s(plan(tp=8, global_batch=8, recompute=True)) == pytest.approx(1536 * one)


def test_overlap_hides_the_gradient_all_reduce_under_the_backward_pass():
    on, off = P.step(plan(gpus=16)), P.step(plan(gpus=16, overlap=False))
    assert off.dp_exposed_s == off.dp_s
    assert on.dp_exposed_s == pytest.approx(max(0, on.dp_s - 2 / 3 * on.compute_s))
    assert on.time_s <= off.time_s


def test_memory_per_gpu_and_the_capacity():
    # Llama 3 70B, pure data parallel on 8 H100s: 16 bytes × 70.6e9 parameters per GPU, far over 80 GiB
    p = plan(model=L70)
    mem = P.memory(p)
    assert mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes == pytest.approx(16 * L70.params, rel=1e-12)
    # the capacity is what nvidia-smi reports for an H100 80GB HBM3, 81,559 MiB, not the label's 80 GiB
    assert not mem.fits and mem.capacity_bytes == 81559 * 2**20 < 80 * 2**30
    # tp = 8 and ZeRO-3 over 8 replicas of 64 GPUs: it fits
    assert P.memory(plan(model=L70, gpus=64, tp=8, zero=3, global_batch=64)).fits


def test_stage_params_split_the_layers_and_place_the_embeddings():
    m = L8
    matrices = sum(a * b for _, a, b in m.layer_matrices())
    assert P.stage_params(plan()) == m.params                                      # all on one GPU
    assert P.stage_params(plan(pp=4, global_batch=16)) == 8 * (matrices + 2 * m.hidden) + m.vocab * m.hidden + m.hidden
    # 126 layers over 16 stages: the largest stage holds 8 (Llama 3 405B's uneven stages)
    assert plan(model=L405, gpus=128, tp=8, pp=16, global_batch=1).stage_layers == 8


@pytest.mark.parametrize("kw,says", [
    (dict(gpus=8, tp=3), "does not divide 8 GPUs"),
    (dict(gpus=24, tp=3, global_batch=24), "does not divide Llama 3 8B's 32 query heads"),
    (dict(gpus=64, pp=64), "64 pipeline stages for 32 layers"),
    (dict(global_batch=12), "does not split into 8 data-parallel replicas"),
    (dict(zero=4), "ZeRO stage"),
    (dict(utilisation=0), "utilisation"),
])
def test_configurations_that_cannot_run_say_why(kw, says):
    with pytest.raises(P.PlanError, match=says):
        plan(**kw)


@pytest.mark.parametrize("kw,says", [
    (dict(model=L70, gpus=64, tp=32, global_batch=64), "does not divide Llama 3 70B's 8 KV heads: "),
    (dict(gpus=24, tp=3, global_batch=24), "does not divide Llama 3 8B's 32 query heads and 8 KV heads: "),
])
def test_tensor_parallelism_names_only_the_heads_it_does_not_divide(kw, says):
    """Issue #47: TP 32 was said not to divide Llama 3 70B's 64 query heads (it does)."""
    with pytest.raises(P.PlanError) as refused:
        plan(**kw)
    assert says in str(refused.value), str(refused.value)


def test_the_bound_is_the_largest_part():
    st = P.step(plan(gpus=16, overlap=False, global_batch=16))
    largest = max(st.parts, key=lambda p: p[1])
    assert st.bound == largest[0]
    assert st.time_s == pytest.approx(sum(v for _, v in st.parts))


def test_a_plan_between_the_reported_memory_and_the_label_does_not_fit():
    # An H100 holds 81,559 MiB as nvidia-smi reports it (79.6 GiB); its "80GB" label is 80 GiB. A plan that
    # needs 79.8 GiB fits the label but not the card: memory() must say it does not fit.
    p = plan(model=L70, gpus=64, tp=8, zero=3, global_batch=64)
    mem = P.memory(p)
    need = 79.8 * 2**30
    over = P.Memory(mem.weights_bytes, mem.gradients_bytes, mem.optimizer_bytes,
                    need - (mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes), mem.capacity_bytes)
    assert over.total_bytes == pytest.approx(need) and not over.fits
    assert mem.capacity_bytes < need < 80 * 2**30


def test_a_group_that_fills_its_nodes_unevenly_still_has_a_time():
    # 12 GPUs in nodes of 8 with tp = 2: a DP group of 6, 4 of them in the first node. The ports are shared
    # in the largest even split, 3 a node: 2·5/6 of the bytes over 3 × 50 = 150 GB/s, 10 latencies of 10 µs.
    p = plan(gpus=12, tp=2, global_batch=6)
    assert p.dp == 6
    assert P.dp_time_s(p) == pytest.approx(2 * 5 / 6 * P.dp_bytes(p) / 150e9 + 10 * 10e-6)


@pytest.mark.parametrize("p, m", [(1, 1), (2, 1), (4, 8), (16, 16), (8, 3)])
def test_1f1b_schedule_keeps_its_dependencies_and_idles_the_bubble(p, m):
    sched = P.one_f_one_b(p, m)
    assert len(sched) == 2 * p * m
    end = {(s, k, i): e for s, k, i, _, e in sched}
    for s, k, i, start, stop in sched:
        dep = ((s - 1, "F", i) if s else None) if k == "F" else ((s + 1, "B", i) if s < p - 1 else (s, "F", i))
        assert dep is None or end[dep] <= start
        assert stop - start == (1.0 if k == "F" else 2.0)
    for s in range(p):                      # one task at a time on each stage
        mine = [t for t in sched if t[0] == s]
        assert all(a[4] <= b[3] for a, b in zip(mine, mine[1:]))
    step = max(t[4] for t in sched)
    assert step == (m + p - 1) * 3.0
    busy = sum(t[4] - t[3] for t in sched if t[0] == 0)
    assert abs(1 - busy / step - P.bubble_fraction(p, m)) < 1e-12


def test_dp_threshold_is_the_ridge_over_one_and_a_half_flops_a_byte_per_token():
    assert P.dp_intensity_per_token() == 1.5
    # 989.4 TFLOP/s over one 50 GB/s port: a ridge of 19,788 FLOP/B, 13,192 tokens per GPU
    assert P.dp_tokens_threshold(989.4e12, 50e9) == pytest.approx(13192)
    assert P.dp_tokens_threshold(989.4e12, 400e9) == pytest.approx(1649)


def test_tp_intensity_grows_with_width_and_falls_with_the_degree():
    # hand count for the 70B model: 856 M weights a layer, 6 x 856M / 8 FLOPs a token on each GPU
    # against four all-reduces of 2 x 8,192 bytes, each sent 2 x 7/8 times
    p_layer = sum(a * b for _, a, b in L70.layer_matrices())
    assert P.tp_intensity(L70, 8) == pytest.approx(6 * p_layer / 8 / (4 * 2 * 7 / 8 * 2 * 8192))
    assert P.tp_intensity(L70, 8) == pytest.approx(P.tp_width_factor(L70) * 8192 / 7)
    assert P.tp_intensity(L405, 8) > P.tp_intensity(L70, 8) > P.tp_intensity(L8, 8)
    assert P.tp_intensity(L70, 16) < P.tp_intensity(L70, 8)
    ridge = 2000.0
    t = P.tp_max_degree(L70, ridge)
    assert P.tp_intensity(L70, 2) > ridge and abs(P.tp_width_factor(L70) * 8192 / (t - 1) - ridge) < 1e-9
    with pytest.raises(P.PlanError):
        P.tp_intensity(L70, 1)
