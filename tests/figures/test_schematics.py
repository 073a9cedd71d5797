"""The schematic figures (bookfigs.schematics): what each draws, that its numbers are calc's
(drawn again from other inputs, the labels follow), and that a phone shows it whole with text of
at least 11 CSS pixels, at the width the book's reader gives it (bookbuild.html.reader)."""
from __future__ import annotations

import html
import io
import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

from bookbuild.html.reader import MIN_TEXT_PX, figure_width  # noqa: E402
from bookfigs import schematics  # noqa: E402
from calc import attention, fmt, hierarchy, intensity, llm, specs, tiling  # noqa: E402
from calc.cuda import LINE_BYTES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PHONE_COLUMN_PX = 358        # the text column of a 390 px wide phone (tests/book/a11y_site.PHONE)
TEXT = re.compile(r"<text[^>]*>([^<]*)")


def drawn(make):
    """The figure ``make()`` draws, saved as the book saves it (its matplotlibrc, SVG): its
    text, one string a line, and the width (px) and smallest text (px) the reader shows it at."""
    with matplotlib.rc_context(fname=str(ROOT / "matplotlibrc")):
        fig = make()
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
        plt.close(fig)
    svg = buf.getvalue()
    width, per_px = figure_width(svg)
    texts = [html.unescape(t).strip() for t in TEXT.findall(svg)]
    return texts, width, per_px * width


def fits_a_phone(width, text_px):
    assert width <= PHONE_COLUMN_PX, f"{width} px does not fit a phone's {PHONE_COLUMN_PX} px column"
    assert text_px >= MIN_TEXT_PX - 0.05, f"smallest text {text_px:.2f} px"


def has(texts, *needles):
    blob = "\n".join(texts)
    for n in needles:
        assert n in blob, f"{n!r} not drawn; text: {texts}"


# ------------------------------------------------------------------------------ chapter 1

def test_hierarchy_path_labels_every_hop_with_calc_bandwidth_and_latency():
    levels = hierarchy.a100_table()
    texts, width, px = drawn(lambda: schematics.hierarchy_path(levels))
    fits_a_phone(width, px)
    for lv in levels:
        if lv.capacity_bytes is not None:
            has(texts, fmt.bytes_iec(lv.capacity_bytes.value))
        if lv.bw_bytes_per_s is not None:
            has(texts, fmt.si(lv.bw_bytes_per_s.value, "B/s"))
        if lv.latency_s is not None and lv.latency_s.value > 0:
            has(texts, f"≈ {fmt.si(lv.latency_s.value, 's')}")
    has(texts, "SM registers", "L2 cache", "HBM2", "host DRAM", "NVMe SSD", "PCIe Gen4 x16", "on the GPU chip")


def test_hierarchy_path_follows_the_table_it_is_given():
    from dataclasses import replace
    from calc.sources import Spec
    levels = hierarchy.a100_table()
    l2 = levels[2]
    faster = replace(l2, bw_bytes_per_s=Spec(l2.bw_bytes_per_s.value * 2, "B/s", l2.bw_bytes_per_s.source))
    texts, _, _ = drawn(lambda: schematics.hierarchy_path(levels[:2] + [faster] + levels[3:]))
    has(texts, fmt.si(l2.bw_bytes_per_s.value * 2, "B/s"))
    assert fmt.si(l2.bw_bytes_per_s.value, "B/s") not in "\n".join(texts)


def test_littles_law_pipe_holds_bandwidth_times_latency():
    hbm = hierarchy.a100_table()[3]
    bw, lat = hbm.bw_bytes_per_s.value, hbm.latency_s.value
    texts, width, px = drawn(lambda: schematics.littles_law_pipe(bw, lat, 290))
    fits_a_phone(width, px)
    in_flight = bw * lat
    has(texts, fmt.si(bw, "B/s"), fmt.si(lat, "s"), "290 clock cycles", fmt.bytes_si(in_flight),
        f"{fmt.num(in_flight / 4, 2)} FP32 values", f"{fmt.num(in_flight / LINE_BYTES, 2)} loads of {LINE_BYTES} B")
    texts, _, _ = drawn(lambda: schematics.littles_law_pipe(2 * bw, lat, 290))
    has(texts, fmt.bytes_si(2 * in_flight))


