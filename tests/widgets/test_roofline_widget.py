"""Roofline widget: its numbers are calc's numbers."""
import xml.etree.ElementTree as ET

import pytest

from calc import attention, fmt, intensity, roofline, specs
import widgets
from widgets import _svg

SVG = "{http://www.w3.org/2000/svg}"


def readouts(params):
    return dict(widgets.render("roofline", params)["readouts"])


def test_gemm_readouts_by_hand():
    """A 4,096³ BF16 GEMM on an H100 SXM, counted by hand: 2 × 4,096³ = 137.4 GFLOP over three
    4,096² BF16 matrices moved once (100.7 MB) is 4,096 / 3 = 1,365 FLOP/B. NVIDIA's datasheet:
    989 TFLOP/s dense BF16 (1,979 is the 2:4 sparse figure), 3.35 TB/s of HBM3, so the ridge is
    989.4 / 3.352 = 295 FLOP/B; 1,365 is past it, so the roof is the peak and the bound 100%,
    and the time at least 137.4 G / 989.4 T = 139 µs."""
    r = readouts({"device": "h100-sxm", "dtype": "bf16", "size": 4096})
    assert (r["FLOPs"], r["Bytes moved"], r["Arithmetic intensity"]) == ("137 GFLOP", "101 MB", "1,370 FLOP/B")
    assert (r["Peak"], r["Memory bandwidth"], r["Ridge point"]) == ("989 TFLOP/s", "3.35 TB/s", "295 FLOP/B")
    assert (r["Attainable"], r["Regime"], r["MFU upper bound (dense peak)"]) == ("989 TFLOP/s", "compute-bound", "100%")
    assert r["Time lower bound"] == "139 µs"


def test_gemm_readouts_equal_calc():
    """The widget shows calc's numbers (and no copy of its own)."""
    r = readouts({"device": "h100-sxm", "dtype": "bf16", "size": 4096})
    dev = specs.device("h100-sxm")
    peak, bw = dev.peak_flops("bf16"), dev.mem_bw
    cost = intensity.gemm(4096, 4096, 4096, "bf16")
    att = roofline.attainable(cost.intensity, peak, bw)
    assert r["Arithmetic intensity"] == f"{fmt.num(cost.intensity)} FLOP/B"
    assert r["Attainable"] == fmt.si(att, "FLOP/s")
    assert r["Regime"] == roofline.regime(cost.intensity, peak, bw) == "compute-bound"
    assert r["MFU upper bound (dense peak)"] == fmt.pct(att / peak)
    assert r["Ridge point"] == f"{fmt.num(roofline.ridge_point(peak, bw))} FLOP/B"


def test_dense_h100_ridge_is_about_295():
    assert readouts({})["Ridge point"] == "295 FLOP/B"


def test_sparse_peak_doubles_the_roof():
    dense = specs.device("a100-sxm-80gb").peak_flops("fp16")
    r = readouts({"device": "a100-sxm-80gb", "dtype": "fp16", "sparse": True, "size": 65536})
    assert r["Attainable"] == fmt.si(2 * dense, "FLOP/s")
    # NVIDIA's A100 datasheet: 312 TFLOP/s dense FP16 Tensor Core, 624 with 2:4 sparsity
    assert r["Attainable"] == r["Peak (2:4 sparse)"] == "624 TFLOP/s"


def test_softmax_is_memory_bound():
    r = readouts({"kernel": "softmax", "size": 2048, "dtype": "fp16"})
    cost = intensity.softmax(2048, 2048, "fp16")
    assert r["Regime"] == "memory-bound"
    assert r["Attainable"] == fmt.si(cost.intensity * specs.device("h100-sxm").mem_bw, "FLOP/s")
    # by hand: each element read and written once in FP16 (4 B) for 5 FLOPs (max, subtract, exp,
    # sum, divide): 1.25 FLOP/B × 3.352 TB/s = 4.19 TFLOP/s, 0.42% of the 989 TFLOP/s peak
    assert (r["Arithmetic intensity"], r["Attainable"]) == ("1.25 FLOP/B", "4.19 TFLOP/s")


