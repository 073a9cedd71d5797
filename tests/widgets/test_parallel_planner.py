"""The parallelism planner: its numbers are calc.parallelism's, and the states that cannot run say so."""
import xml.etree.ElementTree as ET

import pytest

import widgets
from widgets import parallel_planner as pp
from calc import fmt, llm, parallelism as par, specs

SVG = "{http://www.w3.org/2000/svg}"


def out(**p):
    return dict(widgets.render("parallel-planner", p)["readouts"])


def test_default_state_fits_and_agrees_with_calc():
    r = widgets.render("parallel-planner", {})
    plan = par.Plan(llm.model("llama3-70b"), specs.device("h100-sxm"), 64, 8, 1,
                    pp.own_link("h100-sxm"), specs.link("ib-ndr-400"), micro_batch=1, global_batch=512,
                    seq_len=4096, zero=1, gpus_per_node=8, overlap=True, utilisation=0.4)
    mem, st = par.memory(plan), par.step(plan)
    o = dict(r["readouts"])
    assert mem.fits and r["message"] is None
    assert o["Degrees"] == "TP 8 × PP 1 × DP 8 = 64 GPUs"
    assert o["Memory per GPU"] == f"{fmt.bytes_iec(mem.total_bytes)} of 79.6 GiB (fits)"   # nvidia-smi's 81,559 MiB
    assert o["Step time"] == fmt.duration(st.time_s) and o["Set by"] == st.bound
    assert "inside a node" in o["TP all-reduces"] and "across nodes" in o["DP gradients"]
    text = "".join(ET.fromstring(r["svg"]).itertext())
    assert "Memory per GPU" in text and "does not fit" not in text


def test_seventy_b_pure_data_parallel_does_not_fit_and_says_what_to_shard():
    r = widgets.render("parallel-planner", {"model": "llama3-70b", "tp": 1, "gpus": 8, "zero": "0"})
    svg = ET.fromstring(r["svg"])
    assert [e for e in svg.iter(SVG + "rect") if "wg-blocks" in (e.get("class") or "")]   # the overflow
    assert "does not fit" in "".join(svg.itertext())
    # 16 bytes a parameter (ZeRO paper) on every GPU: the optimizer's 12 are the largest part
    assert r["message"].startswith("Out of memory") and "optimizer states: shard them with ZeRO-1" in r["message"]
    assert out(model="llama3-70b", tp=1, gpus=8, zero="0")["Optimizer states"] == fmt.bytes_iec(12 * llm.model("llama3-70b").params)


@pytest.mark.parametrize("params,says", [
    ({"gpus": 8, "tp": 16}, "does not divide 8 GPUs"),
    ({"tp": 16, "gpus": 128}, "does not divide Llama 3 70B's 8 KV heads: "),    # 16 divides its 64 query heads
    ({"gpus": 8, "tp": 1, "global_batch": 8, "micro_batch": 2}, "does not split into 8"),
])
def test_a_configuration_that_cannot_run_is_drawn_and_explained(params, says):
    r = widgets.render("parallel-planner", params)
    assert r["message"].startswith("This configuration cannot run") and says in r["message"]
    assert says in "".join(ET.fromstring(r["svg"]).itertext()).replace("\n", "") or says[:20] in r["svg"]
    assert r["readouts"][0][0] == "Configuration" and says in r["summary"]
    # the rows of a plan that runs, empty: the readouts keep their height, the page below stays put
    runs = widgets.render("parallel-planner", {})["readouts"]
    assert [k for k, _ in r["readouts"][1:]] == [k for k, _ in runs[1:]]
    assert {v for _, v in r["readouts"][1:]} == {"—"}


def test_overlap_hides_the_gradient_transfer():
    on = out(gpus=1024, tp=1, zero="3", global_batch=1024, model="llama3-8b")
    off = out(gpus=1024, tp=1, zero="3", global_batch=1024, model="llama3-8b", overlap=False)
    assert on["DP gradients"] == off["DP gradients"]
    assert off["DP time waited for"] == off["DP gradients"].split(",")[0]
    assert on["DP time waited for"] != off["DP time waited for"]


def test_pipeline_bubble_readout_is_p_minus_1_over_m_plus_p_minus_1():
    o = out(gpus=64, tp=8, pp=4, global_batch=32)          # dp = 2, m = 16
    assert o["Micro-batches per step (m)"] == "16"
    assert fmt.pct(3 / 19) in o["Pipeline bubble"]


@pytest.mark.parametrize("width", [300, 340, 640])
def test_the_figure_is_as_tall_in_every_state(width):
    """The controls sit under the figure: a state that drew a taller figure would move them."""
    heights = {ET.fromstring(widgets.render("parallel-planner", {**c, "_width": width})["svg"]).get("height")
               for c in widgets.states("parallel-planner")}
    assert len(heights) == 1, heights


def test_print_shows_the_state_beside_pure_data_parallelism():
    frames = pp.print_frames(widgets.render("parallel-planner", {})["params"])
    assert frames == [("As set", {}), ("Pure data parallel", {"tp": 1, "pp": 1, "zero": "0"})]


def test_every_device_offered_is_a_datasheet_gpu_with_a_bf16_peak():
    devices = dict(next(p for p in pp.PARAMS if p.name == "device").options)
    assert "h100-sxm" in devices and "t4" not in devices and "laptop-cpu" not in devices
    for key in devices:
        assert specs.device(key).peak_flops("bf16", False) > 0


def test_b200_and_mi300x_are_offered_with_their_own_links():
    devices = dict(next(p for p in pp.PARAMS if p.name == "device").options)
    assert "b200" in devices and "mi300x" in devices
    for key in devices:
        o = out(device=key)
        assert pp.own_link(key).label in o["Links"]
    assert "NVLink 5" in out(device="b200")["Links"] and "Infinity Fabric" in out(device="mi300x")["Links"]
    # a larger memory: the 405B at TP 8 × PP 16 fits without recomputation on a B200 (180 GB)
    big = dict(model="llama3-405b", gpus=1024, tp=8, pp=16, global_batch=1024, seq=8192)
    assert "fits" in out(**big, device="b200")["Memory per GPU"]


def test_node_sizes_are_only_those_the_offered_gpus_come_in():
    """Issue #47: "72 (NVL72 rack)" was offered beside "B200 (HGX)"; NVL72 racks hold GB200s, which
    the planner does not offer (an HGX board holds 8)."""
    from widgets import parallel_planner as planner
    params = {p.name: p for p in planner.PARAMS}
    devices = [k for k, _ in params["device"].options]
    nodes = [int(k) for k, _ in params["node"].options]
    assert not any(k.startswith("gb") for k in devices), devices
    assert max(nodes) <= 8 and not any("NVL72" in label for _, label in params["node"].options), nodes
