"""Next-edit prompt formats: each renders byte for byte as its golden file, orders the prompt from
stable to volatile, parses its model's reply back into the region (rejecting malformed replies), and
is chosen from the tokenizer's special tokens and the model's name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inference.prompts.chat import ChatTemplate
from inference.prompts.next_edit.chat_instruction import ChatInstructionFormat
from inference.prompts.next_edit.choice import detect_next_edit_format, next_edit_format_for
from inference.prompts.next_edit.inputs import NextEditFormat, NextEditInput, PastEdit
from inference.prompts.next_edit.sweep import SweepFormat
from inference.prompts.next_edit.zeta import ZetaFormat
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import (
    CHATML_TEMPLATE,
    SPECIAL_TOKENS,
    tokenizer_config,
    train_tokenizer_json,
)

GOLDEN = Path(__file__).parent / "golden"
ZETA_MARKERS = ("<|editable_region_start|>", "<|editable_region_end|>", "<|user_cursor_is_here|>")
REGION = "def area(w, h, d):\n    return w * h\n"
REQUEST = NextEditInput(
    path="src/geo.py",
    region=REGION,
    cursor=REGION.index(", d") + 3,
    original_region="def area(w, h):\n    return w * h\n",
    context_before="import math\n\n",
    context_after="\n\nprint(area(2, 3))\n",
    starts_file=True,
    history=(
        PastEdit(
            "src/geo.py",
            "--- a/src/geo.py\n+++ b/src/geo.py\n@@ -3,2 +3,2 @@\n-def area(w, h):\n+def area(w, h, d):\n"
            "     return w * h\n",
            (("def area(w, h):\n    return w * h", "def area(w, h, d):\n    return w * h"),),
        ),
    ),
    snippets=(("src/units.py", "METRE = 1.0\n"),),
)


def _chat_format() -> ChatInstructionFormat:
    return ChatInstructionFormat(ChatTemplate(CHATML_TEMPLATE), ("<|endoftext|>",))


FORMATS: dict[str, NextEditFormat] = {"sweep": SweepFormat(), "zeta": ZetaFormat(), "chat": _chat_format()}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_prompt_is_the_golden_file_byte_for_byte(name: str) -> None:
    assert FORMATS[name].render(REQUEST).encode() == (GOLDEN / f"{name}.txt").read_bytes()


@pytest.mark.parametrize("name", ["sweep", "chat"])
def test_a_keystroke_in_the_region_changes_only_the_prompt_tail(name: str) -> None:
    """Snippets and history come first, so the prompt up to the region stays the same."""
    cursor = REQUEST.cursor
    region = REGION[:cursor] + "x" + REGION[cursor:]
    typed = NextEditInput(**{**REQUEST.__dict__, "region": region, "cursor": cursor + 1})
    before, after = FORMATS[name].render(REQUEST), FORMATS[name].render(typed)
    shared = next(i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b)
    # The first difference is the keystroke, in the current region (Sweep's last copy, the chat's
    # user message): snippets, history and (for Sweep) the original window before it are unchanged.
    region_copy = before.rindex("def area(w, h, d") if name == "sweep" else before.index("def area(w, h, d<")
    assert shared == region_copy + len("def area(w, h, d")


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_an_unchanged_rewrite_parses_to_the_region_itself(name: str) -> None:
    replies = {
        "sweep": "def area(w, h, d):\n    return w * h\n",
        "zeta": "```src/geo.py\n<|editable_region_start|>\ndef area(w, h, d):<|user_cursor_is_here|>\n"
        "    return w * h\n<|editable_region_end|>\n```",
        "chat": "):\n    return w * h\n```",  # the prompt wrote the region up to the cursor
    }
    assert FORMATS[name].parse(replies[name], REQUEST, stopped=True) == REGION


def test_each_format_parses_a_rewrite() -> None:
    rewritten = "def area(w, h, d):\n    return w * h * d\n"
    assert (
        FORMATS["sweep"].parse("def area(w, h, d):\n    return w * h * d\n<|file_sep|>x", REQUEST, True)
        == rewritten
    )
    zeta_reply = (
        "```src/geo.py\n<|start_of_file|>\nimport math\n\n<|editable_region_start|>\ndef area(w, h, d):\n"
        "    return w * h * d<|user_cursor_is_here|>\n<|editable_region_end|>\n\nprint(area(2, 3))\n```"
    )
    assert FORMATS["zeta"].parse(zeta_reply, REQUEST, True) == rewritten
    # The prompt opened the code block and wrote the region up to the cursor: the reply is the rest
    # of the region, then the block's end.
    chat_reply = "):\n    return w * h * d<|cursor|>\n```\nDone."
    assert FORMATS["chat"].parse(chat_reply, REQUEST, True) == rewritten
    assert FORMATS["chat"].parse("):\n    return w * h * d", REQUEST, True) == rewritten


def test_malformed_replies_are_rejected() -> None:
    sweep, zeta, chat = FORMATS["sweep"], FORMATS["zeta"], FORMATS["chat"]
    assert sweep.parse("def area(w, h, d):\n    return", REQUEST, stopped=False) is None  # cut by the limit
    assert sweep.parse("<|file_sep|>", REQUEST, stopped=True) is None  # empty for a region that is not
    assert zeta.parse("<|editable_region_start|>\ndef area(w):\n", REQUEST, True) is None  # no end marker
    two_starts = "<|editable_region_start|>\n<|editable_region_start|>\nx\n<|editable_region_end|>"
    assert zeta.parse(two_starts, REQUEST, True) is None
    assert zeta.parse("<|editable_region_end|>\nx\n<|editable_region_start|>\n", REQUEST, True) is None
    assert chat.parse("):", REQUEST, False) is None  # cut by the limit: never closed
    # closed before the region's last line below the cursor: an early close, not a deletion
    assert chat.parse("):\n```", REQUEST, True) is None
    # a line changed, none dropped
    assert chat.parse("):\n    pass\n```", REQUEST, True) == "def area(w, h, d):\n    pass\n"


def _tokenizer(tmp_path: Path, special_tokens: tuple[str, ...], **config: object) -> Tokenizer:
    tmp_path.mkdir(parents=True)
    (tmp_path / "tokenizer.json").write_text(train_tokenizer_json(special_tokens), encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(tokenizer_config(**config)), encoding="utf-8")
    return Tokenizer.from_dir(tmp_path)


def test_the_format_follows_the_tokenizers_special_tokens_and_the_models_name(tmp_path: Path) -> None:
    qwen_like = _tokenizer(tmp_path / "qwen", SPECIAL_TOKENS)
    zeta_like = _tokenizer(tmp_path / "zeta", SPECIAL_TOKENS + ZETA_MARKERS)
    no_file_sep = _tokenizer(tmp_path / "plain", tuple(t for t in SPECIAL_TOKENS if t != "<|file_sep|>"))
    assert detect_next_edit_format(zeta_like) == "zeta"
    assert detect_next_edit_format(qwen_like, "sweep-next-edit-1.5B") == "sweep"
    assert detect_next_edit_format(qwen_like, "Qwen2.5-Coder-1.5B") == "chat"  # file_sep alone is Qwen
    assert detect_next_edit_format(no_file_sep, "sweep-next-edit-1.5B") == "chat"  # no token for its format
    assert isinstance(next_edit_format_for(zeta_like), ZetaFormat)
    assert isinstance(next_edit_format_for(qwen_like, "sweepai/sweep-next-edit-0.5B"), SweepFormat)
    chat = next_edit_format_for(qwen_like)
    assert isinstance(chat, ChatInstructionFormat)
    assert chat.stop_texts == ("<|endoftext|>",)
    assert chat.render(REQUEST).encode() == (GOLDEN / "chat.txt").read_bytes()


def test_tokenizer_config_names_the_format(tmp_path: Path) -> None:
    named = _tokenizer(tmp_path / "named", SPECIAL_TOKENS, next_edit_format="zeta")
    assert detect_next_edit_format(named) == "zeta"
    wrong = _tokenizer(tmp_path / "wrong", SPECIAL_TOKENS, next_edit_format="copilot")
    with pytest.raises(ValueError, match="unknown next_edit_format 'copilot'"):
        detect_next_edit_format(wrong)


def test_a_chat_reply_may_change_the_last_line_when_the_cursor_is_on_it() -> None:
    at_end = NextEditInput(path="a.py", region="x = 1\ny = f(", cursor=len("x = 1\ny = f("))
    assert FORMATS["chat"].parse("a)\n```", at_end, True) == "x = 1\ny = f(a)"
