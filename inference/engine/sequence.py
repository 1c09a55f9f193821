"""Requests going in, outputs coming out, and the engine's per-request state between them."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field, replace

import torch

from inference.config import RequestKind, SamplingParams, SpecMode
from inference.engine.confidence import ConfidenceTracker, LineConfidence
from inference.engine.errors import EngineError, InvalidRequestError
from inference.engine.healing_constraint import HealingConstraint
from inference.engine.repetition import RepetitionGuard
from inference.engine.text_stream import TextRule, TextStream
from inference.spec_decode.controller import SpeculationController
from inference.tokenizer import Tokenizer

# Sequence.priority of each kind of request: lower runs first, and a higher number is preempted first.
PRIORITIES = {RequestKind.COMPLETION: 0, RequestKind.GENERATION: 1, RequestKind.PREFILL: 2}


class FinishReason(enum.StrEnum):
    """Why a request ended."""

    STOP = "stop"  # a stop string or stop token
    LENGTH = "length"  # max_tokens, or the model's context length
    EOS = "eos"
    CANCELLED = "cancelled"  # abort(): Cancel, a newer completion of the session, a client gone
    ERROR = "error"  # see RequestOutput.error
    REPETITION = "repetition"  # the output started looping (inference.engine.repetition)


@dataclass
class Request:
    """One unit of work. Give `prompt` (text, special tokens recognised) or `prompt_token_ids`."""

    request_id: str
    prompt: str | None = None
    prompt_token_ids: list[int] | None = None
    sampling: SamplingParams = field(default_factory=SamplingParams)
    kind: RequestKind = RequestKind.COMPLETION
    spec_mode: SpecMode = SpecMode.AUTO
    # The chat messages the prompt was rendered from: a remote engine applies its own chat template.
    chat_messages: list[dict[str, str]] | None = None
    # Token healing: bytes removed from the prompt's end that the output must reproduce first (they
    # are not streamed); see inference.engine.healing_constraint.
    healing: bytes = b""
    # Most tokens one prompt-lookup round may verify, when larger than SpeculationConfig.k_max: a
    # rewrite of a region (PredictEdit) proposes the region's unchanged rest in one or few rounds.
    draft_limit: int | None = None
    # A rule over the streamed text that may end it early (`text_stream.TextRule`): a region's rewrite
    # stops once it re-joins the original (inference.prompts.next_edit.rejoin).
    text_rule: TextRule | None = None


def checked_prompt(request: Request, tokenizer: Tokenizer, max_len: int, vocab_size: int) -> list[int]:
    """The request's prompt token ids, validated with its sampling settings.

    Raises InvalidRequestError naming the problem (bad sampling value, no or empty prompt, a prompt
    that leaves no room in the context window, ids outside the vocabulary).
    """
    try:
        request.sampling.validate()
    except ValueError as exc:
        raise InvalidRequestError(str(exc)) from None
    if request.prompt_token_ids is not None:
        prompt_ids = list(request.prompt_token_ids)
    elif request.prompt is not None:
        prompt_ids = tokenizer.encode(request.prompt)
    else:
        raise InvalidRequestError("request has neither prompt text nor prompt token ids")
    if not prompt_ids:
        raise InvalidRequestError("prompt is empty")
    if len(prompt_ids) >= max_len:
        raise InvalidRequestError(f"prompt has {len(prompt_ids)} tokens; the model's limit is {max_len - 1}")
    if min(prompt_ids) < 0 or max(prompt_ids) >= vocab_size:
        raise InvalidRequestError(f"prompt token ids must be in [0, {vocab_size})")
    return prompt_ids


@dataclass
class RequestMetrics:
    """Figures of one request; final when the output that carries them is finished."""

    prompt_tokens: int = 0
    reused_tokens: int = 0  # prompt tokens whose KV came from the prefix cache
    computed_tokens: int = 0  # prompt tokens run through the model (prompt_tokens - reused_tokens)
    generated_tokens: int = 0
    time_to_first_token: float | None = None  # seconds from arrival to the first generated token
    decode_tokens_per_s: float | None = None  # generated tokens after the first, per second
    spec_proposed: int = 0
    spec_accepted: int = 0
    target_forward_passes: int = 0
    preemptions: int = 0  # times its blocks were taken back for another request (it then recomputes)
    queue_seconds: float = 0.0
    finish_reason: FinishReason | None = None
    # How sure the model was of its text, per line (inference.engine.confidence); empty from a remote engine.
    lines: tuple[LineConfidence, ...] = ()
    first_token_logprob: float | None = None


@dataclass
class RequestOutput:
    """What one step produced for one request: a text delta and, at the end, the finish reason."""

    request_id: str
    delta: str
    token_ids: list[int]
    finished: bool
    metrics: RequestMetrics
    finish_reason: FinishReason | None = None
    error: EngineError | None = None


class SeqStatus(enum.Enum):
    """Where a request is in the engine."""

    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


class Sequence:
    """The engine's state of one request: tokens, KV progress, sampling state, text stream, figures.

    Invariant: `token_ids` = prompt + output; positions below `num_computed` have K/V in the target's
    pool. While decoding, num_computed == len(token_ids) - 1: the last token is chosen, not yet fed.
    """

    def __init__(
        self,
        request: Request,
        prompt_ids: list[int],
        stream: TextStream,
        generator: torch.Generator,
        controllers: dict[str, SpeculationController],
        arrival: int,
    ) -> None:
        self.request = request
        self.request_id = request.request_id
        self.token_ids = list(prompt_ids)
        self.prompt_len = len(prompt_ids)
        self.num_computed = 0
        self.status = SeqStatus.WAITING
        self.stream = stream
        self.generator = generator
        # One controller per proposer this request may use (none when speculation is off).
        self.controllers = controllers
        self.arrival = arrival
        self.metrics = RequestMetrics(prompt_tokens=len(prompt_ids))
        self.arrival_time = time.perf_counter()
        self.first_token_time: float | None = None
        self.last_token_time: float | None = None
        self.finish_reason: FinishReason | None = None
        self.error: EngineError | None = None
        self.pending_tokens: list[int] = []
        self.pending_text: list[str] = []
        self.confidence = ConfidenceTracker()
        # Stops the output when it loops and holds back the text such a stop would cut (None: off).
        self.repetition: RepetitionGuard | None = None
        self.healing: HealingConstraint | None = None

    @property
    def priority(self) -> int:
        """Lower runs first: completions (interactive), then generations, then prefills."""
        return PRIORITIES[self.request.kind]

    @property
    def prefill_target(self) -> int:
        """Tokens to compute before decoding: the prompt, or after a preemption everything but the
        already chosen last token."""
        return self.prompt_len if self.num_generated == 0 else len(self.token_ids) - 1

    @property
    def in_prefill(self) -> bool:
        """Whether the request still has tokens to compute before it can decode."""
        return self.num_computed < self.prefill_target

    @property
    def is_done(self) -> bool:
        """Whether the request has finished (for any reason)."""
        return self.status == SeqStatus.FINISHED

    def elapsed(self) -> float:
        """Seconds since the request arrived."""
        return time.perf_counter() - self.arrival_time

    @property
    def num_generated(self) -> int:
        """Tokens generated so far (a stop or eos token included)."""
        return len(self.token_ids) - self.prompt_len

    @property
    def output_ids(self) -> list[int]:
        """The generated token ids."""
        return self.token_ids[self.prompt_len :]

    def take_output(self) -> RequestOutput:
        """The delta accumulated since the last output (and the figures, final once finished)."""
        finished = self.status == SeqStatus.FINISHED
        if finished:
            self.metrics.finish_reason = self.finish_reason
            first, last = self.first_token_time, self.last_token_time
            if first is not None and last is not None and last > first and self.num_generated > 1:
                self.metrics.decode_tokens_per_s = (self.num_generated - 1) / (last - first)
            self.metrics.lines = self.confidence.lines()
            self.metrics.first_token_logprob = self.confidence.first_token_logprob
        out = RequestOutput(
            request_id=self.request_id,
            delta="".join(self.pending_text),
            token_ids=self.pending_tokens,
            finished=finished,
            metrics=replace(self.metrics),
            finish_reason=self.finish_reason if finished else None,
            error=self.error,
        )
        self.pending_tokens, self.pending_text = [], []
        return out
