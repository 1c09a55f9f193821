"""The editable region: whole statements around the cursor when the tree allows, lines otherwise,
bounded in bytes; and the minimal edits a rewrite of the region makes."""

from __future__ import annotations

from indexer.languages import LANGUAGES
from lsp_server.completion.syntax import parse
from lsp_server.next_edit.region import EditableRegion, RegionEdit, editable_region, region_edits

SOURCE = """import os


def load(path):
    with open(path) as handle:
        data = handle.read()
    return data


class Store:
    def __init__(self, root):
        self.root = root
        self.items = {}

    def get(self, key):
        if key in self.items:
            return self.items[key]
        value = load(os.path.join(self.root, key))
        self.items[key] = value
        return value

    def put(self, key, value):
        self.items[key] = value
        with open(os.path.join(self.root, key), "w") as handle:
            handle.write(value)


def main():
    store = Store(".")
    print(store.get("a"))
"""
LINES = SOURCE.split("\n")


def _span(region: EditableRegion | None) -> tuple[int, int]:
    assert region is not None
    assert region.text == SOURCE[region.start_offset : region.end_offset]
    assert (
        region.text
        == "".join(line + "\n" for line in LINES[region.start_line : region.end_line])[: len(region.text)]
    )
    return region.start_line, region.end_line


def test_the_region_is_whole_methods_around_the_cursor() -> None:
    tree = parse(LANGUAGES["python"], SOURCE)
    # Line 12 is in __init__: the region is the three methods (lines 10-24), not lines 5-19 that
    # plain line counting gives, which would cut load() and get() in half.
    assert _span(editable_region(SOURCE, 12, tree)) == (10, 25)
    assert _span(editable_region(SOURCE, 12)) == (5, 20)
    assert _span(editable_region(SOURCE, 0, tree)) == (0, 15)
    assert _span(editable_region(SOURCE, 17, tree)) == (10, 25)


def test_a_short_document_is_one_region() -> None:
    text = "a = 1\nb = 2\n"
    region = editable_region(text, 1, parse(LANGUAGES["python"], text))
    assert region == EditableRegion(0, 3, text, 0, len(text))


def test_the_region_is_bounded_in_bytes() -> None:
    text = "".join(f"x{i} = '{'é' * 100}'\n" for i in range(40))  # 209 bytes a line from x10 on
    region = editable_region(text, 20, max_bytes=1000)
    assert region is not None
    assert (region.start_line, region.end_line) == (18, 22)  # the cursor's line, two above, one below
    assert len(region.text.encode()) == 4 * 209
    assert editable_region("a\n" + "b" * 5000 + "\nc\n", 1) is None


def test_a_document_too_long_to_parse_is_cut_by_lines() -> None:
    text = "x = 1\n" * 100_000  # 600,000 characters: no tree is used even when one is given
    region = editable_region(text, 50_000, parse(LANGUAGES["python"], "x = (\n"))
    assert region is not None
    assert (region.start_line, region.end_line, region.start_offset) == (49_993, 50_008, 49_993 * 6)


def test_region_edits_are_minimal_and_in_document_positions() -> None:
    assert region_edits("a = 1\nb = 2\n", "a = 1\nb = 2\n") == []
    assert region_edits("a = 1\nb = 2\n", "a = 1\nb = 3\nc = 4\n", first_line=10) == [
        RegionEdit((11, 4), (11, 5), "3\nc = 4")
    ]
    assert region_edits("def f(a):\n    return a\n", "def f(a, b):\n    return a + b\n") == [
        RegionEdit((0, 7), (0, 7), ", b"),
        RegionEdit((1, 12), (1, 12), " + b"),
    ]
    assert region_edits("x = '😀'\ny = 1\n", "x = '😀!'\ny = 1\n") == [RegionEdit((0, 7), (0, 7), "!")]
    assert region_edits("a\nb\nc\n", "a\nc\n") == [RegionEdit((1, 0), (2, 0), "")]
    assert region_edits("a\nc\n", "a\nb\nc\n") == [RegionEdit((1, 0), (1, 0), "b\n")]
    assert region_edits("a\r\nb\r\n", "a\r\nB\r\n") == [RegionEdit((1, 0), (1, 1), "B")]
