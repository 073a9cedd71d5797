"""Every refusal of ``POST /api/feedback`` answers 4xx with its reason, and stores nothing."""

import json

import pytest

from feedback.validation import Invalid, parse

BIG = "x" * 40_000


def with_selector(**fields):
    selector = {"type": "TextQuoteSelector", "exact": "memory-bound", "prefix": "", "suffix": ""}
    selector.update(fields)
    return {"selector": selector}


# (overrides of a valid body, expected reason)
FIELD_REFUSALS = [
    ({"extra": 1}, "unknown field: extra"),
    ({"id": "not-a-uuid"}, "id: must be a UUID"),
    ({"id": "12345678123442348234123456789abc"}, "id: must be a UUID in canonical form"),
    ({"id": 42}, "id: must be a string"),
    ({"id": None}, "id: required"),
    ({"page": "chapters/x.html"}, "page: must be a path starting with '/'"),
    ({"page": "/" + "p" * 500}, "page: too long (max 500 characters)"),
    ({"section": ["a"]}, "section: must be a string"),
    ({"version": ""}, "version: must not be empty"),
    ({"suggestion": None}, "suggestion: required"),
    ({"suggestion": "   \n "}, "suggestion: must not be empty"),
    ({"suggestion": "s" * 5001}, "suggestion: too long (max 5000 characters)"),
    ({"suggestion": True}, "suggestion: must be a string"),
    ({"suggestion": "nul\x00byte"}, "suggestion: control characters are not allowed"),
    ({"suggestion": "escape \x1b[31m"}, "suggestion: control characters are not allowed"),
    ({"suggestion": "lone \ud800 surrogate"}, "suggestion: invalid Unicode"),
    ({"name": {"first": "A"}}, "name: must be a string"),
    ({"email": "not-an-email"}, "email: not a valid email address"),
    ({"email": "a@b"}, "email: not a valid email address"),
    ({"email": "a b@example.org"}, "email: not a valid email address"),
    ({"selector": "memory-bound"}, "selector: must be an object"),
    ({"selector": {"type": "TextPositionSelector", "start": 1, "end": 2}}, "unknown field: selector.end"),
    (with_selector(type="TextPositionSelector"), "selector.type: must be 'TextQuoteSelector'"),
    (with_selector(exact=""), "selector.exact: must not be empty"),
    (with_selector(exact=None), "selector.exact: required"),
    (with_selector(exact="e" * 2001), "selector.exact: too long (max 2000 characters)"),
    (with_selector(prefix=7), "selector.prefix: must be a string"),
    (with_selector(suffix="s" * 201), "selector.suffix: too long (max 200 characters)"),
    (with_selector(colour="red"), "unknown field: selector.colour"),
]

BODY_REFUSALS = [
    (b"{not json", 400, "malformed JSON"),
    (b"", 400, "malformed JSON"),
    (b"\xff\xfe{}", 400, "body is not valid UTF-8"),
    (b"[1, 2]", 400, "body must be a JSON object"),
    (b'{"id": NaN}', 400, "malformed JSON: NaN is not allowed"),
    (b'{"page": "/a", "page": "/b"}', 400, "malformed JSON: duplicate key"),
    (b"[" * 5000 + b"]" * 5000, 400, "malformed JSON"),
    (json.dumps({"suggestion": BIG}).encode(), 413, "request body too large (max 32768 bytes)"),
]


@pytest.mark.parametrize("overrides, reason", FIELD_REFUSALS, ids=[r for _, r in FIELD_REFUSALS])
def test_field_refused_over_http_with_reason(sqlite_client, make_submission, overrides, reason):
    body = json.dumps(make_submission(**overrides))  # ASCII-escaped, so a lone surrogate reaches the service
    answer = sqlite_client.post("/api/feedback", content=body, headers={"content-type": "application/json"})
    assert (answer.status_code, answer.json()) == (400, {"error": reason})
    assert sqlite_client.app.state.repo.count() == 0


@pytest.mark.parametrize("body, status, reason", BODY_REFUSALS, ids=[r for *_, r in BODY_REFUSALS])
def test_body_refused_with_reason(body, status, reason):
    with pytest.raises(Invalid) as refusal:
        parse(body)
    assert (refusal.value.status, refusal.value.reason) == (status, reason)


def test_valid_body_parses_to_a_submission(make_submission):
    body = make_submission(name="Ada", email="ada@example.org", id="0B8E4D1C-7F3A-4C2E-9A51-1D2F3E4A5B6C")
    s = parse(json.dumps(body).encode())
    assert s.id == "0b8e4d1c-7f3a-4c2e-9a51-1d2f3e4a5b6c"
    assert (s.exact, s.prefix, s.suffix) == ("memory-bound", "A kernel is ", " when its arithmetic")
    assert (s.name, s.email) == ("Ada", "ada@example.org")


def test_optional_fields_may_be_absent_or_empty(make_submission):
    s = parse(json.dumps(make_submission(selector=None, name="", email="", section="")).encode())
    assert (s.exact, s.name, s.email, s.section) == (None, None, None, "")
