"""Step animations: one frame per step of calc's frame generators, keys, key frames for print."""
import json
import math
import xml.etree.ElementTree as ET

import pytest

import widgets
from calc import attention, systolic, tiling
from widgets import steps


def render(**params):
    return widgets.render("steps", params)


@pytest.mark.parametrize("params, count", [
    ({"animation": "tiled-matmul", "m": 5, "n": 7, "k": 4, "tile": 3}, len(list(tiling.frames(5, 7, 4, 3)))),
    ({"animation": "systolic", "rows": 2, "cols": 4, "depth": 3}, 3 + 2 + 4 - 2),
    ({"animation": "online-softmax", "length": 10, "block": 4}, 3),
])
def test_one_step_per_calc_frame_and_the_step_is_clamped(params, count):
    r = render(**params, step=10**6)
    assert r["ranges"] == {"step": [1, count]} and r["params"]["step"] == count
    assert dict(r["readouts"])["Step"] == f"{count} of {count}"
    html = widgets.static_html("steps", {**params, "step": 2})
    assert f'name="step" value="2" min="1" max="{count}"' in html


def test_tiled_step_shows_calcs_frame():
    frames = list(tiling.frames(6, 6, 4, 2))
    r = dict(render(animation="tiled-matmul", m=6, n=6, k=4, tile=2, step=8)["readouts"])
    f = frames[7]
    assert r["Output tile"].startswith(f"({f['tile'][0]}, {f['tile'][1]})")
    assert r["Phase"] == f"{f['phase'] + 1} of 2"
    assert r["Elements loaded so far"].startswith(f"{f['loads_so_far']} of {tiling.tiled_global_loads(6, 6, 4, 2)}")


def test_systolic_last_step_holds_the_product():
    A, B = steps.operands(3, 4, 2)
    last = list(systolic.frames(A, B))[-1]
    r = render(animation="systolic", rows=3, depth=4, cols=2, step=10**6)
    assert dict(r["readouts"])["Result equals A·B"] == "yes"
    svg = r["svg"]
    for row in last["acc"]:
        for v in row:
            assert f">{v:g}</text>" in svg


def test_systolic_cycles_count_from_zero_like_the_chapter():
    # The chapter's text and printed frames say "cycle 4: 6 of 9 PEs busy" for the 3×3×3 demo;
    # the widget's step 5 is that same cycle 4 (the step slider counts from 1, cycles from 0).
    A, B = steps.operands(3, 3, 3)
    frames = list(systolic.frames(A, B))
    f = frames[4]
    assert f["cycle"] == 4 and len(f["active"]) == 6
    r = render(animation="systolic", rows=3, cols=3, depth=3, step=5)
    readouts = dict(r["readouts"])
    assert readouts["Step"] == "5 of 7"
    assert readouts["Cycle (from 0)"] == "4 of 0–6 (last: K + R + C − 3)"
    assert readouts["Busy PEs this cycle"] == "6 of 9"
    desc = ET.fromstring(r["svg"]).find("{http://www.w3.org/2000/svg}desc").text
    assert desc == "Step 5 of 7. Cycle 4 (of 0–6): 6 of 9 processing elements multiply-accumulate."
    first = dict(render(animation="systolic", rows=3, cols=3, depth=3, step=1)["readouts"])
    assert first["Cycle (from 0)"].startswith("0 of 0–6") and first["Busy PEs this cycle"] == "1 of 9"


def test_online_softmax_state_is_calcs():
    row = steps.softmax_input(12, 4)
    s = attention.online_softmax_steps(row, 3)
    r = dict(render(animation="online-softmax", length=12, block=3, seed=4, step=2)["readouts"])
    from calc import fmt
    assert r["Running maximum m"] == fmt.num(s[1].m, 4) and r["Running sum ℓ"] == fmt.num(s[1].l, 4)
    final = dict(render(animation="online-softmax", length=12, block=3, seed=4, step=4)["readouts"])
    assert float(final["exp(x − m)/ℓ vs two-pass softmax"].split()[-1]) < 1e-15


