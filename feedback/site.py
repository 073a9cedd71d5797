"""The built book as static files, for ``python -m feedback serve --site _book``.

Starlette's StaticFiles (safe paths, ETag, 304, Range, HEAD) with what a book needs on top:
- Cache-Control: pages (``.html``) and files whose names carry no content hash are revalidated on every
  visit (``no-cache``: a 304 when unchanged); files named by their content hash (``fig-…-1a2b3c4d5e.svg``,
  Pagefind's ``en_5cb93af.pf_fragment``) are ``immutable`` for a year.
- Compression: a precompressed sibling (``pyodide.asm.wasm.gz``) when the browser accepts it, else text,
  JavaScript, JSON, SVG and wasm compressed once with Brotli or gzip and kept in memory.
- MIME types that browsers insist on: ``application/wasm`` (streaming compile), ``text/javascript``
  for ``.mjs`` (module scripts).
- Cross-origin isolation: every response says ``Cross-Origin-Opener-Policy: same-origin`` and
  ``Cross-Origin-Embedder-Policy: require-corp`` (ISOLATION), so a page is ``crossOriginIsolated``
  and an exercise's Stop interrupts Python in place (assets/js/exercises.js) instead of restarting it.
  The book loads nothing from another origin (the feedback POST is a CORS request), so nothing
  needs a Cross-Origin-Resource-Policy; require-corp rather than credentialless because every
  browser with cross-origin isolation has it (Safari has no credentialless).
- The pages name this service's endpoint (``<meta name="feedback-endpoint">``, which the page script
  reads) when the book was built without one: one command self-hosts a book built for issue links,
  with no rebuild, and a static host's copy of the same pages makes no request to find out.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import threading
from collections import OrderedDict
from email.utils import formatdate

from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import NotModifiedResponse, StaticFiles

try:
    import brotli
except ImportError:  # gzip alone is fine
    brotli = None

TYPES = {".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript",
         ".json": "application/json", ".svg": "image/svg+xml", ".woff2": "font/woff2", ".woff": "font/woff",
         ".gz": "application/gzip", ".pdf": "application/pdf", ".epub": "application/epub+zip"}
COMPRESSIBLE = re.compile(r"^(text/|application/(javascript|json|wasm|xml)|image/svg\+xml)")
HASHED = re.compile(r"[._-]([0-9a-f]{7,})\.[A-Za-z0-9_]+$")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
MIN_COMPRESS = 1024
CACHE_BYTES = 64 * 1024 * 1024
SIBLINGS = (("br", ".br"), ("gzip", ".gz"))
ISOLATION = {"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}


def media_type(path: str) -> str:
    import mimetypes

    ext = os.path.splitext(path)[1].lower()
    return TYPES.get(ext) or mimetypes.guess_type(path)[0] or "application/octet-stream"


def cache_control(path: str) -> str:
    name = os.path.basename(path)
    hashed = HASHED.search(name)
    if name.endswith(".html") or not hashed or not any(c.isdigit() for c in hashed.group(1)):
        return REVALIDATE
    return IMMUTABLE


def accepted_encodings(headers: Headers) -> set[str]:
    """Codings the request accepts (q=0 refuses one)."""
    out = set()
    for part in headers.get("accept-encoding", "").split(","):
        name, _, params = part.strip().partition(";")
        q = params.strip().removeprefix("q=")
        if name and not (q and q.replace(".", "", 1).isdigit() and float(q) == 0):
            out.add(name.strip().lower())
    return out


HEAD = re.compile(rb"<head\b[^>]*>", re.I)


def with_endpoint(page: bytes, endpoint: str) -> bytes:
    """``page`` naming ``endpoint`` in its head, unless it names an endpoint of its own."""
    if b'name="feedback-endpoint"' in page:
        return page
    tag = f'<meta name="feedback-endpoint" content="{endpoint}">'.encode()
    m = HEAD.search(page)
    return page[:m.end()] + tag + page[m.end():] if m else page


class Site(StaticFiles):
    def __init__(self, directory: str, endpoint: str | None = None):
        super().__init__(directory=directory, html=True)
        self.endpoint = endpoint
        self._cache: OrderedDict[tuple, bytes] = OrderedDict()
        self._cached_bytes = 0
        self._lock = threading.Lock()

    def file_response(self, full_path, stat_result, scope, status_code: int = 200) -> Response:
        full_path = str(full_path)
        request = Headers(scope=scope)
        kind = media_type(full_path)
        headers = {"Cache-Control": cache_control(full_path), "X-Content-Type-Options": "nosniff",
                   "Vary": "Accept-Encoding", **ISOLATION}
        accepts = accepted_encodings(request)
        response = None
        for coding, ext in SIBLINGS:
            if coding in accepts and os.path.isfile(full_path + ext):
                # its stat gives the ETag and Last-Modified now: without it FileResponse adds them only
                # when sent, and a revalidation (If-None-Match) found none and failed with a 500
                response = FileResponse(full_path + ext, status_code, stat_result=os.stat(full_path + ext),
                                        media_type=kind, headers={**headers, "Content-Encoding": coding})
                break
        if response is None and self.endpoint and kind == "text/html":
            coding = next((c for c in ("br", "gzip") if c in accepts and (c == "gzip" or brotli)), None)
            body = self._compressed(full_path, stat_result, coding, page=True)
            tag = hashlib.md5(f"{stat_result.st_mtime}-{stat_result.st_size}-{self.endpoint}".encode()).hexdigest()
            response = Response(body, status_code, media_type=kind, headers={
                **headers, **({"Content-Encoding": coding} if coding else {}), "ETag": f'"{tag}-{coding or "identity"}"',
                "Last-Modified": formatdate(stat_result.st_mtime, usegmt=True)})
        if response is None:
            coding = next((c for c in ("br", "gzip") if c in accepts and (c == "gzip" or brotli)), None)
            if coding and COMPRESSIBLE.match(kind) and stat_result.st_size >= MIN_COMPRESS and "range" not in request:
                body = self._compressed(full_path, stat_result, coding)
                tag = hashlib.md5(f"{stat_result.st_mtime}-{stat_result.st_size}".encode()).hexdigest()
                response = Response(body, status_code, media_type=kind, headers={
                    **headers, "Content-Encoding": coding, "ETag": f'"{tag}-{coding}"',
                    "Last-Modified": formatdate(stat_result.st_mtime, usegmt=True)})
            else:
                response = FileResponse(full_path, status_code, stat_result=stat_result, media_type=kind, headers=headers)
        if self.is_not_modified(response.headers, request):
            return NotModifiedResponse(response.headers)
        return response

    def _compressed(self, path: str, st: os.stat_result, coding: str | None, page: bool = False) -> bytes:
        """The file compressed with ``coding`` (None: as it is); a page naming the endpoint."""
        key = (path, st.st_mtime_ns, st.st_size, coding, page)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        with open(path, "rb") as f:
            raw = f.read()
        if page:
            raw = with_endpoint(raw, self.endpoint)
        body = raw if coding is None else brotli.compress(raw, quality=5) if coding == "br" else gzip.compress(raw, 6, mtime=0)
        with self._lock:
            self._cache[key] = body
            self._cached_bytes += len(body)
            while self._cached_bytes > CACHE_BYTES and len(self._cache) > 1:
                _, old = self._cache.popitem(last=False)
                self._cached_bytes -= len(old)
        return body
