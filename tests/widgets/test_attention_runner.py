"""Attention runner: the kernels of calc.kernels, their output and the check against the reference."""
import json
import xml.etree.ElementTree as ET

import pytest

import widgets
from calc import kernels


def render(**params):
    return widgets.render("attention-runner", params)


@pytest.mark.parametrize("kernel", list(kernels.KERNELS))
def test_figure_carries_the_kernels_output(kernel):
    r = render(kernel=kernel, n=5, d=3, seed=7, tile=2, block_rows=2, block_cols=2)
    Q, K, V = kernels.random_inputs(5, 3, 7)
    expected = kernels.run(kernel, Q, K, V, tile=2, block_rows=2, block_cols=2)
    assert json.loads(ET.fromstring(r["svg"]).get("data-values")) == expected
    got = dict(r["readouts"])
    assert got["Kernel"].startswith(kernels.KERNELS[kernel].__name__ + "(Q, K, V")
    assert got["Agrees with the reference"].startswith("yes")
    assert r["message"] is None


def test_readouts_are_calcs_check():
    r = dict(render(kernel="flash", n=9, d=4, seed=3, block_rows=4, block_cols=2)["readouts"])
    Q, K, V = kernels.random_inputs(9, 4, 3)
    c = kernels.check(kernels.attention_flash(Q, K, V, 4, 2), Q, K, V)
    from widgets.attention_runner import sci
    assert r["max |O − O_ref|"] == sci(c.max_abs_error)
    assert r["Rows of the reference P sum to 1"] == f"max |Σ − 1| = {sci(c.max_row_sum_error)}"
    assert r["Kernel"] == "attention_flash(Q, K, V, block_rows=4, block_cols=2)"


def test_sci_never_prints_a_nonzero_error_as_zero():
    from widgets.attention_runner import sci
    assert sci(0.0) == "0" and sci(2.220446049250313e-16) == "2.2 × 10⁻¹⁶"


def test_flash_says_p_is_never_stored():
    svg = render(kernel="flash")["svg"]
    assert "never stored" in svg.lower() and "in memory" not in svg
    assert "in memory" in render(kernel="naive")["svg"]


def test_size_controls_show_only_for_their_kernel():
    naive = widgets.static_html("attention-runner", {"kernel": "naive"})
    tiled = widgets.static_html("attention-runner", {"kernel": "tiled"})
    when = "data-when='{&quot;kernel&quot;:[&quot;tiled&quot;]}'"
    assert f"{when} hidden" in naive
    assert f"{when} class" in tiled


@pytest.mark.parametrize("width", [300, 360, 640, 900])
def test_fits_its_width_at_the_largest_size(width):
    svg = ET.fromstring(render(n=16, d=8, _width=width)["svg"])
    assert float(svg.get("width")) <= width
    for el in svg.iter():
        if el.get("x") is not None:
            assert float(el.get("x")) < width, el.attrib


def test_flash_says_the_block_it_holds_when_n_is_smaller_than_the_block():
    r = render(kernel="flash", n=5, block_rows=8, block_cols=8)
    held = dict(r["readouts"])["Held besides Q, K, V, O"]
    assert "one 5×5 block" in held and "8×8 block" not in held
    assert "Never stored: 5×5 blocks" in r["svg"]
    assert "one 2×3 block" == dict(render(kernel="flash", n=6, block_rows=2, block_cols=3)["readouts"])[
        "Held besides Q, K, V, O"][-len("one 2×3 block"):]


def test_the_figure_keeps_its_height_whatever_the_kernel_n_and_d():
    """Moving N, d or the kernel never moves the controls under the figure (#34): the drawing's
    box is the tallest it needs, at both layout widths."""
    import re

    import widgets
    for width in (640, 340):
        heights = {re.search(r'viewBox="0 0 \d+ (\d+)"', widgets.render("attention-runner", {
            "kernel": k, "n": n, "d": d, "_width": width})["svg"]).group(1)
            for k in ("naive", "per-output", "tiled", "flash") for n in (1, 5, 16) for d in (1, 8)}
        assert len(heights) == 1, (width, heights)


def test_no_raw_float_in_what_a_widget_shows():
    """Every number in a widget's figure and readouts is formatted (calc.fmt), never a float's
    repr: the runner's row sums printed 0.9999999999999999 for N >= 12 (#34)."""
    import re

    import widgets
    raw = re.compile(r"\d*\.\d{13,}")
    cases = [(name, st) for name in widgets.NAMES for st in widgets.states(name)]
    cases += [("attention-runner", {"kernel": k, "n": n}) for k in ("naive", "flash") for n in range(1, 17)]
    for name, st in cases:
        for width in (640, 340):
            r = widgets.render(name, {**st, "_width": width})
            shown = re.sub(r"data-values='[^']*'", "", r["svg"]) + repr(r["readouts"]) + str(r["message"])
            assert not raw.findall(shown), (name, st, width, raw.findall(shown)[:3])


def test_a_transpose_is_drawn_as_a_real_superscript():
    """No drawn text of any widget carries U+1D40 (ᵀ), which many serif fonts lack (#34: QKᵀ drew
    as QKˢ); the runner draws QK with a superscript T."""
    import re

    import widgets
    for name in widgets.NAMES:
        for st in widgets.states(name)[:6]:
            svg = widgets.render(name, st)["svg"]
            drawn = re.sub(r"<(title|desc)>.*?</\1>", "", svg, flags=re.S)
            assert "ᵀ" not in drawn, (name, st)
    svg = widgets.render("attention-runner", {})["svg"]
    assert 'QK<tspan baseline-shift="super" font-size="75%">T</tspan>' in svg


@pytest.mark.parametrize("params", [{}, {"n": 2, "d": 2}, {"kernel": "flash"}])
def test_on_paper_the_figure_ends_where_its_drawing_does(params):
    """Issue #47: the PDF had a large gap between Figure 5.4 and its caption: the figure keeps the
    height of its tallest state (so that the controls under it never move), which paper, with no
    controls, does not need. The printed SVG ends at its drawing; the page's keeps its box."""
    import re
    import widgets
    def box(svg):
        return float(re.search(r'viewBox="[^"]+ ([\d.]+)"', svg).group(1)), float(re.search(r'<svg\b[^>]*?\sheight="([\d.]+)"', svg).group(1))
    web, paper = box(widgets.render("attention-runner", params)["svg"]), box(widgets.standalone_svg("attention-runner", params))
    drawn = widgets.render("attention-runner", params)["print_height"]
    assert paper == (drawn, drawn) and drawn <= web[0]
    ys = [float(v) for v in re.findall(r'\s(?:y|cy)="([\d.]+)"', widgets.standalone_svg("attention-runner", params))]
    assert max(ys) <= drawn, (max(ys), drawn)      # nothing drawn is cut off
