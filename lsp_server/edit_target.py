"""The ``{uri, range, …}`` argument that commands and code actions carry, read from its JSON form, the
checks every such range passes, and the whole lines it selects."""

from __future__ import annotations

from typing import Any

import cattrs
from lsprotocol import converters, types
from pygls.exceptions import JsonRpcInvalidParams

_LSP_JSON = converters.get_converter()


class BadTarget(JsonRpcInvalidParams, ValueError):
    """A malformed command or code action argument: the client gets InvalidParams (-32602) with the
    message; callers may catch it as a ValueError."""


def range_to_json(span: types.Range) -> Any:
    """An LSP range in its JSON form."""
    return _LSP_JSON.unstructure(span)


def range_from_json(raw: Any) -> types.Range:
    """An LSP range from its JSON form, by lsprotocol's converter; ValueError when malformed or when it
    ends before it starts."""
    try:
        span = _LSP_JSON.structure(plain_json(raw), types.Range)
    except (cattrs.BaseValidationError, TypeError, ValueError) as error:
        raise BadTarget(f"not an LSP range: {raw!r}") from error
    if (problem := range_problem(span)) is not None:
        raise BadTarget(problem)
    return span


def range_problem(span: types.Range, line_count: int | None = None) -> str | None:
    """Why ``span`` selects nothing in a document of ``line_count`` lines (any, when None): it ends
    before it starts, or starts past the last line; None when it is usable. (lsprotocol's structuring
    already refused negative positions.)"""
    start, end = span.start, span.end
    if (end.line, end.character) < (start.line, start.character):
        return f"the range ends at {end.line}:{end.character}, before it starts"
    if line_count is not None and start.line > line_count:
        return f"the range starts at line {start.line}, past the document's {line_count} lines"
    return None


def selected_lines(span: types.Range) -> tuple[int, int]:
    """The first and last line (from 0, inclusive) a refactor or fix of ``span`` rewrites: whole lines,
    without the line a selection ends at the start of."""
    first, last = span.start.line, span.end.line
    if span.end.character == 0 and last > first:
        last -= 1
    return first, last


def command_target(args: tuple[Any, ...]) -> dict[str, Any]:
    """A command's one argument ``{uri, range, ...}``; ValueError (an error response) when malformed."""
    target: Any = args[0] if args else None
    if isinstance(target, list) and target:
        target = target[0]
    target = plain_json(target)
    if not isinstance(target, dict) or not isinstance(target.get("uri"), str) or "range" not in target:
        raise BadTarget("expected one argument {uri, range, instruction?}")
    return target


def plain_json(value: Any) -> Any:
    """JSON values pygls hands over as named tuples, as dicts."""
    if hasattr(value, "_asdict"):
        return {key: plain_json(item) for key, item in value._asdict().items()}
    return value
