"""filters/widget.lua under real pandoc: HTML gets the live widget, typst a figure + table."""
import json
import re
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import shutil

import pypandoc

ROOT = Path(__file__).resolve().parents[2]


def project(tmp_path: Path) -> Path:
    """A project folder holding copies of the filter and project.lua (the filter writes its static
    figures under the project, so tests keep them in tmp_path); widgets and calc come from ROOT."""
    (tmp_path / "filters").mkdir(exist_ok=True)
    for name in ("widget.lua", "project.lua"):
        shutil.copy(ROOT / "filters" / name, tmp_path / "filters" / name)
    return tmp_path / "filters" / "widget.lua"


def run_env() -> dict:
    return {**os.environ, "BOOK_PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
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
    return subprocess.run([pypandoc.get_pandoc_path(), str(src), "--lua-filter", str(project(tmp_path)), "-t", to,
                           *extra], cwd=tmp_path, env=run_env(), capture_output=True, text=True, check=True).stdout


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
    # real files under the project, named by widget and content, referred to from the project root
    files = sorted(p.name for p in (tmp_path / ".bookcache" / "widget-figures").glob("*.svg"))
    assert [f.rsplit("-", 1)[0] for f in files] == ["widget-blockgrid", "widget-roofline"]
    for f in files:
        ET.parse(tmp_path / ".bookcache" / "widget-figures" / f)
    svgs = sorted((tmp_path / "media").glob("*.svg"))        # and the same bytes in the mediabag
    assert sorted(p.read_bytes() for p in svgs) == sorted(
        (tmp_path / ".bookcache" / "widget-figures" / f).read_bytes() for f in files)
    assert "<fig-grid>" in out


def test_other_divs_untouched(tmp_path):
    assert '<div class="note">' in pandoc(tmp_path, "html")


def test_animation_prints_key_frames_side_by_side(tmp_path):
    src = tmp_path / "anim.md"
    src.write_text('::: {#fig-sa .widget name="steps" animation="systolic" rows="2" cols="2" depth="2"}\n'
                   "A systolic array.\n:::\n")
    out = subprocess.run([pypandoc.get_pandoc_path(), str(src), "--lua-filter", str(project(tmp_path)), "-t", "typst",
                          "--extract-media=media"], cwd=tmp_path, env=run_env(), capture_output=True, text=True,
                         check=True).stdout
    figures = tmp_path / ".bookcache" / "widget-figures"
    frames = sorted(p.name.rsplit("-", 1)[0] for p in figures.glob("widget-steps-*.svg"))
    assert frames == ["widget-steps-step1", "widget-steps-step2", "widget-steps-step4"]
    assert out.count("image(") == 3 and "<fig-sa>" in out
    assert "[Result equals A·B], [yes]" in out          # readouts of the last key frame
    for p in figures.glob("*.svg"):
        n = p.name.rsplit("-", 1)[0].rsplit("step", 1)[1]
        assert f">Step {n} of 4." in p.read_text()     # each frame says which step it is


# Quarto renders a book's PDF from one merged document, with this filter at pre-ast, and then
# its quarto-init resourceRefs filter (src/resources/filters/quarto-init/resourcerefs.lua) passes
# every Image's src through resourceRef (src/resources/filters/common/paths.lua), with the
# chapter's folder as resourceDir; at the end its mediabag filter (quarto-finalize/mediabag.lua)
# writes an image out only if its (prefixed) src still names a mediabag entry.  The same steps in
# Lua, so the filter's output can be checked the way Quarto resolves it:
QUARTO_PATHS = r'''
local function is_relative(ref)
  return ref:find("^/") == nil and ref:find("^%a+://") == nil and ref:find("^data:") == nil
         and ref:find("^#") == nil
end
local function resource_ref(ref, dir)          -- paths.lua, resourceRef
  if ref:find("^/") then
    if ref:find("^//") == nil then return ref:sub(2) end
    return ref
  elseif is_relative(ref) then
    if dir == "." then return ref end
    return dir .. "/" .. ref
  end
  return ref
end
return {
  { Image = function(el) el.src = resource_ref(el.src, "chapters"); return el end },
  { Image = function(el)                       -- quarto-finalize/mediabag.lua
      local mime, contents = pandoc.mediabag.lookup(el.src)
      if contents then
        local out = "index_files/mediabag/" .. el.src
        pandoc.system.make_directory(pandoc.path.directory(out), true)
        local f = io.open(out, "wb"); f:write(contents); f:close()
        el.src = out
        return el
      end
    end },
}
'''


def test_quarto_book_typst_finds_every_widget_figure(tmp_path):
    """The merged index.typ of Quarto's book PDF sits at the project root and names each figure
    by the path resourceRef gave it: every one must exist there, and typst must compile it (before
    issue #33 it named chapters/widget-roofline-1.svg, which nothing wrote)."""
    import typst
    flt = project(tmp_path)
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "a.md").write_text(
        SOURCE.replace("{.widget", "{#fig-roof .widget") + '\n::: {#fig-sa .widget name="steps" animation="systolic" rows="2" cols="2" depth="2"}\n'
                 "A systolic array.\n:::\n")
    (tmp_path / "quarto-paths.lua").write_text(QUARTO_PATHS)
    subprocess.run([pypandoc.get_pandoc_path(), "chapters/a.md", "--lua-filter", str(flt), "--lua-filter",
                    "quarto-paths.lua", "-t", "typst", "-s", "-o", "index.typ"], cwd=tmp_path, env=run_env(),
                   capture_output=True, text=True, check=True)
    typ = (tmp_path / "index.typ").read_text()
    paths = re.findall(r'image\("([^"]+)"', typ)
    assert len(paths) == 5                                 # two figures and three key frames
    for p in paths:
        assert not p.startswith(("/", "chapters/")), p
        ET.parse(tmp_path / p)                             # a real SVG where index.typ looks
    typst.compile(str(tmp_path / "index.typ"), output=str(tmp_path / "index.pdf"), root=str(tmp_path))
    assert (tmp_path / "index.pdf").read_bytes().startswith(b"%PDF")


