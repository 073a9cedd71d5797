"""filters/prerequisites.lua under real pandoc: "Builds on" references in the learning goals."""
import json
import subprocess

import pypandoc
import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILTER = ROOT / "filters" / "prerequisites.lua"


def run(tmp_path, front, body):
    src = tmp_path / "in.md"
    src.write_text(f"---\n{front}\n---\n\n# A chapter {{#sec-here}}\n\n{body}")
    done = subprocess.run([pypandoc.get_pandoc_path(), str(src), "--lua-filter", str(FILTER), "-t", "json"],
                          cwd=tmp_path, capture_output=True, text=True)
    return done, (json.loads(done.stdout) if done.returncode == 0 else None)


def cites(block):
    return [c["c"][0][0]["citationId"] for c in block["c"] if c["t"] == "Cite"]


def test_builds_on_goes_at_the_end_of_the_learning_goals(tmp_path):
    done, doc = run(tmp_path, "prerequisites: [chapters/roofline.qmd, chapters/gpu.qmd]",
                    '::: {.callout-note title="Learning goals"}\nGoals.\n:::\n\nText.\n')
    goals = next(b for b in doc["blocks"] if b["t"] == "Div")
    last = goals["c"][1][-1]
    assert cites(last) == ["sec-roofline", "sec-gpu"]
    words = pypandoc.convert_text(json.dumps({**doc, "blocks": [last]}), "plain", format="json").split()
    assert words[:2] == ["Builds", "on"] and "(Inside" in words and words[-1].endswith(").")


def test_without_learning_goals_it_follows_the_title_and_none_means_nothing(tmp_path):
    _, doc = run(tmp_path, "prerequisites: [chapters/data-movement.qmd]", "Text.\n")
    assert doc["blocks"][0]["t"] == "Header" and cites(doc["blocks"][1]) == ["sec-data-movement"]
    _, doc = run(tmp_path, "prerequisites: []", "Text.\n")
    assert [b["t"] for b in doc["blocks"]] == ["Header", "Para"]


def test_a_missing_prerequisite_stops_the_build(tmp_path):
    done, _ = run(tmp_path, "prerequisites: [chapters/nowhere.qmd]", "Text.\n")
    assert done.returncode != 0 and "prerequisite chapters/nowhere.qmd does not exist" in done.stderr
