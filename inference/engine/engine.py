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
  (prefix cache lookup, block allocation), run the scheduled requests' prefill chunks and plain
  decode steps in one batched forward pass (speculative rounds in their own), and return one output
  per request that produced text or finished. Call it from one thread.
* `fail_all(error)` — end every live request with `error` and free its blocks (what `step` does when
  it raises something it did not expect).
* `has_work()`, `stats()`, `check_invariants()`.

When the KV pool runs dry (after evicting cached blocks), the lowest-priority, latest running request
is preempted: its computed blocks go back to the cache and it waits to be readmitted, when it mostly
reuses them (`SequenceAdmission` in `admission.py`). A completion that arrives to a full pool preempts
running generations the same way; other requests wait for blocks. A request that does not fit even
alone finishes with reason `error` and `RequestOutput.error` set (`ResourceExhaustedError`); the
others carry on. A step that raises anything else (a model that fails, a bug) ends every live request
with `StepFailedError`; the engine then serves new requests.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable

from inference.config import EngineConfig, RequestKind
from inference.engine.admission import SequenceAdmission
from inference.engine.errors import (
    EngineError,
    InvalidRequestError,
    ResourceExhaustedError,
    StepFailedError,
)
from inference.engine.healing_constraint import HealedTextDecoder, HealingConstraint
from inference.engine.kv_cache import KVCacheManager
from inference.engine.model_runner import ModelRunner, runners_for
from inference.engine.repetition import RepetitionGuard
from inference.engine.scheduler import Scheduler
from inference.engine.sequence import (
    FinishReason,
    Request,
    RequestOutput,
    SeqStatus,
    Sequence,
    checked_prompt,
)
from inference.engine.sequence_runner import PlannedRows, SequenceRunner
from inference.engine.stats import EngineStats
from inference.engine.text_stream import IncrementalDecoding, TextStream
from inference.loading import LoadedModel
from inference.prompts.token_boundary import token_boundaries
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
        self.kv = KVCacheManager(
            target.num_blocks, config.block_size, config.enable_prefix_cache, target.copy_block
        )
        self.scheduler = Scheduler(config)
        self.proposers: dict[str, Proposer] = {
            "ngram": PromptLookupProposer(config.speculation.ngram_max, config.speculation.ngram_min)
        }
        self.draft_kv: KVCacheManager | None = None
        if draft is not None:
            self.draft_kv = KVCacheManager(
                draft.num_blocks, config.block_size, config.enable_prefix_cache, draft.copy_block
            )
            self.proposers["draft"] = DraftModelProposer(draft, self.draft_kv, target.config.vocab_size)
        self.eos_ids = frozenset(tokenizer.eos_token_ids) | frozenset(target.config.eos_token_ids)
        self._make_decoder = make_decoder or (lambda: IncrementalDecoder(tokenizer))
        self.runner = SequenceRunner(target, self.kv, self.proposers, self.eos_ids)
        self.admission = SequenceAdmission(self.kv, self.scheduler, self.proposers)
        self._lock = threading.Lock()
        self._inbox: list[Sequence] = []
        # Set when a request other than a prefill arrives: a pass of prefills only stops for it.
        self._user_arrived = threading.Event()
        self._aborts: list[str] = []
        self._live: dict[str, Sequence] = {}
        self._arrivals = itertools.count()

    def add_request(self, request: Request) -> None:
        """Queue a request (see the module docstring for what it raises)."""
        model = self.target.config
        prompt_ids = checked_prompt(request, self.tokenizer, model.max_position_embeddings, model.vocab_size)
        if self.kv.blocks_for(len(prompt_ids) + 1) > self.target.num_blocks:
            pool_tokens = self.target.num_blocks * self.config.block_size
            raise ResourceExhaustedError(
                f"prompt of {len(prompt_ids)} tokens does not fit the KV pool of {pool_tokens} tokens "
                f"({self.target.num_blocks} blocks of {self.config.block_size}); start the daemon with a "
                "larger --kv-tokens (or --kv-cache-mb)"
            )
        decoder = self._make_decoder()
        if request.healing:
            decoder = HealedTextDecoder(decoder, request.healing.decode("utf-8", errors="replace"))
        seq = Sequence(
            request,
            prompt_ids,
            TextStream(decoder, request.sampling.stop, request.text_rule),
            make_generator(request.sampling.seed, self.target.device),
            controllers_for(request.spec_mode, self.proposers, self.config.speculation, request.draft_limit),
            next(self._arrivals),
        )
        if self.config.stop_repetition:
            seq.repetition = RepetitionGuard()
        if request.healing:
            seq.healing = HealingConstraint(
                vocabulary_index(self.tokenizer),
                request.healing,
                token_boundaries(self.tokenizer, request.healing),
            )
        with self._lock:
            if request.request_id in self._live:
                raise InvalidRequestError(f"request id {request.request_id!r} is already running")
            if len(self._inbox) + len(self.scheduler.waiting) >= self.config.max_waiting:
                raise ResourceExhaustedError(f"request queue full ({self.config.max_waiting} waiting)")
            self._live[request.request_id] = seq
            self._inbox.append(seq)
            if request.kind is not RequestKind.PREFILL:
                self._user_arrived.set()

    def abort(self, request_id: str) -> None:
        """Stop a request at the next step and free its blocks (unknown or finished ids are ignored)."""
        with self._lock:
            self._aborts.append(request_id)

    def has_work(self) -> bool:
        """Whether a step would do anything (requests queued, running, or aborts pending)."""
        with self._lock:
            return bool(self._inbox or self._aborts or self.scheduler.has_work())

    def step(self) -> list[RequestOutput]:
        """Run one round; see the module docstring.

        When the round raises anything but an `EngineError` of one request, every live request ends
        with a `StepFailedError` naming the cause (`fail_all`), and the engine carries on.
        """
        try:
            return self._step()
        except Exception as error:
            log.exception("engine step failed; stopping every request in flight")
            return self.fail_all(StepFailedError.caused_by(error))

    def fail_all(self, error: EngineError) -> list[RequestOutput]:
        """End every live request (queued, waiting or running) with `error` and free its KV blocks.

        Returns their final outputs. Tokens computed before the failure stay in the prefix cache.
        """
        with self._lock:
            live = list(self._live.values())
            self._inbox, self._aborts = [], []
        for seq in live:
            seq.error = error
            try:
                self._finish(seq, FinishReason.ERROR)
            except Exception:  # the failure left this request half-updated: forget it without its text
                log.exception("could not finish request %s cleanly", seq.request_id)
                seq.status, seq.finish_reason = SeqStatus.FINISHED, FinishReason.ERROR
                self.scheduler.remove(seq)
                with self._lock:
                    self._live.pop(seq.request_id, None)
        try:
            self.check_invariants()
        except AssertionError:  # serving on is still better than refusing every request
            log.exception("KV accounting is off after the failure; restart the daemon if requests fail")
        return [seq.take_output() for seq in live]

    def _step(self) -> list[RequestOutput]:
        with self._lock:
            new, self._inbox = self._inbox, []
            self._user_arrived.clear()
            aborts, self._aborts = self._aborts, []
        touched: list[Sequence] = []
        for seq in new:
            self.scheduler.add(seq)
        for request_id in aborts:
            live = self._live.get(request_id)
            if live is not None and live.status != SeqStatus.FINISHED:
                self._finish(live, FinishReason.CANCELLED)
                touched.append(live)

        def failed(seq: Sequence) -> None:
            self._finish(seq, FinishReason.ERROR)
            touched.append(seq)

        self.admission.admit_waiting(failed)
        planned: list[PlannedRows] = []
        for work in self.scheduler.schedule():
            seq = work.seq
            if seq.status != SeqStatus.RUNNING:
                continue  # preempted earlier in this step
            try:
                if work.prefill_tokens:
                    planned.append(self.runner.prefill(seq, work.prefill_tokens))
                elif not self.runner.speculate(seq):  # a speculative round runs now, alone
                    planned.append(self.runner.plain_step(seq))
            except ResourceExhaustedError as exc:
                if not self.admission.preempt_for(seq):
                    seq.error, seq.finish_reason = exc, FinishReason.ERROR
            except EngineError as exc:
                seq.error, seq.finish_reason = exc, FinishReason.ERROR
            if seq.finish_reason is not None:
                self._finish(seq, seq.finish_reason)
            touched.append(seq)
        # A request preempted after it was planned gave its blocks away: it must not write into them.
        batch = [p for p in planned if p.seq.status == SeqStatus.RUNNING]
        background = all(p.seq.request.kind is RequestKind.PREFILL for p in batch)
        self.runner.run_batch(batch, self._user_arrived.is_set if background else None)
        for seq in (p.seq for p in batch):
            if seq.finish_reason is not None:
                self._finish(seq, seq.finish_reason)
        return [seq.take_output() for seq in dict.fromkeys(touched) if seq.pending_tokens or seq.is_done]

    def _finish(self, seq: Sequence, reason: FinishReason) -> None:
        seq.finish_reason = reason
        seq.status = SeqStatus.FINISHED
        tail = seq.stream.finish()
        seq.pending_text.append(tail if seq.repetition is None else seq.repetition.finish(tail))
        self.admission.release_blocks(seq)
        self.scheduler.remove(seq)
        self.admission.paused = False
        with self._lock:
            if self._live.get(seq.request_id) is seq:
                del self._live[seq.request_id]

    def stats(self) -> EngineStats:
        """The queues and KV pool now (read without locking: figures, not accounting)."""
        return EngineStats(
            waiting=len(self.scheduler.waiting) + len(self._inbox),
            running=len(self.scheduler.running),
            kv_blocks_total=self.kv.pool.num_blocks,
            kv_blocks_free=self.kv.pool.num_free,
            kv_blocks_cached_idle=self.kv.pool.num_cached_idle,
            preemptions=self.admission.preemptions,
            kv_evictions=self.kv.pool.evictions,
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
