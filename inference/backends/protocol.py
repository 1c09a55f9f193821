"""What the gRPC servicer needs from the engine, as a narrow protocol.

The servicer speaks only to an `InferenceBackend`; `inference.backends.local_engine` adapts the real
engine to it. Keeping the boundary this small is what lets the servicer's cancellation and status
logic be read (and reasoned about) without the engine's internals.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Protocol

from inference.engine.sequence import Request, RequestOutput


@dataclass(frozen=True)
class BackendStats:
    """The engine's state now (KV pool occupancy, request counts) and its pool pressure since start."""

    kv_blocks_total: int
    kv_blocks_used: int
    kv_blocks_cached: int  # no request holds them; they still cache a prefix
    running: int
    waiting: int
    preemptions: int
    kv_evictions: int

    @classmethod
    def total(cls, parts: list[BackendStats]) -> BackendStats:
        """The sums of several engines' figures (the daemon's, over the models it serves)."""
        return cls(*(sum(getattr(part, name) for part in parts) for name in cls.__dataclass_fields__))


class InferenceBackend(Protocol):
    """An engine the daemon can drive from asyncio.

    `generate` yields outputs of one request until one has ``finished=True`` (finish reason, final
    figures, and `error` when it failed); closing the iterator early must abort the request. `abort`
    is thread-safe and idempotent, and makes the request's stream finish with CANCELLED within one
    engine step, releasing its KV blocks; it returns whether the request was still live.
    """

    def generate(self, request: Request) -> AsyncGenerator[RequestOutput, None]: ...

    def abort(self, request_id: str) -> bool: ...

    def stats(self) -> BackendStats: ...

    async def close(self) -> None: ...
