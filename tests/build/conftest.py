import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fixturebook import FIXTURE, built_once, copy_fixture  # noqa: F401  (FIXTURE for other tests)


@pytest.fixture
def fixture_book(tmp_path) -> Path:
    """A private copy of the fixture book, to build or to break."""
    return copy_fixture(tmp_path / "book")


@pytest.fixture(scope="session")
def built_fixture(tmp_path_factory):
    """The fixture book built once (HTML + PDF) for the tests that only read the result."""
    return built_once(tmp_path_factory)


@pytest.fixture
def warm_book(tmp_path, built_fixture) -> Path:
    """A private copy of the built fixture book with its .bookcache (so only what a test
    changes runs again), without its _book."""
    return copy_fixture(tmp_path / "book", built_fixture[0], keep_cache=True)
