"""The communication chapter's figures (bookfigs.communication): their numbers are calc's (drawn
again from other inputs, the labels follow), and the two schematics fit a phone with text of at
least 11 CSS pixels, by the same measure as tests/figures/test_schematics.py."""
from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("svg")

from bookfigs import communication as figs  # noqa: E402
from calc import collectives as coll, fmt, specs  # noqa: E402

from test_schematics import drawn, fits_a_phone, has  # noqa: E402  (tests/figures is on sys.path)


@pytest.mark.parametrize("p", [3, 4, 5])
def test_ring_allreduce_draws_calc_schedule(p):
    texts, width, px = drawn(lambda: figs.ring_allreduce(p))
    fits_a_phone(width, px)
    steps = coll.step_count("all-reduce", "ring", p)
    has(texts, f"{steps} steps", f"S/{p}", fmt.num(coll.bytes_per_gpu_sent("all-reduce", "ring", p, 1.0), 2) + " S")
    # the last row: every slice on every GPU sums all p GPUs; the first: each holds only its own
    counts = [t for t in texts if t.isdigit()]
    assert counts[:p * p] == ["1"] * (p * p)
    assert counts[-p * p:] == [str(p)] * (p * p)
    assert sum(1 for t in texts if t.endswith(": reduce")) == p - 1
    assert sum(1 for t in texts if t.endswith(": gather")) == p - 1


def test_node_fabric_labels_are_calc_bandwidths_and_follow_them():
    h, up, out = specs.device("h100-sxm"), specs.link("nvlink4"), specs.link("ib-ndr-400")
    texts, width, px = drawn(lambda: figs.node_fabric("H100 SXM5", h.mem_bw, "NVLink 4", up.bw_per_direction,
                                                       "InfiniBand NDR", out.bw_per_direction))
    fits_a_phone(width, px)
    has(texts, fmt.si(h.mem_bw, "B/s"), f"NVLink 4:\n{fmt.si(up.bw_per_direction, 'B/s')}",
        f"InfiniBand NDR:\n{fmt.si(out.bw_per_direction, 'B/s')}", "GPU 7")
    b, up5 = specs.device("b200"), specs.link("nvlink5")
    texts, _, _ = drawn(lambda: figs.node_fabric("B200", b.mem_bw, "NVLink 5", up5.bw_per_direction,
                                                 "InfiniBand NDR", out.bw_per_direction, gpus=4))
    has(texts, fmt.si(b.mem_bw, "B/s"), fmt.si(up5.bw_per_direction, "B/s"), "GPU 3")
    assert "GPU 4" not in texts


def test_comm_roofline_puts_each_ridge_at_peak_over_bandwidth():
    peak = specs.device("h100-sxm").peak_flops("bf16")
    links = [("NVLink 4", 450e9), ("port", 50e9)]
    fig = figs.comm_roofline(peak, "H100", links, [("a", 1e3, 0, (4, 4)), ("b", 1e6, 1, (4, 4))])
    ax = fig.axes[0]
    ticks = [l for l in ax.lines if l.get_marker() == "|"]
    assert [t.get_xdata()[0] for t in ticks] == pytest.approx([peak / 450e9, peak / 50e9])
    dots = [l for l in ax.lines if l.get_marker() == "o"]
    assert dots[0].get_ydata()[0] == pytest.approx(1e3 * 450e9)       # left of the ridge: on the slope
    assert dots[1].get_ydata()[0] == pytest.approx(peak)               # right of it: on the flat roof


@pytest.mark.parametrize("servers,leaves", [(4, 2), (2, 2), (4, 1)])
def test_fat_tree_prints_the_ports_and_what_a_leaf_carries(servers, leaves):
    up, port = specs.link("nvlink4"), specs.link("ib-ndr-400")
    texts, width, px = drawn(lambda: figs.cluster_fat_tree(servers, 8, "NVLink 4", up.bw_per_direction,
                                                           port.bw_per_direction, leaves=leaves))
    fits_a_phone(width, px)
    leaf = servers * 8 // leaves * port.bw_per_direction
    has(texts, f"one port a GPU, {fmt.si(port.bw_per_direction, 'B/s')} each way",
        f"each leaf: {fmt.si(leaf, 'B/s')} down, as much up", f"NVLink 4, {fmt.si(up.bw_per_direction, 'B/s')}",
        f"server {servers - 1}", f"leaf {leaves - 1}")


@pytest.mark.parametrize("p,m", [(4, 6), (4, 4), (3, 8)])
def test_pipeline_schedule_numbers_every_pass_and_prints_calc_bubble(p, m):
    from calc import parallelism as par
    sched = par.one_f_one_b(p, m)
    texts, width, px = drawn(lambda: figs.pipeline_schedule(sched, p, m, par.bubble_fraction(p, m)))
    fits_a_phone(width, px)
    has(texts, f"{p - 1}/{m + p - 1} = {fmt.pct(par.bubble_fraction(p, m), 2)}", f"stage {p - 1}")
    assert sum(1 for t in texts if t.isdigit() and 1 <= int(t) <= m) == 2 * p * m


def test_parallelism_traffic_prints_each_row():
    rows = [("TP", "4 all-reduces", "every layer", "224 GiB", "NVLink"),
            ("DP", "gradient all-reduce", "once a step", "12.8 GiB", "the network")]
    texts, width, px = drawn(lambda: figs.parallelism_traffic(rows))
    fits_a_phone(width, px)
    has(texts, "224 GiB a GPU a step, over NVLink", "12.8 GiB a GPU a step, over the network", "replica 1")
