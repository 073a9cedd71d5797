"""The real-book fixture (bookcopy.py) builds outside the repository and builds again when any
source changes: a calc module, a kernel the attention chapter prints, matplotlibrc, an include,
a filter, a figure module. It reuses a build only of the very same sources."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bookcopy import BookCopy, default_dir, source_files

ROOT = Path(__file__).resolve().parents[2]

SOURCES = {"_quarto.yml": "project:\n  type: book\n", "index.qmd": "# Hi\n", "calc/speed.py": "X = 1\n",
           "kernels/naive.cu": "// naive\n", "matplotlibrc": "font.size: 11\n", "_includes/head.html": "<meta>\n",
           "widgets/w.py": "W = 1\n", "filters/f.lua": "-- f\n", "assets/css/a.css": "p{}\n",
           "bookfigs/fig.py": "F = 1\n", "tests/test_x.py": "def test(): pass\n"}


@pytest.fixture(params=["git", "plain"])
def project(request, tmp_path):
    root = tmp_path / "repo"
    for rel, text in SOURCES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if request.param == "git":        # untracked files count too: git ls-files -co
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / ".gitignore").write_text("_book/\n")
    return root


class Builds:
    """A stand-in for bookbuild.build: counts builds and writes what it was given."""

    def __init__(self):
        self.calls = []

    def __call__(self, root, formats, search):
        self.calls.append((Path(root), tuple(formats), search))
        (root / "_book").mkdir(exist_ok=True)
        (root / "_book" / "index.html").write_text((root / "calc/speed.py").read_text())


@pytest.mark.parametrize("changed", ["calc/speed.py", "kernels/naive.cu", "matplotlibrc", "_includes/head.html",
                                     "widgets/w.py", "filters/f.lua", "assets/css/a.css", "bookfigs/fig.py"])
def test_a_changed_source_builds_again(project, tmp_path, changed):
    copy, builds = BookCopy(project, tmp_path / "copy"), Builds()
    out = copy.ensure(("html",), build=builds)
    assert len(builds.calls) == 1 and out == tmp_path / "copy" / "_book"
    copy.ensure(("html",), build=builds)
    assert len(builds.calls) == 1, "the same sources reuse the build"
    (project / changed).write_text((project / changed).read_text() + "changed\n")
    copy.ensure(("html",), build=builds)
    assert len(builds.calls) == 2, f"a change to {changed} built again"
    assert (tmp_path / "copy" / changed).read_text().endswith("changed\n"), "the build saw the new bytes"
    assert not (project / "_book").exists(), "nothing was built in the repository"


def test_the_build_sees_the_new_calc_module(project, tmp_path):
    copy, builds = BookCopy(project, tmp_path / "copy"), Builds()
    copy.ensure(("html",), build=builds)
    (project / "calc/speed.py").write_text("X = 2\n")
    assert (copy.ensure(("html",), build=builds) / "index.html").read_text() == "X = 2\n"


def test_a_test_edit_or_a_deleted_file_is_handled(project, tmp_path):
    copy, builds = BookCopy(project, tmp_path / "copy"), Builds()
    copy.ensure(("html",), build=builds)
    (project / "tests/test_x.py").write_text("def test(): assert 1\n")
    copy.ensure(("html",), build=builds)
    assert len(builds.calls) == 1, "tests are no input of the build"
    (project / "widgets/w.py").unlink()
    copy.ensure(("html",), build=builds)
    assert len(builds.calls) == 2 and not (tmp_path / "copy/widgets/w.py").exists()


def test_another_format_or_search_builds_once_more(project, tmp_path):
    copy, builds = BookCopy(project, tmp_path / "copy"), Builds()
    copy.ensure(("html",), build=builds)
    copy.ensure(("html",), build=builds, search=True)
    copy.ensure(("pdf", "epub"), build=builds)
    copy.ensure(("html",), build=builds)
    copy.ensure(("pdf",), build=builds)
    assert [c[1:] for c in builds.calls] == [(("html",), False), (("html",), True), (("pdf", "epub"), False)]


def test_the_real_fixture_builds_outside_the_repository():
    dest = default_dir(ROOT).resolve()
    assert ROOT not in dest.parents and dest != ROOT
    files = source_files(ROOT)
    for must in ("matplotlibrc", "kernels/attention_flash.cu", "_includes", "calc/", "bookfigs/", "filters/"):
        assert any(f == must or f.startswith(must) for f in files), must
    assert not any(f.startswith(("tests/", "node_modules")) for f in files)
