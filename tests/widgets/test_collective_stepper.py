"""The collective stepper: each step's transfers, states and times are calc.collectives'."""
import re
import xml.etree.ElementTree as ET

import pytest

import widgets
from widgets import collective_stepper as cs
from calc import collectives, fmt, specs

SVG = "{http://www.w3.org/2000/svg}"


def render(**p):
    return widgets.render("collective-stepper", p)


def cells(r):
    """{(gpu, chunk): contributions} from the grid's cell titles."""
    out = {}
    for el in ET.fromstring(r["svg"]).iter(SVG + "title"):
        m = re.fullmatch(r"GPU (\d+), chunk (\d+): (\d+) of (\d+)", el.text or "")
        if m:
            out[(int(m[1]), int(m[2]))] = int(m[3])
    return out


@pytest.mark.parametrize("p", [2, 4, 7, 16])
def test_a_ring_all_reduce_takes_2_p_minus_1_steps_and_ends_with_every_chunk_summed(p):
    # Patarasuk and Yuan's ring: p - 1 reduce-scatter steps, then p - 1 all-gather steps.
    r = render(p=p, step=0)
    assert r["ranges"]["step"] == [0, 2 * (p - 1)]
    assert set(cells(r).values()) == {1}                      # each GPU holds only its own contribution
    end = render(p=p, step=10**6)
    assert end["params"]["step"] == 2 * (p - 1)
    assert set(cells(end).values()) == {p} and len(cells(end)) == p * p


def test_after_the_reduce_scatter_each_gpu_holds_one_whole_chunk():
    p = 5
    got = cells(render(p=p, step=p - 1))
    whole = [(g, c) for (g, c), n in got.items() if n == p]
    assert sorted(g for g, _ in whole) == list(range(p))       # one per GPU
    assert len({c for _, c in whole}) == p                     # each a different chunk


def test_arrows_are_the_steps_transfers():
    p = 6
    for k in (1, 3, 7):
        svg = ET.fromstring(render(p=p, step=k)["svg"])
        heads = [e for e in svg.iter(SVG + "polygon") if "wg-pt" in (e.get("class") or "")]
        pairs = {(t.src, t.dst) for t in collectives.steps("all-reduce", "ring", p)[k - 1].transfers}
        assert len(heads) == len(pairs) == p
        # the cells this step wrote are outlined: one per transfer
        outlined = [e for e in svg.iter(SVG + "rect") if e.get("class") == "wg-box wg-sel"
                    and e.findtext(SVG + "title") == f"written in step {k}"]
        assert len(outlined) == p


def test_the_time_is_alpha_beta_and_sums_to_the_collectives_time():
    p, kib, link = 8, 1024, specs.link("nvlink4")
    n = kib * 1024
    alpha, bw = link.latency_us * 1e-6, link.bw_per_direction_GBps * 1e9
    # hand count: NCCL's base latency once, then each of the 14 steps moves one chunk of n/8 on every link
    base = collectives.BASE_LATENCY_S
    one = alpha + n / p / bw
    assert dict(render(p=p, size=kib, step=3)["readouts"])["Time so far"] == fmt.duration(base + 3 * one)
    end = dict(render(p=p, size=kib, step=10**6)["readouts"])
    assert end["Time so far"] == fmt.duration(base + 14 * one)
    assert end["Whole collective"].startswith(fmt.duration(collectives.nccl_time_s("all-reduce", "ring", p, n, link)))
    # nccl-tests: bus bandwidth = algorithm bandwidth × 2(p - 1)/p for an all-reduce
    algbw = n / (base + 14 * one)
    assert end["Algorithm bandwidth"] == fmt.si(algbw, "B/s")
    assert end["Bus bandwidth (nccl-tests)"].startswith(fmt.si(algbw * 2 * 7 / 8, "B/s"))


def test_small_buffers_are_latency_bound():
    r = dict(render(p=16, size=1, step=10**6)["readouts"])
    alpha = specs.link("nvlink4").latency_us * 1e-6
    assert r["Time so far"] == fmt.duration(collectives.BASE_LATENCY_S + 30 * alpha + 30 * 64 / (450e9))


def test_print_frames_are_the_phase_change_and_the_end():
    frames = lambda **p: cs.key_frames(widgets.render("collective-stepper", p)["params"])
    assert frames(p=4) == [3, 6]                                    # after the reduce-scatter, after the all-gather
    assert frames(p=4, collective="all-gather") == [1, 3]           # one phase: the first step and the last
    assert frames(p=8, algorithm="switch") == [1, 2]


def test_the_figure_takes_the_arrow_keys():
    svg = ET.fromstring(render()["svg"])
    assert "ArrowRight" in svg.get("data-keys") and svg.get("data-keys-help")


@pytest.mark.parametrize("collective", collectives.COLLECTIVES)
@pytest.mark.parametrize("algorithm", collectives.ALGORITHMS)
def test_the_last_steps_time_is_calc_collectives_time(collective, algorithm):
    params = {"collective": collective, "algorithm": algorithm, "p": 8, "size": 4096, "link": "ib-ndr-400"}
    r = widgets.render("collective-stepper", {**params, "step": 10**6})
    a = cs._algorithm(r["params"])[0]
    if a != algorithm:                      # NCCL's trees serve all-reduce only: the widget says so
        assert collective != "all-reduce" and "showing the ring" in r["message"]
    t = collectives.nccl_time_s(collective, a, 8, 4096 * 1024, specs.link("ib-ndr-400"))
    out = dict(r["readouts"])
    assert out["Time so far"] == fmt.duration(t) and out["Whole collective"].startswith(fmt.duration(t))
    assert set(cells(r).values()) <= set(range(9)) and cells(r)


