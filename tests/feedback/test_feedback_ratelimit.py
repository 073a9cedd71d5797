"""Per-client token bucket: a burst, then 429 with Retry-After."""

import pytest

from feedback.ratelimit import TokenBucket, parse_rate, retry_after


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_bucket_allows_a_burst_then_refills_at_the_rate():
    clock = Clock()
    bucket = TokenBucket(capacity=3, period=30, clock=clock)  # one token per 10 s
    assert [bucket.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take("a") == pytest.approx(10.0)
    clock.now = 5.0
    assert bucket.take("a") == pytest.approx(5.0)
    clock.now = 10.0
    assert bucket.take("a") == 0.0


def test_clients_have_separate_buckets_and_old_ones_are_forgotten():
    bucket = TokenBucket(capacity=1, period=60, max_clients=2, clock=Clock())
    assert bucket.take("a") == 0.0 and bucket.take("b") == 0.0
    assert bucket.take("a") > 0
    bucket.take("c")  # evicts the least recently seen: b
    assert bucket.take("b") == 0.0


@pytest.mark.parametrize("text, expected", [("20/60", (20, 60.0)), ("5", (5, 60.0)), ("off", None), ("0", None)])
def test_parse_rate(text, expected):
    assert parse_rate(text) == expected


def test_parse_rate_refuses_nonsense():
    with pytest.raises(ValueError):
        parse_rate("-1/5")


def test_retry_after_is_whole_seconds_at_least_one():
    assert (retry_after(0.01), retry_after(2.2)) == ("1", "3")


def test_service_answers_429_with_retry_after(make_sqlite_client, make_submission):
    client = make_sqlite_client(rate_limit="2/60")
    # three different suggestions (the same one again would be one record: test_feedback_api)
    assert [client.post("/api/feedback", json=make_submission(suggestion=f"idea {i}")).status_code
            for i in range(2)] == [201, 201]
    refused = client.post("/api/feedback", json=make_submission(suggestion="idea 2"))
    assert refused.status_code == 429
    assert refused.json() == {"error": "too many submissions; try again later"}
    assert refused.headers["retry-after"] == "30"
    assert client.app.state.repo.count() == 2
