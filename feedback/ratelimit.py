"""A token bucket per client: ``capacity`` requests at once, refilled over ``period`` seconds."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict


def parse_rate(text: str) -> tuple[int, float] | None:
    """``"20/60"`` → 20 requests per 60 s (burst of 20); ``"off"`` or ``"0"`` → no limit."""
    text = text.strip().lower()
    if text in ("", "0", "off", "none"):
        return None
    count, _, period = text.partition("/")
    capacity, seconds = int(count), float(period or 60)
    if capacity < 1 or seconds <= 0:
        raise ValueError(f"bad rate limit {text!r}: use COUNT/SECONDS, e.g. 20/60, or off")
    return capacity, seconds


class TokenBucket:
    def __init__(self, capacity: int, period: float, max_clients: int = 100_000, clock=time.monotonic):
        self.capacity = capacity
        self.rate = capacity / period  # tokens per second
        self._clock = clock
        self._max_clients = max_clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key → (tokens, last time)
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """Spend one token: 0.0 when allowed, else the seconds to wait before retrying."""
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.pop(key, (float(self.capacity), now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
            self._buckets[key] = (tokens - 1 if wait == 0 else tokens, now)
            if len(self._buckets) > self._max_clients:
                self._buckets.popitem(last=False)  # least recently seen client starts afresh
            return wait


def retry_after(wait: float) -> str:
    return str(max(1, math.ceil(wait)))