def test_a_tree_all_reduce_moves_two_halves_and_a_switch_takes_two_steps():
    tree = render(algorithm="tree", p=8, step=0)
    assert tree["ranges"]["step"] == [0, 2 * 3]            # up three levels, down three
    assert {c for _, c in cells(tree)} == {0, 1}            # two trees, half the buffer each
    switch = render(algorithm="switch", p=8, step=10**6)
    assert switch["params"]["step"] == 2 and set(cells(switch).values()) == {8}
    assert "switch" in "".join(ET.fromstring(switch["svg"]).itertext())


@pytest.mark.parametrize("width", [300, 340, 640])
def test_the_figure_is_as_tall_in_every_state(width):
    """The controls sit under the figure: a figure that grew with p (the grid's rows) moved them by
    33 px in the built book. The grid's box is p = 16's, the sentence and legend have fixed room."""
    cases = widgets.states("collective-stepper") + [
        {"p": p, "step": s, "size": z, "collective": c, "algorithm": a}
        for p in (2, 5, 16) for s in (0, 1, 100) for z in (1, 4194304)
        for c in ("all-to-all", "all-reduce", "broadcast") for a in ("ring", "switch")]
    heights = {ET.fromstring(render(**case, _width=width)["svg"]).get("height") for case in cases}
    assert len(heights) == 1, heights


def test_the_buffer_slider_speaks_the_readouts_units():
    """The slider said "65,536 KiB" beside a chunk of "16.0 MiB": a byte count is shown in the
    largest binary unit it fills, in the static control and its aria-valuetext alike."""
    html = widgets.static_html("collective-stepper", {"size": 65536})
    slider = re.search(r'<input type="range" name="size"[^>]*>\s*<output>([^<]*)</output>', html)
    assert slider and slider[1] == "64 MiB"
    assert 'aria-valuetext="64 MiB"' in slider[0]
    assert "KiB" not in slider[0]
    r = dict(render(size=65536, p=4)["readouts"])
    assert "the buffer of 64.0 MiB" in r["Chunk"]                       # the readout's unit is the slider's
    size = next(p for p in cs.PARAMS if p.name == "size")
    shown = {v: widgets._format_value(size, v) for v in (1, 1023, 1024, 1536, 4194304)}
    assert shown == {1: "1 KiB", 1023: "1,023 KiB", 1024: "1 MiB", 1536: "1.50 MiB", 4194304: "4 GiB"}


@pytest.mark.parametrize("p", [2, 4, 16])
def test_on_a_phone_the_grid_fills_its_box_at_any_p(p):
    """The grid's box is p = 16's (so that the controls never move); with cells capped at 34 px,
    p = 4 left 162 px of it blank under the grid."""
    svg = ET.fromstring(render(p=p, step=1, _width=340)["svg"])
    bottoms = [float(e.get("y")) + float(e.get("height")) for e in svg.iter(SVG + "rect")
               if re.fullmatch(r"GPU \d+, chunk \d+: .*", e.findtext(SVG + "title") or "")]
    head = next(e for e in svg.iter(SVG + "text") if re.search(r"[Ss]tep \d+( of |/)\d+", e.text or ""))
    blank = float(head.get("y")) - 13 - max(bottoms)       # the grid comes first on a phone, the heading under it
    assert blank <= 12, f"{blank:.0f} px blank under the grid at p = {p}"


@pytest.mark.parametrize("p", [2, 4, 16])
def test_on_a_phone_the_ring_and_the_step_come_last_over_the_step_slider(p):
    """Issue #47: on a phone the drawing is too tall to pin, and the ring and "step x of 6" were
    about 900 px above the slider a reader drags. The heading, the ring and the sentence are the
    drawing's last part, and the step's slider is the first control, right under them."""
    svg = ET.fromstring(render(p=p, step=1, _width=340)["svg"])
    height = float(svg.get("height"))
    head = next(e for e in svg.iter(SVG + "text") if re.search(r"[Ss]tep \d+( of |/)\d+", e.text or ""))
    circles = [float(e.get("cy")) for e in svg.iter(SVG + "circle")]
    assert height - float(head.get("y")) <= 420 and height - min(circles) <= 400, (height, head.get("y"), circles)
    assert cs.PARAMS[0].name == "step"


@pytest.mark.parametrize("link", [l.name for l in specs.links()])
def test_the_links_latency_reads_as_the_whole_collectives_does(link):
    """The link readout said "0.600 µs" where the whole collective's said "600 ns latency", and a link
    without a published latency was "6 steps × 0 s latency". Latencies are round figures: two digits."""
    r = dict(render(link=link, step=10**6)["readouts"])
    lat = specs.link(link).latency_us
    if lat is None:
        assert r["Link"].endswith("latency not published") and "latency not published, taken as 0" in r["Whole collective"]
        assert "0 s" not in r["Whole collective"]
    else:
        shown = fmt.si(lat * 1e-6, "s", sig=2)
        assert r["Link"].endswith(f", {shown} latency") and f"× {shown} latency" in r["Whole collective"], r


def test_the_whole_collective_includes_ncclss_base_latency_once():
    """#47: the stepper's whole collective left out the 6.6 µs the chapter's model includes (227
    against about 234 µs for 64 MiB on 4 GPUs over NVLink 4)."""
    link = specs.link("nvlink4")
    end = dict(render(p=4, size=64 * 1024, step=10**6)["readouts"])
    t = collectives.nccl_time_s("all-reduce", "ring", 4, 64 * 2**20, link)
    assert t > collectives.time_s("all-reduce", "ring", 4, 64 * 2**20, link) + 6e-6
    assert end["Whole collective"].startswith(fmt.duration(t)) and "6.6 µs once" in end["Whole collective"]
    assert end["Time so far"] == fmt.duration(t)
