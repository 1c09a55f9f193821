"""Which prompt a completion sends: the full one where the daemon has computed it, else a local one
whose first token the daemon gives within ``completion.coldPromptMs``.

A full prompt (retrieved snippets, then up to ``prefixBudgetTokens`` of the file) at a place whose KV
the daemon has not computed costs its whole length: about 2,400 tokens, 7 s on a 2-core CPU, longer
than the 5 s timeout. There, the first suggestion sends a local prompt instead: the lines nearest the
cursor and no snippets, as many tokens as the daemon answers in ``coldPromptMs`` at the speed
measured from its own figures (:class:`PromptSpeed`). The full prompt takes over once it is warm:
when a prefill of it (the cursor rested, :mod:`lsp_server.cursor_prefill`) or a completion with it
has finished, the document's requests whose full prompt starts the same way (:class:`Layout`) send
it, and the daemon computes only what changed. Where the daemon computes a full prompt within
``coldPromptMs`` anyway (a GPU, a small file), it is always sent.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from indexer.token_estimate import TokenEstimate
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.budgets import PromptBudgets

# Until the daemon's figures say how fast it computes prompts, a cold prompt holds this many tokens.
UNMEASURED_TOKENS = 256
# A local prompt keeps at least this much of the file before the cursor.
MIN_LOCAL_TOKENS = 64
# Requests that computed fewer prompt tokens than this say more about fixed costs than speed.
MIN_MEASURED_TOKENS = 32
# Weight of the newest measurement in the running estimate.
SMOOTHING = 0.5
# Characters at the start of the file window that, with the snippets, identify a full prompt's start.
WINDOW_HEAD_CHARS = 256


@dataclass(frozen=True)
class Layout:
    """What decides whether the daemon's cache holds the start of a full prompt: the file, its
    snippets and the first characters of its window (the window's start moves in 16-line steps)."""

    digest: str

    @classmethod
    def of(cls, request: pb.CompleteRequest) -> Layout:
        """The layout of a full request."""
        parts = [request.path, request.prefix[:WINDOW_HEAD_CHARS]]
        parts += [f"{s.path}:{s.start_line}\n{s.text}" for s in request.snippets]
        return cls(hashlib.blake2b("\0".join(parts).encode("utf-8"), digest_size=16).hexdigest())


@dataclass(frozen=True)
class PlannedPrompt:
    """A request to send, and the layout it warms when it is a full prompt (None: a local one)."""

    request: pb.CompleteRequest
    layout: Layout | None

    @classmethod
    def full(cls, request: pb.CompleteRequest) -> PlannedPrompt:
        """``request`` as a full prompt."""
        return cls(request, Layout.of(request))

    @property
    def local(self) -> bool:
        """Whether this is the local stand-in of a full prompt."""
        return self.layout is None


class PromptSpeed:
    """How fast the daemon answers a cold prompt, from the figures of requests it answered: prompt
    tokens per millisecond until the first token (or the end of a prefill). The tokens are counted as
    the budgets count them (:func:`estimated_tokens`), so that a local prompt sized from this speed
    takes the time it was sized for, whatever the tokenizer makes of the estimate."""

    def __init__(self) -> None:
        self.per_ms: float | None = None

    def observe(
        self,
        request: pb.CompleteRequest,
        figures: pb.RequestFigures,
        elapsed_ms: float,
        estimate: TokenEstimate,
    ) -> None:
        """Takes one answered request: its computed prompt tokens and the time they took."""
        if figures.computed_tokens < MIN_MEASURED_TOKENS or figures.prompt_tokens == 0 or elapsed_ms <= 0:
            return
        speed = (
            estimated_tokens(request, estimate) * figures.computed_tokens / figures.prompt_tokens / elapsed_ms
        )
        self.per_ms = speed if self.per_ms is None else (1 - SMOOTHING) * self.per_ms + SMOOTHING * speed

    def tokens_in(self, ms: float) -> int:
        """How many prompt tokens the daemon computes in ``ms``, rounded down to a half octave (64,
        96, 128, 192, …) so that a local window stays put while the measurement wobbles."""
        if self.per_ms is None:
            return UNMEASURED_TOKENS
        tokens = self.per_ms * ms
        bucket = MIN_LOCAL_TOKENS
        while (larger := bucket * 3 // 2 if bucket & (bucket - 1) == 0 else bucket * 4 // 3) <= tokens:
            bucket = larger
        return bucket


class ColdPrompts:
    """Per document, the full prompt layout the daemon has computed; and the daemon's prompt speed."""

    def __init__(self) -> None:
        self.speed = PromptSpeed()
        self._warm: dict[str, Layout] = {}
        self._local_tokens: dict[str, int] = {}

    def plan(
        self, uri: str, full: pb.CompleteRequest, budgets: PromptBudgets, cold_ms: int
    ) -> PlannedPrompt | PromptBudgets:
        """``full`` when it is warm or fits ``cold_ms`` (or ``cold_ms`` is 0: never local), else the
        budgets of its local stand-in."""
        planned = PlannedPrompt.full(full)
        cold_tokens = self.speed.tokens_in(cold_ms)
        if (
            cold_ms <= 0
            or self._warm.get(uri) == planned.layout
            or estimated_tokens(full, budgets.estimate) <= cold_tokens
        ):
            return planned
        # A document keeps its local size while the measured one stays within a factor of two: a
        # window that moved after every measurement would make the local prompt cold again.
        kept = self._local_tokens.get(uri)
        if kept is None or not cold_tokens / 2 <= kept <= cold_tokens * 2:
            kept = self._local_tokens[uri] = cold_tokens
        return local_budgets(budgets, kept)

    def answered(
        self, uri: str, prompt: PlannedPrompt, figures: pb.RequestFigures, estimate: TokenEstimate
    ) -> None:
        """A completion with ``prompt`` got its first token: its layout is warm now, and its figures
        measure the speed. (A prefill's do not: it runs in small background passes, behind any
        other request.)"""
        self.speed.observe(prompt.request, figures, figures.time_to_first_token_ms, estimate)
        self.computed(uri, prompt)

    def computed(self, uri: str, prompt: PlannedPrompt) -> None:
        """The daemon has computed ``prompt``: when it is a full prompt, its layout is warm now."""
        if prompt.layout is not None:
            self._warm[uri] = prompt.layout

    def forget(self, uri: str) -> None:
        """The document closed."""
        self._warm.pop(uri, None)
        self._local_tokens.pop(uri, None)


def local_budgets(budgets: PromptBudgets, tokens: int) -> PromptBudgets:
    """The budgets of a local prompt of about ``tokens`` tokens: no snippets, the file before and
    after the cursor shared as in ``budgets``."""
    file_tokens = max(budgets.prefix + budgets.suffix, 1)
    prefix = min(budgets.prefix, max(MIN_LOCAL_TOKENS, tokens * budgets.prefix // file_tokens))
    suffix = min(budgets.suffix, max(0, tokens - prefix))
    # About a sixth of the window's lines (~11 tokens a line), so that rounding its start keeps most
    # of it.
    step = max(2, min(budgets.line_step, prefix // 64))
    return PromptBudgets(prefix=prefix, suffix=suffix, context=0, line_step=step, estimate=budgets.estimate)


def estimated_tokens(request: pb.CompleteRequest, estimate: TokenEstimate) -> int:
    """About how many tokens the daemon's prompt for ``request`` holds."""
    chars = (
        len(request.prefix) + len(request.suffix) + sum(len(s.text) + len(s.path) for s in request.snippets)
    )
    return estimate.tokens_of_chars(chars)
