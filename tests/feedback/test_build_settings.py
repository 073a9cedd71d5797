"""What the build tells the reader's control (bookbuild.html.site.feedback_settings) and the page's
"Last changed" date (last_changed)."""

from pathlib import Path

import pytest

from bookbuild.project.config import BookConfig
from bookbuild.html.site import feedback_settings, last_changed

REPO = Path(__file__).resolve().parents[2]


def cfg(feedback=None, repo_url="https://github.com/example/book", root=REPO):
    raw = {} if feedback is None else {"feedback": feedback}
    return BookConfig(root=root, title="T", author=[], chapters=[], raw=raw, repo_url=repo_url)


def test_no_settings_means_the_issue_link_of_the_repository():
    assert feedback_settings(cfg()) == {"issue-url": "https://github.com/example/book/issues/new"}


def test_nothing_configured_and_no_repository_means_no_control():
    assert feedback_settings(cfg(repo_url=None)) == {}


def test_endpoint_keeps_the_issue_link_as_the_fallback_route_unless_turned_off():
    assert feedback_settings(cfg({"endpoint": "/api/feedback"})) == {
        "endpoint": "/api/feedback", "issue-url": "https://github.com/example/book/issues/new"}
    assert feedback_settings(cfg({"endpoint": "/api/feedback", "issue-url": False, "email": "a@example.org"})) == {
        "endpoint": "/api/feedback", "email": "a@example.org"}


@pytest.mark.parametrize("bad, message", [({"endpiont": "/api"}, "unknown key\\(s\\) endpiont"),
                                          ("/api/feedback", "must be a mapping")])
def test_a_mistake_in_the_settings_is_a_clear_error(bad, message):
    with pytest.raises(ValueError, match=f"_quarto.yml: feedback: {message}"):
        feedback_settings(cfg(bad))


def test_last_changed_is_the_date_of_the_last_commit_and_none_outside_git(tmp_path):
    date = last_changed(cfg(), "_quarto.yml")
    assert date is not None and len(date) == 10 and date[4] == date[7] == "-"
    assert last_changed(cfg(), "no/such/file.qmd") is None
    (tmp_path / "a.qmd").write_text("# A\n")
    assert last_changed(cfg(root=tmp_path), "a.qmd") is None
