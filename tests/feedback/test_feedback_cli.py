"""``python -m feedback list|export|resolve``."""

import csv
import io
import json

import pytest

from feedback.cli import main
from feedback.storage import Repository
from feedback.validation import parse


@pytest.fixture
def stored(db_url, make_submission):
    repo = Repository(db_url)
    bodies = [
        make_submission(page="/a.html", suggestion="=HYPERLINK(\"http://evil.example\")", name="+cmd", email="x@example.org"),
        make_submission(page="/b.html", suggestion="@SUM(1,1)\nsecond line", selector=None),
        make_submission(page="/a.html", suggestion="-2+3 \u202egnp.exe"),
    ]
    for body in bodies:
        repo.add(parse(json.dumps(body).encode()))
    repo.close()
    return db_url, bodies


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_filters_by_page_and_status(stored, capsys):
    db, bodies = stored
    code, out, _ = run(capsys, "list", "--db", db, "--page", "/a.html")
    assert code == 0
    assert bodies[0]["id"] in out and bodies[2]["id"] in out and bodies[1]["id"] not in out
    run(capsys, "resolve", "--db", db, bodies[0]["id"])
    _, out, _ = run(capsys, "list", "--db", db, "--status", "open")
    assert bodies[0]["id"] not in out and bodies[1]["id"] in out
    _, out, _ = run(capsys, "list", "--db", db, "--since", "2999-01-01")
    assert out == ""


def test_list_makes_newlines_and_format_characters_visible(stored, capsys):
    db, _ = stored
    _, out, _ = run(capsys, "list", "--db", db)
    assert "@SUM(1,1)⏎second line" in out
    assert "\u202e" not in out and "\\u202e" in out


def test_resolve_unknown_id_fails(stored, capsys):
    db, _ = stored
    code, _, err = run(capsys, "resolve", "--db", db, "00000000-0000-4000-8000-000000000000")
    assert code == 1 and "no suggestion" in err


def test_export_json_round_trips(stored, capsys):
    db, bodies = stored
    _, out, _ = run(capsys, "export", "--db", db, "--format", "json")
    records = json.loads(out)
    assert sorted(r["suggestion"] for r in records) == sorted(b["suggestion"] for b in bodies)
    assert all(r["status"] == "open" for r in records)


def test_export_csv_guards_against_formula_injection(stored, capsys):
    db, bodies = stored
    _, out, _ = run(capsys, "export", "--db", db, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 3
    by_id = {r["id"]: r for r in rows}
    assert by_id[bodies[0]["id"]]["suggestion"] == "'=HYPERLINK(\"http://evil.example\")"
    assert by_id[bodies[0]["id"]]["name"] == "'+cmd"
    assert by_id[bodies[1]["id"]]["suggestion"] == "'@SUM(1,1)\nsecond line"
    assert by_id[bodies[2]["id"]]["suggestion"].startswith("'-2+3")
    assert all(not v.startswith(("=", "+", "-", "@")) for r in rows for v in r.values())


def test_resolve_with_a_note_and_errata_export_publishes_only_the_note(stored, capsys):
    db, bodies = stored
    code, out, _ = run(capsys, "resolve", "--db", db, bodies[0]["id"], "--errata", "  Fixed the link.  ")
    assert code == 0 and "with a note" in out
    run(capsys, "resolve", "--db", db, bodies[2]["id"])  # resolved without a note: not an erratum
    _, out, _ = run(capsys, "errata", "--db", db, "export")
    data = json.loads(out)
    assert data["format"] == 1
    [entry] = data["entries"]
    assert entry["id"] == bodies[0]["id"] and entry["note"] == "Fixed the link."
    assert (entry["exact"], entry["prefix"], entry["suffix"]) == ("memory-bound", "A kernel is ", " when its arithmetic")
    assert set(entry) == {"id", "page", "section", "version", "exact", "prefix", "suffix", "note", "resolved_at"}
    assert "evil.example" not in out and "x@example.org" not in out and "+cmd" not in out  # reader's words stay private


def test_resolve_with_an_empty_note_is_refused(stored, capsys):
    db, bodies = stored
    code, _, err = run(capsys, "resolve", "--db", db, bodies[0]["id"], "--errata", "  ")
    assert code == 2 and "needs a note" in err
