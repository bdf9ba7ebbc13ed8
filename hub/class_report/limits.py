"""Rate limits: one token bucket per key (a student, a token), in bounded memory."""

from __future__ import annotations

import time
from collections import OrderedDict

__all__ = ["RateLimiter"]


class RateLimiter:
    """Allow ``rate`` requests per second per key on average, and bursts of up to ``burst``.

    At most ``max_keys`` keys are remembered (the least recently seen is forgotten first), so a flood of new keys
    cannot grow memory without bound.
    """

    def __init__(self, rate: float, burst: int, *, max_keys: int = 10_000, clock=time.monotonic):
        if not rate > 0:
            raise ValueError(f"rate: expected requests per second > 0 but got {rate!r}")
        if not (isinstance(burst, int) and burst >= 1):
            raise ValueError(f"burst: expected an integer >= 1 but got {burst!r}")
        self.rate, self.burst, self.max_keys, self.clock = float(rate), burst, max_keys, clock
        self._buckets: OrderedDict = OrderedDict()  # key -> (tokens, last time)

    def allow(self, key: str) -> tuple[bool, float]:
        """Take one token for ``key``: (True, 0.0), or (False, seconds until the next token)."""
        now = self.clock()
        tokens, last = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        allowed = tokens >= 1.0
        if allowed:
            tokens -= 1.0
        self._buckets[key] = (tokens, now)
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return allowed, 0.0 if allowed else (1.0 - tokens) / self.rate
