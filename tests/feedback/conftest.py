"""Fixtures: a throwaway PostgreSQL cluster, a repository URL per backend, an app client."""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for a bare `pytest`
warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")

from starlette.testclient import TestClient  # noqa: E402

from feedback.app import create_app  # noqa: E402
from feedback.config import Config  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def postgres_bin() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return os.path.dirname(found[-1]) if found else None


@pytest.fixture(scope="session")
def pg_dsn():
    """A PostgreSQL cluster in a temp dir on a free loopback port, run as the ``postgres`` user."""
    bindir = postgres_bin()
    if bindir is None:
        pytest.skip("PostgreSQL binaries not installed (apt-get install -y postgresql)")
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    root = tempfile.mkdtemp(prefix="feedback-pg-")
    data, port = os.path.join(root, "data"), free_port()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")

    def run(*cmd):
        subprocess.run(as_postgres + list(cmd), check=True, capture_output=True, timeout=120)

    run(f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(f"{bindir}/pg_ctl", "-D", data, "-o", options, "-l", os.path.join(root, "log"), "-w", "start")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(as_postgres + [f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


_db_numbers = itertools.count()


@pytest.fixture
def pg_url(pg_dsn):
    """A fresh database in the session cluster for one test."""
    import psycopg

    name = f"feedback_test_{next(_db_numbers)}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield pg_dsn.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/feedback.db"
    return request.getfixturevalue("pg_url")


def _client_factory(db_url):
    clients = []

    def make(client_address="127.0.0.1", **settings):
        settings.setdefault("rate_limit", "off")
        client = TestClient(create_app(Config(db=db_url, **settings)), client=(client_address, 50000))
        client.__enter__()
        clients.append(client)
        return client

    return make, clients


@pytest.fixture
def make_client(db_url):
    """``make_client(client_address=..., **config)`` → a TestClient on SQLite or PostgreSQL."""
    make, clients = _client_factory(db_url)
    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client):
    return make_client()


@pytest.fixture
def make_sqlite_client(tmp_path):
    """For behaviour that does not depend on the database."""
    make, clients = _client_factory(f"sqlite:///{tmp_path}/feedback.db")
    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def sqlite_client(make_sqlite_client):
    return make_sqlite_client()


@pytest.fixture
def make_submission():
    """``make_submission(**overrides)`` → a valid request body; an override of None drops the field."""
    return submission


def submission(**overrides) -> dict:
    body = {
        "id": str(uuid.uuid4()),
        "page": "/chapters/memory.html",
        "section": "roofline",
        "version": "2025.11",
        "selector": {"type": "TextQuoteSelector", "exact": "memory-bound",
                     "prefix": "A kernel is ", "suffix": " when its arithmetic"},
        "suggestion": "Say which roofline you mean.",
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not None}
