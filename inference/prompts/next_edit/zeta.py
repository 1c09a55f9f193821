"""Zed's Zeta (zed-industries/zeta, fine-tuned from Qwen2.5-Coder): the instruction prompt of its
model card, with the edit history as Zed writes its events and the excerpt as Zed's ``zeta1``
writes it (``input_excerpt.rs``).

The excerpt is a code fence named by the path: ``<|start_of_file|>`` when it begins the file, the
lines before the region, ``<|editable_region_start|>``, the region with ``<|user_cursor_is_here|>``
at the cursor, ``<|editable_region_end|>``, the lines after. The model answers with the excerpt
rewritten; the region is what lies between the markers. Zeta reads no related files: snippets are
left out (the format has no place for them).
"""

from __future__ import annotations

from inference.prompts.next_edit.inputs import NextEditInput, with_region_end, without_final_newline

CURSOR = "<|user_cursor_is_here|>"
START_OF_FILE = "<|start_of_file|>"
REGION_START = "<|editable_region_start|>"
REGION_END = "<|editable_region_end|>"
INSTRUCTION = (
    "You are a code completion assistant and your task is to analyze user edits and then rewrite an "
    "excerpt that the user provides, suggesting the appropriate edits within the excerpt, taking into "
    "account the cursor location."
)


def _event(path: str, diff: str) -> str:
    """One edit as Zed's ``format_event`` writes it: the diff's hunks without the file headers."""
    lines = diff.split("\n")
    if len(lines) >= 2 and lines[0].startswith("--- ") and lines[1].startswith("+++ "):
        lines = lines[2:]
    hunks = without_final_newline("\n".join(lines))
    return f"User edited {path}:\n```diff\n{hunks}\n```"


class ZetaFormat:
    """Renders and parses Zeta's format."""

    name: str = "zeta"
    stop_texts: tuple[str, ...] = ("<|endoftext|>",)

    def render(self, request: NextEditInput) -> str:
        """Instruction, user edits, the excerpt with its markers, then the response heading."""
        events = "\n\n".join(_event(edit.path, edit.diff) for edit in request.history if edit.diff)
        return (
            f"### Instruction:\n{INSTRUCTION}\n\n### User Edits:\n\n{events}\n\n"
            f"### User Excerpt:\n\n{self.excerpt(request)}\n\n### Response:\n\n"
        )

    def excerpt(self, request: NextEditInput) -> str:
        """The fenced excerpt with the region and cursor marked."""
        region = request.region
        marked = without_final_newline(region[: request.cursor] + CURSOR + region[request.cursor :])
        after = region[len(without_final_newline(region)) :] + without_final_newline(request.context_after)
        start = f"{START_OF_FILE}\n" if request.starts_file else ""
        before = f"```{request.path}\n{start}{request.context_before}"
        return f"{before}{REGION_START}\n{marked}\n{REGION_END}{after}\n```"

    def unchanged_reply(self, request: NextEditInput) -> str:
        """The reply that leaves the region as it is: the excerpt again, without the cursor marker."""
        return self.excerpt(request).replace(CURSOR, "")

    def parse(self, reply: str, request: NextEditInput, stopped: bool) -> str | None:
        """The text between the line after the one start marker and the one end marker (cursor
        markers removed); None without exactly one of each in that order."""
        content = reply.replace(CURSOR, "")
        if content.count(REGION_START) != 1 or content.count(REGION_END) != 1:
            return None
        if content.count(START_OF_FILE) > 1:
            return None
        after_start = content[content.index(REGION_START) :]
        newline = after_start.find("\n")
        end = after_start.rfind(f"\n{REGION_END}")
        if newline == -1 or end < newline:
            return None
        return with_region_end(after_start[newline + 1 : end], request.region)
