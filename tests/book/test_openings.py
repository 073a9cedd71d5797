"""A chapter opens with its question, not with a list (issue #43): at most
bookbuild.teaching_rules.OPENING_WORDS words before the first section heading of every chapter's
built page and of the preface, counted by teaching_rules.opening_words."""
from __future__ import annotations

import pytest

from bookbuild import teaching_rules
from bookbuild.project import config

PAGE = """<html><body><main><p class="page-meta">Not in the section</p>
<section class="level1" id="sec-a"><h1>1 A long title that is not counted</h1>
<details class="toc-inline"><summary>Contents</summary><ul><li>one two three</li></ul></details>
<p>Why is this slow? Five words here.</p>
<div class="callout"><p>Builds on chapter 2.</p></div>
<figure><svg><text>drawn label</text></svg><figcaption>Figure 1.1: a caption</figcaption></figure>
<script>var not_words = 1;</script>
<section class="level2" id="sec-a-b"><h2>First</h2><p>Words after the heading do not count.</p></section>
<p>Nor after.</p></section></main></body></html>"""


def test_counts_prose_callouts_and_captions_up_to_the_first_section():
    # "Why is this slow? Five words here." 7, "Builds on chapter 2." 4, "Figure 1.1: a caption" 4
    assert teaching_rules.opening_words(PAGE) == 15


def test_a_page_without_a_chapter_section_is_an_error():
    with pytest.raises(ValueError):
        teaching_rules.opening_words("<html><main><p>no section</p></main></html>")


def test_every_chapter_opens_in_at_most_150_words(built_book):
    cfg = config.load(built_book.parent)
    pages = [ch.source for ch in cfg.chapters if ch.source.parts[0] in ("chapters", "index.qmd")]
    assert len(pages) == 9, pages                      # the preface and eight chapters
    counts = {str(p): teaching_rules.opening_words((built_book / p.with_suffix(".html")).read_text(encoding="utf-8"))
              for p in pages}
    over = {p: n for p, n in counts.items() if n > teaching_rules.OPENING_WORDS}
    assert over == {}, f"words before the first section: {counts}"
