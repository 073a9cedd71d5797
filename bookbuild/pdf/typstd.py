"""The typst compiler kept warm between builds, as the Jupyter kernel is (``execute: daemon``).

typst compiles the whole book every time, but it memoises its work (parsing, layout) in the
process that compiled before: after one chapter's edit a warm process typesets the book in a
seventh of the CPU time of a cold one (0.29 s against 2.16 s, measured on the real book). So a
build hands the compile to a small server process that outlives it by the same idle time as the
kernel, on an abstract Unix socket named after the project and the typst version, with a key in
``.bookcache/typst/daemon.key`` (mode 0600) that a client must prove it holds. When the daemon
cannot be had, the build compiles in its own process: same PDF, no memory of earlier builds.

    python -m bookbuild.pdf.typstd NAME KEYFILE IDLE_SECONDS     (started by ``compile_pdf``)
"""
from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
import sys
import threading
import time
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Listener
from pathlib import Path


def compile_in_process(book_typ: Path, pdf_path: Path, root: Path) -> None:
    import typst
    typst.compile(str(book_typ), output=str(pdf_path), root=str(root))


def compile_pdf(book_typ: Path, pdf_path: Path, root: Path, keep_alive: float) -> bool:
    """Compile ``book_typ`` to ``pdf_path``; returns whether a kept compiler did it. A typst
    error is raised as ``RuntimeError`` with typst's message."""
    if keep_alive <= 0:
        compile_in_process(book_typ, pdf_path, root)
        return False
    try:
        conn = _connect(root, keep_alive)
    except OSError:
        conn = None
    if conn is None:
        compile_in_process(book_typ, pdf_path, root)
        return False
    with conn:
        conn.send({"input": str(book_typ), "output": str(pdf_path), "root": str(root)})
        answer = conn.recv()
    if answer.get("error"):
        raise RuntimeError(answer["error"])
    return True


def _address(root: Path) -> str:
    import typst
    tag = hashlib.sha256(f"{root.resolve()}\0{sys.executable}\0{typst.__version__}".encode()).hexdigest()[:20]
    return f"\0bookbuild-typst-{tag}"        # abstract: gone with the process, no file to go stale


def _connect(root: Path, keep_alive: float):
    address = _address(root)
    keyfile = root / ".bookcache" / "typst" / "daemon.key"
    if keyfile.exists():
        try:
            return Client(address, family="AF_UNIX", authkey=keyfile.read_bytes())
        except (OSError, EOFError, AuthenticationError):
            pass
    keyfile.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(keyfile.with_suffix(".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(secrets.token_bytes(32))
    os.replace(keyfile.with_suffix(".tmp"), keyfile)
    subprocess.Popen([sys.executable, "-m", "bookbuild.pdf.typstd", address.lstrip("\0"), str(keyfile), str(keep_alive)],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)     # not killed with the build
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            return Client(address, family="AF_UNIX", authkey=keyfile.read_bytes())
        except (OSError, EOFError, AuthenticationError):
            time.sleep(0.05)
    return None


def serve(address: str, keyfile: Path, idle: float) -> None:
    import typst
    try:
        listener = Listener(address, family="AF_UNIX", authkey=keyfile.read_bytes())
    except OSError:
        return                                   # another build started one first
    (keyfile.parent / "daemon.pid").write_text(str(os.getpid()))
    last = [time.monotonic()]

    def watch() -> None:
        while True:
            time.sleep(max(0.2, min(5.0, idle / 4)))
            if time.monotonic() - last[0] > idle or not keyfile.exists():
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    while True:
        try:
            conn = listener.accept()
        except Exception:                        # a client with the wrong key, or gone
            continue
        with conn:
            try:
                job = conn.recv()
                last[0] = time.monotonic()
                try:
                    typst.compile(job["input"], output=job["output"], root=job["root"])
                    conn.send({})
                except Exception as exc:          # typst's own error type, with the diagnostics
                    conn.send({"error": str(exc)})
            except (OSError, EOFError):
                pass
            last[0] = time.monotonic()


if __name__ == "__main__":
    serve("\0" + sys.argv[1], Path(sys.argv[2]), float(sys.argv[3]))
