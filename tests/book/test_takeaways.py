"""A chapter's rules stand in bold Takeaway boxes (issue #43: "its rules in bold takeaways before the
section that uses them"): on the built page every `.takeaway` box of every chapter holds its rule in
bold, and every chapter from the roofline on has at least one such box before its Problems."""
from __future__ import annotations

from bs4 import BeautifulSoup

from bookbuild.project import config

FROM_ROOFLINE = ("roofline", "gpu", "cuda-threads", "attention", "tiling-systolic", "serving", "communication")


def _takeaways(html: str):
    main = BeautifulSoup(html, "html.parser").find("main")
    return main.select(".callout.takeaway")


def test_every_takeaway_states_its_rule_in_bold(built_book):
    cfg = config.load(built_book.parent)
    plain, counts = [], {}
    for ch in cfg.chapters:
        if ch.source.parts[0] != "chapters":
            continue
        boxes = _takeaways((built_book / ch.source.with_suffix(".html")).read_text(encoding="utf-8"))
        counts[ch.source.stem] = len(boxes)
        for box in boxes:
            body = box.select_one(".callout-body") or box
            if not body.find("strong"):
                plain.append(f"{ch.source.stem}: {' '.join(body.get_text(' ').split())[:80]}")
    assert plain == [], "Takeaways without a rule in bold:\n" + "\n".join(plain)
    assert all(counts.get(name, 0) >= 1 for name in FROM_ROOFLINE), counts
