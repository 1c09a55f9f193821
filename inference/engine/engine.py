"""The synchronous, step-driven engine core.

Public API (the daemon drives it through `AsyncEngine` in `async_engine.py`):

* `LLMEngine(target, tokenizer, config, draft=None)` — `target`/`draft` are `ModelRunner`s;
  `LLMEngine.from_loaded(target, config, draft)` builds them from `load_model` results.
* `add_request(Request)` — validates and tokenizes in the caller's thread; raises
  `InvalidRequestError` (bad values, prompt too long, duplicate id) or `ResourceExhaustedError`
  (queue full, or a prompt larger than the whole KV pool). Thread-safe.
* `abort(request_id)` — thread-safe; the request finishes with reason `cancelled` at the start of the
  next step and its blocks are released.
* `step() -> list[RequestOutput]` — one round: take new requests and aborts, admit waiting requests
  (prefix cache lookup, block allocation), run each scheduled request's prefill chunk or decode
  round, and return one output per request that produced text or finished. Call it from one thread.
* `has_work()`, `stats()`, `check_invariants()`.

When the KV pool runs dry (after evicting cached blocks), the lowest-priority, latest running request
is preempted: its computed blocks go back to the cache and it waits to be readmitted, when it mostly
reuses them (`Preemptor` in `preemption.py`). A completion that arrives to a full pool preempts
running generations the same way; other requests wait for blocks. A request that does not fit even
alone finishes with reason `error` and `RequestOutput.error` set (`ResourceExhaustedError`); the
others carry on.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict

from inference.config import EngineConfig, RequestKind
from inference.engine.decode import SequenceRunner
from inference.engine.errors import EngineError, InvalidRequestError, ResourceExhaustedError
from inference.engine.healing import HealedTextDecoder, HealingConstraint
from inference.engine.kv_cache import KVCacheManager
from inference.engine.model_runner import ModelRunner, runners_for
from inference.engine.preemption import Preemptor
from inference.engine.scheduler import Scheduler
from inference.engine.sequence import (
    FinishReason,
    Request,
    RequestOutput,
    SeqStatus,
    Sequence,
    checked_prompt,
)
from inference.engine.stats import EngineStats
from inference.engine.text_stream import IncrementalDecoding, TextStream
from inference.loading import LoadedModel
from inference.prompts.vocabulary import vocabulary_index
from inference.sampling import make_generator
from inference.spec_decode.controller import controllers_for
from inference.spec_decode.draft_model import DraftModelProposer
from inference.spec_decode.ngram import PromptLookupProposer
from inference.spec_decode.proposer import Proposer
from inference.tokenizer import IncrementalDecoder, Tokenizer

log = logging.getLogger(__name__)


class LLMEngine:
    """Owns the KV cache managers, the scheduler and the proposers of one target (and draft) model."""

    def __init__(
        self,
        target: ModelRunner,
        tokenizer: Tokenizer,
        config: EngineConfig,
        draft: ModelRunner | None = None,
        make_decoder: Callable[[], IncrementalDecoding] | None = None,
    ) -> None:
        config.validate()
        self.config = config
        self.tokenizer = tokenizer
        self.target = target
        self.kv = KVCacheManager(target.num_blocks, config.block_size, config.enable_prefix_cache)
        self.scheduler = Scheduler(config)
        self.proposers: dict[str, Proposer] = {
            "ngram": PromptLookupProposer(config.speculation.ngram_max, config.speculation.ngram_min)
        }
        self.draft_kv: KVCacheManager | None = None
        if draft is not None:
            self.draft_kv = KVCacheManager(draft.num_blocks, config.block_size, config.enable_prefix_cache)
            self.proposers["draft"] = DraftModelProposer(draft, self.draft_kv, target.config.vocab_size)
        self.eos_ids = frozenset(tokenizer.eos_token_ids) | frozenset(target.config.eos_token_ids)
        self._make_decoder = make_decoder or (lambda: IncrementalDecoder(tokenizer))
        self.runner = SequenceRunner(target, self.kv, self.proposers, self.eos_ids)
        self.preemptor = Preemptor(self.kv, self.scheduler, self.proposers)
        self._lock = threading.Lock()
        self._inbox: list[Sequence] = []
        self._aborts: list[str] = []
        self._live: dict[str, Sequence] = {}
        self._arrivals = itertools.count()
        self._finished = 0
        self.busy_seconds = 0.0

    def add_request(self, request: Request) -> None:
        """Queue a request (see the module docstring for what it raises)."""
        model = self.target.config
        prompt_ids = checked_prompt(request, self.tokenizer, model.max_position_embeddings, model.vocab_size)
        if self.kv.blocks_for(len(prompt_ids) + 1) > self.target.num_blocks:
            raise ResourceExhaustedError(
                f"prompt of {len(prompt_ids)} tokens does not fit the KV pool "
                f"({self.target.num_blocks} blocks of {self.config.block_size}); raise kv_cache_mb"
            )
        decoder = self._make_decoder()
        if request.healing:
            decoder = HealedTextDecoder(decoder, request.healing.decode("utf-8", errors="replace"))
        seq = Sequence(
            request,
            prompt_ids,
            TextStream(decoder, request.sampling.stop),
            make_generator(request.sampling.seed, self.target.device),
            controllers_for(request.spec_mode, self.proposers, self.config.speculation),
            next(self._arrivals),
        )
        if request.healing:
            seq.healing = HealingConstraint(vocabulary_index(self.tokenizer), request.healing)
        with self._lock:
            if request.request_id in self._live:
                raise InvalidRequestError(f"request id {request.request_id!r} is already running")
            if len(self._inbox) + len(self.scheduler.waiting) >= self.config.max_waiting:
                raise ResourceExhaustedError(f"request queue full ({self.config.max_waiting} waiting)")
            self._live[request.request_id] = seq
            self._inbox.append(seq)

    def abort(self, request_id: str) -> None:
        """Stop a request at the next step and free its blocks (unknown or finished ids are ignored)."""
        with self._lock:
            self._aborts.append(request_id)

    def has_work(self) -> bool:
        """Whether a step would do anything (requests queued, running, or aborts pending)."""
        with self._lock:
            return bool(self._inbox or self._aborts or self.scheduler.has_work())

    def step(self) -> list[RequestOutput]:
        """Run one round; see the module docstring."""
        started = time.perf_counter()
        outputs = self._step()
        self.busy_seconds += time.perf_counter() - started
        return outputs

    def _step(self) -> list[RequestOutput]:
        with self._lock:
            new, self._inbox = self._inbox, []
            aborts, self._aborts = self._aborts, []
        touched: list[Sequence] = []
        for seq in new:
            if self.config.supersede_completions:
                self._supersede(seq, touched)
            self.scheduler.add(seq)
        for request_id in aborts:
            live = self._live.get(request_id)
            if live is not None and live.status != SeqStatus.FINISHED:
                self._finish(live, FinishReason.CANCELLED)
                touched.append(live)
        self._admit(touched)
        for work in self.scheduler.schedule():
            seq = work.seq
            if seq.status != SeqStatus.RUNNING:
                continue  # preempted earlier in this step
            try:
                if work.prefill_tokens:
                    self.runner.prefill(seq, work.prefill_tokens)
                else:
                    self.runner.decode(seq)
            except ResourceExhaustedError as exc:
                if not self.preemptor.preempt_for(seq):
                    seq.error, seq.finish_reason = exc, FinishReason.ERROR
            except EngineError as exc:
                seq.error, seq.finish_reason = exc, FinishReason.ERROR
            except Exception as exc:  # a failing request must not take the engine down with it
                log.exception("request %s failed", seq.request_id)
                seq.error, seq.finish_reason = EngineError(f"internal error: {exc}"), FinishReason.ERROR
            if seq.finish_reason is not None:
                self._finish(seq, seq.finish_reason)
            touched.append(seq)
        return [seq.take_output() for seq in dict.fromkeys(touched) if seq.pending_tokens or seq.is_done]

    def _supersede(self, new: Sequence, touched: list[Sequence]) -> None:
        """A newer completion of the same editor session makes the older ones pointless (only older
        ones: two that arrive in one step must not cancel each other)."""
        if new.request.kind != RequestKind.COMPLETION or new.request.session_id is None:
            return
        with self._lock:
            live = list(self._live.values())
        session = new.request.session_id
        for seq in live:
            old = seq.request
            same_session = old.kind == RequestKind.COMPLETION and old.session_id == session
            if same_session and seq.arrival < new.arrival and seq.status != SeqStatus.FINISHED:
                self._finish(seq, FinishReason.CANCELLED)
                touched.append(seq)

    def _admit(self, touched: list[Sequence]) -> None:
        for seq in self.scheduler.admission_order():
            if seq.status == SeqStatus.FINISHED:
                continue
            if self.preemptor.admission_paused and seq.metrics.preemptions and self.scheduler.running:
                break
            reused = self.preemptor.allocate(seq)
            if reused is None:
                break  # wait for running requests to give blocks back
            if isinstance(reused, ResourceExhaustedError):
                seq.error = reused
                self._finish(seq, FinishReason.ERROR)
                touched.append(seq)
                continue
            seq.num_computed = reused
            if not seq.metrics.preemptions:
                seq.metrics.reused_tokens = reused
                seq.metrics.queue_seconds = seq.elapsed()
                self.runner.totals.prompt_tokens += seq.prompt_len
                self.runner.totals.reused_tokens += reused
            self.scheduler.start(seq)

    def _finish(self, seq: Sequence, reason: FinishReason) -> None:
        seq.finish_reason = reason
        seq.status = SeqStatus.FINISHED
        seq.pending_text.append(seq.stream.finish())
        self.preemptor.release_blocks(seq)
        self.scheduler.remove(seq)
        self.preemptor.admission_paused = False
        with self._lock:
            if self._live.get(seq.request_id) is seq:
                del self._live[seq.request_id]
        self._finished += 1

    def stats(self) -> EngineStats:
        """Totals since start and the current state (read without locking: figures, not accounting)."""
        return EngineStats(
            **asdict(self.runner.totals),
            requests_finished=self._finished,
            preemptions=self.preemptor.preemptions,
            waiting=len(self.scheduler.waiting) + len(self._inbox),
            running=len(self.scheduler.running),
            kv_blocks_total=self.kv.pool.num_blocks,
            kv_blocks_free=self.kv.pool.num_free,
            kv_blocks_cached=self.kv.pool.num_cached,
            kv_blocks_cached_idle=self.kv.pool.num_cached_idle,
            kv_evictions=self.kv.pool.evictions,
            busy_seconds=self.busy_seconds,
        )

    def check_invariants(self) -> None:
        """Raise AssertionError if any block is leaked, double-freed or orphaned (target and draft)."""
        running = {s.request_id for s in self.scheduler.running}
        if set(self.kv.live_sequences()) != running:
            raise AssertionError(f"KV sequences {self.kv.live_sequences()} != running {sorted(running)}")
        self.kv.check_invariants()
        if self.draft_kv is not None:
            stray = set(self.draft_kv.live_sequences()) - running
            if stray:
                raise AssertionError(f"draft KV held by finished requests: {sorted(stray)}")
            self.draft_kv.check_invariants()

    @classmethod
    def from_loaded(
        cls, target: LoadedModel, config: EngineConfig, draft: LoadedModel | None = None
    ) -> LLMEngine:
        """Build the engine and its KV pools (sized from config) around loaded models.

        Raises ValueError when the draft does not share the target's tokenizer or device.
        """
        target_runner, draft_runner = runners_for(target, draft, config)
        return cls(target_runner, target.tokenizer, config, draft_runner)
