"""benchmarks/prose_stats.py's worked computations (issue #43): arithmetic shown in running prose
counts, a sentence's words between numbers do not, and a problem's worked answer counts apart from
the prose (the issue asks for five in the prose besides the problems)."""
from __future__ import annotations

import sys
from pathlib import Path

from bs4 import BeautifulSoup

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import prose_stats  # noqa: E402

PAGE = """<main><section class="level1"><h1>t</h1>
<p>The ridge is 989 TFLOP/s / 3.35 TB/s ≈ 295 FLOP/byte, and 2 × 64 / 2 ≈ 64.</p>
<p>A 128 × 128 array and M = 511 rows: no arithmetic is shown here.</p>
<p>About 300, a bare result.</p>
<div class="problem"><div class="problem-worked"><ol><li>132 SMs × 8 = 1,056 blocks</li></ol></div></div>
</section></main>"""


def test_prose_and_problems_are_counted_apart_and_words_are_no_units():
    section = BeautifulSoup(PAGE, "html.parser").find("section")
    assert prose_stats.worked_computations(section) == 2
    assert prose_stats.worked_computations(section, problems=True) == 1
