"""UTF-16 columns, non-UTF-8 input, and the chunker's size limits."""

from __future__ import annotations

from indexer.analysis import analyze
from indexer.chunker import ChunkLimits
from indexer.positions import LineIndex, utf16_column


def test_utf16_column_counts_surrogate_pairs() -> None:
    line = "x = '😀é'; call()".encode()
    byte_column = line.index(b"call")
    assert byte_column == 14  # 4 bytes for the emoji, 2 for é
    assert utf16_column(line[:byte_column]) == 11  # 2 units for the emoji, 1 for é


def test_tag_columns_on_a_line_with_non_bmp_characters() -> None:
    source = 'def f():\n    s = "𝔘𝔫𝔦"; g()\n'
    call = next(tag for tag in analyze("a.py", source.encode()).tags if tag.name == "g")
    assert (call.line, call.column) == (1, 4 + len('s = "') + 6 + len('"; '))
    assert source.encode()[call.start_byte : call.end_byte] == b"g"


def test_non_utf8_file_decodes_with_replacement() -> None:
    data = b"def caf\xe9():\n    return 1\n\ndef ok():\n    return caf()\n"
    analysis = analyze("latin.py", data)
    assert [tag.name for tag in analysis.tags if tag.is_definition][-1] == "ok"
    assert analysis.text.startswith("def caf\ufffd():")
    assert analysis.chunks[0].text.startswith("def caf\ufffd():")


def test_line_index() -> None:
    lines = LineIndex(b"ab\ncd\n")
    assert lines.line_count == 2
    assert (lines.line_start(1), lines.line_end(1)) == (3, 6)
    assert lines.line_start(5) == 6


def test_large_function_is_split_at_statement_boundaries() -> None:
    body = "".join(f"    value_{i} = compute({i})\n" for i in range(100))
    source = f"def big():\n{body}    return value_99\n\ndef small():\n    return 1\n"
    limits = ChunkLimits(max_lines=30, max_bytes=100_000)
    chunks = analyze("big.py", source.encode(), limits).chunks
    assert [chunk.end_line - chunk.start_line + 1 <= 30 for chunk in chunks] == [True] * len(chunks)
    # The header travels with the first statements; every line of the big function is covered once.
    assert chunks[0].start_line == 0 and chunks[0].text.startswith("def big():\n    value_0")
    covered = [line for chunk in chunks[:-1] for line in range(chunk.start_line, chunk.end_line + 1)]
    assert covered == list(range(0, 102))
    assert (chunks[-1].kind, chunks[-1].name, chunks[-1].start_line) == ("function", "small", 103)


def test_comment_above_a_definition_joins_its_chunk() -> None:
    source = "import os\n\n# Explains f.\n# More.\ndef f():\n    return os.sep\n"
    chunks = analyze("c.py", source.encode()).chunks
    assert [(chunk.start_line, chunk.end_line, chunk.kind) for chunk in chunks] == [
        (0, 0, "block"),
        (2, 5, "function"),
    ]
