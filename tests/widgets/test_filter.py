"""filters/widget.lua under real pandoc: HTML gets the live widget, typst a figure + table."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pypandoc

ROOT = Path(__file__).resolve().parents[2]
FILTER = ROOT / "filters" / "widget.lua"
SOURCE = """# Roofline

::: {.widget name="roofline" device="a100-sxm-80gb" size="1024"}
The roofline of an **A100**.
:::

::: {#fig-grid .widget name="blockgrid" block_z="128"}
:::

::: note
Not a widget.
:::
"""


def pandoc(tmp_path, to, *extra):
    src = tmp_path / "in.md"
    # in print every widget is a numbered figure (test_print_needs_a_figure_id)
    src.write_text(SOURCE if to == "html" else SOURCE.replace("{.widget", "{#fig-roof .widget"))
    env = {**os.environ, "BOOK_PYTHON": sys.executable}
    return subprocess.run([pypandoc.get_pandoc_path(), str(src), "--lua-filter", str(FILTER), "-t", to, *extra],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout


class Widgets(HTMLParser):
    def __init__(self):
        super().__init__()
        self.roots, self.captions, self.depth, self.in_caption = [], [], 0, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-widget" in a:
            self.roots.append(a)
        if tag == "figcaption":
            self.in_caption = True
            self.captions.append("")

    def handle_endtag(self, tag):
        if tag == "figcaption":
            self.in_caption = False

    def handle_data(self, data):
        if self.in_caption:
            self.captions[-1] += data


def test_html_gets_static_widget_with_params_and_caption(tmp_path):
    parser = Widgets()
    parser.feed(pandoc(tmp_path, "html"))
    assert [r["data-widget"] for r in parser.roots] == ["roofline", "blockgrid"]
    params = json.loads(parser.roots[0]["data-params"])
    assert params["device"] == "a100-sxm-80gb" and params["size"] == 1024
    assert json.loads(parser.roots[1]["data-params"])["block_z"] == 128
    assert parser.captions == ["The roofline of an A100."]


def test_typst_gets_svg_figure_and_readout_table(tmp_path):
    out = pandoc(tmp_path, "typst", "--extract-media=media")
    assert out.count("#figure(image(") == 2 and "table.header([Readout], [Value]" in out
    assert "[Arithmetic intensity], [341 FLOP/B]" in out
    assert "blockDim.z = 128 exceeds" in out
    svgs = sorted((tmp_path / "media").glob("widget-*.svg"))
    assert [p.name for p in svgs] == ["widget-blockgrid-2.svg", "widget-roofline-1.svg"]
    for p in svgs:
        ET.parse(p)
    assert "<fig-grid>" in out


def test_other_divs_untouched(tmp_path):
    assert '<div class="note">' in pandoc(tmp_path, "html")


def test_animation_prints_key_frames_side_by_side(tmp_path):
    src = tmp_path / "anim.md"
    src.write_text('::: {#fig-sa .widget name="steps" animation="systolic" rows="2" cols="2" depth="2"}\n'
                   "A systolic array.\n:::\n")
    env = {**os.environ, "BOOK_PYTHON": sys.executable}
    out = subprocess.run([pypandoc.get_pandoc_path(), str(src), "--lua-filter", str(FILTER), "-t", "typst",
                          "--extract-media=media"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True).stdout
    frames = sorted(p.name for p in (tmp_path / "media").glob("widget-steps-*.svg"))
    assert frames == ["widget-steps-1-step1.svg", "widget-steps-1-step2.svg", "widget-steps-1-step4.svg"]
    assert out.count("image(") == 3 and "<fig-sa>" in out
    assert "[Result equals A·B], [yes]" in out          # readouts of the last key frame
    for p in (tmp_path / "media").glob("*.svg"):
        n = p.stem.rsplit("step", 1)[1]
        assert f">Step {n} of 4." in p.read_text()     # each frame says which step it is


def run_filter(tmp_path, source, to):
    src = tmp_path / "w.md"
    src.write_text(source)
    env = {**os.environ, "BOOK_PYTHON": sys.executable}
    return subprocess.run([pypandoc.get_pandoc_path(), str(src), "--lua-filter", str(FILTER), "-t", to,
                           "--extract-media=media"], cwd=tmp_path, env=env, capture_output=True, text=True)


def test_print_needs_a_figure_id(tmp_path):
    """Print and EPUB number every widget figure (#34: the memory budget printed unnumbered): a
    widget without #fig-… stops a print build, naming the widget."""
    done = run_filter(tmp_path, '::: {.widget name="memory-budget"}\nA budget.\n:::\n', "typst")
    assert done.returncode != 0 and 'widget "memory-budget" needs a figure id' in done.stderr
    assert run_filter(tmp_path, '::: {.widget name="memory-budget"}\nA budget.\n:::\n', "html").returncode == 0


def test_print_states_each_have_their_readouts_and_real_alt_text(tmp_path):
    """A widget printed as a few states (the memory budget): the readout table has a column per
    state, headed by its label, and each drawing's alt text says what it shows, not just "As set"."""
    done = run_filter(tmp_path, '::: {#fig-mb .widget name="memory-budget"}\nA budget.\n:::\n', "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    images, tables = [], []

    def walk(x):
        if isinstance(x, dict):
            if x.get("t") == "Image":
                images.append(x["c"][1])
            if x.get("t") == "Table":
                tables.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc["blocks"])
    alts = ["".join(i["c"] if i["t"] == "Str" else " " for i in alt) for alt in images]
    assert len(alts) >= 2
    for alt in alts:
        assert len(alt) > 40 and "GiB" in alt, alt
    [table] = tables
    header = table["c"][3][1][0][1]                    # TableHead: attr, rows; a row: attr, cells
    assert len(header) == 1 + len(alts)
