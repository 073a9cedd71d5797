"""The HTTP service: ``POST /api/feedback``, ``GET /api/health``, ``GET /review`` (and ``POST
/review/resolve``), and with ``site`` the built book at ``/``."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import logging
import secrets
from urllib.parse import parse_qs, quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse
from starlette.routing import Mount, Route

from feedback import review
from feedback.config import Config
from feedback.cors import CORSMiddleware
from feedback.site import Site
from feedback.ratelimit import TokenBucket, parse_rate, retry_after
from feedback.storage import Repository
from feedback.validation import MAX_BODY_BYTES, Invalid, parse

log = logging.getLogger("feedback")
API_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
STATUS_FOR = {"created": 201, "duplicate": 200}


def refuse(status: int, reason: str, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": reason}, status, headers={**API_HEADERS, **(headers or {})})


def create_app(config: Config, repo: Repository | None = None, site: str | None = None) -> Starlette:
    repo = repo or Repository(config.db, config.sqlite_synchronous)
    rate = parse_rate(config.rate_limit)
    limiter = TokenBucket(*rate) if rate else None

    async def submit(request: Request):
        if limiter and (wait := limiter.take(request.client.host if request.client else "?")):
            return refuse(429, "too many submissions; try again later", {"Retry-After": retry_after(wait)})
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type != "application/json":
            return refuse(415, "content type must be application/json")
        try:
            submission = parse(await _read_body(request))
        except Invalid as refusal:
            return refuse(refusal.status, refusal.reason)
        try:
            stored = await run_in_threadpool(repo.add, submission, reader_key(request))
        except Exception:
            log.exception("storing %s failed", submission.id)
            return refuse(503, "storage unavailable; try again later")
        if stored.outcome == "conflict":
            return refuse(409, "this id was already used for a different submission")
        return JSONResponse({"id": stored.id, "status": stored.outcome}, STATUS_FOR[stored.outcome], headers=API_HEADERS)

    async def health(request: Request):
        ok = await run_in_threadpool(repo.healthy)
        return JSONResponse({"status": "ok" if ok else "database unreachable"}, 200 if ok else 503, headers=API_HEADERS)

    async def review_page(request: Request):
        if not _may_review(request, config.review_token):
            return refuse(401, "review token required" if config.review_token else "review is open to loopback only")
        status = request.query_params.get("status", "open")
        if status not in ("open", "resolved", "all"):
            return refuse(400, "status must be open, resolved or all")
        records = await run_in_threadpool(
            repo.find, request.query_params.get("page"), None if status == "all" else status)
        token = request.query_params.get("token") if config.review_token else None
        return HTMLResponse(review.render(records, status, token), headers={
            "Content-Security-Policy": review.CSP, "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"})  # same-origin: its form POST carries Origin

    async def review_resolve(request: Request):
        """The review page's form: resolve one suggestion, with an optional note for the errata page."""
        body = await request.body()  # url-encoded (parsed here: Starlette's form parser needs python-multipart)
        if len(body) > 16 * 1024:
            return refuse(413, "form too large")
        form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        token = form.get("token") or None
        if not _may_review(request, config.review_token, token):
            return refuse(401, "review token required" if config.review_token else "review is open to loopback only")
        # A form on another site must not resolve anything (the loopback-only mode has no token).
        if request.headers.get("sec-fetch-site", "same-origin") != "same-origin" or \
                request.headers.get("origin", _origin(request)) != _origin(request):
            return refuse(403, "cross-site form refused")
        note = str(form.get("errata") or "").strip() or None
        if note and len(note) > 2000:
            return refuse(400, "the note is too long (max 2000 characters)")
        record_id = str(form.get("id") or "")
        if not await run_in_threadpool(repo.resolve, record_id, note):
            return refuse(404, f"no suggestion with id {record_id[:64]}")
        query = f"?status=open{'&token=' + quote(str(token)) if token else ''}"
        return RedirectResponse(f"/review{query}", 303)

    async def http_error(request: Request, exc: HTTPException):
        return refuse(exc.status_code, exc.detail or "error", getattr(exc, "headers", None))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        repo.close()

    app = Starlette(
        routes=[
            Route("/api/feedback", submit, methods=["POST"]),
            Route("/api/health", health, methods=["GET"]),
            Route("/review", review_page, methods=["GET"]),
            Route("/review/resolve", review_resolve, methods=["POST"]),
            *([Mount("/", app=Site(site, endpoint="/api/feedback"))] if site else []),
        ],
        middleware=[Middleware(CORSMiddleware, allow_origins=list(config.allow_origins))],
        exception_handlers={HTTPException: http_error},
        lifespan=lifespan,
    )
    app.state.repo = repo
    return app


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "0")
    if not declared.isdigit():
        raise Invalid("bad Content-Length")
    if int(declared) > MAX_BODY_BYTES:
        raise Invalid(f"request body too large (max {MAX_BODY_BYTES} bytes)", 413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise Invalid(f"request body too large (max {MAX_BODY_BYTES} bytes)", 413)
        chunks.append(chunk)
    return b"".join(chunks)


# A per-process key: a reader is told apart by a keyed hash of their address, which is never stored
# and cannot be recovered from the database (nor matched across restarts, which the window needs not).
_READER_KEY = secrets.token_bytes(32)


def reader_key(request: Request) -> str:
    host = request.client.host if request.client else "?"
    return hmac.new(_READER_KEY, host.encode(), hashlib.sha256).hexdigest()[:32]


def _may_review(request: Request, token: str | None, offered: str | None = None) -> bool:
    if token is None:
        try:
            return request.client is not None and ipaddress.ip_address(request.client.host).is_loopback
        except ValueError:
            return False
    offered = offered or request.query_params.get("token") or request.headers.get("authorization", "").removeprefix("Bearer ")
    return hmac.compare_digest(offered.encode(), token.encode())


def _origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', '')}"