def test_flash_attention_has_higher_intensity_than_naive():
    r = readouts({"kernel": "attention", "seq": 8192, "head": "128"})
    # M is the shared memory of an SM of the device drawn: the H100's 228 KiB (whitepaper, Table 3).
    m = specs.device("h100-sxm").value("smem_per_sm_bytes")
    assert m == 228 * 1024
    naive, flash = attention.naive(8192, 128, "bf16"), attention.flash(8192, 128, "bf16", m)
    assert r["Arithmetic intensity"] == f"{fmt.num(naive.intensity)} FLOP/B"
    assert r["FlashAttention intensity"] == f"{fmt.num(flash.intensity)} FLOP/B"
    assert r["FlashAttention's on-chip memory M"].startswith("228 KiB")
    assert flash.intensity > naive.intensity


def test_flash_attention_uses_the_drawn_devices_shared_memory():
    for name, kib in (("a100-sxm-80gb", 164), ("l4", 100), ("tpu-v5e", 164)):
        r = readouts({"device": name, "kernel": "attention", "seq": 4096, "head": "128"})
        # a TPU has no SMs in calc.specs: it takes the A100's, the paper's machine
        m = kib * 1024
        flash = attention.flash(4096, 128, "bf16", m)
        assert r["FlashAttention intensity"] == f"{fmt.num(flash.intensity)} FLOP/B", name
        assert r["FlashAttention's on-chip memory M"].startswith(f"{kib} KiB"), name


def test_fusion_selects_the_fused_chain():
    r = readouts({"kernel": "gelu", "fused": True, "size": 1024})
    _, fused = intensity.fused_chain(1024 * 1024, "bf16", (8, 9, 1), (0, 0, 1))
    assert r["Arithmetic intensity"] == f"{fmt.num(fused.intensity)} FLOP/B"


def test_unsupported_dtype_falls_back_with_a_message():
    result = widgets.render("roofline", {"device": "tpu-v4", "dtype": "fp32"})
    assert "no published FP32" in result["message"]


def test_compare_device_adds_its_roof_and_readouts():
    result = widgets.render("roofline", {"compare": "a100-sxm-80gb"})
    svg = ET.fromstring(result["svg"])
    roofs = [e for e in svg.iter(SVG + "polyline") if "wg-roof" in e.get("class")]
    assert len(roofs) == 2
    assert "Attainable on A100 SXM4 80GB" in dict(result["readouts"])


def test_points_are_clickable_and_axes_have_decade_labels():
    svg = ET.fromstring(widgets.render("roofline", {})["svg"])
    assert len([c for c in svg.iter(SVG + "circle") if c.get("data-set")]) >= 6
    labels = {t.text for t in svg.iter(SVG + "text")}
    assert {"1", "10", "100", "1 k"} <= labels and {"1 T", "100 T", "1 P"} <= labels


@pytest.mark.parametrize("width", [320, 640, 900])
def test_layout_follows_width(width):
    svg = ET.fromstring(widgets.render("roofline", {"_width": width})["svg"])
    assert svg.get("width") == str(width)


@pytest.mark.parametrize("width", [340, 640])          # the two layout widths the book draws
@pytest.mark.parametrize("kernel", ["gemm", "attention", "softmax"])
def test_the_devices_roof_says_its_peak_without_crossing_a_roof(width, kernel):
    """On a phone the whole label ("H100 SXM5 80GB BF16: 989 TFLOP/s") found room only across the
    sloped roof; it is shortened there (the select under the figure names the device) instead."""
    svg = ET.fromstring(widgets.render("roofline", {"_width": width, "kernel": kernel})["svg"])
    peak = fmt.si(specs.device("h100-sxm").peak_flops("bf16"), "FLOP/s")
    [label] = [t for t in svg.iter(SVG + "text") if (t.text or "").endswith(f"BF16: {peak}")]
    x, y, w = float(label.get("x")), float(label.get("y")), len(label.text) * _svg.SMALL_CHAR_PX
    left = {"start": x, "middle": x - w / 2, "end": x - w}[label.get("text-anchor", "start")]
    box = (left, y - 12, left + w, y + 3)                # the text's ink, from its baseline
    for roof in (e for e in svg.iter(SVG + "polyline") if "wg-roof" in e.get("class")):
        pts = [tuple(map(float, xy.split(","))) for xy in roof.get("points").split()]
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            for k in range(201):
                px, py = x0 + (x1 - x0) * k / 200, y0 + (y1 - y0) * k / 200
                assert not (box[0] < px < box[2] and box[1] < py < box[3]), (label.text, (px, py))


