"""Token healing, prompt side: where the prompt is backed off to, on a real byte-level BPE with merges."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.prompts.token_boundary import heal_prompt, token_boundaries
from inference.prompts.vocabulary import VocabularyIndex, vocabulary_index
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import write_tokenizer

CONTINUATIONS = ("x", "rn", "return x", " ", "\n", "(", "= 1", "==", 'ld")', "_name", "9", "'")


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    return Tokenizer.from_dir(write_tokenizer(tmp_path_factory.mktemp("tok")))


def _healed(tokenizer: Tokenizer, prompt: str) -> tuple[list[int], str]:
    healed = heal_prompt(tokenizer, tokenizer.encode(prompt))
    return healed.token_ids, healed.removed.decode()


@pytest.mark.parametrize(
    ("prompt", "removed"),
    [
        # The newline and the indentation after it are tokens that the next line's text changes.
        ("def area(width, height):\n    ", "\n    "),
        # Half an identifier: `retu` + `rn` is one token, so the whole piece goes.
        ("def area(width, height):\n    retu", " retu"),
        ("    result = self.textwr", "textwr"),
        # Half an operator: ` =` becomes ` ==`.
        ("    if width =", " ="),
        # Inside a string: the word being typed.
        ('    print("hello wor', " wor"),
    ],
)
def test_backs_off_to_a_boundary_no_continuation_moves(
    tokenizer: Tokenizer, prompt: str, removed: str
) -> None:
    ids = tokenizer.encode(prompt)
    kept, got_removed = _healed(tokenizer, prompt)
    assert got_removed == removed
    assert tokenizer.decode(kept) + got_removed == prompt
    assert kept == ids[: len(kept)] and len(kept) < len(ids)
    # The kept tokens are what the full text tokenizes to, whatever the user types next.
    for more in CONTINUATIONS:
        assert tokenizer.encode(prompt + more)[: len(kept)] == kept, more


def test_the_healed_prompt_is_stable_while_typing_on_the_line(tokenizer: Tokenizer) -> None:
    line = "        return self.width * height"
    head = "class Box:\n    def area(self, height):\n"
    healed = {n: _healed(tokenizer, head + line[:n])[0] for n in range(9, len(line) + 1)}
    for n in range(9, len(line)):
        # Each keystroke inside a word leaves the healed prompt (and so the cached KV) as it was.
        if line[n - 1].isalnum() and line[n].isalnum():
            assert healed[n + 1] == healed[n], line[: n + 1]
        # Every keystroke keeps at least what the previous one kept, up to the line's start.
        assert (
            healed[n + 1][: len(tokenizer.encode(head)) - 1] == healed[9][: len(tokenizer.encode(head)) - 1]
        )
    assert len({tuple(ids) for ids in healed.values()}) <= 8


def test_a_prompt_ending_in_a_special_token_is_left_alone(tokenizer: Tokenizer) -> None:
    prompt = "<|fim_suffix|>\n    return x<|fim_prefix|>def f(x):\n    x = 1<|fim_middle|>"
    ids = tokenizer.encode(prompt)
    healed = heal_prompt(tokenizer, ids)
    assert healed.token_ids == ids and healed.removed == b""


def test_healing_never_crosses_a_special_token(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode("<|fim_middle|>retu")
    healed = heal_prompt(tokenizer, ids)
    assert healed.token_ids == ids[:1] and healed.removed == b"retu"


def test_agreeing_ids_match_a_scan_of_the_whole_vocabulary(tokenizer: Tokenizer) -> None:
    index = vocabulary_index(tokenizer)
    assert vocabulary_index(tokenizer) is index  # built once per tokenizer
    for remaining in (b"\n    ", b" retu", b" =", b"t", b"\xff", b"self.width"):
        expected = {
            i
            for i, data in enumerate(index.token_bytes)
            if data and (data.startswith(remaining) or remaining.startswith(data))
        }
        assert set(index.agreeing_ids(remaining).tolist()) == expected, remaining
        assert expected  # every byte string has a byte-level token that starts it


def test_a_token_may_end_inside_the_removed_text_only_where_the_tokenizer_ends_one(
    tokenizer: Tokenizer,
) -> None:
    """The tokenizer writes a word indented by eight as newline + seven spaces, then the word with its
    space; newline + three spaces, a token of its own, ends a token only in a four-space indentation."""
    assert [tokenizer.decode([i]) for i in tokenizer.encode("\n        x")] == ["\n       ", " x"]
    assert tokenizer.encode("\n    x")[0] == tokenizer.encode("\n   ")[0]
    assert token_boundaries(tokenizer, b"\n        ") == {8}
    assert token_boundaries(tokenizer, b"\n    ") == {1, 4}  # after the newline, or newline + three spaces
    # Text that is not whole characters rules nothing out.
    assert token_boundaries(tokenizer, "é".encode()[:1]) is None


def test_token_bytes_are_the_decoded_text(tokenizer: Tokenizer) -> None:
    index = VocabularyIndex(tokenizer)
    ids = tokenizer.encode("def f(x):\n    return {'é': x}\n")
    assert index.bytes_of(ids).decode("utf-8") == tokenizer.decode(ids)
    fim_prefix = tokenizer.token_id("<|fim_prefix|>")
    assert fim_prefix is not None
    assert index.token_bytes[fim_prefix] is None


def test_the_real_model_tokenizer(tmp_path: Path) -> None:
    """The project's own model's tokenizer (models/codedraft-base) heals an indented line as well."""
    base = Path(__file__).resolve().parents[3] / "models" / "codedraft-base"
    tokenizer = Tokenizer.from_dir(base)
    prompt = "def area(width, height):\n    "
    kept, removed = _healed(tokenizer, prompt)
    assert removed.endswith("    ") and tokenizer.decode(kept) + removed == prompt
