"""The reader's measured device (calc.measured): a dict from the browser becomes a calc.specs
Device marked as measured, and anything that is not a plausible measurement is refused by name."""
import math

import pytest

from calc import measured, specs


def cpu(**over):
    d = {"name": "yours-cpu", "label": "Your CPU, one core (measured in this browser)", "kind": "cpu",
         "measured": {"date": "2026-11-26T07:00:00Z"},
         "specs": {"mem_bw": {"value": 2.5e10, "unit": "B/s", "note": "copy"}},
         "peaks": {"fp32": {"value": 4.5e10, "unit": "FLOP/s"}}}
    d.update(over)
    return d


def test_a_measured_device_is_a_device_with_the_measured_figures():
    dev = measured.device_from_dict(cpu())
    assert isinstance(dev, specs.Device) and dev.measured and not dev.illustrative
    assert dev.mem_bw == 2.5e10 and dev.peak_flops("fp32") == 4.5e10
    assert math.isclose(dev.ridge_point("fp32"), 1.8)
    assert dev.peak_keys() == [("fp32", False)]
    assert "measured" in dev.label and "2026-11-26" in dev.notes[0]
    assert dev.spec("mem_bw").source.key is None          # no datasheet: the probe, named as such
    assert "browser" in dev.spec("mem_bw").source.cite()
    assert not any(d.measured for d in specs.DEVICES.values())   # the datasheet devices are not


def test_a_gpu_keeps_its_fp16_peak_and_a_label_always_says_measured():
    dev = measured.device_from_dict(cpu(name="yours-gpu", kind="gpu", label="Your GPU: Apple M2",
                                        peaks={"fp32": {"value": 3e12}, "fp16": {"value": 6e12}}))
    assert dev.peak_keys() == [("fp32", False), ("fp16", False)]
    assert dev.label == "Your GPU: Apple M2 (measured in this browser)"


@pytest.mark.parametrize("bad, says", [
    ({"name": "h100-sxm"}, "name"),
    ({"specs": {}}, "mem_bw is missing"),
    ({"specs": {"mem_bw": {"value": -1}}}, "positive"),
    ({"specs": {"mem_bw": {"value": float("nan")}}}, "positive"),
    ({"specs": {"mem_bw": {"value": "fast"}}}, "positive"),
    ({"specs": {"mem_bw": {"value": True}}}, "positive"),
    ({"specs": {"mem_bw": {"value": 1e30}}}, "positive"),
    ({"specs": {"mem_bw": {"value": 1e9, "unit": "GB/s"}}}, "expected 'B/s'"),
    ({"peaks": {}}, "fp32 peak is missing"),
    ({"peaks": {"fp32": {"value": 0}}}, "positive"),
    ({"peaks": {"fp99": {"value": 1e9}}, "specs": {"mem_bw": {"value": 1e9}}}, "fp99"),
])
def test_implausible_dicts_are_refused_by_name(bad, says):
    with pytest.raises(ValueError, match=says):
        measured.device_from_dict(cpu(**bad))


def test_devices_from_takes_the_widgets_mapping():
    devs = measured.devices_from({"yours-cpu": cpu()})
    assert list(devs) == ["yours-cpu"] and devs["yours-cpu"].measured
    assert measured.devices_from(None) == {}
