"""Identifiers and the search terms made from them, shared by the BM25 index and the retrievers."""

from __future__ import annotations

import functools
import re

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

# Keywords and names so common across languages that they say nothing about what code is about.
STOP_WORDS = frozenset(
    """
    if else elif for while do return break continue def class function func fn let var const new this self
    cls import from as in is not and or true false none null nil undefined try except catch finally throw
    raise with yield async await pass lambda public private protected static void int str bool float string
    package interface struct enum impl pub use mut match case switch default type typeof instanceof end
    then fi esac local echo begin rescue module require include namespace using extern char long unsigned
    auto override virtual final abstract extends implements super get set of to by on at it be an the
    """.split()
)


def identifiers(text: str) -> list[str]:
    """The identifiers in ``text``, in order, repeats included."""
    return IDENTIFIER.findall(text)


@functools.lru_cache(maxsize=65536)
def split_identifier(name: str) -> tuple[str, ...]:
    """The lower-case words of a snake_case or camelCase name ("parseHTTPReply" -> parse, http, reply)."""
    return _words(name)


def _words(name: str) -> tuple[str, ...]:
    if name.isascii() and name.isalpha() and (name.islower() or name.isupper()):
        return (name.lower(),)  # one word: most names of a large workspace, and the cheap case
    words: list[str] = []
    for part in name.split("_"):
        words.extend(match.lower() for match in _CAMEL_PART.findall(part))
    return tuple(words)


def index_terms(text: str) -> str:
    """What the full-text index stores for a chunk: each identifier, plus its words when it has several."""
    if len(_EXPANSIONS) > _MAX_EXPANSIONS:
        _EXPANSIONS.clear()
    return " ".join(map(_EXPANSIONS.__getitem__, identifiers(text)))


class _Expansions(dict[str, str]):
    """Identifier -> its index terms (the name, then its words when it has several), filled on demand.

    A cache because a workspace repeats the same names across its files, and the indexer would spend
    more on splitting them than on finding them."""

    def __missing__(self, name: str) -> str:
        words = _words(name)  # not through split_identifier's cache: this dict is the cache here
        expansion = self[name] = " ".join((name, *words)) if len(words) > 1 else name
        return expansion


_EXPANSIONS = _Expansions()
# About 200 bytes an entry: 50,000 keep a parse worker's cache near 10 MB (200,000 held 40 MB), and
# the names a workspace repeats most come back within a few files.
_MAX_EXPANSIONS = 50_000


def query_terms(text: str, limit: int, keep: frozenset[str] = frozenset()) -> list[str]:
    """Distinct, meaningful identifiers of ``text``, the last (nearest the cursor) first; names in
    ``keep`` count as meaningful even when they are stop words."""
    seen: set[str] = set()
    ordered: list[str] = []
    for name in reversed(identifiers(text)):
        lowered = name.lower()
        if len(name) < 2 or lowered in seen or (lowered in STOP_WORDS and name not in keep):
            continue
        seen.add(lowered)
        ordered.append(name)
        if len(ordered) == limit:
            break
    return ordered
