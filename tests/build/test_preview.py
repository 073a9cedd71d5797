"""`bookbuild preview` serves the site, rebuilds on save and tells the browser to reload."""
import queue
import threading
import urllib.request

import pytest

from bookbuild.preview import EVENTS, serve


@pytest.fixture
def preview(fixture_book):
    stop, ready, logs = threading.Event(), queue.Queue(), []
    t = threading.Thread(target=serve, args=(fixture_book, "127.0.0.1", 0),
                         kwargs={"stop": stop, "log": logs.append, "on_ready": ready.put}, daemon=True)
    t.start()
    url = ready.get(timeout=120)
    yield fixture_book, url, logs
    stop.set()
    t.join(timeout=30)


def events(url):
    """A reader of the server-sent event stream: yields (event, data) pairs."""
    resp = urllib.request.urlopen(url + EVENTS.lstrip("/"), timeout=60)
    event = None
    for raw in resp:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event:
            yield event, line[6:]
            event = None


def test_serves_pages_with_the_reload_client(preview):
    _, url, _ = preview
    page = urllib.request.urlopen(url + "chapters/two.html")
    html = page.read().decode()
    assert "Chapter two" in html and EVENTS in html
    style = urllib.request.urlopen(url + "assets/css/book.css")
    assert EVENTS not in style.read().decode()
    # cross-origin isolated, as under serve --site: an exercise's Stop keeps Python
    for res in (page, style):
        assert res.headers["Cross-Origin-Opener-Policy"] == "same-origin"
        assert res.headers["Cross-Origin-Embedder-Policy"] == "require-corp"


def test_save_rebuilds_the_changed_chapter_and_reloads(preview):
    root, url, logs = preview
    stream = events(url)
    (root / "chapters/two.qmd").write_text(
        (root / "chapters/two.qmd").read_text().replace("Mind the units.", "Mind the bytes."))
    assert next(stream)[0] == "reload"
    assert "Mind the bytes." in urllib.request.urlopen(url + "chapters/two.html").read().decode()
    assert any("rebuilt" in line and "chapters/two.qmd" in line for line in logs)
    last = [line for line in logs if line.startswith("rebuilt")][-1]
    assert "chapters/two.qmd" in last and "chapters/one.qmd" not in last


def test_a_broken_save_shows_the_error_and_keeps_serving(preview):
    root, url, _ = preview
    stream = events(url)
    (root / "chapters/two.qmd").write_text((root / "chapters/two.qmd").read_text() + "\nSee @fig-nowhere.\n")
    event, data = next(stream)
    assert event == "error-report" and "chapters/two.qmd" in data and "fig-nowhere" in data
    assert urllib.request.urlopen(url + "chapters/two.html").status == 200
