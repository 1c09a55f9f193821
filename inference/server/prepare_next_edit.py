"""PredictEdit requests to what the engine runs, and the engine's text back to the rewritten region.

The prompt is the served model's next-edit format (`ServedModel.next_edit`, chosen once at load),
rendered from the request with every client text escaped (`Tokenizer.escape_special`: a file that
mentions ``<|endoftext|>`` never ends the prompt) and un-escaped again in the rewritten region. It
runs as an engine request of kind COMPLETION, so cancellation, deadlines, drain and figures are those
of Complete.

Fitting the context (`fit_next_edit`): snippets go first, lowest score first (of equal scores the
later one first), then history edits, oldest first. The region, its context lines and the format's
markup are never cut: when they alone do not fit, the request is refused (INVALID_ARGUMENT naming
the region's size), since a prediction over part of a region would rewrite lines it never saw.

An unset max_tokens is sized from what the reply repeats (the region; for Zeta, whose reply is the
whole excerpt, its context lines too): `REPLY_SCALE` times its tokens plus `REPLY_MARKUP_TOKENS`,
then clamped like every reply (`inference.reply_limits`).

The reply stops once the rewrite has re-joined the original region (`rejoin`): the region's unchanged
rest is appended, never decoded.

Prompt lookup may verify as many tokens in one round as the reply copies (`Request.draft_limit`):
once the rewrite re-joins the original region, the region's unchanged rest is proposed and verified
in one or few forward passes instead of decoded token by token; greedy output stays that of plain
decoding (verification keeps only what the target itself would have chosen).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.served_model import ServedModel
from inference.config import RequestKind
from inference.prompts.chat import ChatTemplateError
from inference.prompts.next_edit.chat_instruction import BLOCK_END
from inference.prompts.next_edit.inputs import NextEditFormat, NextEditInput, PastEdit
from inference.prompts.next_edit.rejoin import rejoin_rule
from inference.server import prompt_budget, validation
from inference.server.prepare import CHAT_END_TOKENS, PreparedRequest
from inference.server.validation import RequestError
from inference.tokenizer import Tokenizer

REPLY_SCALE = 1.5
REPLY_MARKUP_TOKENS = 32
# A region longer than this many characters per context token cannot fit any tokenizer's context:
# refused before it is tokenized (on the event loop).
_MAX_CHARS_PER_CONTEXT_TOKEN = 16


@dataclass
class PreparedEdit:
    """A checked PredictEdit: the engine request to run, and how to read its reply."""

    prepared: PreparedRequest
    edit: NextEditInput  # the request as rendered (texts escaped), before any snippet was dropped
    format: NextEditFormat
    tokenizer: Tokenizer

    def reply(
        self, request_id: str, text: str, finish_reason: int, figures: pb.RequestFigures
    ) -> pb.PredictEditReply:
        """The reply for the model's whole output `text`, which ended with `finish_reason`."""
        stopped = finish_reason in (pb.FINISH_REASON_STOP, pb.FINISH_REASON_EOS)
        rewritten = self.format.parse(text, self.edit, stopped)
        return pb.PredictEditReply(
            request_id=request_id,
            format=self.format.name,
            parsed=rewritten is not None,
            rewritten_region=self.tokenizer.unescape_special(rewritten) if rewritten is not None else "",
            finish_reason=finish_reason,  # type: ignore[arg-type]
            figures=figures,
        )


def next_edit_input(request: pb.PredictEditRequest, escape: Callable[[str], str]) -> NextEditInput:
    """The request as the formats read it, every client text escaped (the cursor moved with it)."""
    before = escape(request.region[: request.cursor])
    region = before + escape(request.region[request.cursor :])
    return NextEditInput(
        path=escape(request.path),
        region=region,
        cursor=len(before),
        original_region=escape(request.original_region) if request.HasField("original_region") else None,
        context_before=escape(request.context_before),
        context_after=escape(request.context_after),
        starts_file=request.starts_file,
        history=tuple(
            PastEdit(
                escape(edit.path),
                escape(edit.diff),
                tuple((escape(hunk.original), escape(hunk.updated)) for hunk in edit.hunks),
            )
            for edit in request.history
        ),
        snippets=tuple((escape(s.path), escape(s.text)) for s in request.snippets),
    )


