"""The widget runtime is a stage of the build: made beside the chapters' execution (or found in
the per-user cache), reported with its time."""
from __future__ import annotations

import shutil
from pathlib import Path

from bookbuild import build
from bookbuild.progress import run_build

REPO = Path(__file__).resolve().parents[2]


def with_widgets(book: Path) -> Path:
    """The fixture book plus this repository's widgets and calc, and the post-render script that
    puts their runtime in the site (as _quarto.yml declares it): a book with a widget runtime."""
    for pkg in ("calc", "widgets"):
        shutil.copytree(REPO / pkg, book / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    cfg = book / "_quarto.yml"
    cfg.write_text(cfg.read_text().replace("  execute-dir: project\n",
                                           "  execute-dir: project\n  post-render:\n    - python3 -m widgets.bundle\n"))
    return book


def test_the_runtime_is_a_progress_stage_with_its_time(fixture_book, capsys):
    book = with_widgets(fixture_book)
    events = []
    report = build(book, ("html",), progress=lambda *e: events.append(e), search=False)
    runtime = [e for e in events if e[0] == "runtime"]
    assert len(runtime) == 1 and runtime[0][2] > 0 and runtime[0][2] == report.timings["runtime"]
    assert runtime[0][1].startswith("widget runtime (")
    assert (book / "_book" / "pyodide" / "book-py.zip.gz").is_file()
    # the next build finds it all: in the per-user cache, and in the site already
    report = run_build(book, ("html",), search=False)
    assert report.runtime == [] and report.executed == []
    err = " ".join(capsys.readouterr().err.split())            # rich wraps at the console's width
    assert "runtime" in err and "widget runtime (from the per-user cache)" in err
    assert "widget runtime" in err.split(" built ")[-1]        # and in the closing summary


def test_a_pdf_build_does_not_make_the_runtime(fixture_book):
    book = with_widgets(fixture_book)
    events = []
    report = build(book, ("pdf",), progress=lambda *e: events.append(e))
    assert report.runtime is None and not [e for e in events if e[0] == "runtime"]
    assert not (book / "_book" / "pyodide").exists()