# ------------------------------------------------------------------------------ chapter 2

def test_tile_reuse_shows_flops_per_byte_growing_with_the_tile():
    texts, width, px = drawn(lambda: schematics.tile_reuse([1, 2, 4, 8], "bf16"))
    fits_a_phone(width, px)
    for T in (1, 2, 4, 8):
        flops = intensity.gemm(T, T, T, "bf16").flops
        nbytes = tiling.smem_bytes_per_block(T, "bf16")
        has(texts, f"T = {T}", f"{fmt.num(nbytes)} B) loaded", f"{fmt.num(flops)} FLOPs done",
            f"= {fmt.num(flops / nbytes)} FLOP per byte")
    fp32, _, _ = drawn(lambda: schematics.tile_reuse([8], "fp32"))
    has(fp32, "FP32, 4 bytes a value", "= 2.00 FLOP per byte")     # T / s with s = 4


def test_transformer_layer_colours_each_operation_by_its_regime():
    h100 = specs.device("h100-sxm")
    peak, bw = h100.peak_flops("bf16"), h100.mem_bw
    T, d = 4096, 4096
    ops = [("Layer norm", "[T, d]", intensity.layernorm(T, d, "bf16")),
           ("QKV projection", "[T, d] × [d, 3d]", intensity.gemm(T, 3 * d, d, "bf16")),
           ("Attention", "h × ([T, dₕ] × [dₕ, T])", attention.naive(T, 128, "bf16", batch_heads=32))]
    with matplotlib.rc_context(fname=str(ROOT / "matplotlibrc")):
        fig = schematics.transformer_layer(ops, peak, bw, "T = 4,096")
    boxes = [p for p in fig.axes[0].patches if type(p).__name__ == "FancyBboxPatch"]
    edge = [matplotlib.colors.to_hex(b.get_edgecolor()) for b in boxes]
    assert edge == [matplotlib.colors.to_hex(c) for c in ("C3", "C0", "C3")]    # memory, compute, memory
    plt.close(fig)
    texts, width, px = drawn(lambda: schematics.transformer_layer(ops, peak, bw, "T = 4,096"))
    fits_a_phone(width, px)
    for label, shape, cost in ops:
        has(texts, label, shape, fmt.bytes_si(cost.bytes_), f"{fmt.num(cost.intensity)} FLOP/B")
    has(texts, "memory-bound", "compute-bound", "T = 4,096")


# ------------------------------------------------------------------------------ chapter 7

def test_kv_timeline_reads_every_cached_token_each_decode_step():
    m = llm.model("llama3-8b")
    per = llm.model_kv_bytes_per_token(m)
    texts, width, px = drawn(lambda: schematics.kv_timeline(m, 6, 4))
    fits_a_phone(width, px)
    has(texts, "prefill", "decode 4", f"= {fmt.bytes_iec(per)}", f"writes {fmt.bytes_iec(6 * per)}",
        f"{fmt.num(m.layers)} layers × 2 × {fmt.num(m.kv_heads)} KV heads × {fmt.num(m.head_dim)} × 2 B")
    for step in range(1, 5):
        has(texts, f"reads {fmt.bytes_iec((6 + step - 1) * per)}")
    texts70, _, _ = drawn(lambda: schematics.kv_timeline(llm.model("llama3-70b"), 3, 2))
    has(texts70, f"= {fmt.bytes_iec(llm.model_kv_bytes_per_token(llm.model('llama3-70b')))}", "decode 2")