def run_filter(tmp_path, source, to):
    src = tmp_path / "w.md"
    src.write_text(source)
    return subprocess.run([pypandoc.get_pandoc_path(), str(src), "--lua-filter", str(project(tmp_path)), "-t", to,
                           "--extract-media=media"], cwd=tmp_path, env=run_env(), capture_output=True, text=True)


def test_print_needs_a_figure_id(tmp_path):
    """Print and EPUB number every widget figure (#34: the memory budget printed unnumbered): a
    widget without #fig-… stops a print build, naming the widget."""
    done = run_filter(tmp_path, '::: {.widget name="memory-budget"}\nA budget.\n:::\n', "typst")
    assert done.returncode != 0 and 'widget "memory-budget" needs a figure id' in done.stderr
    assert run_filter(tmp_path, '::: {.widget name="memory-budget"}\nA budget.\n:::\n', "html").returncode == 0


def test_print_key_frames_say_what_each_frame_shows(tmp_path):
    """An animation printed as key frames (the online softmax): each frame's alt text is that step's
    summary in words (its block, running maximum and sum), not "Step 4"."""
    done = run_filter(tmp_path, '::: {#fig-os .widget name="steps" animation="online-softmax"}\nSteps.\n:::\n',
                      "json")
    assert done.returncode == 0, done.stderr
    images = []

    def walk(x):
        if isinstance(x, dict):
            if x.get("t") == "Image":
                images.append(x["c"][1])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(json.loads(done.stdout)["blocks"])
    alts = ["".join(i["c"] if i["t"] == "Str" else " " for i in alt) for alt in images]
    assert len(alts) >= 2
    for alt in alts:
        assert re.match(r"Step \d+ of \d+\. Block \d+ of \d+", alt) and "ℓ =" in alt, alt


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
