"""The opening pictures of the attention, tiling and serving chapters: they print calc's numbers and
fit a phone with text of at least 11 CSS pixels (the measure of tests/figures/test_schematics.py)."""
from __future__ import annotations

import matplotlib

matplotlib.use("svg")

from bookfigs import attention, serving, tiling  # noqa: E402
from calc import attention as att, fmt, llm, specs  # noqa: E402

from test_schematics import drawn, fits_a_phone, has  # noqa: E402


def test_attention_opening_prints_each_kernels_bytes_as_a_multiple_of_the_last():
    k1, k4 = att.one_thread_per_output(1024, 128, "fp16"), att.flash_query_outer(1024, 128, 128, "fp16")
    rows = [("Kernel 1", k1.bytes_ / k4.bytes_), ("Kernel 4, flash", 1.0)]
    texts, width, px = drawn(lambda: attention.opening_bytes(rows, "542 MFLOP"))
    fits_a_phone(width, px)
    has(texts, fmt.times(k1.bytes_ / k4.bytes_, 2), "1.0×", "Kernel 1", "the same 542 MFLOP each")


def test_tiling_opening_prints_the_untiled_intensity_and_the_tile():
    texts, width, px = drawn(lambda: tiling.opening_reuse(32, 0.25))
    fits_a_phone(width, px)
    has(texts, "0.25 FLOP/byte", "32 × 32", "used 32 times")


def test_serving_opening_draws_one_block_per_conversation():
    m8, h = llm.model("llama3-8b"), specs.device("h100-sxm")
    kv, w = llm.kv_cache_bytes(m8, 8192, 1), llm.weight_bytes(m8)
    n = llm.max_batch(m8, h.mem_capacity_bytes, 8192)
    texts, width, px = drawn(lambda: serving.opening_budget(h.mem_capacity_bytes, "H100", w, kv, n, "1.00 GiB"))
    fits_a_phone(width, px)
    has(texts, f"{n} × 1.00 GiB", "weights")