def test_head_sharing_draws_mha_gqa_mqa_with_their_cache_per_token():
    m = llm.model("llama3-8b")
    texts, width, px = drawn(lambda: schematics.head_sharing(m))
    fits_a_phone(width, px)
    for kv, kind in ((32, "MHA"), (8, "GQA"), (1, "MQA")):
        has(texts, f"{kind}: {fmt.count(kv, 'KV head')}, {fmt.bytes_iec(llm.model_kv_bytes_per_token(m.with_kv_heads(kv)))}")
    with matplotlib.rc_context(fname=str(ROOT / "matplotlibrc")):
        fig = schematics.head_sharing(m)
    lines = [p for p in fig.axes[0].patches if type(p).__name__ == "FancyArrowPatch"]
    assert len(lines) == 3 * m.heads                      # one line a query head, in each panel
    plt.close(fig)


def test_paged_blocks_show_both_allocators_and_the_block_tables():
    texts, width, px = drawn(lambda: schematics.paged_blocks([7, 3, 12], 16, 4))
    fits_a_phone(width, px)
    c, p = llm.contiguous_allocation([7, 3, 12], 16), llm.paged_allocation([7, 3, 12], 4)
    has(texts, f"{fmt.pct(c.waste_fraction)} wasted", f"{fmt.pct(p.waste_fraction)} wasted",
        "A: [0, 3]", "B: [1]", "C: [2, 4, 5]", "block 5")
    assert "block 6" not in "\n".join(texts)


def test_batching_timelines_count_steps_and_busy_slots():
    queue = [5, 2, 7, 3, 4, 6, 2, 5]
    texts, width, px = drawn(lambda: schematics.batching_timelines(queue, 4))
    fits_a_phone(width, px)
    for sched in (llm.static_batching(queue, 4), llm.continuous_batching(queue, 4)):
        has(texts, f"{fmt.count(sched.steps, 'step')}, {fmt.pct(sched.utilisation)} busy")
    has(texts, "slot 4", *"abcdefgh")


def test_a_canvas_wider_than_a_phone_is_refused():
    with pytest.raises(ValueError, match="at most"):
        schematics.canvas(schematics.MAX_WIDTH_IN + 0.5, 2)


# ------------------------------------------------------------------------------ chapter 3

def test_bank_passes_stack_conflicting_lanes_into_passes():
    from calc import cuda
    cases = [("tile[32][32], a column", 32), ("stride 2", 2), ("tile[32][33], a column", 33)]
    texts, width, px = drawn(lambda: schematics.bank_passes(cases))
    fits_a_phone(width, px)
    for title, stride in cases:
        has(texts, f"{title}: {fmt.count(cuda.bank_conflicts(stride), 'pass', 'passes')}")
    has(texts, "31 banks idle", "bank (32 in all)")
    with matplotlib.rc_context(fname=str(ROOT / "matplotlibrc")):
        fig = schematics.bank_passes([("stride 4", 4)])
    cells = [p for p in fig.axes[0].patches if p.get_height() < 0.06 and p.get_width() < 0.1]
    assert len(cells) == cuda.WARP_SIZE                                      # one cell a lane
    rows = {round(c.get_y(), 4) for c in cells}
    assert len(rows) == cuda.bank_conflicts(4) == 4                         # stacked four passes high
    plt.close(fig)


# ------------------------------------------------------------------------------ chapter 6

def test_flash_streaming_states_the_kernels_blocks_and_traffic():
    texts, width, px = drawn(lambda: schematics.flash_streaming(1024, 128, 128, 64, "fp16"))
    fits_a_phone(width, px)
    k4, std = attention.flash_query_outer(1024, 128, 128, "fp16"), attention.naive(1024, 128, "fp16")
    has(texts, "1,024 × 128 each (FP16)", "128 × 128", "64 × 128", "16 blocks,", "128 × 64, FP32",
        fmt.bytes_si(k4.bytes_), fmt.bytes_si(std.bytes_))
    longer, _, _ = drawn(lambda: schematics.flash_streaming(2048, 64, 64, 32, "fp16"))
    has(longer, "2,048 × 64 each", "64 blocks,", fmt.bytes_si(attention.flash_query_outer(2048, 64, 64, "fp16").bytes_))


