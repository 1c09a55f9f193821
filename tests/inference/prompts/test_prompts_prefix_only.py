"""Models without FIM tokens: the document start their prompt begins with, and the suffix stop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import processors

from inference.prompts.fim import fim_template_for
from inference.prompts.prefix_only import document_start, suffix_stop
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import CHATML_TEMPLATE, train_tokenizer_json

LLAMA3_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
    "'<|end_header_id|>\\n\\n' + message['content'] + '<|eot_id|>' }}{% endfor %}"
)


def _tokenizer(
    directory: Path, specials: tuple[str, ...], config: dict[str, Any], adds_bos: str | None = None
) -> Tokenizer:
    directory.mkdir(parents=True, exist_ok=True)
    hf = HFTokenizer.from_str(train_tokenizer_json(specials))
    if adds_bos is not None:
        bos_id = hf.token_to_id(adds_bos)
        hf.post_processor = processors.TemplateProcessing(
            single=f"{adds_bos} $A", pair=f"{adds_bos} $A $B", special_tokens=[(adds_bos, bos_id)]
        )
    hf.save(str(directory / "tokenizer.json"))
    (directory / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return Tokenizer.from_dir(directory)


CHATML = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
LLAMA3 = ("<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>")


def test_smollm2_starts_a_document_not_a_chat_turn(tmp_path: Path) -> None:
    # SmolLM2-Instruct calls its chat-turn opener BOS; its documents are separated by <|endoftext|>.
    config = {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>", "chat_template": CHATML_TEMPLATE}
    tokenizer = _tokenizer(tmp_path / "smol", CHATML, config)
    assert document_start(tokenizer) == "<|endoftext|>"
    template = fim_template_for(tokenizer)
    assert template.family == "prefix-only"
    assert template.build("x = ", "\ny") == "<|endoftext|>x = "
    # Even where the file claims the tokenizer adds its BOS, a chat-turn opener is never a document start.
    claims = _tokenizer(tmp_path / "smol-gguf", CHATML, {**config, "add_bos_token": True})
    assert document_start(claims) == "<|endoftext|>"


def test_llama3_starts_with_the_bos_its_tokenizer_adds(tmp_path: Path) -> None:
    config = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "chat_template": LLAMA3_TEMPLATE}
    tokenizer = _tokenizer(tmp_path / "llama3", LLAMA3, config, adds_bos="<|begin_of_text|>")
    assert tokenizer.leading_special_ids() == [tokenizer.token_id("<|begin_of_text|>")]
    assert document_start(tokenizer) == "<|begin_of_text|>"
    assert fim_template_for(tokenizer).build("x = ", "") == "<|begin_of_text|>x = "
    # The same tokenizer without the post-processor, but with add_bos_token (a converted checkpoint).
    flagged = _tokenizer(tmp_path / "llama3-flag", LLAMA3, {**config, "add_bos_token": True})
    assert document_start(flagged) == "<|begin_of_text|>"


def test_qwen_without_bos_starts_after_endoftext(tmp_path: Path) -> None:
    config = {"bos_token": None, "eos_token": "<|im_end|>", "chat_template": CHATML_TEMPLATE}
    tokenizer = _tokenizer(tmp_path / "qwen", CHATML, config)
    assert document_start(tokenizer) == "<|endoftext|>"


def test_no_document_start_when_there_is_none(tmp_path: Path) -> None:
    tokenizer = _tokenizer(tmp_path / "bare", ("<unk>",), {"bos_token": None})
    assert document_start(tokenizer) == ""


@pytest.mark.parametrize(
    ("suffix", "stop"),
    [
        ("\n    return total\n", "\n    return total"),
        ("\n\n\n    return total", "\n    return total"),
        ("):\n    pass\n", "):\n"),  # the rest of the cursor's line, once it ends
        ("  \n  \nprint(x)  \n", "\nprint(x)"),
        ("", None),
        ("\n   \n", None),
        (")", None),  # the last line of the file: a bare ")" would cut every call before it
    ],
)
def test_suffix_stop(suffix: str, stop: str | None) -> None:
    assert suffix_stop(suffix) == stop