def test_mfu_is_against_the_dense_peak_whichever_roof_is_drawn():
    dense = readouts({"kernel": "gemm", "size": 8192})
    sparse = readouts({"kernel": "gemm", "size": 8192, "sparse": True})
    assert sparse["Peak (2:4 sparse)"] == fmt.si(specs.device("h100-sxm").peak_flops("bf16", True), "FLOP/s")
    assert dense["MFU upper bound (dense peak)"] == sparse["MFU upper bound (dense peak)"] == "100%"
    assert sparse["Attainable"] != dense["Attainable"]


def test_integer_formats_count_operations():
    r = readouts({"dtype": "int8", "kernel": "gemm"})
    assert r["OPs"].endswith("GOP") and r["Arithmetic intensity"].endswith("OP/B")
    assert r["Attainable"].endswith("OP/s") and "FLOP" not in r["Attainable"]
    svg = widgets.render("roofline", {"dtype": "int8"})["svg"]
    assert "Attainable OP/s" in svg and "TFLOP/s" not in svg


def test_a_comparison_device_in_another_format_says_so_and_is_computed_in_it():
    r = widgets.render("roofline", {"dtype": "fp8", "kernel": "softmax", "compare": "a100-sxm-80gb"})
    assert "A100 SXM4 80GB has no published FP8 peak; showing BF16" in r["message"]
    got = dict(r["readouts"])
    a100 = specs.device("a100-sxm-80gb")
    bf16 = intensity.softmax(4096, 4096, "bf16")
    assert got["Attainable on A100 SXM4 80GB (BF16)"] == fmt.si(
        roofline.attainable(bf16.intensity, a100.peak_flops("bf16"), a100.mem_bw), "FLOP/s")
    assert "A100 SXM4 80GB BF16:" in r["svg"]


@pytest.mark.parametrize("width", [340, 640])          # the two layout widths the book draws
def test_two_roofs_are_both_identified_by_the_key(width):
    """With a comparison device the roof labels often found no spot (at 340 px, most renders labelled
    at most one roof), leaving nothing to say which roof was which device: a key above the plot
    names both, solid line for the device, dashed for the comparison, inside the figure and clear
    of the axis title and of the plot."""
    from widgets.roofline import key_names
    for a in specs.DEVICES:
        for b in specs.DEVICES:
            if a == b:
                continue
            params = {"device": a, "compare": b, "_width": width, "kernel": "attention"}
            svg = ET.fromstring(widgets.render("roofline", params)["svg"])
            assert float(svg.get("height")) == round(width * (0.78 if width < 480 else 0.62))
            [key] = [g for g in svg.iter(SVG + "g") if g.get("class") == "wg-key"]
            swatches = [e.get("class") for e in key.iter(SVG + "line")]
            names = [t.text for t in key.iter(SVG + "text")]
            assert swatches == ["wg-c1", "wg-c2"], params
            assert names[0] in key_names(specs.device(a)) and names[1] in key_names(specs.device(b)), params
            assert names[0] != names[1], params
            frame = next(r for r in svg.iter(SVG + "rect") if r.get("class") == "wg-axis")
            title = next(t for t in svg.iter(SVG + "text") if (t.text or "").startswith("Attainable "))
            t_box = (float(title.get("x")), float(title.get("y")) - 12,
                     float(title.get("x")) + _svg.text_width(title.text), float(title.get("y")) + 3)
            for t in key.iter(SVG + "text"):
                x, y = float(t.get("x")), float(t.get("y"))
                box = (x, y - 11, x + _svg.label_px(t.text), y + 3)
                assert 0 <= box[0] and box[2] <= width, (params, t.text)
                assert box[3] <= float(frame.get("y")), (params, t.text)      # above the plot
                assert not _svg._overlap(box, t_box), (params, t.text)


