"""Fuzz the feedback service with bad input, then check XSS/SQL payloads.

Part 1: --count (default 10,000) seeded random bad requests (broken JSON, wrong types, unknown
fields, oversize fields and bodies, bad ids/emails, control characters, lone surrogates, deep
nesting, wrong content types...). Every one must be answered 4xx with a JSON {"error": ...}, the
service must stay up, and nothing may be stored.
Part 2: valid submissions carrying XSS and SQL payloads must be stored verbatim and come out
escaped on the review page.

    python benchmarks/feedback_fuzz.py [--count 10000] [--seed 1] [--db URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import urllib.request
from collections import Counter

from feedback_common import temp_db_url, HOST, Connection, Service, encode, make_body, stored_rows

JUNK_VALUES = [None, True, 0, -1, 1.5, 1e308, [], {}, [1, 2], {"a": 1}, "", " ", "x" * 6000]
BAD_STRINGS = ["nul\x00", "esc\x1b[2J", "bell\x07", "del\x7f", "c1\x85", "lone\ud800", "lone\udfff"]
XSS = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "javascript:alert(1)",
       "<svg/onload=alert(1)>", "</textarea><script>x</script>", "{{7*7}}<b>bold</b>"]
SQL = ["'; DROP TABLE feedback; --", "1' OR '1'='1", "\" OR \"\"=\"", "?; DELETE FROM feedback",
       "%s%s%s", "$1); TRUNCATE feedback; --"]
FIELDS = ["id", "page", "section", "version", "suggestion", "name", "email", "selector"]


def bad_request(rng: random.Random, n: int) -> tuple[bytes, str]:
    """One bad (body, content type)."""
    body = make_body(n)
    kind = rng.randrange(16)
    if kind == 0:
        raw = encode(body)
        return raw[: rng.randrange(len(raw))], "application/json"  # truncated JSON
    if kind == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))), "application/json"
    if kind == 2:
        return encode(body), rng.choice(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                         "", "application/jsonx", "text/json"])
    if kind == 3:
        body[f"field{rng.randrange(1000)}"] = rng.choice(JUNK_VALUES)
    elif kind == 4:
        body[rng.choice(FIELDS)] = rng.choice([v for v in JUNK_VALUES if v is not None and not isinstance(v, str)])
    elif kind == 5:
        del body[rng.choice(["id", "page", "section", "version", "suggestion"])]
    elif kind == 6:
        body["id"] = rng.choice(["", "1234", "not-a-uuid", str(n), "g" * 36, "{" + body["id"] + "}",
                                 body["id"].replace("-", ""), body["id"] + "0"])
    elif kind == 7:
        body["email"] = rng.choice(["a", "a@", "@b.c", "a b@c.d", "a@b", "a@@b.c", "<a@b.c>", "a@b..c", "x" * 300 + "@b.c"])
    elif kind == 8:
        field, limit = rng.choice([("suggestion", 5000), ("page", 500), ("section", 200), ("version", 100), ("name", 100)])
        body[field] = "/" + "y" * (limit + rng.randrange(1, 500))
    elif kind == 9:
        body["selector"][rng.choice(["exact", "prefix", "suffix"])] = "z" * rng.randrange(2001, 3000)
    elif kind == 10:
        body["selector"] = rng.choice([{"type": "TextPositionSelector", "exact": "a"}, {"exact": "a"}, "quote", [],
                                       {**body["selector"], "extra": 1}, {**body["selector"], "exact": ""}])
    elif kind == 11:
        body[rng.choice(["suggestion", "page", "section", "name"])] = "/" + rng.choice(BAD_STRINGS)
    elif kind == 12:
        depth = rng.randrange(1000, 15000)
        return b'{"id": ' + b"[" * depth + b"]" * depth + b"}", "application/json"
    elif kind == 13:
        return rng.choice([b"null", b"[]", b"42", b'"text"', b"{}", b'{"id": NaN}', b'{"a":1,"a":2}', b""]), "application/json"
    elif kind == 14:
        return b'{"suggestion": "' + b"w" * rng.randrange(33_000, 60_000) + b'"}', "application/json"
    else:
        body["suggestion"] = rng.choice(["", "   ", "\n\t"])
    return json.dumps(body).encode(), "application/json"


async def fuzz(port: int, count: int, seed: int) -> tuple[Counter, list]:
    rng = random.Random(seed)
    statuses, bad = Counter(), []
    requests = [bad_request(rng, n) for n in range(count)]

    async def worker(items):
        conn = Connection(port)
        for body, ctype in items:
            headers = {"Content-Type": ctype} if ctype else {}
            status, _, data = await conn.request("POST", "/api/feedback", body, headers)
            statuses[status] += 1
            try:
                ok = 400 <= status < 500 and "error" in json.loads(data)
            except ValueError:
                ok = False
            if not ok:
                bad.append((status, body[:120], data[:200]))
        conn.close()

    await asyncio.gather(*(worker(requests[i::16]) for i in range(16)))
    return statuses, bad


async def payloads(port: int) -> list[dict]:
    conn, bodies = Connection(port), []
    for i, text in enumerate(XSS + SQL):
        body = make_body(i)
        body.update(suggestion=text, name=text[:100], section=text, page="/" + text)
        body["selector"].update(exact=text, prefix=text, suffix=text)
        status, _, _ = await conn.request("POST", "/api/feedback", encode(body), {"Content-Type": "application/json"})
        assert status == 201, status
        bodies.append(body)
    conn.close()
    return bodies


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--db")
    args = ap.parse_args()

    db = args.db or temp_db_url("feedback-fuzz-")
    service = Service(db)
    service.start()
    try:
        began = time.perf_counter()
        statuses, bad = asyncio.run(fuzz(service.port, args.count, args.seed))
        elapsed = time.perf_counter() - began
        up = service.proc.poll() is None and service.healthy()
        stored_after_fuzz = len(stored_rows(db))
        bodies = asyncio.run(payloads(service.port))
        with urllib.request.urlopen(f"http://{HOST}:{service.port}/review?status=all") as answer:
            review = answer.read().decode()
    finally:
        service.stop()

    rows = {r["id"]: r for r in stored_rows(db)}
    verbatim = sum(all(rows[b["id"]][f] == b[f] for f in ("suggestion", "name", "section", "page"))
                   and all(rows[b["id"]][f] == b["selector"][f] for f in ("exact", "prefix", "suffix")) for b in bodies)
    raw_in_review = [t for t in XSS if t in review and any(c in t for c in '<>"')]  # markup left unescaped
    print(f"fuzzed requests      {sum(statuses.values())} in {elapsed:.1f} s, by status {dict(sorted(statuses.items()))}")
    print(f"not 4xx+JSON error   {len(bad)}" + (f"  e.g. {bad[:3]}" if bad else ""))
    print(f"service up after     {up}")
    print(f"stored after fuzz    {stored_after_fuzz}")
    print(f"XSS/SQL payloads     {len(bodies)} sent, {verbatim} stored verbatim, "
          f"{len(raw_in_review)} appear unescaped on /review, <script in page: {'<script' in review}")
    ok = not bad and up and stored_after_fuzz == 0 and verbatim == len(bodies) and not raw_in_review
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
