"""LSP positions in UTF-16 code units, the one encoding the server speaks, converted at C speed.

Everything codedraft computes (cursor offsets, ghost-text ranges, next-edit ranges, the index's
columns) counts UTF-16 units, so the server always answers ``positionEncoding: utf-16``, which every
client must support, even when a client (Neovim) lists UTF-8 first: pygls would otherwise pick UTF-8
and columns past a non-ASCII character would be read wrong. pygls's own codec walks a line character
by character in Python: a change in a 50 MB single-line document took about a minute, and every
request waited behind it. Here a line is counted by ``str`` methods and a regular expression over its
characters outside the Basic Multilingual Plane (the only ones worth two units).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Sequence
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def utf16_units(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (a lone surrogate counts one)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for _ in _ASTRAL.finditer(text))


def code_point_index(content: str, units: int) -> int:
    """The index in ``content`` (a line without its line break) of the position ``units`` UTF-16 units
    in: clamped to the line's end, and past a character when it falls between its two units."""
    if units >= len(content) and content.isascii():
        return len(content)
    index = units
    passed = -1
    for match in _ASTRAL.finditer(content, 0, units):
        if match.start() >= index:
            break
        index -= 1  # the astral character before the position took one more unit than a character
        passed = match.start()
    return min(max(index, passed + 1), len(content))


def _content(line: str) -> str:
    return line.rstrip("\r\n")


class Utf16Positions(PositionCodec):
    """pygls's position codec for UTF-16, linear in C instead of in Python.

    A position past a line's end means its end, and one past the last line the end of the document.
    """

    def __init__(self) -> None:
        super().__init__(types.PositionEncodingKind.Utf16)

    def client_num_units(self, string: str) -> int:
        return utf16_units(string)

    def position_from_client_units(
        self, lines: Sequence[str], position: types.Position
    ) -> ServerTextPosition:
        if not lines:
            return ServerTextPosition(0, 0)
        if position.line >= len(lines):  # after the last line, its line break included (as pygls)
            return ServerTextPosition(len(lines) - 1, len(lines[-1]))
        index = code_point_index(_content(lines[position.line]), position.character)
        return ServerTextPosition(position.line, index)

    def position_to_client_units(
        self, lines: Sequence[str], position: ServerTextPosition | types.Position
    ) -> types.Position:
        if position.line >= len(lines):
            return types.Position(line=len(lines), character=0)
        units = utf16_units(lines[position.line][: position.character])
        return types.Position(line=position.line, character=units)


class Utf16Protocol(LanguageServerProtocol):
    """pygls's protocol, answering ``initialize`` with UTF-16 positions whatever the client prefers,
    and converting them with :class:`Utf16Positions`."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, Any]:
        general = params.capabilities.general
        if general is not None:
            general.position_encodings = None  # pygls then chooses UTF-16
        result = yield from super().lsp_initialize(params)
        self.workspace._position_codec = Utf16Positions()  # pygls takes no codec of a caller's
        return result