# ------------------------------------------------------------------------------ chapter 4

def test_thread_hierarchy_colours_threads_by_their_warp():
    from calc import cuda
    texts, width, px = drawn(lambda: schematics.thread_hierarchy(cuda.Dim3(64, 64), cuda.Dim3(16, 16), 132, "H100"))
    fits_a_phone(width, px)
    has(texts, "Grid: 64 × 64 blocks", "Block: 16 × 16 = 256 threads, 8 warps", "H100's", "132 SMs",
        "Warp: 32 consecutive threads")
    with matplotlib.rc_context(fname=str(ROOT / "matplotlibrc")):
        fig = schematics.thread_hierarchy(cuda.Dim3(4, 4), cuda.Dim3(32, 4), 132, "H100")
    # a 32 × 4 block: four warps, one a row, so every row of cells has one colour and rows differ
    cells = [p for p in fig.axes[0].patches if p.get_width() < 0.05 and p.get_height() < 0.05
             and type(p).__name__ == "Rectangle" and p.get_edgecolor()[3] == 0]
    by_row: dict = {}
    for p in cells:
        by_row.setdefault(round(p.get_y(), 4), set()).add(p.get_facecolor())
    assert len(by_row) == 4 and all(len(c) == 1 for c in by_row.values())
    assert len({next(iter(c)) for c in by_row.values()}) == 4
    plt.close(fig)


def test_waves_end_in_a_tail_of_what_is_left():
    texts, width, px = drawn(lambda: schematics.waves(4096, 132, 8))
    fits_a_phone(width, px)
    has(texts, "a wave = 132 SMs × 8 = 1,056 blocks", "wave 4 (tail)", "928", f"{fmt.pct(928 / 1056)}", "idle")
    exact, _, _ = drawn(lambda: schematics.waves(2112, 132, 8))
    assert "wave 2" in "\n".join(exact) and "tail" not in "\n".join(exact)


# ------------------------------------------------------------------------------ chapter 5

def test_fringe_tiles_state_each_cases_tiles_and_useful_share():
    texts, width, px = drawn(lambda: schematics.fringe_tiles([(129, 128), (40, 16)]))
    fits_a_phone(width, px)
    for n, T in ((129, 128), (40, 16)):
        tc = tiling.tile_count(n, n, T)
        has(texts, f"{n} × {n} output,", f"{T} × {T} tiles", f"{fmt.count(tc.total, 'tile')}, {tc.partial} partial",
            f"{fmt.pct(tc.utilisation)} of slots useful")


def test_dataflows_count_crossings_per_element_from_calc():
    texts, width, px = drawn(lambda: schematics.dataflows(128, 8192, 8192, 128, 128))
    fits_a_phone(width, px)
    has(texts, "Weight-stationary: B stays in the PEs", "Output-stationary: C stays in the PEs",
        "Input-stationary: A stays in the PEs", "A read 64 times", "C written 64 times", "C written 1 time",
        "128 × 8,192 × 8,192")
    square, _, _ = drawn(lambda: schematics.dataflows(256, 256, 256, 128, 128))
    assert "\n".join(square).count("read 2 times") == 4            # each moving input read twice


def test_sm_anatomy_reads_its_parts_from_the_device():
    for name in ("a100-sxm-40gb", "h100-sxm"):
        dev = specs.device(name)
        texts, width, px = drawn(lambda: schematics.sm_anatomy(dev))
        fits_a_phone(width, px)
        parts = dev.limits.sub_partitions
        assert "\n".join(texts).count("warp scheduler") == parts
        has(texts, f"One SM of the {dev.label}", f"registers: {fmt.bytes_iec(dev.value('register_file_per_sm_bytes') / parts)}",
            f"L1 + shared memory: {fmt.bytes_iec(dev.value('l1_smem_per_sm_bytes'))}",
            f"up to {fmt.bytes_iec(dev.limits.smem_per_sm_bytes)} shared", f"× {fmt.num(dev.sm_count)} SMs",
            f"L2 cache: {fmt.bytes_iec(dev.value('l2_bytes'))}", fmt.bytes_iec(dev.mem_capacity_bytes))
        assert ("1 Tensor Core" in "\n".join(texts)) == dev.has("tensor_cores")   # drawn only where sourced


