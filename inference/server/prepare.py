"""Proto requests to what the engine runs: checked settings and a prompt-fitting step.

`prepare_complete` and `prepare_generate` do every check that needs no tokenizing (raising
`RequestError`); the returned `PreparedRequest.fit` tokenizes, applies the truncation policy and
lowers max_tokens to the model's room, and is run in a worker thread because a long prompt takes a
while to tokenize.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.served_model import ServedModel
from inference.config import RequestKind, SamplingParams, SpecMode
from inference.engine.sequence import Request
from inference.engine.text_stream import TextRule
from inference.prompts.chat import ChatTemplate
from inference.prompts.prefix_only import suffix_stop
from inference.prompts.token_boundary import heal_prompt
from inference.server import prompt_budget, validation
from inference.tokenizer import Tokenizer

# Tokens that end an assistant turn in common chat formats; Generate with chat stops on them.
CHAT_END_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>")


def heal_fitted(tokenizer: Tokenizer, fitted: prompt_budget.FittedPrompt) -> prompt_budget.FittedPrompt:
    """The fitted prompt backed off to a stable token boundary (token healing). The removed tokens
    are generated again; `PreparedRequest.fit` adds their count to max_tokens (the prompt shrank by
    as many, so the request still fits the context)."""
    healed = heal_prompt(tokenizer, fitted.token_ids)
    return replace(
        fitted, token_ids=healed.token_ids, healing=healed.removed, healing_tokens=healed.removed_tokens
    )


@dataclass
class PreparedRequest:
    """A checked request: engine settings, and how to build its prompt within the context."""

    kind: RequestKind
    sampling: SamplingParams
    spec_mode: SpecMode
    budget: prompt_budget.PromptBudget
    build: Callable[[], prompt_budget.FittedPrompt]
    chunk_class: Any  # pb.CompleteChunk or pb.GenerateChunk
    asked_tokens: int  # max_tokens as the request gave it (or the call's default)
    # A chat's messages (escaped), for a backend that renders them with the engine's own template.
    chat_messages: list[dict[str, str]] | None = None
    # A PredictEdit: superseded only by the session's next PredictEdit (`LiveRequests`).
    next_edit: bool = False
    # Most tokens a prompt-lookup round may verify (`Request.draft_limit`); None: k_max.
    draft_limit: int | None = None
    # Ends the reply early from its text (`Request.text_rule`).
    text_rule: TextRule | None = None

    def engine_request(self, request_id: str, fitted: prompt_budget.FittedPrompt) -> Request:
        """What the engine runs. A prefill computes the prompt and shows nothing: its one greedy token
        is never sent, so it needs no healing constraint, stop rules or speculation."""
        if self.kind is RequestKind.PREFILL:
            return Request(
                request_id,
                prompt_token_ids=fitted.token_ids,
                sampling=SamplingParams(max_tokens=1),
                kind=self.kind,
                spec_mode=SpecMode.OFF,
            )
        return Request(
            request_id=request_id,
            prompt_token_ids=fitted.token_ids,
            healing=fitted.healing,
            sampling=self.sampling,
            kind=self.kind,
            spec_mode=self.spec_mode,
            chat_messages=self.chat_messages,
            draft_limit=self.draft_limit,
            text_rule=self.text_rule,
        )

    def fit(self) -> tuple[prompt_budget.FittedPrompt, int]:
        """The fitted prompt, and the max_tokens the daemon lowered the request's to (0: not lowered).

        Sets `sampling.max_tokens` to the reply's room: the daemon's limit and what the context holds
        after the prompt, counted as if token healing had removed nothing; the tokens it removed are
        then added, since the engine generates them again before the reply proper. Raises
        `RequestError` when the prompt cannot fit.
        """
        fitted = self.build()
        reply = self.budget.reply_tokens(len(fitted.token_ids) + fitted.healing_tokens)
        self.sampling.max_tokens = reply + fitted.healing_tokens
        clamped_to = reply if reply < self.asked_tokens else 0
        return fitted, clamped_to


def _settings(
    request: Any, default_tokens: int, served: ServedModel
) -> tuple[SamplingParams, SpecMode, bool, prompt_budget.PromptBudget]:
    sampling = validation.sampling_params(request.sampling, default_tokens)
    spec_mode = validation.speculation_mode(request.speculation, served.limits)
    allow_cut = validation.truncation_allowed(request.truncation)
    reply = served.limits.reply_tokens(sampling.max_tokens)
    return sampling, spec_mode, allow_cut, prompt_budget.PromptBudget(served.context_length, reply)


def prepare_complete(request: pb.CompleteRequest, served: ServedModel) -> PreparedRequest:
    """A Complete request: the model's FIM prompt, stopping on the FIM template's end tokens."""
    validation.check_complete(request)
    sampling, spec_mode, allow_cut, budget = _settings(
        request, served.limits.default_completion_tokens, served
    )
    sampling.stop_token_ids = tuple(sorted(served.fim.stop_token_ids))
    if served.fim.family == "prefix-only" and (stop := suffix_stop(request.suffix)) is not None:
        sampling.stop = (*sampling.stop, stop)
    heal = served.constrains_tokens and (not request.HasField("token_healing") or request.token_healing)
    # Client text never carries control tokens: special-token strings in code are escaped.
    escape = served.tokenizer.escape_special
    snippets = [((escape(s.path), escape(s.text)), s.score) for s in request.snippets]

    def fit() -> prompt_budget.FittedPrompt:
        fitted = prompt_budget.fit_completion(
            served.tokenizer,
            served.fim,
            budget,
            escape(request.prefix),
            escape(request.suffix),
            snippets,
            escape(request.path),
            allow_cut,
        )
        return heal_fitted(served.tokenizer, fitted) if heal else fitted

    return PreparedRequest(
        RequestKind.COMPLETION, sampling, spec_mode, budget, fit, pb.CompleteChunk, sampling.max_tokens
    )


def prepare_prefill(request: pb.CompleteRequest, served: ServedModel) -> PreparedRequest:
    """A Prefill: the prompt Complete would build from the same request (the same checks, fitting and
    healing), run as a prefill (see `PreparedRequest.engine_request`)."""
    return replace(prepare_complete(request, served), kind=RequestKind.PREFILL)


def prepare_generate(request: pb.GenerateRequest, served: ServedModel) -> PreparedRequest:
    """A Generate request: chat through the chat template (stopping at the turn's end), or a raw prompt."""
    validation.check_generate(request)
    sampling, spec_mode, allow_cut, budget = _settings(
        request, served.limits.default_generation_tokens, served
    )
    tokenizer = served.tokenizer
    if request.WhichOneof("input") == "chat":
        chat = served.chat or ChatTemplate(None, tokenizer.bos_token, tokenizer.eos_token)
        messages = [
            {"role": m.role, "content": tokenizer.escape_special(m.content)} for m in request.chat.messages
        ]
        ends = (tokenizer.token_id(t) for t in CHAT_END_TOKENS)
        sampling.stop_token_ids = tuple(sorted({i for i in ends if i is not None}))

        def fit() -> prompt_budget.FittedPrompt:
            return prompt_budget.fit_chat(tokenizer, chat, budget, messages, allow_cut)

        return PreparedRequest(
            RequestKind.GENERATION,
            sampling,
            spec_mode,
            budget,
            fit,
            pb.GenerateChunk,
            sampling.max_tokens,
            messages,
        )

    else:

        def fit() -> prompt_budget.FittedPrompt:
            return prompt_budget.fit_raw_prompt(tokenizer, budget, request.prompt, allow_cut)

    return PreparedRequest(
        RequestKind.GENERATION, sampling, spec_mode, budget, fit, pb.GenerateChunk, sampling.max_tokens
    )
