"""LSP positions: lines count from 0 and columns in UTF-16 code units, computed from UTF-8 bytes."""

from __future__ import annotations


def utf16_column(line_bytes: bytes) -> int:
    """The UTF-16 length of the UTF-8 text before a position on its line (``line_bytes``)."""
    if line_bytes.isascii():
        return len(line_bytes)
    # Characters outside the BMP take two UTF-16 units; a cut inside a character counts what decodes.
    return len(line_bytes.decode("utf-8", "replace").encode("utf-16-le")) // 2


def utf16_length(text: str) -> int:
    """The length of ``text`` in UTF-16 code units (characters outside the BMP count two)."""
    return sum(2 if ord(char) > 0xFFFF else 1 for char in text)


def cursor_offset(text: str, line: int, utf16_column: int) -> int:
    """The character offset in ``text`` of an LSP position (clamped to the text)."""
    offset = 0
    for _ in range(line):
        newline = text.find("\n", offset)
        if newline == -1:
            return len(text)
        offset = newline + 1
    line_end = text.find("\n", offset)
    line_text = text[offset : len(text) if line_end == -1 else line_end]
    units = 0
    for index, character in enumerate(line_text):
        if units >= utf16_column:
            return offset + index
        units += 2 if ord(character) > 0xFFFF else 1
    return offset + len(line_text)


class LineIndex:
    """Byte offsets of line starts in one file, to turn byte offsets into (line, UTF-16 column)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        starts = [0]
        find = data.find
        position = find(b"\n")
        while position != -1:
            starts.append(position + 1)
            position = find(b"\n", position + 1)
        self.line_starts = starts
        # In an ASCII file (most source files) a byte column is its UTF-16 column.
        self._ascii = data.isascii()

    @property
    def line_count(self) -> int:
        """Lines in the file; a final newline does not start another line."""
        count = len(self.line_starts)
        return count - 1 if count > 1 and self.line_starts[-1] == len(self.data) else count

    def column(self, line: int, byte_column: int) -> int:
        """The UTF-16 column of a tree-sitter point (row, byte column)."""
        if self._ascii:
            return byte_column
        start = self.line_starts[line]
        return utf16_column(self.data[start : start + byte_column])

    def line_start(self, line: int) -> int:
        """The byte offset where ``line`` starts (the file's length past the last line)."""
        if line >= len(self.line_starts):
            return len(self.data)
        return self.line_starts[line]

    def line_end(self, line: int) -> int:
        """The byte offset just past ``line``'s newline (or the end of the file)."""
        return self.line_start(line + 1)