def stop_rules(format: NextEditFormat, tokenizer: Tokenizer) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The stop token ids and stop strings of `format`'s replies: its stop texts (and, for the chat
    format, the chat turn's end tokens and the end of the rewritten block); a stop text that is one
    token of the vocabulary stops as that token, any other as text."""
    texts = [*format.stop_texts, *((*CHAT_END_TOKENS, BLOCK_END) if format.name == "chat" else ())]
    ids = {tokenizer.token_id(text) for text in texts}
    strings = tuple(text for text in dict.fromkeys(texts) if tokenizer.token_id(text) is None)
    return tuple(sorted(i for i in ids if i is not None)), strings


def repeated_tokens(format: NextEditFormat, edit: NextEditInput, tokenizer: Tokenizer) -> int:
    """Tokens of the text a reply copies: the region (for Zeta, whose reply is the whole excerpt, its
    context lines too). It sizes an unset max_tokens and prompt lookup's draft limit."""
    repeated = edit.region
    if format.name == "zeta":
        repeated = edit.context_before + repeated + edit.context_after
    return len(tokenizer.encode(repeated))


def fit_next_edit(
    tokenizer: Tokenizer,
    format: NextEditFormat,
    budget: prompt_budget.PromptBudget,
    edit: NextEditInput,
    scores: Sequence[float],
) -> prompt_budget.FittedPrompt:
    """The rendered prompt within `budget`, cut by the policy of the module docstring."""
    limit = budget.prompt_tokens
    kept = list(range(len(edit.snippets)))
    first_edit = 0

    def render() -> list[int]:
        chosen = replace(
            edit, snippets=tuple(edit.snippets[i] for i in kept), history=tuple(edit.history[first_edit:])
        )
        try:
            return tokenizer.encode(format.render(chosen))
        except ChatTemplateError as error:
            raise RequestError(f"the model's chat template rejected the next-edit prompt: {error}") from None

    full = render()
    ids = full
    for index in [None, *sorted(kept, key=lambda i: (scores[i], -i))]:
        if index is not None:
            kept.remove(index)
            ids = render()
        if len(ids) <= limit:
            return prompt_budget.FittedPrompt(ids, len(full) - len(ids), len(edit.snippets) - len(kept))
    while first_edit < len(edit.history):
        first_edit += 1
        ids = render()
        if len(ids) <= limit:
            return prompt_budget.FittedPrompt(ids, len(full) - len(ids), len(edit.snippets))
    raise RequestError(
        f"the editable region does not fit: with its context lines and the {format.name} format's "
        f"markup it is {len(ids)} prompt tokens, but only {limit} fit (context {budget.context_length} "
        f"minus {budget.reserved_tokens} kept for the reply); send a smaller region or less context"
    )


def prepare_predict_edit(request: pb.PredictEditRequest, served: ServedModel) -> PreparedEdit:
    """A PredictEdit request: the next-edit prompt, stopping on the format's stop texts."""
    validation.check_predict_edit(request)
    limit_chars = _MAX_CHARS_PER_CONTEXT_TOKEN * served.context_length
    if len(request.region) > limit_chars:
        raise RequestError(
            f"the region is {len(request.region)} characters; a context of {served.context_length} "
            "tokens cannot hold it: send a smaller region"
        )
    tokenizer, format = served.tokenizer, served.next_edit
    edit = next_edit_input(request, tokenizer.escape_special)
    repeated = repeated_tokens(format, edit, tokenizer)
    sampling = validation.sampling_params(request.sampling, int(repeated * REPLY_SCALE) + REPLY_MARKUP_TOKENS)
    spec_mode = validation.speculation_mode(request.speculation, served.limits)
    budget = prompt_budget.PromptBudget(
        served.context_length, served.limits.reply_tokens(sampling.max_tokens)
    )
    stop_ids, stop_texts = stop_rules(format, tokenizer)
    sampling.stop_token_ids = stop_ids
    sampling.stop = (*sampling.stop, *stop_texts)
    scores = [snippet.score for snippet in request.snippets]

    def fit() -> prompt_budget.FittedPrompt:
        return fit_next_edit(tokenizer, format, budget, edit, scores)

    prepared = PreparedRequest(
        RequestKind.COMPLETION,
        sampling,
        spec_mode,
        budget,
        fit,
        pb.CompleteChunk,
        sampling.max_tokens,
        next_edit=True,
        draft_limit=repeated,
        text_rule=rejoin_rule(format.unchanged_reply(edit)),
    )
    return PreparedEdit(prepared, edit, format, tokenizer)
