"""CORS with an allow-list for ``/api/``, as ASGI middleware; refusals are JSON like every other refusal."""

from __future__ import annotations

import json

ALLOW_METHODS = ("GET", "POST", "OPTIONS")
ALLOW_HEADERS = "content-type"
MAX_AGE = "600"


class CORSMiddleware:
    def __init__(self, app, allow_origins: list[str]):
        self.app = app
        self.allow_origins = {o.rstrip("/") for o in allow_origins}

    def allowed(self, origin: str, scope) -> bool:
        return origin in self.allow_origins or "*" in self.allow_origins or origin == _own_origin(scope)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/api/"):
            return await self.app(scope, receive, send)  # the book's pages and the review page are not an API
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        origin = headers.get("origin")
        if origin is None:
            return await self.app(scope, receive, send)
        if not self.allowed(origin, scope):
            return await _refuse(send, 403, f"origin not allowed: {origin[:200]}")
        cors_headers = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin"),
                        (b"access-control-expose-headers", b"Retry-After")]
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            if headers["access-control-request-method"] not in ALLOW_METHODS:
                return await _refuse(send, 405, "method not allowed")
            return await _respond(send, 204, b"", cors_headers + [
                (b"access-control-allow-methods", ", ".join(ALLOW_METHODS).encode()),
                (b"access-control-allow-headers", ALLOW_HEADERS.encode()),
                (b"access-control-max-age", MAX_AGE.encode()),
            ])

        async def send_with_cors(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": list(message.get("headers", [])) + cors_headers}
            await send(message)

        await self.app(scope, receive, send_with_cors)


def _own_origin(scope) -> str | None:
    host = dict(scope["headers"]).get(b"host")
    return f"{scope.get('scheme', 'http')}://{host.decode('latin-1')}" if host else None


async def _refuse(send, status: int, reason: str) -> None:
    body = json.dumps({"error": reason}).encode()
    await _respond(send, status, body, [(b"content-type", b"application/json")])


async def _respond(send, status: int, body: bytes, headers: list) -> None:
    headers = headers + [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
