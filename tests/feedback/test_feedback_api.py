"""``POST /api/feedback`` and ``GET /api/health`` on SQLite and PostgreSQL."""

import json

import pytest

SQL_PAYLOADS = [
    "'; DROP TABLE feedback; --",
    "1' OR '1'='1",
    "\" OR 1=1 --",
    "?; SELECT * FROM feedback WHERE id = ?",
    "%s %(x)s $1 \\x00",
    "Robert'); DELETE FROM feedback;--",
]


def test_new_submission_answers_201_and_is_stored(client, make_submission):
    body = make_submission(name="Ada", email="ada@example.org")
    answer = client.post("/api/feedback", json=body)
    assert answer.status_code == 201
    assert answer.json() == {"id": body["id"], "status": "created"}
    [row] = client.app.state.repo.find()
    assert row["id"] == body["id"]
    assert (row["exact"], row["prefix"], row["suffix"]) == ("memory-bound", "A kernel is ", " when its arithmetic")
    assert (row["page"], row["section"], row["version"]) == ("/chapters/memory.html", "roofline", "2025.11")
    assert row["status"] == "open"


def test_retry_with_same_id_and_content_answers_200_and_stores_once(client, make_submission):
    body = make_submission()
    assert client.post("/api/feedback", json=body).status_code == 201
    again = client.post("/api/feedback", json=body)
    assert (again.status_code, again.json()) == (200, {"id": body["id"], "status": "duplicate"})
    assert client.app.state.repo.count() == 1


def test_same_id_with_other_content_answers_409(client, make_submission):
    body = make_submission()
    client.post("/api/feedback", json=body)
    answer = client.post("/api/feedback", json={**body, "suggestion": "something else"})
    assert answer.status_code == 409
    assert answer.json() == {"error": "this id was already used for a different submission"}
    assert client.app.state.repo.find()[0]["suggestion"] == body["suggestion"]


def test_feedback_box_submission_needs_no_selector(client, make_submission):
    assert client.post("/api/feedback", json=make_submission(selector=None, section="")).status_code == 201
    [row] = client.app.state.repo.find()
    assert (row["exact"], row["prefix"], row["suffix"], row["section"]) == (None, None, None, "")


def test_sql_injection_payloads_are_stored_verbatim(client, make_submission):
    for payload in SQL_PAYLOADS:
        body = make_submission(suggestion=payload, name=payload[:100], section=payload,
                               selector={"type": "TextQuoteSelector", "exact": payload, "prefix": payload, "suffix": payload})
        assert client.post("/api/feedback", json=body).status_code == 201
    rows = client.app.state.repo.find()
    assert sorted(r["suggestion"] for r in rows) == sorted(SQL_PAYLOADS)
    assert all(r["exact"] == r["prefix"] == r["suffix"] == r["section"] == r["suggestion"] for r in rows)


def test_unicode_survives_the_round_trip(client, make_submission):
    text = "Ünïcödé 🚀 数据 \u202eRTL\u202c\ttab\r\nline"
    client.post("/api/feedback", json=make_submission(suggestion=text))
    assert client.app.state.repo.find()[0]["suggestion"] == text


def test_health_answers_200_when_database_is_reachable(client):
    assert (client.get("/api/health").status_code, client.get("/api/health").json()) == (200, {"status": "ok"})


def test_database_down_answers_503_so_clients_retry(sqlite_client, make_submission):
    sqlite_client.app.state.repo.close()
    assert sqlite_client.get("/api/health").status_code == 503
    answer = sqlite_client.post("/api/feedback", json=make_submission())
    assert (answer.status_code, answer.json()) == (503, {"error": "storage unavailable; try again later"})


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_wrong_content_type_answers_415(sqlite_client, make_submission, content_type):
    answer = sqlite_client.post("/api/feedback", content=json.dumps(make_submission()),
                                headers={"content-type": content_type})
    assert (answer.status_code, answer.json()) == (415, {"error": "content type must be application/json"})


def test_json_with_charset_is_accepted(sqlite_client, make_submission):
    answer = sqlite_client.post("/api/feedback", content=json.dumps(make_submission()),
                                headers={"content-type": "application/json; charset=utf-8"})
    assert answer.status_code == 201


def test_declared_too_large_body_answers_413(sqlite_client):
    answer = sqlite_client.post("/api/feedback", content=b"{" + b" " * 40_000 + b"}",
                                headers={"content-type": "application/json"})
    assert (answer.status_code, answer.json()) == (413, {"error": "request body too large (max 32768 bytes)"})


def test_streamed_too_large_body_answers_413(sqlite_client):
    chunks = (b" " * 4096 for _ in range(10))  # no Content-Length: chunked
    answer = sqlite_client.post("/api/feedback", content=chunks, headers={"content-type": "application/json"})
    assert answer.status_code == 413


def test_malformed_json_answers_400(sqlite_client):
    answer = sqlite_client.post("/api/feedback", content=b'{"id": ', headers={"content-type": "application/json"})
    assert (answer.status_code, answer.json()) == (400, {"error": "malformed JSON"})


def test_unknown_route_and_method_answer_json(sqlite_client):
    missing = sqlite_client.get("/api/nothing")
    assert (missing.status_code, missing.json()) == (404, {"error": "Not Found"})
    answer = sqlite_client.get("/api/feedback")
    assert answer.status_code == 405 and "error" in answer.json()


def test_the_same_suggestion_sent_again_by_one_reader_is_one_record(make_client, make_submission):
    """A reader who sends the same passage and text twice (a new id each time: a second click, a
    reload) within the window gets the first record back; another reader's identical one is kept."""
    client = make_client()
    first = make_submission()
    assert client.post("/api/feedback", json=first).status_code == 201
    again = client.post("/api/feedback", json={**first, "id": make_submission()["id"]})
    assert (again.status_code, again.json()) == (200, {"id": first["id"], "status": "duplicate"})
    assert client.app.state.repo.count() == 1
    other = make_client(client_address="10.0.0.7")
    assert other.post("/api/feedback", json={**first, "id": make_submission()["id"]}).status_code == 201
    changed = client.post("/api/feedback", json={**first, "id": make_submission()["id"], "suggestion": "another idea"})
    assert changed.status_code == 201
    assert client.app.state.repo.count() == 3
