"""The repository: one set of SQL statements for SQLite and PostgreSQL.

Statements are written with ``?`` placeholders; a ``Dialect`` adapts the
parameter style and the connection. Every write runs in autocommit mode, so a
call returns only after the row is committed. ``INSERT ... ON CONFLICT (id) DO
NOTHING`` with the primary key on ``id`` makes concurrent retries of the same
submission store it once.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from feedback.validation import Submission

COLUMNS = ("id", "page", "section", "version", "exact", "prefix", "suffix",
           "suggestion", "name", "email", "digest", "status", "created_at", "resolved_at", "errata")
# The same passage and text from one reader within this many seconds is one suggestion sent twice
# (a second click, a reload, a retry with a new id): the first record stands (Repository.add).
REPEAT_WINDOW_S = 600

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS feedback (
        id TEXT PRIMARY KEY,
        page TEXT NOT NULL,
        section TEXT NOT NULL,
        version TEXT NOT NULL,
        exact TEXT,
        prefix TEXT,
        suffix TEXT,
        suggestion TEXT NOT NULL,
        name TEXT,
        email TEXT,
        digest TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
        created_at TEXT NOT NULL,
        resolved_at TEXT,
        errata TEXT,
        reader TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS feedback_page_created ON feedback (page, created_at)",
    "CREATE INDEX IF NOT EXISTS feedback_status_created ON feedback (status, created_at)",
    "CREATE INDEX IF NOT EXISTS feedback_digest_created ON feedback (digest, created_at)",
)


def utc_now() -> str:
    """ISO 8601 in UTC with microseconds: sorts as text in both databases."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SQLiteDialect:
    """One connection behind a lock: SQLite serialises writers anyway."""

    def __init__(self, path: str, synchronous: str = "FULL"):
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA synchronous={synchronous}")
        self._conn.execute("PRAGMA busy_timeout=10000")
        self._lock = threading.Lock()
        self.retryable = ()

    @contextmanager
    def cursor(self):
        with self._lock:
            cur = self._conn.cursor()
            try:
                yield cur
            finally:
                cur.close()

    def sql(self, statement: str) -> str:
        return statement

    def close(self) -> None:
        self._conn.close()


class PostgresDialect:
    """A small pool of psycopg 3 connections in autocommit mode."""

    def __init__(self, dsn: str, size: int = 8):
        import psycopg  # imported here so SQLite users need not install it

        self._psycopg = psycopg
        self._dsn = dsn
        self.retryable = (psycopg.OperationalError,)
        self._idle: queue.LifoQueue = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)

    @contextmanager
    def cursor(self):
        with self._slots:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = self._psycopg.connect(self._dsn, autocommit=True, connect_timeout=5)
            try:
                with conn.cursor() as cur:
                    yield cur
            except self._psycopg.OperationalError:
                conn.close()  # a broken connection is not returned to the pool
                raise
            finally:
                if not conn.closed:
                    self._idle.put(conn)

    def sql(self, statement: str) -> str:
        return statement.replace("?", "%s")

    def close(self) -> None:
        while not self._idle.empty():
            self._idle.get_nowait().close()


def open_dialect(url: str, synchronous: str = "FULL"):
    if url.startswith("sqlite:///"):
        return SQLiteDialect(url[len("sqlite:///"):], synchronous)
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresDialect(url)
    raise ValueError(f"unsupported database URL {url!r}: use sqlite:///PATH or postgresql://...")


@dataclass(frozen=True)
class Stored:
    """Outcome of ``Repository.add``: ``created`` (201), ``duplicate`` (200) or ``conflict`` (409)."""

    outcome: str
    id: str


class Repository:
    def __init__(self, url: str, synchronous: str = "FULL"):
        self.url = url
        self._db = open_dialect(url, synchronous)
        for statement in SCHEMA:
            self._execute(statement)
        self._migrate()

    def _migrate(self) -> None:
        """Columns added since the first schema, for a database made by an older version."""
        with self._db.cursor() as cur:
            cur.execute("SELECT * FROM feedback WHERE 1 = 0")
            have = {d[0] for d in cur.description}
        if "errata" not in have:
            self._execute("ALTER TABLE feedback ADD COLUMN errata TEXT")
        if "reader" not in have:
            self._execute("ALTER TABLE feedback ADD COLUMN reader TEXT")

    def _execute(self, statement: str, params: tuple = ()) -> list[tuple]:
        """Run one statement; retried once on a dropped connection (every statement here is idempotent)."""
        for attempt in (1, 2):
            try:
                with self._db.cursor() as cur:
                    cur.execute(self._db.sql(statement), params)
                    return cur.fetchall() if cur.description else []
            except self._db.retryable:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def add(self, s: Submission, reader: str | None = None) -> Stored:
        """Store ``s``. ``reader``: who sent it (app.reader_key: a keyed hash of the address, never
        the address); the same content from the same reader within REPEAT_WINDOW_S answers
        ``duplicate`` with the first record's id instead of storing it again."""
        digest = s.digest()
        if reader is not None:
            since = (datetime.now(timezone.utc) - timedelta(seconds=REPEAT_WINDOW_S)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            earlier = self._execute(
                "SELECT id FROM feedback WHERE digest = ? AND reader = ? AND created_at >= ? AND id <> ?"
                " ORDER BY created_at LIMIT 1", (digest, reader, since, s.id))
            if earlier:
                return Stored("duplicate", earlier[0][0])
        inserted = self._execute(
            "INSERT INTO feedback (id, page, section, version, exact, prefix, suffix, suggestion,"
            " name, email, digest, status, created_at, reader) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)"
            " ON CONFLICT (id) DO NOTHING RETURNING id",
            (s.id, s.page, s.section, s.version, s.exact, s.prefix, s.suffix, s.suggestion,
             s.name, s.email, digest, utc_now(), reader),
        )
        if inserted:
            return Stored("created", s.id)
        existing = self._execute("SELECT digest FROM feedback WHERE id = ?", (s.id,))
        return Stored("duplicate" if existing and existing[0][0] == digest else "conflict", s.id)

    def find(self, page: str | None = None, status: str | None = None, since: str | None = None) -> list[dict]:
        where, params = [], []
        for column, op, value in (("page", "=", page), ("status", "=", status), ("created_at", ">=", since)):
            if value is not None:
                where.append(f"{column} {op} ?")
                params.append(value)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self._execute(f"SELECT {', '.join(COLUMNS)} FROM feedback{clause} ORDER BY created_at, id", tuple(params))
        return [dict(zip(COLUMNS, row, strict=True)) for row in rows]

    def resolve(self, record_id: str, errata: str | None = None) -> bool:
        """Mark as resolved, with a note for readers' errata page if given (a later note replaces it);
        False when no such id (resolving twice is not an error)."""
        rows = self._execute(
            "UPDATE feedback SET status = 'resolved', resolved_at = COALESCE(resolved_at, ?),"
            " errata = COALESCE(?, errata) WHERE id = ? RETURNING id",
            (utc_now(), errata, record_id),
        )
        return bool(rows)

    def count(self) -> int:
        return self._execute("SELECT COUNT(*) FROM feedback")[0][0]

    def healthy(self) -> bool:
        try:
            return self._execute("SELECT 1")[0][0] == 1
        except Exception:
            return False

    def close(self) -> None:
        self._db.close()
