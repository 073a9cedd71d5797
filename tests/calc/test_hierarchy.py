import math

import pytest

from calc import hierarchy


def test_levels_are_ordered_fastest_first():
    names = [level.name for level in hierarchy.a100_table()]
    assert names[0] == "registers" and names[-1].startswith("NVMe")


def test_bandwidth_falls_down_the_hierarchy():
    bws = [lv.bw_bytes_per_s.value for lv in hierarchy.a100_table() if lv.bw_bytes_per_s]
    assert bws == sorted(bws, reverse=True)


def test_capacity_grows_from_shared_memory_down():
    caps = [lv.capacity_bytes.value for lv in hierarchy.a100_table()[1:] if lv.capacity_bytes]
    assert caps == sorted(caps)


def test_the_register_files_hold_more_than_all_shared_memory():
    # 256 KB vs 192 KB per SM: the largest on-chip store of an A100 is its registers
    regs, smem = (lv.capacity_bytes.value for lv in hierarchy.a100_table()[:2])
    assert regs > smem


def test_shared_memory_and_l1_capacity_is_their_combined_sram():
    # the level is the SRAM L1 and shared memory share (192 KB per SM), not the largest
    # shared-memory carveout (164 KB), as chapter 3's table lists them
    smem = [lv for lv in hierarchy.a100_table() if lv.name == "shared memory / L1"][0]
    assert smem.capacity_bytes.value == 192 * 1024 * 108


def test_every_value_has_a_source():
    for lv in hierarchy.a100_table():
        for spec in (lv.capacity_bytes, lv.bw_bytes_per_s, lv.latency_s, lv.energy_j_per_byte):
            if spec is not None:
                assert spec.source.title


def test_shared_memory_bandwidth_is_computed_from_banks_sms_and_clock():
    # 32 banks × 4 B per clock per SM × 108 SMs × 1.41 GHz ≈ 19.5 TB/s
    assert math.isclose(hierarchy.smem_bw_bytes_per_s(), 128 * 108 * 1.41e9)


def test_pcie_gen4_x16_is_about_31_5_gb_per_s_each_way():
    assert math.isclose(hierarchy.pcie_bw_bytes_per_s(16), 31.5e9, rel_tol=1e-3)
    with pytest.raises(ValueError):
        hierarchy.pcie_bw_bytes_per_s(3)


def test_hbm_is_dozens_of_times_slower_than_shared_memory():
    smem = hierarchy.smem_bw_bytes_per_s()
    hbm = [lv for lv in hierarchy.a100_table() if lv.name == "HBM2"][0].bw_bytes_per_s.value
    assert 10 < smem / hbm < 15


def test_l2_bandwidth_is_the_whitepapers_bytes_per_clock_at_the_boost_clock():
    # "The A100 L2 read bandwidth is 5120 Bytes/clk" (A100 whitepaper, p. 35): 7.22 TB/s at 1.41 GHz
    l2 = [lv for lv in hierarchy.a100_table() if lv.name == "L2 cache"][0]
    assert hierarchy.L2_READ_BYTES_PER_CLOCK.value == 5120
    assert math.isclose(l2.bw_bytes_per_s.value, 5120 * 1.41e9)
    assert "5120 Bytes/clk" in hierarchy.L2_READ_BYTES_PER_CLOCK.note


def test_latencies_are_the_papers_cycles_converted_at_the_boost_clock():
    levels = {lv.name: lv for lv in hierarchy.a100_table()}
    clock = hierarchy.A100_BOOST_CLOCK_HZ.value
    got = {name: round(levels[name].latency_s.value * clock) for name in ("shared memory / L1", "L2 cache", "HBM2")}
    assert got == {"shared memory / L1": 23, "L2 cache": 200, "HBM2": 290}
    assert "Table IV" in hierarchy.MICROBENCH.where
    for lv in hierarchy.a100_table():
        for spec in (lv.capacity_bytes, lv.bw_bytes_per_s, lv.latency_s, lv.energy_j_per_byte):
            assert spec is None or "verify" not in (spec.note + spec.source.note)


def test_hbm_has_no_unverified_energy_figure():
    hbm = [lv for lv in hierarchy.a100_table() if lv.name == "HBM2"][0]
    assert hbm.energy_j_per_byte is None
