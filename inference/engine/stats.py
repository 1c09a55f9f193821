"""The engine's state for GetStats: the snapshot `LLMEngine.stats()` returns.

Token and request totals are the daemon's (`inference/server/counters.py`, from each request's
figures); the engine reports only what the daemon cannot see: its queues, its KV pool, preemptions.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineStats:
    """The engine's queues and KV pool now, and its pool pressure since start."""

    waiting: int
    running: int
    kv_blocks_total: int
    kv_blocks_free: int  # free or cached-but-unreferenced (evictable)
    kv_blocks_cached_idle: int  # cached blocks no request holds: reusable, evicted when room is needed
    preemptions: int
    kv_evictions: int
