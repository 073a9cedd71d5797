"""The roofline widget draws the reader's measured device when the page passes it (``_measured``),
and never takes "yours-…" without it."""
import json

import pytest

import widgets
from calc import fmt, intensity, roofline

CPU = {"name": "yours-cpu", "label": "Your CPU, one core (measured in this browser)", "kind": "cpu",
       "specs": {"mem_bw": {"value": 2.5e10, "unit": "B/s"}}, "peaks": {"fp32": {"value": 4.5e10, "unit": "FLOP/s"}}}
GPU = {"name": "yours-gpu", "label": "Your GPU: Test Adapter (measured in this browser)", "kind": "gpu",
       "specs": {"mem_bw": {"value": 2e11, "unit": "B/s"}},
       "peaks": {"fp32": {"value": 5e12, "unit": "FLOP/s"}, "fp16": {"value": 1e13, "unit": "FLOP/s"}}}


def test_device_choices_that_draw_a_roofline_take_measured_devices():
    # every widget's device choice, audited: the two that draw a roofline or a time bound take the
    # reader's device; blockgrid's device (launch limits) is a constant, the others have none. The
    # parallelism planner's GPU does not: a training step needs the GPU's memory, its dense BF16
    # Tensor Core peak and its NVLink, none of which a browser can measure; the collective stepper
    # chooses a link, not a device. A new widget must be placed here (its name fails this test).
    flagged = {name: {p.name for p in widgets.get(name).PARAMS if p.measured} for name in widgets.NAMES}
    assert flagged == {"roofline": {"device", "compare"}, "memory-budget": {"device"}, "blockgrid": set(),
                       "attention-runner": set(), "steps": set(), "collective-stepper": set(),
                       "parallel-planner": set()}
    spec = {p["name"]: p for p in widgets.spec("roofline")}
    assert spec["device"]["measured"] is True and "measured" not in spec["dtype"]


def test_yours_without_the_device_falls_back_to_the_default():
    assert widgets.coerce("roofline", {"device": "yours-cpu"})["device"] == "h100-sxm"
    assert widgets.coerce("roofline", {"device": "yours-gpu", "_measured": {"yours-cpu": CPU}})["device"] == "h100-sxm"
    # a parameter that is not a device choice never takes it
    assert widgets.coerce("roofline", {"kernel": "yours-cpu", "_measured": {"yours-cpu": CPU}})["kernel"] == "gemm"


def test_the_measured_cpu_is_drawn_with_its_own_numbers():
    r = widgets.render("roofline", {"device": "yours-cpu", "dtype": "fp32", "size": 1024, "_measured": {"yours-cpu": CPU}})
    ro = dict(r["readouts"])
    cost = intensity.gemm(1024, 1024, 1024, "fp32")
    assert ro["Peak"] == fmt.si(4.5e10, "FLOP/s") and ro["Memory bandwidth"] == fmt.si(2.5e10, "B/s")
    assert ro["Ridge point"] == f"{fmt.num(1.8)} FLOP/B"
    assert ro["Time lower bound"] == fmt.duration(roofline.time_lower_bound(cost.flops, cost.bytes_, 4.5e10, 2.5e10))
    assert "<title>Roofline of your CPU, one core (measured in this browser), FP32</title>" in r["svg"]
    assert r["params"]["device"] == "yours-cpu" and "_measured" not in r["params"]
    assert r["message"] is None or "published" not in r["message"]


def test_a_measured_gpu_compared_with_the_h100_and_its_missing_formats_said_as_measured():
    r = widgets.render("roofline", {"device": "yours-gpu", "compare": "h100-sxm", "dtype": "bf16",
                                    "_measured": {"yours-gpu": GPU}})
    ro = dict(r["readouts"])
    assert ro["Peak"] == fmt.si(1e13, "FLOP/s")              # BF16 asked: FP16 measured is the nearest
    assert "has no measured BF16 peak; showing FP16" in r["message"]
    assert any(k.startswith("Attainable on H100") for k in ro)
    r2 = widgets.render("roofline", {"device": "h100-sxm", "compare": "yours-gpu", "_measured": {"yours-gpu": GPU}})
    assert any(k.startswith("Attainable on Your GPU") for k in dict(r2["readouts"]))


def test_a_corrupt_stored_device_is_an_error_the_page_shows():
    bad = {**CPU, "specs": {"mem_bw": {"value": -5}}}
    out = json.loads(widgets.render_json("roofline", json.dumps({"device": "yours-cpu", "_measured": {"yours-cpu": bad}})))
    assert "error" in out and "positive" in out["error"]


def test_the_memory_budget_draws_the_measured_device_with_the_memory_the_reader_sets():
    from calc import llm
    from widgets import memory_budget
    r = widgets.render("memory-budget", {"device": "yours-cpu", "your_memory": 32, "batch": 2, "context": 1024,
                                         "_measured": {"yours-cpu": CPU}})
    ro = dict(r["readouts"])
    m = llm.model("llama3-8b")
    budget = llm.memory_budget(m, 32 * 2 ** 30, 1024, 2)
    assert ro["Total"] == fmt.bytes_iec(budget.total_bytes) and ro["Free"] == fmt.bytes_iec(budget.free_bytes)
    assert ro["Device memory"] == "32.0 GiB, as you set it: a browser cannot measure it"
    assert "Memory reported by nvidia-smi" not in ro
    # the time bound from the measured bandwidth and FP32 peak (a measured device has no BF16 one)
    t = llm.decode_time_lower_bound(llm.decode_step(m, 2, 1024), 4.5e10, 2.5e10)
    assert ro["Step time lower bound"] == fmt.si(t, "s")
    assert ro["Your device (measured in this browser)"] == f"{fmt.si(2.5e10, 'B/s')}, {fmt.si(4.5e10, 'FLOP/s')} FP32"
    assert "no measured BF16 peak; the roof is its FP32 one" in r["message"] and "not a measurement" in r["message"]
    tight = widgets.render("memory-budget", {"device": "yours-cpu", "your_memory": 8, "_measured": {"yours-cpu": CPU}})
    assert "needs 31.0 GiB, your CPU has 8.00 GiB (as you set it). The weights alone" in tight["message"]
    assert "your CPU: 32.0 GiB, as you set it" in r["svg"] and "FP32 measured 45.0 GFLOP/s" in r["svg"]
    assert "<title>Memory budget of Llama 3 8B on your CPU, one core (measured in this browser)</title>" in r["svg"]
    assert "against 32.0 GiB, the memory you set: fits" in r["svg"]   # the figure's desc, which a screen reader hears
    # the memory control shows only for a measured device; a GPU's FP16 peak is the nearer roof
    spec = {p["name"]: p for p in widgets.spec("memory-budget")}
    assert spec["your_memory"]["show_if"] == ["device", ["yours-gpu", "yours-cpu"]]
    g = widgets.render("memory-budget", {"device": "yours-gpu", "_measured": {"yours-gpu": GPU}})
    assert memory_budget.numbers(g["params"] | {"_measured": {"yours-gpu": GPU}})["dtype"] == "fp16"
    # the datasheet devices keep their own memory, whatever the control holds
    h = dict(widgets.render("memory-budget", {"your_memory": 1})["readouts"])
    assert h["Device memory"] == f"{fmt.bytes_iec(80 * 2 ** 30)} (H100 SXM5 80GB), as labelled: an upper bound"
