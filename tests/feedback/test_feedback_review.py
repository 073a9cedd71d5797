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


def test_resolve_from_the_review_page_with_a_note(sqlite_client, make_submission):
    body = make_submission()
    sqlite_client.post("/api/feedback", json=body)
    page = sqlite_client.get("/review").text
    assert 'action="/review/resolve"' in page and f'name="id" value="{body["id"]}"' in page
    answer = sqlite_client.post("/review/resolve", data={"id": body["id"], "errata": "Now says which roofline."},
                                headers={"origin": "http://testserver", "sec-fetch-site": "same-origin"},
                                follow_redirects=False)
    assert (answer.status_code, answer.headers["location"]) == (303, "/review?status=open")
    [row] = sqlite_client.app.state.repo.find()
    assert (row["status"], row["errata"]) == ("resolved", "Now says which roofline.")
    assert "Errata note: Now says which roofline." in sqlite_client.get("/review?status=resolved").text


@pytest.mark.parametrize("headers", [{"origin": "https://evil.example"}, {"sec-fetch-site": "cross-site"}])
def test_resolve_form_from_another_site_is_refused(sqlite_client, make_submission, headers):
    body = make_submission()
    sqlite_client.post("/api/feedback", json=body)
    answer = sqlite_client.post("/review/resolve", data={"id": body["id"]}, headers=headers)
    assert answer.status_code == 403
    assert sqlite_client.app.state.repo.find()[0]["status"] == "open"


def test_resolve_form_needs_the_token(make_sqlite_client, make_submission):
    client = make_sqlite_client(client_address="203.0.113.9", review_token="s3cret")
    body = make_submission()
    client.post("/api/feedback", json=body)
    assert client.post("/review/resolve", data={"id": body["id"], "token": "guess"}).status_code == 401
    assert 'name="token" value="s3cret"' in client.get("/review?token=s3cret").text
    answer = client.post("/review/resolve", data={"id": body["id"], "token": "s3cret"}, follow_redirects=False)
    assert (answer.status_code, answer.headers["location"]) == (303, "/review?status=open&token=s3cret")
