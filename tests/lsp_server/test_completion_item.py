from __future__ import annotations

from lsprotocol import types

from lsp_server.features.completion_items import suggestion_item


def test_the_edit_covers_the_typed_word_in_utf16_units() -> None:
    # the emoji takes two UTF-16 units: "😀 = ret" is 8 units long
    item = suggestion_item(["😀 = ret\r\n"], types.Position(line=0, character=8), "urn value")
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.range.start == types.Position(line=0, character=5)
    assert item.text_edit.new_text == "return value" and item.label == "return value"


def test_a_position_past_the_document_still_gives_an_item() -> None:
    item = suggestion_item([], types.Position(line=3, character=0), "x = 1\ny = 2")
    assert isinstance(item.text_edit, types.TextEdit)
    assert item.text_edit.new_text == "x = 1\ny = 2" and item.label == "x = 1"
