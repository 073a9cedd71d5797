import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc import llm, roofline, specs

L8, L70 = llm.model("llama3-8b"), llm.model("llama3-70b")
H100 = specs.device("h100-sxm")
GIB = 2**30


def test_llama3_70b_kv_cache_per_token_is_320_kib():
    # 80 layers × 2 (K, V) × 8 KV heads × 128 × 2 bytes (BF16) = 327,680 B = 320 KiB
    assert llm.model_kv_bytes_per_token(L70, "bf16") == 80 * 2 * 8 * 128 * 2 == 327_680 == 320 * 1024


def test_llama3_8b_kv_cache_per_token_is_128_kib():
    assert llm.model_kv_bytes_per_token(L8, "bf16") == 32 * 2 * 8 * 128 * 2 == 128 * 1024


def test_vllm_papers_opt_13b_example():
    # Kwon et al. (SOSP '23), Section 3: OPT-13B, 2 × 5120 (hidden) × 40 layers × 2 bytes = "800 KB"
    # per token (40 heads of 128: MHA), and "as much as 1.6 GB" for a 2,048-token request.
    opt = llm.OPT_13B
    assert opt["heads"] * opt["head_dim"] == opt["hidden"]
    per_token = llm.kv_bytes_per_token(opt["layers"], opt["heads"], opt["head_dim"], "fp16")
    assert per_token == 2 * 5120 * 40 * 2 == 800 * 1024
    assert round(2048 * per_token / 1e9, 1) == 1.7 and round(2048 * per_token / GIB, 1) == 1.6


def test_parameter_counts_match_the_published_sizes():
    # The Hugging Face model pages give 8.03B and 70.6B parameters; computed from config.json's constants.
    assert L8.params == 8_030_261_248
    assert round(L70.params / 1e9, 1) == 70.6
    # The Llama 3 paper's "405B" (Table 3's shape): 405.85 billion, computed the same way.
    assert 405e9 < llm.model("llama3-405b").params < 406e9


def test_attention_kinds_and_their_kv_cache():
    mha, mqa = L8.with_kv_heads(L8.heads), L8.with_kv_heads(1)
    assert (mha.attention_kind, L8.attention_kind, mqa.attention_kind) == ("MHA", "GQA", "MQA")
    per = lambda m: llm.model_kv_bytes_per_token(m)
    assert per(mha) == 4 * per(L8) == 32 * per(mqa)
    assert L8.group_size == 4 and L70.group_size == 8
    with pytest.raises(ValueError, match="evenly"):
        L8.with_kv_heads(5)


def test_kv_cache_scales_with_batch_context_and_format():
    base = llm.kv_cache_bytes(L8, 1000, 3, "bf16")
    assert llm.kv_cache_bytes(L8, 2000, 3, "bf16") == 2 * base
    assert llm.kv_cache_bytes(L8, 1000, 6, "bf16") == 2 * base
    assert llm.kv_cache_bytes(L8, 1000, 3, "fp8") == base / 2
    assert llm.kv_cache_bytes(L8, 1000, 3, "int4") == base / 4


def test_weights_quantised_in_groups_carry_their_scales():
    plain = llm.weight_bytes(L8, "int4")
    grouped = llm.weight_bytes(L8, "int4", group_size=128)
    assert plain == L8.params / 2
    assert grouped - plain == math.ceil(L8.params / 128) * 2          # one FP16 scale per 128
    assert 0.03 < grouped / plain - 1 < 0.032                           # 16 bits per 128 × 4 bits


def test_budget_fits_and_fails():
    cap = H100.mem_capacity_bytes
    assert cap == 80 * GIB
    ok = llm.memory_budget(L8, cap, 8192, 8)
    assert ok.fits and ok.free_bytes > 0
    assert ok.total_bytes == ok.weights_bytes + ok.kv_cache_bytes + ok.activations_bytes
    # Llama 3 70B in BF16 is 141 GB (131 GiB) of weights: more than an H100 holds before any cache.
    big = llm.memory_budget(L70, cap, 1, 1)
    assert not big.fits and big.free_bytes < 0 and big.weights_bytes > cap


def test_max_batch_is_the_edge_of_fitting():
    cap = H100.mem_capacity_bytes
    b = llm.max_batch(L8, cap, 8192)
    assert llm.memory_budget(L8, cap, 8192, b).fits
    assert not llm.memory_budget(L8, cap, 8192, b + 1).fits
    # one 8,192-token sequence of Llama 3 8B holds 1 GiB of BF16 cache; ~15 GiB of weights
    assert b == 65
    assert llm.max_batch(L70, cap, 8192) == 0
    assert llm.max_batch(L70, cap, 8192, weight_dtype="fp8") > 0


