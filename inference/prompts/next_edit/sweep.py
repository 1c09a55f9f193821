"""Sweep's next-edit model (sweepai/sweep-next-edit, fine-tuned from Qwen2.5-Coder): the format of
its model card's ``run_model.py`` and of Sweep's write-up (blog.sweep.dev/posts/oss-next-edit).

Every section is a Qwen2.5-Coder file block ``<|file_sep|>{name}\\n{body}\\n``: related files first,
then each recent change as ``{path}.diff`` with ``original:`` / ``updated:`` bodies (Sweep found
these read better than diff syntax), then the window ``original/{path}`` (before the latest
change), ``current/{path}`` (now), and an open ``updated/{path}`` block the model writes, ended by
the next ``<|file_sep|>`` or the end of text. No cursor marker: the window is the cursor's place.
"""

from __future__ import annotations

from inference.prompts.next_edit.inputs import NextEditInput, with_region_end, without_final_newline

FILE_SEP = "<|file_sep|>"
STOP_TEXTS = (FILE_SEP, "<|endoftext|>", "</s>")


def _block(name: str, body: str) -> str:
    return f"{FILE_SEP}{name}\n{without_final_newline(body)}\n"


class SweepFormat:
    """Renders and parses Sweep's next-edit format."""

    name: str = "sweep"
    stop_texts: tuple[str, ...] = STOP_TEXTS

    def render(self, request: NextEditInput) -> str:
        """Snippets, then recent changes, then original / current windows and the open updated one."""
        parts = [_block(path, text) for path, text in request.snippets]
        for edit in request.history:
            for original, updated in edit.hunks:
                parts.append(_block(f"{edit.path}.diff", f"original:\n{original}\nupdated:\n{updated}"))
        original = request.region if request.original_region is None else request.original_region
        parts.append(_block(f"original/{request.path}", original))
        parts.append(_block(f"current/{request.path}", request.region))
        parts.append(f"{FILE_SEP}updated/{request.path}\n")
        return "".join(parts)

    def unchanged_reply(self, request: NextEditInput) -> str:
        """The reply that leaves the region as it is (its end is a stop text)."""
        return without_final_newline(request.region)

    def parse(self, reply: str, request: NextEditInput, stopped: bool) -> str | None:
        """The updated window: the reply up to its first stop text, less the block's closing line
        end. None when the reply ran into the token limit, or is empty for a region that is not."""
        cut = min((i for i in (reply.find(stop) for stop in STOP_TEXTS) if i != -1), default=-1)
        if cut == -1 and not stopped:
            return None
        body = reply if cut == -1 else reply[:cut]
        if body.endswith("\n"):
            body = body[:-1]
        if not body and without_final_newline(request.region):
            return None
        return with_region_end(body, request.region)
