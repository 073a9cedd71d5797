import math

import pytest

from calc import energy


def test_horowitz_values_at_45nm():
    assert math.isclose(energy.op_energy_j("fp32_mult"), 3.7e-12)
    assert math.isclose(energy.op_energy_j("int8_add"), 0.03e-12)
    assert math.isclose(energy.access_energy_j("sram_8kb"), 10e-12)


def test_mac_energy_is_multiply_plus_accumulate():
    assert math.isclose(energy.mac_energy_j("fp16"), 1.1e-12 + 0.9e-12)
    assert math.isclose(energy.mac_energy_j("int8"), 0.2e-12 + 0.1e-12)


def test_dram_costs_thousands_of_additions():
    # one 64-bit DRAM access (1.3 nJ, low end) versus a 32-bit add (0.1 pJ)
    assert math.isclose(energy.ratio("dram_low", "int32_add"), 13000)


def test_access_energy_scales_with_width():
    assert math.isclose(energy.access_energy_j("sram_1mb", 16), 25e-12)
    with pytest.raises(ValueError):
        energy.access_energy_j("sram_1mb", 0)


def test_unknown_names_raise():
    with pytest.raises(ValueError, match="unknown operation"):
        energy.op_energy_j("fp64_div")
    with pytest.raises(ValueError, match="unknown memory"):
        energy.access_energy_j("hbm9")
