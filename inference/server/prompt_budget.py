"""Fitting a request's prompt into the model's context: the documented truncation policy.

The prompt may use the context less the reply's share, ``reply_limits.reply_reserve(max_tokens, ...)``
tokens (`PromptBudget`); the reply then gets what the prompt left, up to max_tokens. When the prompt needs
more and the request allows cutting (TRUNCATION_POLICY_KEEP_NEAR_CURSOR), text farthest from the
cursor goes first:

* Complete: context snippets, lowest score first (of equal scores, the later one first); then the
  file itself, cut from the start of the prefix and the end of the suffix. The suffix keeps at most a
  quarter of the room left for the file (more when the prefix is shorter), the prefix the rest; cuts
  fall on line boundaries where the kept text has one, so the model never sees half a line at an edge.
* Generate: the oldest non-system chat messages (never the last one), then the start of the last
  message; a raw prompt loses its start.

Token counts of BPE text are not additive, so each cut is checked by tokenizing the whole prompt again
and tightened until it fits. The dropped token count is reported as `truncated_tokens`.
With TRUNCATION_POLICY_REJECT a prompt that does not fit is a `RequestError` naming the sizes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from inference.prompts.chat import ChatTemplate, ChatTemplateError, Message
from inference.prompts.fim import FimTemplate, Snippet
from inference.reply_limits import reply_reserve, reply_tokens
from inference.server.validation import RequestError
from inference.tokenizer import Tokenizer

# A suffix longer than this share of the file's room is cut first: the model needs less after the cursor.
SUFFIX_SHARE = 0.25
_MAX_REFITS = 12


@dataclass(frozen=True)
class FittedPrompt:
    """A prompt that fits the budget, as token ids, and how many tokens the policy dropped."""

    token_ids: list[int]
    truncated_tokens: int
    dropped_snippets: int = 0
    healing: bytes = b""  # text token healing removed from the end; the output reproduces it first
    healing_tokens: int = 0  # how many tokens that text was


@dataclass(frozen=True)
class PromptBudget:
    """Room for one request's prompt and reply in the model's context.

    The reply is guaranteed ``reply_reserve(max_tokens, context_length)`` tokens: the prompt is cut (or
    rejected) only when it needs more than the rest. A shorter prompt leaves the reply more room, up
    to `max_tokens`; `reply_tokens` is the clamp the daemon applies once the prompt is known.
    """

    context_length: int
    max_tokens: int

    @property
    def prompt_tokens(self) -> int:
        """Most tokens the prompt may use."""
        return self.context_length - self.reserved_tokens

    @property
    def reserved_tokens(self) -> int:
        """Tokens kept for the reply whatever the prompt's length (``reply_limits.reply_reserve``)."""
        return reply_reserve(self.max_tokens, self.context_length)

    def reply_tokens(self, prompt_tokens: int) -> int:
        """The request's max_tokens lowered to what the context holds after a fitted prompt."""
        return reply_tokens(self.max_tokens, self.context_length, prompt_tokens)

    def rejection(self, prompt_tokens: int) -> RequestError:
        return RequestError(
            f"the prompt is {prompt_tokens} tokens but only {self.prompt_tokens} fit (context "
            f"{self.context_length} minus {self.reserved_tokens} kept for the reply), and truncation is "
            "TRUNCATION_POLICY_REJECT; send less text or allow KEEP_NEAR_CURSOR"
        )


def _chars_of_tokens(tokenizer: Tokenizer, ids: Sequence[int]) -> int:
    """Characters the tokens `ids` decode to (a character split across the edge counts once)."""
    return len(tokenizer.decode(ids)) if ids else 0


def keep_tail(tokenizer: Tokenizer, text: str, keep_tokens: int) -> str:
    """About the last `keep_tokens` tokens of `text`, starting at a line start when there is one."""
    ids = tokenizer.encode(text)
    if keep_tokens >= len(ids):
        return text
    if keep_tokens <= 0:
        return ""
    tail = text[_chars_of_tokens(tokenizer, ids[: len(ids) - keep_tokens]) :]
    newline = tail.find("\n")
    return tail[newline + 1 :] if 0 <= newline < len(tail) - 1 else tail


def keep_head(tokenizer: Tokenizer, text: str, keep_tokens: int) -> str:
    """About the first `keep_tokens` tokens of `text`, ending at a line end when there is one."""
    ids = tokenizer.encode(text)
    if keep_tokens >= len(ids):
        return text
    if keep_tokens <= 0:
        return ""
    head = text[: _chars_of_tokens(tokenizer, ids[:keep_tokens])]
    newline = head.rfind("\n")
    return head[: newline + 1] if newline > 0 else head


