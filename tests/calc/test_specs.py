"""Hardware specs: values against the documents, and the sparse/dense discipline."""

import math

import pytest

from calc import specs
from calc.specs import DEVICES, device

REQUIRED = [
    "a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-40gb", "a100-pcie-80gb", "h100-sxm",
    "h100-pcie", "h200-sxm", "l4", "t4", "tpu-v4", "tpu-v5e", "jetson-orin-nx-16gb", "laptop-cpu",
]


def T(x):
    return x * 1e12


def test_every_required_device_exists():
    for name in REQUIRED:
        assert device(name).name == name


def test_unknown_device_message_lists_known_names():
    with pytest.raises(ValueError, match=r"unknown device 'h300'; known: a100-sxm-40gb, a100-sxm-80gb"):
        device("h300")


@pytest.mark.parametrize("name,dtype,sparse,tflops", [
    # A100 whitepaper, Table 1
    ("a100-sxm-40gb", "fp32", False, 19.5),
    ("a100-sxm-40gb", "tf32", False, 156),
    ("a100-sxm-80gb", "fp16", False, 312),
    ("a100-sxm-80gb", "fp16", True, 624),
    ("a100-sxm-80gb", "int8", False, 624),
    # H100 whitepaper V1.04, Table 1
    ("h100-sxm", "fp32", False, 66.9),
    ("h100-sxm", "tf32", False, 494.7),
    ("h100-sxm", "fp16", False, 989.4),
    ("h100-sxm", "bf16", False, 989.4),
    ("h100-sxm", "fp16", True, 1978.9),
    ("h100-sxm", "fp8", False, 1978.9),
    ("h100-pcie", "fp32", False, 51.2),
    ("h100-pcie", "fp16", False, 756),
    ("t4", "fp16", False, 65),
    ("tpu-v4", "bf16", False, 275),
    ("tpu-v5e", "bf16", False, 197),
])
def test_published_peaks(name, dtype, sparse, tflops):
    assert math.isclose(device(name).peak_flops(dtype, sparse), T(tflops), rel_tol=1e-12)


def test_h100_dense_fp16_is_half_the_sparse_figure_not_the_sparse_figure():
    h = device("h100-sxm")
    assert h.peak_flops("fp16") < 1000e12
    assert math.isclose(h.peak_flops("fp16", sparse=True) / h.peak_flops("fp16"), 2, rel_tol=1e-3)


@pytest.mark.parametrize("name,gbs", [
    ("a100-sxm-40gb", 1555), ("a100-pcie-40gb", 1555), ("a100-sxm-80gb", 2039),
    ("a100-pcie-80gb", 1935), ("h100-sxm", 3352), ("h100-pcie", 2000), ("h200-sxm", 4800),
    ("l4", 300), ("t4", 320), ("tpu-v4", 1200), ("tpu-v5e", 819), ("jetson-orin-nx-16gb", 102.4),
    ("laptop-cpu", 20),
])
def test_memory_bandwidth(name, gbs):
    assert math.isclose(device(name).mem_bw, gbs * 1e9, rel_tol=1e-12)


def test_memory_types_follow_the_documents():
    assert device("h100-sxm").value("mem_type") == "HBM3"  # not HBM3e (seed 003's error)
    assert device("h200-sxm").value("mem_type") == "HBM3e"
    assert device("a100-sxm-40gb").value("mem_type") == "HBM2"
    assert device("a100-sxm-80gb").value("mem_type") == "HBM2e"


def test_capacity_units_are_explicit():
    assert device("h200-sxm").spec("mem_capacity").value == 141
    assert device("h200-sxm").spec("mem_capacity").unit == "GB"
    assert device("tpu-v4").spec("mem_capacity").unit == "GiB"
    assert device("tpu-v4").mem_capacity_bytes == 32 * 2**30


