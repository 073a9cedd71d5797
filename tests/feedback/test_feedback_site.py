"""``serve --site``: the built book beside the API on one origin (feedback/site.py), with a small site."""

import gzip
import os
import socket
import threading

import brotli
import pytest
from starlette.testclient import TestClient

from feedback.app import create_app
from feedback.config import Config
from waiting import until

PAGE = "<!doctype html><title>Roofline</title>" + "<p>Bytes, not FLOPs.</p>" * 200


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "_book"
    for path, data in {
        "index.html": PAGE.encode(),
        "chapters/roofline.html": PAGE.encode(),
        "assets/js/book.js": b"console.log('book');\n" * 100,
        "figures/fig-roofline-1-1116625782.svg": b"<svg xmlns='http://www.w3.org/2000/svg'></svg>" * 50,
        "pagefind/fragment/en_5cb93af.pf_fragment": b"\x1f\x8b already gzip",
        "pyodide/pyodide.asm.wasm": b"\0asm" + b"\1" * 5000,
        "pyodide/pyodide.asm.wasm.gz": gzip.compress(b"\0asm" + b"\1" * 5000),
        "pyodide/pyodide.mjs": b"export const x = 1;\n" * 100,
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


@pytest.fixture
def client(site, tmp_path):
    app = create_app(Config(db=f"sqlite:///{tmp_path}/feedback.db", rate_limit="off"), site=str(site))
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        yield c


@pytest.mark.parametrize("path, cache", [
    ("/", "no-cache"),
    ("/chapters/roofline.html", "no-cache"),
    ("/assets/js/book.js", "no-cache"),  # not named by its content: revalidated (a 304 when unchanged)
    ("/figures/fig-roofline-1-1116625782.svg", "public, max-age=31536000, immutable"),
    ("/pagefind/fragment/en_5cb93af.pf_fragment", "public, max-age=31536000, immutable"),
])
def test_cache_control_by_kind_of_file(client, path, cache):
    res = client.get(path)
    assert res.status_code == 200 and res.headers["cache-control"] == cache


def test_text_is_compressed_with_brotli_or_gzip_as_accepted(client, site):
    raw = (site / "chapters/roofline.html").read_bytes()
    br = client.get("/chapters/roofline.html", headers={"accept-encoding": "gzip, br"})
    assert br.headers["content-encoding"] == "br" and br.headers["vary"] == "Accept-Encoding"
    assert br.content == raw  # httpx decodes it
    assert int(br.headers["content-length"]) < len(raw) / 5
    gz = client.get("/chapters/roofline.html", headers={"accept-encoding": "gzip"})
    assert gz.headers["content-encoding"] == "gzip" and gz.content == raw
    plain = client.get("/chapters/roofline.html", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == raw
    assert br.headers["etag"] != gz.headers["etag"] != plain.headers["etag"]
    refused = client.get("/chapters/roofline.html", headers={"accept-encoding": "br;q=0, gzip"})
    assert refused.headers["content-encoding"] == "gzip"


def test_precompressed_sibling_and_wasm_and_module_types(client, site):
    wasm = client.get("/pyodide/pyodide.asm.wasm", headers={"accept-encoding": "gzip, br"})
    assert wasm.headers["content-type"] == "application/wasm"
    assert wasm.headers["content-encoding"] == "gzip"
    assert int(wasm.headers["content-length"]) == os.path.getsize(site / "pyodide/pyodide.asm.wasm.gz")
    assert wasm.content == (site / "pyodide/pyodide.asm.wasm").read_bytes()
    assert client.get("/pyodide/pyodide.mjs").headers["content-type"].startswith("text/javascript")
    fragment = client.get("/pagefind/fragment/en_5cb93af.pf_fragment", headers={"accept-encoding": "gzip"})
    assert "content-encoding" not in fragment.headers  # not text: sent as it is


@pytest.mark.parametrize("path", ["/assets/js/book.js", "/pyodide/pyodide.asm.wasm"])   # compressed here; a .gz sibling
def test_unchanged_file_is_a_304_for_each_encoding(client, path):
    # a browser revalidates every no-cache file on a second visit: a 500 there broke Pyodide's wasm
    for coding in ("br", "gzip", "identity"):
        first = client.get(path, headers={"accept-encoding": coding})
        again = client.get(path, headers={"accept-encoding": coding, "if-none-match": first.headers["etag"]})
        assert again.status_code == 304 and again.headers["cache-control"] == "no-cache"
        since = client.get(path, headers={"accept-encoding": coding, "if-modified-since": first.headers["last-modified"]})
        assert since.status_code == 304
        changed = client.get(path, headers={"accept-encoding": coding, "if-none-match": '"stale"'})
        assert changed.status_code == 200 and changed.content == first.content


def test_serve_says_where_suggestions_go(tmp_path, capsys):
    from feedback.cli import _warn_about_endpoint
    (tmp_path / "index.html").write_text('<head><meta name="feedback-issue-url" content="https://x/issues/new">')
    _warn_about_endpoint(str(tmp_path))
    assert capsys.readouterr().err == ""   # the pages it serves name this service: nothing to rebuild
    (tmp_path / "index.html").write_text('<head><meta name="feedback-endpoint" content="https://fb.example.org/api/feedback">')
    _warn_about_endpoint(str(tmp_path))
    err = capsys.readouterr().err
    assert "https://fb.example.org/api/feedback" in err and "not this service" in err


def test_api_review_and_site_share_the_origin(client):
    assert client.get("/api/health").json() == {"status": "ok"}
    assert client.get("/review").status_code == 200
    assert client.post("/chapters/roofline.html", content=b"x").status_code == 405
    assert client.get("/no/such/page.html").status_code == 404
    # A page's own requests carry an Origin header; the site is not behind the API's CORS allow-list.
    assert client.get("/assets/js/book.js", headers={"origin": "https://elsewhere.example"}).status_code == 200


def test_serve_refuses_a_folder_that_is_not_a_built_book(tmp_path, capsys):
    from feedback.cli import main

    with pytest.raises(SystemExit):
        main(["serve", "--site", str(tmp_path)])
    assert "not a built book" in capsys.readouterr().err


def raw_get(port: int, target: bytes) -> tuple[int, bytes]:
    """A GET with ``target`` sent byte for byte (httpx and browsers would normalise it first)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.fixture
def served(site, tmp_path):
    """The app behind a real HTTP server (uvicorn, as `feedback serve` runs it), on a free port."""
    import uvicorn
    app = create_app(Config(db=f"sqlite:///{tmp_path}/feedback.db", rate_limit="off"), site=str(site))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    until(lambda: server.started, 30, "uvicorn to start")
    yield port
    server.should_exit = True
    thread.join(timeout=10)


SECRET = b"outside the site: never served"
TRAVERSALS = [b"/../secret.txt", b"/%2e%2e/secret.txt", b"/%2E%2E/secret.txt", b"/..%2fsecret.txt",
              b"/..%2Fsecret.txt", b"/%2e%2e%2fsecret.txt", b"/chapters/..%2f..%2fsecret.txt",
              b"/chapters/%2e%2e/%2e%2e/secret.txt", b"/..\\secret.txt", b"/..%5csecret.txt",
              b"/chapters/..\\..\\secret.txt", b"/%252e%252e/secret.txt", b"/.%2e/secret.txt"]


@pytest.mark.parametrize("target", TRAVERSALS, ids=lambda t: t.decode())
def test_no_encoded_path_reaches_a_file_outside_the_site(served, site, target):
    """The path as an attacker sends it, not as a client library would tidy it: dots encoded,
    slashes encoded, backslashes. A file beside the site folder stays unreachable."""
    (site.parent / "secret.txt").write_bytes(SECRET)
    assert raw_get(served, b"/chapters/roofline.html")[0] == 200       # the server does serve
    status, body = raw_get(served, target)
    assert status in (400, 404), (target, status)
    assert SECRET not in body


BUILT_PAGE = ('<!doctype html><html><head><meta charset="utf-8">'
              '<meta name="feedback-issue-url" content="https://github.com/o/r/issues/new"></head>'
              '<body><main id="content">' + "<p>Bytes, not FLOPs.</p>" * 100 + "</main></body></html>")


@pytest.mark.parametrize("coding", ["identity", "gzip", "br"])
def test_served_pages_send_suggestions_to_this_service_without_a_rebuild(client, site, coding):
    """One command self-hosts (#34): a book built without ``endpoint:`` (issue links) and served by
    ``serve --site`` names this service's endpoint in its pages, so the page script sends to it. A
    page built with an endpoint of its own keeps it; a static host's copy is untouched."""
    (site / "chapters" / "serving.html").write_text(BUILT_PAGE, encoding="utf-8")
    own = BUILT_PAGE.replace("<head>", '<head><meta name="feedback-endpoint" content="https://fb.example/api/feedback">')
    (site / "chapters" / "own.html").write_text(own, encoding="utf-8")
    answer = client.get("/chapters/serving.html", headers={"accept-encoding": coding})
    body = answer.content.decode()
    assert body.count('<meta name="feedback-endpoint" content="/api/feedback">') == 1
    assert body.index('name="feedback-endpoint"') < body.index("</head>")
    assert 'name="feedback-issue-url"' in body                      # kept: the fallback route
    kept = client.get("/chapters/own.html", headers={"accept-encoding": coding}).content.decode()
    assert kept.count('name="feedback-endpoint"') == 1 and "https://fb.example/api/feedback" in kept
    assert (site / "chapters" / "serving.html").read_text(encoding="utf-8") == BUILT_PAGE


@pytest.mark.parametrize("path", ["/", "/assets/js/book.js", "/pyodide/pyodide.asm.wasm", "/pyodide/pyodide.mjs"])
def test_a_revalidation_is_answered_304_precompressed_sibling_too(client, path):
    """A browser revalidates every ``no-cache`` file on the next visit (If-None-Match): the wasm's
    precompressed sibling once answered that with a 500 (its ETag was not made yet), so a reader's
    second page under ``serve --site`` had no Python."""
    first = client.get(path, headers={"accept-encoding": "gzip, br"})
    assert first.status_code == 200 and first.headers["etag"]
    again = client.get(path, headers={"accept-encoding": "gzip, br", "if-none-match": first.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize("path", ["/", "/assets/js/book.js", "/pyodide/pyodide.asm.wasm"])
def test_every_file_of_the_book_is_cross_origin_isolated(client, path):
    """COOP and COEP on the book's pages (crossOriginIsolated: an exercise's Stop keeps Python),
    its workers' scripts and the rest, whichever way the file is sent."""
    res = client.get(path, headers={"accept-encoding": "gzip, br"})
    assert res.status_code == 200
    assert res.headers["cross-origin-opener-policy"] == "same-origin"
    assert res.headers["cross-origin-embedder-policy"] == "require-corp"
