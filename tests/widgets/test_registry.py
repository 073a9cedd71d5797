"""The widget contract: PARAMS, coercion, static HTML."""
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import widgets


@pytest.mark.parametrize("name", widgets.NAMES)
def test_params_have_labels_and_defaults_in_range(name):
    for p in widgets.get(name).PARAMS:
        assert p.label.strip(), p.name
        assert p.coerce(p.default) == p.default, p.name
        if p.type == "choice":
            assert p.default in [v for v, _ in p.options]
        if p.min is not None:
            assert p.min <= p.default <= p.max


@pytest.mark.parametrize("name", widgets.NAMES)
def test_render_returns_accessible_svg_and_readouts(name):
    result = widgets.render(name, {})
    svg = ET.fromstring(result["svg"])
    assert svg.get("role") == "img"
    assert svg[0].tag.endswith("title") and svg[0].text
    assert "fill=\"#" not in result["svg"]          # colours come from CSS classes
    assert all(len(r) == 2 and all(isinstance(x, str) for x in r) for r in result["readouts"])


def test_coerce_types_clamps_and_falls_back():
    p = widgets.coerce("roofline", {"size": "99999999", "sparse": "true", "device": "nope", "dtype": "fp8"})
    assert p["size"] == 65536 and p["sparse"] is True and p["device"] == "h100-sxm" and p["dtype"] == "fp8"


def test_render_json_reports_errors_instead_of_raising():
    assert "error" in json.loads(widgets.render_json("roofline", "not json"))


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


@pytest.mark.parametrize("name", widgets.NAMES)
def test_static_html_has_figure_controls_status(name):
    parser = _Collect()
    parser.feed(widgets.static_html(name, {}, "A <em>caption</em>"))
    tag, root = parser.tags[0]
    assert tag == "div" and root["data-widget"] == name and root["data-state"] == "static"
    spec = json.loads(root["data-spec"])
    assert [s["name"] for s in spec] == [p.name for p in widgets.get(name).PARAMS]
    assert json.loads(root["data-params"]) == widgets.render(name, {})["params"]
    named = {a["name"] for t, a in parser.tags if t in ("input", "select") and "name" in a}
    assert named == {p.name for p in widgets.get(name).PARAMS}
    assert any(a.get("role") == "status" for _, a in parser.tags)
    assert ("fieldset", {"disabled": None}) in parser.tags
    assert any(t == "figcaption" for t, _ in parser.tags)


def test_standalone_svg_carries_print_styles():
    svg = ET.fromstring(widgets.standalone_svg("roofline").split("?>", 1)[1])
    assert svg.find("{http://www.w3.org/2000/svg}style") is not None


def test_cli_renders_html(capsys):
    from widgets.__main__ import main
    assert main(["render", "blockgrid", "--params", '{"block_z": 128}', "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "blockDim.z" in out["message"]


@pytest.mark.parametrize("width", [300, 360, 640, 900])
@pytest.mark.parametrize("name", widgets.NAMES)
def test_every_label_stays_inside_the_figure(name, width):
    """SVG text does not wrap: a label longer than its room runs off the figure (it did on phones).
    Widths are estimated at half an em per character, a little under the fonts' average."""
    for case in widgets.states(name):
        svg = ET.fromstring(widgets.render(name, {**case, "_width": width})["svg"])
        view_w = float(svg.get("viewBox").split()[2])
        for el in svg.iter("{http://www.w3.org/2000/svg}text"):
            content = "".join(el.itertext())
            size = 11.5 if "wg-small" in (el.get("class") or "") else 13
            w = 0.5 * size * len(content)
            x = float(el.get("x"))
            lo, hi = {"start": (x, x + w), "end": (x - w, x), "middle": (x - w / 2, x + w / 2)}[el.get("text-anchor", "start")]
            assert -2 <= lo and hi <= view_w + 2, (name, case, width, content)


def test_the_browser_runtime_imports_no_html_module():
    """A cold page waits for ``import widgets`` (and every widget's first render); the ``html``
    module would load its 100 kB entity table for one unescape. Summaries from a figure's <desc>
    still read as text."""
    import subprocess
    import sys
    code = ("import sys, widgets\n"
            "for n in widgets.NAMES: widgets.render(n, {})\n"
            "print(sorted(m for m in sys.modules if m == 'html' or m.startswith('html.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(widgets.__file__).parents[1])).stdout
    assert out.strip() == "[]"
    from widgets._svg import esc, unesc
    for text in ("a & b < c > d \"q\" 'x'", "&lt; as written", "&amp;lt;"):
        assert unesc(esc(text)) == text


MODULE_NAME = re.compile(r"\b(calc|widgets|bookbuild|bookfigs)\.[a-z_]+")


@pytest.mark.parametrize("name", widgets.NAMES)
def test_reader_text_names_no_module(name):
    """Issue #47: "calc.collectives has no tree all-to-all", a readout "Each GPU sends
    (calc.collectives)". What a reader sees (the figure's text, its readouts, message, summary and
    control labels) never names a module of the project, in any of the widget's states."""
    found = set()
    labels = [p.label for p in widgets.get(name).PARAMS] + [
        label for p in widgets.get(name).PARAMS if p.type == "choice" for _, label in p.options]
    for state in widgets.states(name):
        r = widgets.render(name, state)
        texts = ["".join(ET.fromstring(r["svg"]).itertext()), r.get("message") or "", r.get("summary") or "",
                 *(k + " " + v for k, v in r["readouts"])]
        found |= {m.group(0) for t in texts for m in MODULE_NAME.finditer(t)}
    found |= {m.group(0) for t in labels for m in MODULE_NAME.finditer(t)}
    assert not found, found
