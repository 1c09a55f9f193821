"""Recent suggestions, so that typing the start of a shown suggestion serves the rest without a model call."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class CachedSuggestion:
    """A suggestion shown at the end of ``prefix`` with ``suffix`` after the cursor."""

    prefix: str
    suffix: str
    text: str


class SuggestionCache:
    """The last few suggestions of each document (``per_document``), newest first when looked up.

    A suggestion still applies while the user types its own first characters: the new prefix is the old
    one plus a start of the suggestion, and the text after the cursor is unchanged.
    """

    def __init__(self, per_document: int = 8, documents: int = 64) -> None:
        self._per_document = per_document
        self._documents = documents
        self._entries: OrderedDict[str, list[CachedSuggestion]] = OrderedDict()

    def remember(self, document: str, prefix: str, suffix: str, text: str) -> None:
        """Records a suggestion that was shown."""
        if not text:
            return
        entries = self._entries.pop(document, [])
        entries.insert(0, CachedSuggestion(prefix, suffix, text))
        del entries[self._per_document :]
        self._entries[document] = entries
        while len(self._entries) > self._documents:
            self._entries.popitem(last=False)

    def lookup(self, document: str, prefix: str, suffix: str) -> str | None:
        """The rest of a cached suggestion the user is typing through, or None."""
        for entry in self._entries.get(document, []):
            if entry.suffix != suffix or len(prefix) < len(entry.prefix):
                continue
            typed = prefix[len(entry.prefix) :]
            if (
                len(typed) < len(entry.text)
                and entry.text.startswith(typed)
                and prefix.startswith(entry.prefix)
            ):
                return entry.text[len(typed) :]
        return None

    def forget(self, document: str) -> None:
        """Drops a document's suggestions (it was closed)."""
        self._entries.pop(document, None)
