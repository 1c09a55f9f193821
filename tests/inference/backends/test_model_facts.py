"""The ModelInfo facts every backend reports: the reply limits and the tokenizer's characters per token."""

from __future__ import annotations

from pathlib import Path

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.model_facts import CODE_SAMPLE, measured_chars_per_token, report_limits
from inference.defaults import default_model_dir
from inference.reply_limits import request_limits
from inference.tokenizer import Tokenizer


def test_chars_per_token_of_the_repos_model_is_the_samples_characters_per_token() -> None:
    tokenizer = Tokenizer.from_dir(default_model_dir())
    tokens = tokenizer.encode(CODE_SAMPLE)
    assert measured_chars_per_token(tokenizer) == len(CODE_SAMPLE) / len(tokens)


def test_chars_per_token_of_the_tiny_test_model(tiny_model_dir: Path) -> None:
    tokenizer = Tokenizer.from_dir(tiny_model_dir)
    assert measured_chars_per_token(tokenizer) == len(CODE_SAMPLE) / len(tokenizer.encode(CODE_SAMPLE))


def test_the_code_sample_is_python_and_typescript() -> None:
    assert "def load_accounts(path: str) -> list[Account]:" in CODE_SAMPLE
    assert "export function totalBalance(" in CODE_SAMPLE


def test_report_limits_fills_the_reply_fields_from_the_owner() -> None:
    info = report_limits(pb.ModelInfo(), request_limits(512, 1024, has_draft_model=False))
    assert (info.max_new_tokens, info.default_completion_tokens, info.reply_reserve_limit) == (511, 128, 256)
