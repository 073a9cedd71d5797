"""kill -9 the feedback service under load, restart it, and check that every acknowledged
(201/200) submission is stored with its content.

Clients keep every submission until it is acknowledged, retrying with backoff while the service is
down, as the browser client does. The service is killed --kills times at even intervals.

    python benchmarks/feedback_crash.py [--rate 200] [--duration 20] [--kills 3] [--db URL]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from collections import Counter

from feedback_common import temp_db_url, Pool, Service, encode, make_body, stored_rows


async def load(service: Service, rate: float, duration: float, kills: int, downtime: float) -> dict:
    rng = random.Random(7)
    pool = Pool(service.port, 32)
    sent, acked, statuses = {}, set(), Counter()
    in_flight_at_kill = []
    in_flight = set()

    async def submit(n: int):
        body = make_body(n)
        sent[body["id"]] = body
        data, delay = encode(body), 0.05
        in_flight.add(body["id"])
        while True:
            try:
                status, _ = await pool.post_json(data, timeout=5)
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
                status = 0
            statuses[status] += 1
            if status in (200, 201):
                acked.add(body["id"])
                break
            if 400 <= status < 500:
                break
            await asyncio.sleep(delay * (0.5 + rng.random() / 2))
            delay = min(delay * 2, 1.0)
        in_flight.discard(body["id"])

    async def killer():
        for _ in range(kills):
            await asyncio.sleep(duration / (kills + 1))
            in_flight_at_kill.append(len(in_flight))
            service.kill()
            await asyncio.sleep(downtime)
            await asyncio.to_thread(service.start)

    started = time.perf_counter()
    kill_task = asyncio.create_task(killer())
    tasks = []
    for n in range(int(rate * duration)):
        wait = started + n / rate - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        tasks.append(asyncio.create_task(submit(n)))
    await kill_task
    await asyncio.gather(*tasks)
    return {"sent": sent, "acked": acked, "statuses": statuses, "in_flight_at_kill": in_flight_at_kill,
            "elapsed": time.perf_counter() - started}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=200)
    ap.add_argument("--duration", type=float, default=20)
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--downtime", type=float, default=0.5, help="seconds between kill and restart")
    ap.add_argument("--db")
    args = ap.parse_args()

    db = args.db or temp_db_url("feedback-crash-")
    service = Service(db)
    service.start()
    try:
        r = asyncio.run(load(service, args.rate, args.duration, args.kills, args.downtime))
    finally:
        service.stop()

    by_id = {row["id"]: row for row in stored_rows(db)}
    missing = [i for i in r["acked"] if i not in by_id]
    altered = [i for i in r["acked"] if i in by_id and by_id[i]["suggestion"] != r["sent"][i]["suggestion"]]
    print(f"database                  {db.split('://')[0]}")
    print(f"kill -9                   {args.kills} times, {args.downtime} s down each; in flight at each kill: {r['in_flight_at_kill']}")
    print(f"submissions               {len(r['sent'])} over {r['elapsed']:.1f} s")
    print(f"requests by status        {dict(sorted(r['statuses'].items()))}  (0 = connection refused/reset)")
    print(f"acknowledged              {len(r['acked'])}")
    print(f"stored (of these)         {sum(1 for i in r['sent'] if i in by_id)}")
    print(f"acknowledged but missing  {len(missing)}")
    print(f"stored with other content {len(altered)}")
    return 0 if not missing and not altered and len(r["acked"]) == len(r["sent"]) else 1


if __name__ == "__main__":
    sys.exit(main())