def test_a_memory_label_in_gb_is_binary():
    # JEDEC JESD100B.01: the G of a storage capacity is 2**30; an A100 80GB reports 81,920 MiB.
    assert device("h100-sxm").spec("mem_capacity").unit == "GB"
    assert device("h100-sxm").mem_capacity_bytes == 80 * 2**30
    assert device("a100-sxm-40gb").mem_capacity_bytes == 40 * 2**30
    assert device("h100-sxm").mem_bw == 3.352e12          # bandwidths stay decimal


def test_sm_counts_and_l2():
    assert device("a100-sxm-80gb").sm_count == 108
    assert device("h100-sxm").sm_count == 132
    assert device("h100-pcie").sm_count == 114
    assert device("a100-sxm-40gb").value("l2_bytes") == 40 * 2**20
    assert device("h100-sxm").value("l2_bytes") == 50 * 2**20


def test_shared_memory_limits_per_compute_capability():
    assert device("a100-sxm-40gb").limits.smem_per_sm_bytes == 164 * 1024
    assert device("h100-sxm").limits.smem_per_sm_bytes == 228 * 1024
    assert device("h100-sxm").limits.smem_per_block_optin_bytes == 227 * 1024
    assert device("t4").limits.max_threads_per_sm == 1024


def test_h200_has_the_compute_of_an_h100_sxm():
    h100, h200 = device("h100-sxm"), device("h200-sxm")
    for dtype in ("fp16", "bf16", "fp8", "tf32"):
        assert math.isclose(h200.peak_flops(dtype), h100.peak_flops(dtype), rel_tol=2e-3)
    assert h200.mem_bw > h100.mem_bw


def test_the_same_gh100_peak_prints_the_same_on_h100_and_h200():
    # halving the H200 datasheet's rounded sparse 1,979 gave 989.5, printed 990 beside 989
    from calc import fmt
    h100, h200 = device("h100-sxm"), device("h200-sxm")
    for dtype in ("tf32", "fp16", "bf16", "fp8", "int8"):
        for sparse in (False, True):
            a, b = h100.peak_flops(dtype, sparse), h200.peak_flops(dtype, sparse)
            assert fmt.num(a / 1e12) == fmt.num(b / 1e12), (dtype, sparse)
            assert fmt.si(a, "FLOP/s") == fmt.si(b, "FLOP/s"), (dtype, sparse)
    assert fmt.num(h200.peak_flops("bf16") / 1e12) == "989"


def test_dense_peak_computed_from_sparse_only_datasheets_is_marked_computed():
    rows = {r["quantity"]: r for r in device("l4").spec_table()}
    assert rows["peak fp16 (dense)"]["computed"] is True
    assert rows["peak fp16 (2:4 sparse)"]["computed"] is False
    assert math.isclose(rows["peak fp16 (dense)"]["value"], 121e12)


def test_sparse_peak_absent_where_hardware_has_no_sparsity():
    with pytest.raises(ValueError, match="t4 has no published 2:4-sparse fp16 peak"):
        device("t4").peak_flops("fp16", sparse=True)
    with pytest.raises(ValueError, match="no published 2:4-sparse"):
        device("tpu-v4").peak_flops("bf16", sparse=True)


def test_missing_format_raises():
    with pytest.raises(ValueError, match="a100-sxm-80gb has no published fp8 peak"):
        device("a100-sxm-80gb").peak_flops("fp8")
    with pytest.raises(ValueError, match="unknown dtype"):
        device("a100-sxm-80gb").peak_flops("fp12")


def test_jetson_fp32_peak_is_computed_from_cores_and_clock():
    assert math.isclose(device("jetson-orin-nx-16gb").peak_flops("fp32"), 2 * 1024 * 918e6)