def test_activations_are_small_in_decode_and_large_in_long_prefill():
    assert llm.activation_bytes(L8, 1) < 1e6
    assert llm.activation_bytes(L8, 8192) > 1e9           # the logits of 8,192 tokens in FP32
    # Llama 3 8B's vocabulary is 128,256 tokens (config.json): 128,256 × 4 B = 513,024 B of FP32
    # logits per token, × 8,192 = 4,202,692,608 B
    assert llm.activation_bytes(L8, 8192) == 4_202_692_608
    # logits for the last token only: one layer's tensors are the larger part. Counted by hand per
    # token, in BF16: residual, normalised input and attention output, 3 × 4,096; Q 4,096, K and V
    # 1,024 each (8 KV heads of 128); the MLP's gate and up halves, 2 × 14,336: 47,104 values,
    # 94,208 B, × 512 tokens = 48,234,496 B
    assert llm.activation_bytes(L8, 512, logits_tokens=1) == 48_234_496
    assert llm.activation_bytes(L8, 512, logits_tokens=512) == llm.activation_bytes(L8, 512)


def test_decode_step_intensity_rises_with_batch_then_saturates():
    intens = [llm.total(llm.decode_step(L70, b, 8192)).intensity for b in (1, 8, 64, 512)]
    assert intens == sorted(intens)
    assert 0.9 < intens[0] < 1.3                          # batch 1: one multiply-add per BF16 weight
    attention = llm.decode_attention(L70, 512, 8192)
    # attention's intensity is 2 × (heads / kv_heads) / bytes whatever the batch
    assert math.isclose(attention.intensity, 2 * 8 / 2, rel_tol=1e-3)
    assert math.isclose(llm.decode_attention(L70, 1, 8192).intensity, attention.intensity, rel_tol=1e-3)
    assert intens[-1] < 2 * 8 * 8                          # bounded by the cache traffic


def test_decode_step_weight_traffic_equals_the_weights():
    ops = llm.decode_step(L8, 1, 1, weight_dtype="int8")
    weight_ops = [c for c in ops if c.name not in ("attention over the KV cache", "norms, SwiGLU, residual adds")]
    w = sum(c.bytes_ for c in weight_ops)
    # the matrices (embedding table excluded: a decode step gathers one row of it) and their activations
    # Counted matrix by matrix from config.json: per layer Q and O 4,096², K and V 4,096 × 1,024,
    # the MLP 3 × 4,096 × 14,336: 218,103,808; × 32 layers plus the LM head 128,256 × 4,096 =
    # 7,504,658,432 (= Meta's 8,030,261,248 less the embedding table and the 65 norm vectors)
    matrices = 7_504_658_432
    assert matrices == L8.matmul_params
    assert matrices <= w < matrices * 1.001 and llm.step_weight_bytes(L8, "int8") == matrices


def test_kv_dominance_batch():
    b = llm.kv_dominance_batch(L8, 8192)
    w, kv = llm.decode_step_bytes_split(L8, math.ceil(b), 8192)
    assert kv >= w
    w, kv = llm.decode_step_bytes_split(L8, math.floor(b), 8192)
    assert kv < w


def test_decode_time_is_memory_time_at_batch_one():
    ops = llm.decode_step(L8, 1, 1024)
    t = llm.decode_time_lower_bound(ops, H100.peak_flops("bf16"), H100.mem_bw)
    # By hand: 7.50 G matrix weights × 2 B = 15.01 GB, the BF16 cache of 1,024 tokens (128 KiB
    # each) 0.134 GB, the rest a few MB: about 15.15 GB over the H100 SXM's 3.35 TB/s = 4.52 ms
    assert math.isclose(t, 4.52e-3, rel_tol=0.005)
    assert all(roofline.regime(c.intensity, H100.peak_flops("bf16"), H100.mem_bw) == "memory-bound" for c in ops)


def test_paged_allocation_wastes_less_than_a_block_per_sequence():
    lengths = [7, 300, 1000, 17, 2048]
    paged = llm.paged_allocation(lengths, 16)
    contiguous = llm.contiguous_allocation(lengths, 2048)
    assert paged.used_tokens == contiguous.used_tokens == sum(lengths)
    assert paged.allocated_tokens - paged.used_tokens < 16 * len(lengths)
    assert paged.waste_fraction < contiguous.waste_fraction
    # vLLM's Figure 3: a 2,048-slot reservation for a request that ends after 10 tokens leaves 2,038 unused
    assert llm.contiguous_allocation([10], 2048).allocated_tokens - 10 == 2038
    with pytest.raises(ValueError, match="exceeds"):
        llm.contiguous_allocation([4096], 2048)


