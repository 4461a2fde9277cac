"""Token-bucket rate limits, per bearer token and per client address; off until configured.

Each bucket holds up to `burst` requests and refills at `rate` per second; a request takes
one or is refused with the seconds until one is back (the 429's Retry-After). Buckets live
in a dict keyed by token name or client address. A full bucket is the same as none, so the
dict is pruned of full buckets whenever it grows past `max_keys`: its size follows the
clients active in the last burst/rate seconds, not every address ever seen.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Final


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float


class RateLimiter:
    DEFAULT_MAX_KEYS: Final = 65536

    def __init__(self, rate: float, burst: int = 0, max_keys: int = DEFAULT_MAX_KEYS) -> None:
        if rate <= 0:
            raise ValueError("rate must be positive (a limiter that is off is None)")
        self.rate = rate
        # Two seconds' worth by default, and never less than one request.
        self.burst = float(burst) if burst > 0 else max(1.0, math.ceil(2 * rate))
        self.max_keys = max_keys
        self._buckets: dict[str, _Bucket] = {}

    def acquire(self, key: str, now: float | None = None) -> float:
        """0 when the request may go ahead, else the seconds until it could."""
        now = time.monotonic() if now is None else now
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_keys:
                self._prune(now)
            bucket = self._buckets[key] = _Bucket(self.burst, now)
        else:
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) * self.rate)
            bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def _prune(self, now: float) -> None:
        full_after = self.burst / self.rate
        stale = [k for k, b in self._buckets.items() if now - b.stamp >= full_after]
        for key in stale:
            del self._buckets[key]
        if len(self._buckets) >= self.max_keys:
            # Every bucket is in use: drop the oldest half rather than grow without bound
            # (a dropped client starts again with a full bucket: generous, never unbounded).
            oldest = sorted(self._buckets.items(), key=lambda kv: kv[1].stamp)
            for key, _ in oldest[: len(oldest) // 2]:
                del self._buckets[key]

    def __len__(self) -> int:
        return len(self._buckets)


def retry_after_header(seconds: float) -> str:
    """Retry-After takes whole seconds; round up so a client that obeys it succeeds."""
    return str(max(1, math.ceil(seconds)))