def test_ridge_points():
    # H100 SXM dense FP16: 989.4 TFLOP/s / 3.352 TB/s ≈ 295 FLOP/byte (not 591: that uses the sparse peak)
    assert math.isclose(device("h100-sxm").ridge_point("fp16"), 295.2, rel_tol=1e-3)
    # A100 80GB SXM FP16: 312 / 2.039 ≈ 153 FLOP/byte
    assert math.isclose(device("a100-sxm-80gb").ridge_point("fp16"), 153.0, rel_tol=1e-3)
    # A100 40GB: 312 / 1.555 ≈ 200.6
    assert math.isclose(device("a100-sxm-40gb").ridge_point("fp16"), 200.6, rel_tol=1e-3)
    # the seed's laptop: 100 GFLOP/s / 20 GB/s = 5 FLOP/byte (20 FLOPs per 4-byte float)
    assert device("laptop-cpu").ridge_point("fp32") == 5.0


def test_every_spec_row_carries_a_source():
    for d in DEVICES.values():
        for row in d.spec_table():
            assert row["source"], (d.name, row["quantity"])
            assert row["unit"] is not None
            if not d.illustrative:
                assert row["key"], (d.name, row["quantity"])


def test_illustrations_are_marked():
    assert device("laptop-cpu").illustrative
    assert device("laptop-cpu") not in specs.products()
    assert device("h100-sxm") in specs.products()


def test_reported_memory_is_below_the_label_and_sourced():
    h100 = device("h100-sxm")
    assert h100.mem_reported_bytes == 81559 * 2**20 < h100.mem_capacity_bytes
    assert h100.spec("mem_reported").source.key == "nccl2024issue1264"
    assert device("l4").mem_reported_bytes is None


def test_bib_keys_exist_in_references_bib():
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "references.bib")
    if not os.path.exists(path):
        pytest.skip("references.bib not available in this environment")
    with open(path, encoding="utf-8") as f:
        bib = f.read()
    keys = {row["key"] for d in DEVICES.values() for row in d.spec_table() if row["key"]}
    from calc import energy, hierarchy
    keys |= {energy.HOROWITZ.key, hierarchy.MICROBENCH.key, hierarchy.PCIE.key}
    for key in keys:
        assert "{" + key + "," in bib, key


def test_compute_capability_lookup():
    assert specs.compute_capability("9.0").max_warps_per_sm == 64
    with pytest.raises(ValueError, match="unknown compute capability '10.0'"):
        specs.compute_capability("10.0")


def test_tpu_is_not_a_cuda_device():
    with pytest.raises(ValueError, match="not a CUDA device"):
        device("tpu-v4").limits


# -- B200 (NVIDIA HGX B200 table, sparse Tensor Core figures only) and MI300X (AMD datasheet)

@pytest.mark.parametrize("name,dtype,sparse,tflops", [
    ("b200", "bf16", True, 4500), ("b200", "fp8", True, 9000), ("b200", "fp32", False, 75),
    ("mi300x", "bf16", False, 1307.4), ("mi300x", "bf16", True, 2614.9), ("mi300x", "fp8", False, 2614.9),
    ("mi300x", "fp32", False, 163.4), ("mi300x", "tf32", False, 653.7),
])
def test_new_device_peaks(name, dtype, sparse, tflops):
    assert math.isclose(device(name).peak_flops(dtype, sparse), T(tflops), rel_tol=1e-12)


def test_b200_dense_is_computed_as_half_its_sparse_only_figure():
    b = device("b200")
    assert ("bf16", False) not in b.peaks and ("bf16", True) in b.peaks
    assert b.peak_flops("bf16") == T(2250)
    row = next(r for r in b.spec_table() if r["quantity"] == "peak bf16 (dense)")
    assert row["computed"] and "÷ 2" in row["note"]


def test_new_devices_memory():
    assert device("b200").mem_bw == 7.7e12 and device("b200").spec("mem_capacity").value == 180
    assert device("mi300x").mem_bw == 5.3e12 and device("mi300x").spec("mem_capacity").value == 192


@pytest.mark.parametrize("name,printed_total_gbs,per_direction", [
    ("nvlink3", 600, 300), ("nvlink4", 900, 450), ("nvlink5", 1800, 900),
])
def test_links_printed_as_both_directions_are_halved(name, printed_total_gbs, per_direction):
    assert specs.link(name).bw_per_direction == per_direction * 1e9 == printed_total_gbs / 2 * 1e9