@pytest.mark.parametrize("params", [{"kernel": "attention", "head": "256"},
                                    {"device": "laptop-cpu", "dtype": "fp32", "kernel": "attention"}])
def test_a_flash_attention_below_naive_attention_is_explained(params):
    """The arrow from naive attention to FlashAttention implies a gain; where Algorithm 1 moves more
    bytes (M under about 3d² values: too few rows of K and V per block) a message says so and why."""
    result = widgets.render("roofline", params)
    r = dict(result["readouts"])
    dev = specs.device(params.get("device", "h100-sxm"))
    dtype, d = params.get("dtype", "bf16"), int(params.get("head", "128"))
    m = widgets.roofline.sram_bytes(dev)[0]
    naive, flash = attention.naive(4096, d, dtype), attention.flash(4096, d, dtype, m)
    assert flash.bytes_ > naive.bytes_
    blocks = attention.flash_blocks(4096, d, m, dtype)
    assert blocks.m_elements < 3 * d * d
    assert (f"FlashAttention moves more bytes than naive attention here ({fmt.bytes_si(flash.bytes_)} against "
            f"{fmt.bytes_si(naive.bytes_)})") in result["message"]
    assert f"only B_c = {fmt.num(blocks.Bc)} rows of K and V" in result["message"]
    assert f"3d² = {fmt.num(3 * d * d)}" in result["message"]
    assert r["FlashAttention intensity"] == f"{fmt.num(flash.intensity)} FLOP/B"


def test_a_short_sequence_where_flash_attention_moves_more_is_explained_by_its_length():
    """M above 3d² values (the long-sequence condition) and still more bytes than naive attention:
    at N = 128 the passes over Q and O outweigh the small S and P; the message says so, and from
    which power of two on Algorithm 1 moves fewer (it does, and not at the one before)."""
    params = {"device": "h100-sxm", "dtype": "fp32", "kernel": "attention", "seq": 128, "head": "128"}
    m = widgets.roofline.sram_bytes(specs.device("h100-sxm"))[0]
    assert attention.flash_blocks(128, 128, m, "fp32").m_elements >= 3 * 128 * 128
    message = widgets.render("roofline", params)["message"]
    assert "at N = 128 the matrices S and P that it avoids are small" in message
    assert "only when M exceeds" not in message
    saves = int(message.split("From N = ")[1].split(" ")[0].replace(",", ""))
    fewer = lambda n: attention.flash(n, 128, "fp32", m).bytes_ < attention.naive(n, 128, "fp32").bytes_
    assert fewer(saves) and not fewer(saves // 2)


def test_no_flash_attention_message_where_it_saves_traffic():
    assert widgets.render("roofline", {"kernel": "attention"})["message"] is None


def test_point_tooltips_use_the_formats_op_unit():
    """Each point's tooltip gave "FLOP/B" even in INT8, where the readouts say "OP/B"."""
    for dtype, unit in (("int8", "OP/B"), ("bf16", "FLOP/B")):
        svg = ET.fromstring(widgets.render("roofline", {"dtype": dtype})["svg"])
        tips = [c.find(SVG + "title").text for c in svg.iter(SVG + "circle")]
        assert tips and all(t.endswith(f" {unit}") for t in tips), (dtype, tips)
        if dtype == "int8":
            assert not any("FLOP" in t for t in tips)


def test_long_time_bounds_print_in_a_readable_unit():
    """The toy device's GEMM took "344 Ms" and an add "10.7 ks"; long times are in hours or years."""
    toy = specs.device("toy")
    for kernel, cost in (("gemm", intensity.gemm(4096, 4096, 4096, "fp32")),
                         ("elementwise", intensity.elementwise(4096 * 4096, "fp32"))):
        r = readouts({"device": "toy", "dtype": "fp32", "kernel": kernel})
        t = roofline.time_lower_bound(cost.flops, cost.bytes_, toy.peak_flops("fp32"), toy.mem_bw)
        assert r["Time lower bound"] == fmt.duration(t), kernel
        assert r["Time lower bound"].endswith({"gemm": " years", "elementwise": " days"}[kernel])
    assert readouts({})["Time lower bound"].endswith("s")                  # an H100 GEMM: a prefix of s
