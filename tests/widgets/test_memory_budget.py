"""The memory-budget widget: its numbers are calc.llm's, and the failure state is drawn."""
import pytest
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import widgets
from widgets import memory_budget
from calc import fmt, llm, specs

SVG = "{http://www.w3.org/2000/svg}"


def _readouts(result):
    return dict(result["readouts"])


def test_default_state_fits_and_agrees_with_calc():
    r = widgets.render("memory-budget", {})
    m, dev = llm.model("llama3-8b"), specs.device("h100-sxm")
    b = llm.memory_budget(m, dev.mem_capacity_bytes, 8192, 16)
    out = _readouts(r)
    assert b.fits and r["message"] is None
    assert out["Weights"] == fmt.bytes_iec(b.weights_bytes)
    assert out["KV cache per token"] == "128 KiB"
    assert out["Total"] == fmt.bytes_iec(b.total_bytes) and out["Free"] == fmt.bytes_iec(b.free_bytes)
    assert out["Regime"] == "memory-bound"
    # the KV share is of all the step's bytes (weights, cache and activations), not of weights + cache
    w_read, kv_read = llm.decode_step_bytes_split(m, 16, 8192)
    step_bytes = llm.total(llm.decode_step(m, 16, 8192)).bytes_
    assert step_bytes > w_read + kv_read
    assert out["KV cache share of the step's bytes"] == fmt.pct(kv_read / step_bytes)
    svg = ET.fromstring(r["svg"])
    assert not [e for e in svg.iter(SVG + "rect") if "wg-blocks" in (e.get("class") or "")]
    assert "Fits:" in "".join(svg.itertext())


def test_seventy_b_in_bf16_draws_the_failure_state():
    r = widgets.render("memory-budget", {"model": "llama3-70b"})
    svg = ET.fromstring(r["svg"])
    assert [e for e in svg.iter(SVG + "rect") if "wg-blocks" in (e.get("class") or "")]   # the overflow
    assert "Does not fit" in "".join(svg.itertext())
    assert "weights alone do not fit" in r["message"]
    assert "Over by" in _readouts(r) and _readouts(r)["Step time lower bound"] == "— (does not fit)"
    # the same rows as a budget that fits: the readouts keep their height as a slider crosses the limit
    assert len(r["readouts"]) == len(widgets.render("memory-budget", {})["readouts"])
    # the step's point is drawn hollow: it cannot run
    assert all("wg-ghost" in c.get("class") for c in svg.iter(SVG + "circle"))


def test_too_large_a_batch_names_the_largest_that_fits():
    r = widgets.render("memory-budget", {"batch": 128})
    best = llm.max_batch(llm.model("llama3-8b"), specs.device("h100-sxm").mem_capacity_bytes, 8192)
    assert f"at most {best} fit" in r["message"]
    assert _readouts(r)["Largest batch at 8,192 tokens"] == str(best)


def test_labelled_memory_is_an_upper_bound_and_the_reported_memory_is_given():
    out = _readouts(widgets.render("memory-budget", {}))
    dev, m = specs.device("h100-sxm"), llm.model("llama3-8b")
    assert "upper bound" in out["Device memory"]
    assert out["Memory reported by nvidia-smi"] == fmt.bytes_iec(dev.mem_reported_bytes) == "79.6 GiB"
    assert out["Largest batch at 8,192 tokens"] == "65"                # the label, 80 GiB
    assert out["Largest batch in the reported memory"] == "64" == fmt.num(
        llm.max_batch(m, dev.mem_reported_bytes, 8192))
    # no reported figure for a device without a source: no invented row
    assert "Memory reported by nvidia-smi" not in _readouts(widgets.render("memory-budget", {"device": "l4"}))


def test_kv_heads_and_formats_change_the_cache():
    per = lambda **p: _readouts(widgets.render("memory-budget", p))["KV cache per token"]
    assert per(attention="mha") == "512 KiB" and per(attention="mqa") == "16.0 KiB"
    assert per(kv="fp8") == "64.0 KiB" and per(kv="int4") == "32.0 KiB"


def test_context_beyond_the_model_is_said():
    r = widgets.render("memory-budget", {"context": 16384, "batch": 1})
    assert "8,192-token context" in r["message"]


def test_batching_raises_the_step_intensity():
    i = lambda b: float(_readouts(widgets.render("memory-budget", {"batch": b, "context": 1024}))
                        ["Decode step intensity"].split()[0].replace(",", ""))
    assert i(1) < i(8) < i(64)


def test_print_shows_the_state_beside_its_opposite():
    fits = lambda p: widgets.render("memory-budget", p)["svg"].count("Fits:") == 1
    for params in ({}, {"model": "llama3-70b"}, {"model": "llama3-70b", "weights": "fp8", "batch": 64},
                   {"attention": "mqa", "batch": 1024, "context": 128}):
        p = widgets.coerce("memory-budget", params)
        (l1, o1), (l2, o2) = memory_budget.print_frames(p)
        assert o1 == {} and fits({**params, **o1}) != fits({**params, **o2}), (params, l2)


def test_print_frames_reach_the_pdf(tmp_path):
    import json
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "widgets", "render", "memory-budget", "--format", "json"],
                         capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2]).stdout
    result = json.loads(out)
    assert result["frame_labels"][0] == "As set" and "does not fit" in result["frame_labels"][1]
    assert len(result["frames"]) == 2 and all(f.startswith("<?xml") for f in result["frames"])
    assert dict(result["readouts"])["Free"] == "49.0 GiB"          # the readouts of the state as set


def test_one_kv_head_is_singular():
    model = _readouts(widgets.render("memory-budget", {"attention": "mqa"}))["Model"]
    assert "1 KV head (MQA)" in model and "1 KV heads" not in model


def test_out_of_memory_and_too_long_a_context_are_both_said():
    r = widgets.render("memory-budget", {"context": 131072, "batch": 64})
    assert "Out of memory" in r["message"] and "8,192-token context" in r["message"]


@pytest.mark.parametrize("width", widgets.LAYOUTS)
def test_the_ridge_label_carries_its_unit(width):
    """It said "ridge 295" where the roofline widget says "ridge 295 FLOP/B" (at the two widths the
    page draws; narrower, the bare number is kept where the unit finds no room)."""
    for state in widgets.states("memory-budget"):
        svg = widgets.render("memory-budget", {**state, "_width": width})["svg"]
        labels = re.findall(r">(ridge [^<]*)<", svg)
        assert labels and all(l.endswith(" FLOP/B") for l in labels), (state, labels)