def _shrink_until_fits(
    render: Callable[[int], str], tokenizer: Tokenizer, room: int, budget: int
) -> list[int]:
    """Calls render(room) with ever smaller rooms until the rendered prompt fits `budget` tokens."""
    for _ in range(_MAX_REFITS):
        ids = tokenizer.encode(render(room))
        if len(ids) <= budget:
            return ids
        room -= max(1, len(ids) - budget)
        if room < 0:
            break
    ids = tokenizer.encode(render(0))
    if len(ids) <= budget:
        return ids
    raise RequestError(f"even without the cut text the prompt is {len(ids)} tokens; only {budget} fit")


def fit_completion(
    tokenizer: Tokenizer,
    fim: FimTemplate,
    budget: PromptBudget,
    prefix: str,
    suffix: str,
    snippets: Sequence[tuple[Snippet, float]],
    path: str | None,
    allow_cut: bool,
) -> FittedPrompt:
    """The FIM prompt of a completion, cut by the policy above. `snippets` are ((path, text), score)."""
    limit = budget.prompt_tokens
    kept = list(range(len(snippets)))

    def build(pre: str, suf: str) -> str:
        return fim.build(pre, suf, [snippets[i][0] for i in kept], path or None)

    full = tokenizer.encode(build(prefix, suffix))
    if len(full) <= limit:
        return FittedPrompt(full, 0)
    if not allow_cut:
        raise budget.rejection(len(full))
    for index in sorted(kept, key=lambda i: (snippets[i][1], -i)):
        kept.remove(index)
        ids = tokenizer.encode(build(prefix, suffix))
        if len(ids) <= limit:
            return FittedPrompt(ids, len(full) - len(ids), len(snippets) - len(kept))

    prefix_tokens = len(tokenizer.encode(prefix))
    suffix_tokens = len(tokenizer.encode(suffix))
    overhead = len(tokenizer.encode(build("", "")))

    def render(room: int) -> str:
        suffix_room = min(suffix_tokens, max(int(room * SUFFIX_SHARE), room - prefix_tokens))
        return build(
            keep_tail(tokenizer, prefix, room - suffix_room), keep_head(tokenizer, suffix, suffix_room)
        )

    ids = _shrink_until_fits(render, tokenizer, limit - overhead, limit)
    return FittedPrompt(ids, len(full) - len(ids), len(snippets))


def fit_raw_prompt(tokenizer: Tokenizer, budget: PromptBudget, prompt: str, allow_cut: bool) -> FittedPrompt:
    """A raw Generate prompt, losing its start when it is too long."""
    full = tokenizer.encode(prompt)
    if len(full) <= budget.prompt_tokens:
        return FittedPrompt(full, 0)
    if not allow_cut:
        raise budget.rejection(len(full))
    ids = _shrink_until_fits(
        lambda room: keep_tail(tokenizer, prompt, room), tokenizer, budget.prompt_tokens, budget.prompt_tokens
    )
    return FittedPrompt(ids, len(full) - len(ids))


def fit_chat(
    tokenizer: Tokenizer,
    chat: ChatTemplate,
    budget: PromptBudget,
    messages: Sequence[Message],
    allow_cut: bool,
) -> FittedPrompt:
    """Chat messages rendered by the model's template, oldest non-system messages dropped first."""
    limit = budget.prompt_tokens

    def render(selected: Sequence[Message]) -> list[int]:
        try:
            return tokenizer.encode(chat.render(selected, add_generation_prompt=True))
        except ChatTemplateError as error:
            raise RequestError(f"the model's chat template rejected the messages: {error}") from None

    current = list(messages)
    full = render(current)
    if len(full) <= limit:
        return FittedPrompt(full, 0)
    if not allow_cut:
        raise budget.rejection(len(full))
    while True:
        droppable = [i for i, m in enumerate(current[:-1]) if m["role"] != "system"]
        if not droppable:
            break
        del current[droppable[0]]
        ids = render(current)
        if len(ids) <= limit:
            return FittedPrompt(ids, len(full) - len(ids))
    last = current[-1]
    head = current[:-1]
    last_tokens = len(tokenizer.encode(last["content"]))

    def render_last(room: int) -> str:
        return chat.render([*head, {**last, "content": keep_tail(tokenizer, last["content"], room)}])

    ids = _shrink_until_fits(render_last, tokenizer, last_tokens - (len(render(current)) - limit), limit)
    return FittedPrompt(ids, len(full) - len(ids))
