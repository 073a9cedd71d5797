"""The device probe's section (bookfigs/probe.py): its comparison is calc.specs's H100, with the
document it comes from, and it survives the trip through an HTML attribute."""
import html
import json
import re

from bookfigs import probe
from calc import specs


def test_the_comparison_is_the_datasheet_h100_fp32_with_its_source():
    c = probe.compare()
    dev = specs.device("h100-sxm")
    assert (c["fp32"], c["bw"], c["ridge"]) == (dev.peak_flops("fp32"), dev.mem_bw, dev.ridge_point("fp32"))
    assert "whitepaper" in c["source"] and "Table 1" in c["source"] and "Table 3" in c["source"]


def test_the_section_carries_it_and_asks_before_measuring():
    page = probe.section_html()
    data = re.search(r'data-compare="([^"]*)"', page).group(1)
    assert json.loads(html.unescape(data)) == json.loads(json.dumps(probe.compare()))
    assert 'data-probe="run"' in page and "Nothing is sent anywhere" in page and "15" in page
    assert probe.section_markdown().startswith("```{=html}\n") and probe.section_markdown().endswith("\n```\n")
