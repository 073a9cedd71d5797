import shutil
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "book"


def copy_fixture(dest: Path) -> Path:
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("_book", ".bookcache"))
    return dest


@pytest.fixture
def fixture_book(tmp_path) -> Path:
    """A private copy of the fixture book, to build or to break."""
    return copy_fixture(tmp_path / "book")


@pytest.fixture(scope="session")
def built_fixture(tmp_path_factory):
    """The fixture book built once (HTML + PDF) for the tests that only read the result."""
    from bookbuild import build
    root = copy_fixture(tmp_path_factory.mktemp("built") / "book")
    report = build(root)
    return root, report
