"""CORS allow-list: preflight, actual requests, refusals as JSON."""

import pytest

BOOK = "http://localhost:8000"
PREFLIGHT = {"access-control-request-method": "POST", "access-control-request-headers": "content-type"}


@pytest.fixture
def cors_client(make_sqlite_client):
    return make_sqlite_client(allow_origins=(BOOK,))


def test_preflight_from_allowed_origin(cors_client):
    answer = cors_client.options("/api/feedback", headers={"origin": BOOK, **PREFLIGHT})
    assert answer.status_code == 204
    assert answer.headers["access-control-allow-origin"] == BOOK
    assert "POST" in answer.headers["access-control-allow-methods"]
    assert answer.headers["access-control-allow-headers"] == "content-type"


def test_preflight_from_other_origin_is_refused(cors_client):
    answer = cors_client.options("/api/feedback", headers={"origin": "https://evil.example", **PREFLIGHT})
    assert (answer.status_code, answer.json()) == (403, {"error": "origin not allowed: https://evil.example"})
    assert "access-control-allow-origin" not in answer.headers


def test_preflight_for_other_method_is_refused(cors_client):
    answer = cors_client.options("/api/feedback", headers={"origin": BOOK, "access-control-request-method": "DELETE"})
    assert answer.status_code == 405


def test_post_from_allowed_origin_carries_cors_headers(cors_client, make_submission):
    answer = cors_client.post("/api/feedback", json=make_submission(), headers={"origin": BOOK})
    assert answer.status_code == 201
    assert answer.headers["access-control-allow-origin"] == BOOK
    assert answer.headers["access-control-expose-headers"] == "Retry-After"


def test_refusals_also_carry_cors_headers_so_the_page_can_read_the_reason(cors_client):
    answer = cors_client.post("/api/feedback", content=b"{", headers={"origin": BOOK, "content-type": "application/json"})
    assert answer.status_code == 400 and answer.headers["access-control-allow-origin"] == BOOK


def test_post_from_other_origin_is_refused_and_not_stored(cors_client, make_submission):
    answer = cors_client.post("/api/feedback", json=make_submission(), headers={"origin": "https://evil.example"})
    assert answer.status_code == 403
    assert cors_client.app.state.repo.count() == 0


def test_same_origin_needs_no_allow_list_entry(make_sqlite_client, make_submission):
    client = make_sqlite_client()
    answer = client.post("/api/feedback", json=make_submission(), headers={"origin": "http://testserver"})
    assert answer.status_code == 201


def test_allow_origins_from_environment():
    from feedback.config import Config

    config = Config.load(environ={"FEEDBACK_ALLOW_ORIGINS": "https://a.example, https://b.example",
                                  "FEEDBACK_DB": "sqlite:///x.db", "FEEDBACK_RATE_LIMIT": "5/10"})
    assert config.allow_origins == ("https://a.example", "https://b.example")
    assert (config.db, config.rate_limit) == ("sqlite:///x.db", "5/10")
    assert Config.load(environ={"FEEDBACK_DB": "sqlite:///x.db"}, db="sqlite:///flag.db").db == "sqlite:///flag.db"
