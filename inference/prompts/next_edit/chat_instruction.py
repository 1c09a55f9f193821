"""Next edits from any other instruct model: the model's chat template, a system instruction, and
one user message laid out from stable to volatile (related code, recent edits as unified diffs, then
the region with the cursor marked). The assistant's turn is opened with a code fence (``OPENER``) and
the region's text up to the cursor, so the reply is the rest of the rewritten region itself, closed
by the next fence: a small model (SmolLM2-135M) asked to answer with a code block mostly wrote other
text; started inside one it wrote code, but mostly not the region's (a comment, an import); started
at the cursor it goes on from there. So the chat format predicts edits at and after the cursor."""

from __future__ import annotations

import re

from inference.prompts.chat import ChatTemplate
from inference.prompts.next_edit.inputs import NextEditInput, with_region_end, without_final_newline

CURSOR = "<|cursor|>"
INSTRUCTION = (
    "You predict a programmer's next edit. You are given related code, their recent edits as unified "
    "diffs, and a region of the file they are editing with their cursor marked <|cursor|>. Rewrite the "
    "region with the edit they will make next: continue the change their recent edits started. Answer "
    "with the whole rewritten region in one ``` code block, without the cursor mark, and nothing else. "
    "If no edit is needed, repeat the region unchanged."
)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)\n?```", re.DOTALL)
# Where the rewritten region's block closes: the daemon stops there (the model would go on explaining),
# so a reply that stopped may lack its closing fence.
BLOCK_END = "\n```\n"
OPENER = "```\n"
"""Ends the prompt: the assistant's reply starts inside the code block."""


class ChatInstructionFormat:
    """The next-edit request as a chat with an instruction, rendered by the model's template."""

    name: str = "chat"

    def __init__(self, template: ChatTemplate, stop_texts: tuple[str, ...] = ()) -> None:
        self.template = template
        self.stop_texts = stop_texts

    def render(self, request: NextEditInput) -> str:
        """System instruction, then the user message; the prompt ends with the assistant's turn
        opened, its code block begun, and the region written up to the cursor."""
        messages = [
            {"role": "system", "content": INSTRUCTION},
            {"role": "user", "content": self.user_message(request)},
        ]
        return self.template.render(messages, add_generation_prompt=True) + OPENER + _prefill(request)

    def unchanged_reply(self, request: NextEditInput) -> str:
        """The reply that leaves the region as it is: its text from the cursor on (the block's
        closing fence is a stop text)."""
        return without_final_newline(request.region)[request.cursor :]

    def user_message(self, request: NextEditInput) -> str:
        """Related code, recent edits, then the region, each under a heading."""
        parts = []
        if request.snippets:
            parts.append(
                "Related code:\n\n" + "\n".join(_fenced(text, path) for path, text in request.snippets)
            )
        if any(edit.diff for edit in request.history):
            diffs = "\n".join(_fenced(edit.diff, "diff") for edit in request.history if edit.diff)
            parts.append("Recent edits, oldest first:\n\n" + diffs)
        region = request.region[: request.cursor] + CURSOR + request.region[request.cursor :]
        parts.append(f"The region of {request.path} to rewrite:\n\n" + _fenced(region, ""))
        return "\n".join(parts)

    def parse(self, reply: str, request: NextEditInput, stopped: bool) -> str | None:
        """The code block the reply continues (the prompt opened it), cursor marks removed; None when
        it never closes (a reply that `stopped`, at `BLOCK_END` or its turn's end, counts as closed),
        or when it closed early (`_closed_early`): a small instruct model closes its block before the
        region's end far more often than a next edit deletes a region's end (a rewrite that re-joined
        the region has its end appended, `rejoin`)."""
        block = OPENER + _prefill(request) + reply
        match = _FENCE.match(block) or (_FENCE.match(block + BLOCK_END) if stopped else None)
        if match is None:
            return None
        rewritten = without_final_newline(match.group(1).replace(CURSOR, ""))
        if _closed_early(rewritten, request):
            return None
        return with_region_end(rewritten, request.region)


def _closed_early(rewritten: str, request: NextEditInput) -> bool:
    """Whether the rewrite dropped the region's end: fewer non-blank lines below the cursor's line
    than the region has, and not the region's last one."""

    def below(text: str) -> list[str]:
        lines = text[request.cursor :].split("\n")[1:]
        return [line.rstrip() for line in lines if line.strip()]

    original, written = below(request.region), below(rewritten)
    return len(written) < len(original) and (not written or written[-1] != original[-1])


def _prefill(request: NextEditInput) -> str:
    return request.region[: request.cursor]


def _fenced(text: str, info: str) -> str:
    return f"```{info}\n{without_final_newline(text)}\n```\n"
