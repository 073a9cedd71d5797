"""The HTTP service: ``POST /api/feedback``, ``GET /api/health``, ``GET /review``."""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import logging

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from feedback import review
from feedback.config import Config
from feedback.cors import CORSMiddleware
from feedback.ratelimit import TokenBucket, parse_rate, retry_after
from feedback.storage import Repository
from feedback.validation import MAX_BODY_BYTES, Invalid, parse

log = logging.getLogger("feedback")
API_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
STATUS_FOR = {"created": 201, "duplicate": 200}


def refuse(status: int, reason: str, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": reason}, status, headers={**API_HEADERS, **(headers or {})})


def create_app(config: Config, repo: Repository | None = None) -> Starlette:
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
            stored = await run_in_threadpool(repo.add, submission)
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
        return HTMLResponse(review.render(records, status), headers={
            "Content-Security-Policy": review.CSP, "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})

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


def _may_review(request: Request, token: str | None) -> bool:
    if token is None:
        try:
            return request.client is not None and ipaddress.ip_address(request.client.host).is_loopback
        except ValueError:
            return False
    offered = request.query_params.get("token") or request.headers.get("authorization", "").removeprefix("Bearer ")
    return hmac.compare_digest(offered.encode(), token.encode())
