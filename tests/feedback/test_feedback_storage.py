"""The repository layer: same statements, same answers on SQLite and PostgreSQL."""

import json
from concurrent.futures import ThreadPoolExecutor

from feedback.storage import Repository
from feedback.validation import parse


def test_concurrent_retries_of_one_submission_store_it_once(db_url, make_submission):
    repo = Repository(db_url)
    submission = parse(json.dumps(make_submission()).encode())
    with ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(lambda _: repo.add(submission).outcome, range(64)))
    assert outcomes.count("created") == 1
    assert outcomes.count("duplicate") == 63
    assert repo.count() == 1
    repo.close()


def test_find_filters_by_page_status_and_date(db_url, make_submission):
    repo = Repository(db_url)
    a = parse(json.dumps(make_submission(page="/a.html")).encode())
    b = parse(json.dumps(make_submission(page="/b.html")).encode())
    repo.add(a)
    repo.add(b)
    assert repo.resolve(b.id)
    assert [r["id"] for r in repo.find(page="/a.html")] == [a.id]
    assert [r["id"] for r in repo.find(status="resolved")] == [b.id]
    assert [r["id"] for r in repo.find(status="open")] == [a.id]
    assert len(repo.find(since="2000-01-01")) == 2
    assert repo.find(since="2999-01-01") == []
    repo.close()


def test_resolve_is_idempotent_and_unknown_id_is_false(db_url, make_submission):
    repo = Repository(db_url)
    s = parse(json.dumps(make_submission()).encode())
    repo.add(s)
    assert repo.resolve(s.id)
    first = repo.find()[0]["resolved_at"]
    assert repo.resolve(s.id)
    assert repo.find()[0]["resolved_at"] == first
    assert not repo.resolve("00000000-0000-4000-8000-000000000000")
    repo.close()


def test_schema_creation_is_repeatable(db_url):
    Repository(db_url).close()
    Repository(db_url).close()


def test_errata_note_is_kept_replaced_only_by_a_new_note(db_url, make_submission):
    repo = Repository(db_url)
    s = parse(json.dumps(make_submission()).encode())
    repo.add(s)
    assert repo.resolve(s.id, "Fixed: the ridge point is defined first.")
    assert repo.resolve(s.id)  # resolving again without a note keeps it
    assert repo.find()[0]["errata"] == "Fixed: the ridge point is defined first."
    assert repo.resolve(s.id, "Reworded.")
    assert repo.find()[0]["errata"] == "Reworded."
    repo.close()


def test_database_made_before_errata_gains_the_column(db_url, make_submission):
    repo = Repository(db_url)
    repo._execute("ALTER TABLE feedback DROP COLUMN errata")  # what an older version created
    repo.close()
    repo = Repository(db_url)
    s = parse(json.dumps(make_submission()).encode())
    repo.add(s)
    assert repo.resolve(s.id, "Noted.") and repo.find()[0]["errata"] == "Noted."
    repo.close()
