"""``GET /review``: each suggestion beside its passage, reader text escaped, token or loopback only."""

import pytest

XSS = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_review_escapes_every_reader_field(client, make_submission):
    body = make_submission(page="/" + XSS, section=XSS, version=XSS[:100], suggestion=XSS, name=XSS[:100],
                           selector={"type": "TextQuoteSelector", "exact": XSS, "prefix": XSS, "suffix": XSS})
    assert client.post("/api/feedback", json=body).status_code == 201
    page = client.get("/review")
    assert page.status_code == 200
    assert "<script" not in page.text and "<img" not in page.text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")


def test_review_shows_suggestion_beside_highlighted_passage(sqlite_client, make_submission):
    sqlite_client.post("/api/feedback", json=make_submission())
    page = sqlite_client.get("/review").text
    assert "A kernel is <mark>memory-bound</mark> when its arithmetic" in page
    assert "Say which roofline you mean." in page


def test_review_filters_by_status(sqlite_client, make_submission):
    body = make_submission()
    sqlite_client.post("/api/feedback", json=body)
    sqlite_client.app.state.repo.resolve(body["id"])
    assert body["id"] not in sqlite_client.get("/review").text
    assert body["id"] in sqlite_client.get("/review?status=resolved").text
    assert sqlite_client.get("/review?status=bogus").status_code == 400


def test_review_without_token_is_loopback_only(make_sqlite_client):
    remote = make_sqlite_client(client_address="203.0.113.9")
    answer = remote.get("/review")
    assert (answer.status_code, answer.json()) == (401, {"error": "review is open to loopback only"})


@pytest.mark.parametrize("how, status", [("none", 401), ("wrong", 401), ("query", 200), ("bearer", 200)])
def test_review_token(make_sqlite_client, how, status):
    client = make_sqlite_client(client_address="203.0.113.9", review_token="s3cret")
    url, headers = "/review", {}
    if how == "wrong":
        url += "?token=guess"
    elif how == "query":
        url += "?token=s3cret"
    elif how == "bearer":
        headers["authorization"] = "Bearer s3cret"
    assert client.get(url, headers=headers).status_code == status
