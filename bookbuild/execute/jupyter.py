"""The client side of the Jupyter messaging protocol, as much of it as a build uses.

A build asks a kernel two things: ``kernel_info_request`` (is it there?) and
``execute_request`` (run this), and listens on IOPub for what the code printed, showed or
raised. That is two ZeroMQ sockets and an HMAC signature per message, written here against
the protocol's specification (https://jupyter-client.readthedocs.io/en/latest/messaging.html)
because ``import jupyter_client`` alone costs a third of a second, a sixth of the time the
build may take to rebuild one chapter. The kernel itself is ipykernel, unchanged.
"""
from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import os
import socket
import uuid
from pathlib import Path
from typing import Any

import zmq

DELIM = b"<IDS|MSG>"
PROTOCOL = "5.3"


def write_connection_file(path: Path, ip: str = "127.0.0.1") -> dict[str, Any]:
    """Five free TCP ports and a fresh signing key, written where the kernel will read them."""
    ports = []
    holders = []
    for _ in range(5):  # held open together so that no two ports are the same
        s = socket.socket()
        s.bind((ip, 0))
        holders.append(s)
        ports.append(s.getsockname()[1])
    for s in holders:
        s.close()
    info = {"shell_port": ports[0], "iopub_port": ports[1], "stdin_port": ports[2],
            "control_port": ports[3], "hb_port": ports[4], "ip": ip, "transport": "tcp",
            "key": uuid.uuid4().hex, "signature_scheme": "hmac-sha256", "kernel_name": ""}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the key is a secret
    with os.fdopen(fd, "w") as f:
        json.dump(info, f, indent=1)
    return info


class Client:
    """Shell and IOPub channels to one kernel, from its connection file."""

    def __init__(self, connection: Path):
        info = json.loads(Path(connection).read_text())
        if info.get("signature_scheme", "hmac-sha256") != "hmac-sha256":
            raise ValueError(f"unsupported signature scheme {info['signature_scheme']}")
        self._key = info.get("key", "").encode()
        self._session = uuid.uuid4().hex
        self._ctx = zmq.Context()
        self._ctx.linger = 0
        url = f"{info.get('transport', 'tcp')}://{info['ip']}:"
        self.shell = self._ctx.socket(zmq.DEALER)
        self.shell.connect(url + str(info["shell_port"]))
        self.iopub = self._ctx.socket(zmq.SUB)
        self.iopub.setsockopt(zmq.SUBSCRIBE, b"")
        self.iopub.connect(url + str(info["iopub_port"]))

    def _sign(self, parts: list[bytes]) -> bytes:
        if not self._key:
            return b""
        h = hmac.new(self._key, digestmod=hashlib.sha256)
        for p in parts:
            h.update(p)
        return h.hexdigest().encode()

    def send(self, msg_type: str, content: dict[str, Any]) -> str:
        """Send a request on the shell channel; its msg_id."""
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "session": self._session, "username": "bookbuild",
                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                  "msg_type": msg_type, "version": PROTOCOL}
        parts = [json.dumps(p).encode() for p in (header, {}, {}, content)]
        self.shell.send_multipart([DELIM, self._sign(parts), *parts])
        return msg_id

    def execute(self, code: str) -> str:
        return self.send("execute_request", {"code": code, "silent": False, "store_history": True,
                                             "user_expressions": {}, "allow_stdin": False,
                                             "stop_on_error": True})

    def kernel_info(self) -> str:
        return self.send("kernel_info_request", {})

    def _recv(self, sock: zmq.Socket, timeout: float) -> dict[str, Any] | None:
        if not sock.poll(int(timeout * 1000)):
            return None
        frames = sock.recv_multipart()
        i = frames.index(DELIM)
        signature, parts = frames[i + 1], frames[i + 2:i + 6]
        if self._key and not hmac.compare_digest(signature, self._sign(parts)):
            raise ValueError("a kernel message with a bad signature")
        header, parent, metadata, content = (json.loads(p) for p in parts)
        return {"header": header, "msg_type": header.get("msg_type"), "parent_header": parent,
                "metadata": metadata, "content": content}

    def get_iopub(self, timeout: float) -> dict[str, Any] | None:
        """The next IOPub message, or None after ``timeout`` seconds."""
        return self._recv(self.iopub, timeout)

    def get_shell(self, timeout: float) -> dict[str, Any] | None:
        return self._recv(self.shell, timeout)

    def close(self) -> None:
        self._ctx.destroy(linger=0)  # closes both sockets, then terminates
