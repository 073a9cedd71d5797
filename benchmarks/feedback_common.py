"""Shared by the feedback benchmarks: the service as a child process and a lean HTTP/1.1 client.

Everything runs on 127.0.0.1. The client is a few lines of asyncio so that, on a 2-core machine,
the load generator leaves the CPU to the service it measures.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"


def temp_db_url(prefix: str) -> str:
    """A SQLite URL in a temporary directory that is removed when the script ends."""
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return f"sqlite:///{folder}/feedback.db"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Service:
    """``python -m feedback serve`` on loopback; ``kill()`` is kill -9."""

    def __init__(self, db_url: str, port: int | None = None, *extra: str):
        self.db_url, self.port, self.extra, self.proc = db_url, port or free_port(), extra, None

    def start(self, timeout: float = 20) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "feedback", "serve", "--db", self.db_url, "--host", HOST,
             "--port", str(self.port), "--rate-limit", "off", *self.extra],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.healthy():
                return
            time.sleep(0.05)
        raise RuntimeError("service did not start")

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{HOST}:{self.port}/api/health", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=15)


class Connection:
    """One keep-alive HTTP/1.1 connection: ``request()`` → (status, headers, body)."""

    def __init__(self, port: int):
        self.port, self.reader, self.writer = port, None, None

    async def request(self, method: str, path: str, body: bytes = b"", headers: dict | None = None,
                      timeout: float = 10) -> tuple[int, dict, bytes]:
        try:
            return await asyncio.wait_for(self._request(method, path, body, headers or {}), timeout)
        except BaseException:
            self.close()  # a half-read answer would poison the next request
            raise

    async def _request(self, method, path, body, headers):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
        head = {"Host": f"{HOST}:{self.port}", "Content-Length": str(len(body)), **headers}
        lines = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in head.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        await self.writer.drain()
        status_line, *header_lines = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        answer_headers = {}
        for line in header_lines:
            if ":" in line:
                k, v = line.split(":", 1)
                answer_headers[k.strip().lower()] = v.strip()
        data = await self.reader.readexactly(int(answer_headers.get("content-length", 0)))
        if answer_headers.get("connection", "").lower() == "close":
            self.close()
        return int(status_line.split()[1]), answer_headers, data

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class Pool:
    def __init__(self, port: int, size: int):
        self._free: asyncio.Queue[Connection] = asyncio.Queue()
        for _ in range(size):
            self._free.put_nowait(Connection(port))

    async def post_json(self, body: bytes, timeout: float = 10) -> tuple[int, bytes]:
        conn = await self._free.get()
        try:
            status, _, data = await conn.request("POST", "/api/feedback", body,
                                                 {"Content-Type": "application/json"}, timeout)
            return status, data
        finally:
            self._free.put_nowait(conn)


def make_body(n: int) -> dict:
    return {
        "id": str(uuid.uuid4()),
        "page": f"/chapters/ch{n % 12:02d}.html",
        "section": f"s{n % 40}",
        "version": "bench",
        "selector": {"type": "TextQuoteSelector", "exact": f"passage {n}", "prefix": "before ", "suffix": " after"},
        "suggestion": f"Suggestion number {n}: " + "lorem ipsum " * (n % 20),
    }


def encode(body: dict) -> bytes:
    return json.dumps(body).encode()


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def stored_rows(db_url: str) -> list[dict]:
    sys.path.insert(0, str(REPO))
    from feedback.storage import Repository

    repo = Repository(db_url)
    try:
        return repo.find()
    finally:
        repo.close()