def test_standard_attention_adds_up_to_algorithm_0():
    texts, width, px = drawn(lambda: schematics.standard_attention(1024, 128, "fp16"))
    fits_a_phone(width, px)
    has(texts, "kernel 1: reads 512 KiB, writes 2.00 MiB", "kernel 2: reads 2.00 MiB, writes 2.00 MiB",
        "kernel 3: reads 2.25 MiB, writes 256 KiB", fmt.bytes_si(attention.naive(1024, 128, "fp16").bytes_),
        "S = QKᵀ", "softmax", "O = PV")
    longer, _, _ = drawn(lambda: schematics.standard_attention(4096, 64, "fp16"))
    has(longer, "N = 4,096, d = 64", fmt.bytes_si(attention.naive(4096, 64, "fp16").bytes_))


# ------------------------------------------------------------- issue #43: pictures of the mechanism

def test_two_pipes_shows_the_slower_pipe_setting_the_rate():
    toy = specs.device("toy")
    texts, width, px = drawn(lambda: schematics.two_pipes(toy.mem_bw, toy.peak_flops("fp32"), [2, 8]))
    fits_a_phone(width, px)
    has(texts, "memory pipe: 100 bytes/s", "400 FLOP/s", "100 × 2 = 200 FLOP/s fed; runs at 200",
        "100 × 8 = 800 FLOP/s fed; runs at 400", "compute busy 50%", "compute busy 100%",
        "I = 2 FLOP/byte: memory-bound", "I = 8 FLOP/byte: compute-bound")


def test_weight_reuse_draws_calcs_flops_and_bytes_for_each_batch():
    texts, width, px = drawn(lambda: schematics.weight_reuse([1, 64], 4096, 16384, "bf16"))
    fits_a_phone(width, px)
    for b in (1, 64):
        c = intensity.decode_matmul(b, 4096, 16384, "bf16")
        has(texts, fmt.si(c.flops, "FLOP"), fmt.bytes_si(c.bytes_), f"= {fmt.num(c.intensity, 2)} FLOP/byte")
    has(texts, "1 token", "64 tokens", "4,096 × 16,384")


def test_warp_divergence_counts_one_pass_per_side_taken():
    texts, width, px = drawn(lambda: schematics.warp_divergence(
        [("odd", lambda t: t % 2 == 1), ("uniform", lambda t: True), ("first 8", lambda t: t < 8)], 30))
    fits_a_phone(width, px)
    has(texts, "odd: 2 passes, 60 cycles", "uniform: 1 pass, 30 cycles", "first 8: 2 passes, 60 cycles", "31")


def test_occupancy_bins_follow_calc_occupancy():
    from calc import occupancy
    lim = specs.compute_capability("8.0")
    occ = occupancy.occupancy("8.0", 256, 64, 48 * 1024)
    texts, width, px = drawn(lambda: schematics.occupancy_bins(occ, lim, 256, 64, 48 * 1024))
    fits_a_phone(width, px)
    has(texts, f"warp slots: room for {occ.limits['warps']} blocks", f"registers: room for {occ.limits['registers']} blocks",
        f"shared memory: room for {occ.limits['shared memory']} blocks",
        f"resident: {occ.active_blocks} blocks = {occ.active_warps} warps, {fmt.pct(occ.occupancy)}")
    other = occupancy.occupancy("8.0", 256, 128, 0)          # registers bind instead
    texts, _, _ = drawn(lambda: schematics.occupancy_bins(other, lim, 256, 128, 0))
    has(texts, f"registers: room for {other.limits['registers']} blocks", f"resident: {other.active_blocks} blocks")
