"""Engine-wide figures: running totals, and the snapshot `LLMEngine.stats()` returns for GetStats."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class EngineTotals:
    """Counters over all requests since start."""

    prompt_tokens: int = 0
    reused_tokens: int = 0  # prompt tokens served from the prefix cache
    computed_tokens: int = 0  # prompt tokens run through the model
    generated_tokens: int = 0
    spec_proposed: int = 0
    spec_accepted: int = 0
    target_forward_passes: int = 0


@dataclass
class EngineStats(EngineTotals):
    """A snapshot of the totals plus the engine's current state."""

    requests_finished: int = 0
    preemptions: int = 0
    waiting: int = 0
    running: int = 0
    kv_blocks_total: int = 0
    kv_blocks_free: int = 0  # free or cached-but-unreferenced (evictable)
    kv_blocks_cached: int = 0  # blocks indexed by prefix hash, whether a request holds them or not
    kv_blocks_cached_idle: int = 0  # cached blocks no request holds: reusable, evicted when room is needed
    kv_evictions: int = 0
    busy_seconds: float = 0.0  # time spent in step(): generated_tokens / busy_seconds is tokens/s
