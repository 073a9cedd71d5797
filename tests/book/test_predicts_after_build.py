"""The book's Predicts against what its cells made, read from the test build's execution cache as
`bookbuild check` reads it (bookbuild/teaching_rules.py, predict_answered_by_output): a check of
the real book that runs even where the clone itself was never built."""
from __future__ import annotations

from bookbuild import teaching_rules
from bookbuild.execute.run import seen_from_cache
from bookbuild.project import config


def test_no_predict_is_answered_above_it_by_what_the_cells_made(built_book):
    root = built_book.parent
    cfg = config.load(root)
    pages = [(ch.source.as_posix(), seen_from_cache(cfg, ch, (root / ch.source).read_text(encoding="utf-8")))
             for ch in cfg.chapters]
    assert [source for source, seen in pages if seen is None] == [], "every page's recorded run is read"
    found = [f"{path.relative_to(root)}:{line}: {message}"
             for path, line, message in teaching_rules.predict_answered_by_output(root, pages)]
    assert found == []
