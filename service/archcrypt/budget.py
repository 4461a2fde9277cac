"""The memory budget: what the requests in flight may cost together, reserved before the
bytes exist; and the JSON shape bound, which refuses structure no schema here can contain
before a parser materializes it.

A request's cost is an estimate of the peak memory serving it takes: a fixed part (the
request, its task, its response) plus the body's size times a factor for its media type.
JSON pays for the raw body, the parsed document, the decoded bytes, the result and its
encoded form; a raw binary body about half of that; a body a route consumes chunk by chunk
only its chunks. The factors were measured as peak RSS over body size (README, "Memory").

With a declared Content-Length the whole cost is reserved before the route runs; a chunked
body reserves as it arrives, in steps. A request that does not fit waits (first come,
first served, so a large one is never starved by a stream of small ones) for at most
`wait` seconds, then gets 503 with Retry-After. The budget never refuses work the service
could do: one worst-case request always fits (checked at start-up), and the default admits
more maximum-size requests at once than two cores can process.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from dataclasses import dataclass
from typing import Final

KiB: Final = 1024
MiB: Final = 1024 * KiB

# A chunked body is reserved in steps of this much estimated cost, not chunk by chunk.
RESERVE_STEP: Final = 1 * MiB


@dataclass(frozen=True)
class CostModel:
    """Estimated peak bytes of one request, from its body size and media type."""

    base: int = 64 * KiB
    json_factor: float = 5.5
    binary_factor: float = 3.5
    stream_chunk: int = 1 * MiB  # what a streamed body holds at once, whatever its length

    def factor(self, media: str, streamed: bool) -> float:
        if streamed:
            return 0.0
        if media == "application/json" or media.endswith("+json"):
            return self.json_factor
        return self.binary_factor

    def cost(self, media: str, body_bytes: int, streamed: bool = False) -> int:
        if streamed:
            return self.base + self.stream_chunk
        return self.base + math.ceil(self.factor(media, streamed) * body_bytes)


class BudgetExhaustedError(Exception):
    """No room in the budget within the wait; answered 503 with Retry-After."""

    def __init__(self, wanted: int, capacity: int) -> None:
        super().__init__(f"wanted {wanted} of {capacity} bytes")
        self.wanted = wanted


class MemoryBudget:
    """A counting semaphore over bytes, with a first-come-first-served queue and a timeout.

    Everything runs on the event loop's thread, so plain integers need no lock.
    """

    def __init__(self, capacity: int, wait: float) -> None:
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self.wait = wait
        self.in_use = 0
        self.peak = 0
        self.refusals = 0
        self._waiters: deque[tuple[int, asyncio.Future[bool]]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def _take(self, amount: int) -> None:
        self.in_use += amount
        self.peak = max(self.peak, self.in_use)

    async def acquire(self, amount: int) -> None:
        """Reserve `amount` bytes or raise BudgetExhaustedError after `wait` seconds."""
        if amount > self.capacity:
            self.refusals += 1
            raise BudgetExhaustedError(amount, self.capacity)
        if not self._waiters and self.in_use + amount <= self.capacity:
            self._take(amount)
            return
        if self.wait <= 0:
            self.refusals += 1
            raise BudgetExhaustedError(amount, self.capacity)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        entry = (amount, future)
        self._waiters.append(entry)

        def expire() -> None:
            if not future.done():
                self._waiters.remove(entry)
                future.set_result(False)
                self._wake()  # a large waiter timing out may let smaller ones behind it in

        timer = loop.call_later(self.wait, expire)
        try:
            granted = await future
        except asyncio.CancelledError:
            # The client went away while waiting; give back what may have been granted.
            if future.done() and not future.cancelled() and future.result():
                self.release(amount)
            elif entry in self._waiters:
                self._waiters.remove(entry)
                self._wake()
            raise
        finally:
            timer.cancel()
        if not granted:
            self.refusals += 1
            raise BudgetExhaustedError(amount, self.capacity)

    def release(self, amount: int) -> None:
        self.in_use -= amount
        assert self.in_use >= 0, "released more than was reserved"
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use + self._waiters[0][0] <= self.capacity:
            amount, future = self._waiters.popleft()
            if not future.done():
                self._take(amount)
                future.set_result(True)


class Reservation:
    """What one request holds; grows as a chunked body arrives, released once at the end."""

    __slots__ = ("budget", "held")

    def __init__(self, budget: MemoryBudget) -> None:
        self.budget = budget
        self.held = 0

    async def ensure(self, total: int) -> None:
        """Hold at least `total` bytes (rounded up to a step, so a chunked body pays a few
        acquisitions, not one per chunk)."""
        if total <= self.held:
            return
        target = min(self.budget.capacity, math.ceil(total / RESERVE_STEP) * RESERVE_STEP)
        target = max(target, total)
        await self.budget.acquire(target - self.held)
        self.held = target

    def release(self) -> None:
        if self.held:
            self.budget.release(self.held)
            self.held = 0


# ---- the shape of a JSON body ---------------------------------------------------------------


@dataclass(frozen=True)
class JsonShape:
    """The most objects/arrays and the most commas a route's JSON can hold.

    Counted over the raw bytes, strings included: every string in these schemas is base64,
    an algorithm or a key name, none of which holds a brace, a bracket or a comma, so a
    valid body is never refused, and a body of a million empty objects is refused after
    the first few KiB instead of after a parser has built a million dicts.
    """

    containers: int
    commas: int

    @classmethod
    def single(cls) -> JsonShape:
        # A flat object; a little room for the batch-less routes that take small lists.
        return cls(containers=8, commas=32)

    @classmethod
    def batch(cls, max_items: int) -> JsonShape:
        # {"items": [{...}, ...]}: an object per item, up to 8 fields each.
        return cls(containers=max_items + 8, commas=max_items * 8 + 32)


class JsonShapeCounter:
    __slots__ = ("commas", "containers", "shape")

    def __init__(self, shape: JsonShape) -> None:
        self.shape = shape
        self.containers = 0
        self.commas = 0

    def feed(self, chunk: bytes) -> str | None:
        """None while the body may still be valid; else what is wrong with it."""
        self.containers += chunk.count(b"{") + chunk.count(b"[")
        self.commas += chunk.count(b",")
        if self.containers > self.shape.containers:
            return (
                f"the body nests more than {self.shape.containers} JSON objects or arrays; "
                "this route's schema holds fewer"
            )
        if self.commas > self.shape.commas:
            return (
                f"the body has more than {self.shape.commas} JSON members or elements; "
                "this route's schema holds fewer"
            )
        return None
