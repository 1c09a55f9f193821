"""What every next-edit format renders, and what each format offers: render the prompt, parse the
reply into the rewritten region.

Texts arrive as the language server sent them, with any special token the tokenizer knows already
broken up (``Tokenizer.escape_special``, as for FIM prompts): the markers a format adds are the only
special tokens in its prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

Snippet = tuple[str, str]  # (path, text) of related code from elsewhere in the workspace


@dataclass(frozen=True)
class PastEdit:
    """One of the user's recent edits: ``diff`` is its unified diff (``--- a/path`` / ``+++ b/path``
    headers, then hunks); ``hunks`` the same change as (original lines, updated lines) pairs."""

    path: str
    diff: str
    hunks: Sequence[tuple[str, str]] = ()


@dataclass(frozen=True)
class NextEditInput:
    """A next-edit request, laid out by each format from stable to volatile: ``snippets``, then
    ``history`` (oldest first), then the file around the cursor.

    ``region`` is the editable region (whole lines, normally ending with a line end) and ``cursor``
    the cursor's character offset in it. ``original_region`` is the region as it was before the
    user's latest edit (Sweep shows both); None when that edit did not touch it. ``context_before``
    and ``context_after`` are whole lines around the region that the model reads but does not
    rewrite; ``starts_file`` says ``context_before`` (or the region) begins the file.
    """

    path: str
    region: str
    cursor: int
    original_region: str | None = None
    context_before: str = ""
    context_after: str = ""
    starts_file: bool = False
    history: Sequence[PastEdit] = ()
    snippets: Sequence[Snippet] = field(default_factory=tuple)


class NextEditFormat(Protocol):
    """One prompt format. ``name`` is "sweep", "zeta" or "chat"; ``stop_texts`` end a reply."""

    name: str
    stop_texts: tuple[str, ...]

    def render(self, request: NextEditInput) -> str:
        """The whole prompt text, special tokens written as text."""
        ...

    def unchanged_reply(self, request: NextEditInput) -> str:
        """The reply (up to the format's stop text) that rewrites the region to itself."""
        ...

    def parse(self, reply: str, request: NextEditInput, stopped: bool) -> str | None:
        """The rewritten region from the model's reply (``stopped``: the reply ended on a stop text
        or end of sequence, not on the token limit); None for a reply that is malformed or cut."""
        ...


def without_final_newline(text: str) -> str:
    """``text`` less one final line end, as the formats write a region's last line."""
    if text.endswith("\r\n"):
        return text[:-2]
    return text[:-1] if text.endswith(("\n", "\r")) else text


def with_region_end(rewritten: str, region: str) -> str:
    """A rewritten region (written without its final line end) given the region's own final line
    end back, so that an unchanged region parses to exactly the region."""
    end = region[len(without_final_newline(region)) :]
    return rewritten + end