def test_figure_takes_arrow_keys_and_announces_each_step():
    svg = ET.fromstring(render()["svg"])
    keys = json.loads(svg.get("data-keys"))
    assert keys["ArrowRight"] == {"step": 1} and keys["ArrowLeft"] == {"step": -1}
    assert "data-live" in svg.attrib and svg.find("{http://www.w3.org/2000/svg}desc").text


def test_play_button_and_hidden_controls_in_static_html():
    html = widgets.static_html("steps", {"animation": "systolic"})
    assert 'class="wc-play" data-play="step"' in html
    assert "data-when='{&quot;animation&quot;:[&quot;tiled-matmul&quot;]}' hidden" in html
    assert "data-when='{&quot;animation&quot;:[&quot;systolic&quot;]}' class" in html


def test_key_frames_first_middle_last():
    p = widgets.render("steps", {"animation": "systolic"})["params"]
    assert steps.key_frames(p) == [1, 4, 7]
    assert steps.key_frames({**p, "rows": 1, "cols": 1, "depth": 1}) == [1]


@pytest.mark.parametrize("animation", ["tiled-matmul", "systolic", "online-softmax"])
@pytest.mark.parametrize("width", [300, 360, 640])
def test_every_animation_fits_its_width(animation, width):
    for step in (1, 10**6):
        svg = ET.fromstring(render(animation=animation, step=step, _width=width)["svg"])
        assert float(svg.get("width")) <= width
        xs = [float(el.get("x")) for el in svg.iter() if el.get("x") is not None]
        assert max(xs) < width and min(xs) >= 0
        assert not math.isnan(float(svg.get("height")))


@pytest.mark.parametrize("animation", ["tiled-matmul", "systolic", "online-softmax"])
def test_text_stays_inside_a_phone_width_figure(animation):
    from widgets._svg import text_width
    for step in (1, 10**6):
        svg = ET.fromstring(render(animation=animation, step=step, _width=320)["svg"])
        for el in svg.iter("{http://www.w3.org/2000/svg}text"):
            if el.get("text-anchor") in (None, "start"):
                size = 11.5 if "wg-small" in (el.get("class") or "") else 13
                assert float(el.get("x")) + text_width(el.text, size) <= 320 + 8, el.text


SIZES = {"tiled-matmul": [{"m": m, "n": n, "k": k, "tile": t} for m in (1, 6, 12) for n in (1, 12) for k in (1, 4, 12)
                          for t in (1, 2, 6)],
         "systolic": [{"rows": r, "cols": c, "depth": d} for r in (1, 3, 6) for c in (1, 6) for d in (1, 3, 6)],
         "online-softmax": [{"length": n, "block": b, "seed": s} for n in (1, 12, 24) for b in (1, 3, 12) for s in (0, 4, 9999)]}


@pytest.mark.parametrize("animation", ["tiled-matmul", "systolic", "online-softmax"])
@pytest.mark.parametrize("width", [300, 340, 640])
def test_the_figure_is_as_tall_whatever_the_sizes_and_step(animation, width):
    """The controls sit under the figure: M from 1 to 12 grew the tiled figure from 291 to 507 px
    on a phone and moved the slider under the reader's finger by as much."""
    heights = {ET.fromstring(render(animation=animation, step=step, _width=width, **sizes)["svg"]).get("height")
               for sizes in SIZES[animation] for step in (1, 2, 10**6)}
    assert len(heights) == 1, heights


def test_a_small_processing_element_leaves_out_the_product_that_would_cover_its_sum():
    big = ET.fromstring(render(animation="systolic", step=2, _width=640)["svg"])
    small = ET.fromstring(render(animation="systolic", rows=6, cols=6, depth=6, step=6, _width=340)["svg"])
    texts = lambda svg: [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert any(t.startswith("+") for t in texts(big))
    assert not any(t.startswith("+") for t in texts(small))