@pytest.mark.parametrize("name,printed_total_gbs,gt_per_s", [("pcie4x16", 64, 16e9), ("pcie5x16", 128, 32e9)])
def test_pcie_links_are_the_printed_raw_rate_halved_less_the_line_code(name, printed_total_gbs, gt_per_s):
    # NVIDIA's "64 GB/s" for Gen4 x16 is 16 lanes x 16 GT/s / 8, both directions; 128b/130b leaves
    # 31.5 GB/s each way: the one figure the book uses (chapter 1's hierarchy and chapter 8's link table)
    link = specs.link(name)
    assert link.printed == f"{printed_total_gbs} GB/s"
    assert link.bw_per_direction == pytest.approx(printed_total_gbs / 2 * 1e9 * 128 / 130)
    assert link.bw_per_direction == specs.pcie_bw_bytes_per_s(16, gt_per_s)
    from calc import hierarchy
    assert hierarchy.pcie_bw_bytes_per_s(16) == specs.link("pcie4x16").bw_per_direction


def test_tpu_ici_is_one_link_and_says_so():
    ici = specs.link("tpu-v5p-ici")
    assert ici.per == "link" and all(l.per == "device" for l in specs.links() if l is not ici)
    # '4800 Gbps' is 600 GB/s: half of '1200 GBps', and the note must not call them the same figure
    assert 4800e9 / 8 == 1200e9 / 2 and "half of '1200 GBps'" in ici.note


@pytest.mark.parametrize("name,gbits", [("ib-ndr-400", 400), ("ib-hdr-200", 200)])
def test_network_ports_are_bits_over_eight(name, gbits):
    assert specs.link(name).bw_per_direction == gbits * 1e9 / 8


def test_mi300x_infinity_fabric_is_seven_links_of_half_128():
    dev, l = device("mi300x"), specs.scale_up_link("mi300x")
    assert l.bw_per_direction == dev.value("infinity_fabric_links") * dev.value("infinity_fabric_link_bw") / 2


def test_scale_up_links_and_errors():
    assert specs.scale_up_link("h100-sxm").name == "nvlink4"
    assert specs.scale_up_link("b200").name == "nvlink5"
    assert specs.scale_up_link("a100-pcie-80gb").name == "pcie4x16"
    with pytest.raises(ValueError, match="no sourced scale-up link"):
        specs.scale_up_link("t4")
    with pytest.raises(ValueError, match="unknown link 'nvlink9'; known: nvlink3"):
        specs.link("nvlink9")
    assert all(l.source.key for l in specs.links())


def test_mi300x_link_figure_counts_both_directions_by_its_lane_rate():
    # AMD CDNA 3 white paper: x16 Infinity Fabric links at up to 32 Gbps a lane -> 16 x 32 / 8 = 64 GB/s each
    # way, half the datasheet's 128 GB/s per link; 7 links x 128 = 896 GB/s, the paper's 8-GPU ring aggregate.
    dev = device("mi300x")
    assert specs.MI300X_IF_LANES * specs.MI300X_IF_LANE_GBITS * 1e9 / 8 == 64e9
    assert dev.value("infinity_fabric_link_bw") == 2 * 64e9
    assert dev.value("infinity_fabric_links") * dev.value("infinity_fabric_link_bw") == 896e9


@pytest.mark.parametrize("name,links,per_link_gbs", [("nvlink3", 12, 25), ("nvlink4", 18, 25)])
def test_nvlink_counts_times_25_gbs_a_link_give_the_per_direction_figure(name, links, per_link_gbs):
    # A100 whitepaper: 12 links, 25 GB/s per link per direction; H100 whitepaper: 18 links, 900 GB/s in all
    l = specs.link(name)
    assert l.links == links and l.bw_per_direction == links * per_link_gbs * 1e9