@given(st.lists(st.integers(0, 5000), min_size=1, max_size=40), st.sampled_from([1, 8, 16, 32, 128]))
def test_paged_waste_bound(lengths, block):
    a = llm.paged_allocation(lengths, block)
    assert 0 <= a.allocated_tokens - a.used_tokens <= (block - 1) * len(lengths)
    assert llm.paged_allocation(lengths, 1).waste_fraction == 0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="unknown model"):
        llm.model("llama3-9b")
    with pytest.raises(ValueError):
        llm.kv_bytes_per_token(0, 8, 128)
    with pytest.raises(ValueError):
        llm.kv_cache_bytes(L8, -1, 1)
    with pytest.raises(ValueError):
        llm.memory_budget(L8, 0, 10, 1)


def test_sources_are_in_the_bibliography():
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "references.bib"
    if not path.exists():
        pytest.skip("references.bib not available in this environment (Pyodide)")
    bib = path.read_text(encoding="utf-8")
    for src in (L8.source, L70.source, llm.LLAMA3_PAPER, llm.VLLM_PAPER):
        assert "{" + src.key + "," in bib


def test_intensity_limit_is_approached_from_below():
    limit = llm.decode_intensity_limit(L8, 4096)
    steps = [llm.total(llm.decode_step(L8, b, 4096)).intensity for b in (1, 64, 4096, 1 << 16)]
    assert steps == sorted(steps) and steps[-1] < limit
    assert steps[-1] > 0.97 * limit
    # the small elementwise operations keep it just below: they add bytes per sequence
    assert limit < H100.ridge_point("bf16") / 5


# --------------------------------------------------------------- batching and block tables

def test_static_batching_waits_for_the_longest_request_of_each_batch():
    s = llm.static_batching([5, 2, 7, 3, 4, 6, 2, 5], 4)
    assert s.steps == 7 + 6                              # the two batches' longest requests
    assert [r for r in s.runs if r[1] == 7] == [(0, 7, 4), (1, 7, 6), (2, 7, 2), (3, 7, 5)]
    assert s.utilisation == pytest.approx(34 / (4 * 13))


def test_continuous_batching_gives_a_freed_slot_to_the_next_request():
    s = llm.continuous_batching([5, 2, 7, 3, 4, 6, 2, 5], 4)
    # b (2 tokens) frees slot 1 after step 2, so e starts there; d frees slot 3 after step 3, so f
    assert s.runs[4] == (1, 2, 4) and s.runs[5] == (3, 3, 6)
    assert s.steps == 11 and s.utilisation == pytest.approx(34 / 44)
    for slot in range(4):                                # no slot runs two requests at once
        spans = sorted((start, start + n) for k, start, n in s.runs if k == slot)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_continuous_batching_never_takes_longer_than_static():
    import random
    rng = random.Random(7)
    for _ in range(50):
        q = [rng.randint(1, 40) for _ in range(rng.randint(1, 30))]
        slots = rng.randint(1, 8)
        assert llm.continuous_batching(q, slots).steps <= llm.static_batching(q, slots).steps


def test_schedules_refuse_empty_requests_and_no_slots():
    with pytest.raises(ValueError, match="slots"):
        llm.static_batching([3], 0)
    with pytest.raises(ValueError, match="tokens to generate"):
        llm.continuous_batching([3, 0], 2)


def test_block_tables_interleave_growing_sequences_and_match_the_paged_allocation():
    lengths = [7, 3, 12]
    tables = llm.block_tables(lengths, 4)
    assert tables == [[0, 3], [1], [2, 4, 5]]
    assert sorted(b for t in tables for b in t) == list(range(6))   # every block used once
    assert sum(len(t) for t in tables) * 4 == llm.paged_allocation(lengths, 4).allocated_tokens
    assert llm.block_tables([0, 5], 16) == [[], [0]]


def test_llama3_405b_runs_multiply_to_their_gpus_and_16m_tokens():
    # Llama 3 paper, Table 4: TP x CP x PP x DP = GPUs; every row trains on 16M tokens a step
    for run in llm.LLAMA3_405B_RUNS:
        assert run.tp * run.cp * run.pp * run.dp == run.gpus
        assert run.tokens_per_batch == 16 * 2**20
        assert run.mfu == pytest.approx(run.tflops_per_gpu / 989.4, abs=0.006)   # the H100's dense BF16 peak


def test_llama3_table4_long_context_row_says_the_paper_prints_dp_4():
    # The paper's Table 4 prints DP 4 in its last row; 16,384 / (8 x 16 x 16) = 8 and
    # 16M / (16 x 131,072) = 8, so calc stores 8 and says what was printed.
    run = llm.LLAMA3_405B_RUNS[2]
    assert run.dp == run.gpus // (run.tp * run.cp * run.pp) == 8
    assert "prints DP 4" in run.note
    assert all(r.note == "" for r in llm.LLAMA3_405B_RUNS[:2])
