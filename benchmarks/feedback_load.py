"""Sustained load on the feedback service: N submissions/s for D seconds, with deliberate retries.

Open loop: submission i is due at start + i/rate whatever the service's pace. Every submission is
retried until acknowledged (201/200); about 10% are sent again after their acknowledgement and 2%
twice at once, as browsers that lost an answer would. Afterwards the database is checked:
lost = acknowledged but not stored (or stored with other content), duplicated = stored more than once.

    python benchmarks/feedback_load.py [--rate 500] [--duration 60] [--db sqlite:///PATH|postgresql://...]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections import Counter

from feedback_common import temp_db_url, Pool, Service, encode, make_body, percentile, stored_rows


async def run(port: int, rate: float, duration: float, connections: int, seed: int) -> dict:
    rng = random.Random(seed)
    pool = Pool(port, connections)
    sent, acked, latencies, statuses = {}, set(), [], Counter()
    extra = Counter()

    async def send(body: bytes) -> int:
        """Until 201/200 or 409; returns the final status."""
        delay = 0.05
        while True:
            began = time.perf_counter()
            try:
                status, _ = await pool.post_json(body)
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
                status = 0
            statuses[status] += 1
            if status in (200, 201, 409) or 400 <= status < 500 and status != 429:
                latencies.append(time.perf_counter() - began)
                return status
            extra["retries"] += 1
            await asyncio.sleep(delay * (0.5 + rng.random() / 2))
            delay = min(delay * 2, 2.0)

    async def submit(n: int):
        body = make_body(n)
        data = encode(body)
        sent[body["id"]] = body
        roll = rng.random()
        if roll < 0.02:  # two copies at once
            extra["concurrent_duplicates"] += 1
            results = await asyncio.gather(send(data), send(data))
        else:
            results = [await send(data)]
        if roll > 0.90:  # the answer "was lost": send it again
            extra["deliberate_retries"] += 1
            results.append(await send(data))
        if all(r in (200, 201) for r in results):
            acked.add(body["id"])

    started = time.perf_counter()
    tasks = []
    total = int(rate * duration)
    for n in range(total):
        wait = started + n / rate - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        tasks.append(asyncio.create_task(submit(n)))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    return {"sent": sent, "acked": acked, "latencies": latencies, "statuses": statuses,
            "elapsed": elapsed, "extra": extra, "total": total}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=500, help="submissions per second (default 500)")
    ap.add_argument("--duration", type=float, default=60, help="seconds (default 60)")
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--db", help="database URL (default: a temporary SQLite file)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    db = args.db or temp_db_url("feedback-load-")
    service = Service(db)
    service.start()
    try:
        r = asyncio.run(run(service.port, args.rate, args.duration, args.connections, args.seed))
    finally:
        service.stop()

    rows = stored_rows(db)
    stored = Counter(row["id"] for row in rows)
    by_id = {row["id"]: row for row in rows}
    lost = sum(1 for i in r["acked"] if i not in by_id or by_id[i]["suggestion"] != r["sent"][i]["suggestion"])
    duplicated = sum(c - 1 for c in stored.values() if c > 1)
    unacked = r["total"] - len(r["acked"])
    print(f"database            {db.split('://')[0]}")
    print(f"target              {args.rate:.0f}/s for {args.duration:.0f} s = {r['total']} submissions")
    print(f"achieved            {len(r['acked']) / r['elapsed']:.1f} acknowledged submissions/s over {r['elapsed']:.1f} s")
    print(f"requests            {sum(r['statuses'].values())}  by status {dict(sorted(r['statuses'].items()))}")
    print(f"deliberate retries  {r['extra']['deliberate_retries']} sequential, {r['extra']['concurrent_duplicates']} concurrent pairs; "
          f"{r['extra']['retries']} retries after errors")
    print(f"latency             p50 {percentile(r['latencies'], 50) * 1000:.1f} ms, p95 {percentile(r['latencies'], 95) * 1000:.1f} ms, "
          f"p99 {percentile(r['latencies'], 99) * 1000:.1f} ms")
    print(f"stored rows         {len(rows)}")
    print(f"lost                {lost}")
    print(f"duplicated          {duplicated}")
    print(f"unacknowledged      {unacked}")
    return 0 if lost == duplicated == unacked == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
