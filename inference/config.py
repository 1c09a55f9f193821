"""Engine and sampling settings.

These are plain dataclasses with no torch import, so the daemon's argument parsing and the gRPC
layer can build and validate them cheaply. `validate()` raises `ValueError` with one line naming the
bad field; the daemon maps that to INVALID_ARGUMENT.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from inference.reply_limits import DEFAULT_COMPLETION_TOKENS


class SpecMode(enum.StrEnum):
    """Which proposer a request may use for speculative decoding."""

    AUTO = "auto"  # prompt lookup, else the draft model if loaded; switches itself off when it does not pay
    OFF = "off"
    NGRAM = "ngram"  # prompt lookup only
    DRAFT = "draft"  # draft model only (falls back to plain decoding when none is loaded)


class RequestKind(enum.StrEnum):
    """Completion requests (ghost text) outrank generation requests (refactors, fixes), which outrank
    prefills (a prompt computed ahead of a completion at a cursor, nothing generated)."""

    COMPLETION = "completion"
    GENERATION = "generation"
    PREFILL = "prefill"


@dataclass(slots=True)
class SamplingParams:
    """How to pick tokens and when to stop.

    temperature 0 means greedy. `seed` makes sampling reproducible per request (speculative or not,
    a seeded request draws from its own generator). `stop` strings end the output before the string;
    `stop_token_ids` end it without emitting that token (FIM templates pass their end tokens here).
    """

    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    max_tokens: int = DEFAULT_COMPLETION_TOKENS
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    ignore_eos: bool = False

    def validate(self) -> None:
        """Raise ValueError naming the first bad field. The one owner of the ranges: every face (gRPC,
        the OpenAI and /infill HTTP faces) validates through it."""
        if not math.isfinite(self.temperature) or self.temperature < 0.0:
            raise ValueError(
                f"temperature must be a finite number >= 0 (0 is greedy), got {self.temperature}"
            )
        if not math.isfinite(self.top_p) or not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if any(not s for s in self.stop):
            raise ValueError("stop contains an empty string")

    @property
    def greedy(self) -> bool:
        """Temperature 0: always the most likely token."""
        return self.temperature == 0.0


@dataclass(slots=True)
class SpeculationConfig:
    """Speculative decoding settings shared by all requests.

    A round verifies at most `k_max` proposed tokens, as many as the acceptance so far makes worth their
    measured cost (`inference/spec_decode/controller.py`). Prompt lookup matches the sequence's tail
    over at most `ngram_max` tokens and needs at least `ngram_min`. In mode `auto`, a draft model that
    does not pay is paused and probed again after `probe_interval` steps (doubling up to 8x).
    """

    k_init: int = 4
    k_min: int = 1
    k_max: int = 8
    ngram_max: int = 64
    ngram_min: int = 2
    probe_interval: int = 16

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        if not 1 <= self.k_min <= self.k_init <= self.k_max:
            raise ValueError(
                f"need 1 <= k_min <= k_init <= k_max, got {self.k_min}, {self.k_init}, {self.k_max}"
            )
        if not 1 <= self.ngram_min <= self.ngram_max:
            raise ValueError(f"need 1 <= ngram_min <= ngram_max, got {self.ngram_min}, {self.ngram_max}")
        if self.probe_interval < 1:
            raise ValueError(f"probe_interval must be >= 1, got {self.probe_interval}")


@dataclass(slots=True)
class EngineConfig:
    """Settings of one engine (one target model, optionally one draft model).

    The target's preallocated KV pool is sized by the model and the work (`inference/engine/
    kv_pool_size.py`) unless `num_kv_blocks` (blocks), `kv_tokens` (tokens) or `kv_cache_mb` (MiB) says,
    in that order; the draft model's pool holds as many tokens as the target's unless
    `draft_num_kv_blocks` or `draft_kv_cache_mb` says. A step computes at most `max_step_tokens` prompt tokens
    across requests (completions first), and one prompt at most `prefill_chunk` tokens per step, so a
    long prompt cannot stall the others; at most `decode_step_prompt_tokens` while a request of the
    step decodes, so newer requests' prompts do not hold each of its tokens back for seconds.
    """

    block_size: int = 16
    kv_cache_mb: float | None = None
    kv_tokens: int | None = None
    num_kv_blocks: int | None = None
    draft_kv_cache_mb: float | None = None
    draft_num_kv_blocks: int | None = None
    enable_prefix_cache: bool = True
    max_running: int = 16
    max_waiting: int = 64
    max_step_tokens: int = 2048
    prefill_chunk: int = 1024
    # On a CPU a step that reads 2,048 prompt tokens takes seconds, and each decoding request of the
    # step waits for it: in issue 28's cancel storm (16 clients, each sending its next request as its
    # last ended) some prompt was read in almost every step, and decoding crawled.
    decode_step_prompt_tokens: int = 256
    # A prefill request (RequestKind.PREFILL) reads its prompt in chunks this small (at most
    # prefill_chunk). A completion arriving meanwhile stops the pass between two layers (it waits for
    # one layer of the chunk), and the chunk's work is redone later: smaller chunks make that wait
    # shorter and cost a little more per background token (figures: docs/benchmarks.md).
    background_prefill_chunk: int = 64
    # End a request whose output loops, keeping the loop's first copy (inference.engine.repetition).
    stop_repetition: bool = True
    speculation: SpeculationConfig = field(default_factory=SpeculationConfig)

    def validate(self) -> None:
        """Raise ValueError naming the first bad field."""
        if self.block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {self.block_size}")
        if self.kv_cache_mb is not None and not self.kv_cache_mb > 0:
            raise ValueError(f"kv_cache_mb must be > 0, got {self.kv_cache_mb}")
        if self.kv_tokens is not None and self.kv_tokens < 1:
            raise ValueError(f"kv_tokens must be >= 1, got {self.kv_tokens}")
        if self.draft_kv_cache_mb is not None and not self.draft_kv_cache_mb > 0:
            raise ValueError(f"draft_kv_cache_mb must be > 0, got {self.draft_kv_cache_mb}")
        if self.num_kv_blocks is not None and self.num_kv_blocks < 1:
            raise ValueError(f"num_kv_blocks must be >= 1, got {self.num_kv_blocks}")
        if self.max_running < 1 or self.max_waiting < 0:
            raise ValueError("max_running must be >= 1 and max_waiting >= 0")
        if self.prefill_chunk < 1 or self.max_step_tokens < self.prefill_chunk:
            raise ValueError("need 1 <= prefill_chunk <= max_step_tokens")
        if self.decode_step_prompt_tokens < 1:
            raise ValueError(f"decode_step_prompt_tokens must be >= 1, got {self.decode_step_prompt_tokens}")
        if self.background_prefill_chunk < 1:
            raise ValueError(f"background_prefill_chunk must be >= 1, got {self.background_prefill_chunk}")
        self.speculation.validate()
