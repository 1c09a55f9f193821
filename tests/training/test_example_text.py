"""Training examples are laid out as the engine prompts the trained models, and that layout is fixed."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.prompts.fim import fim_template_for
from inference.tokenizer import Tokenizer
from training.example_text import fim_training_text, plain_training_text

CASES = [
    ((), None),
    ((), "pkg/mod.py"),
    ((("pkg/a.py", "def a():\n    pass"), ("pkg/b.py", "B = 2")), "pkg/mod.py"),
    ((("pkg/a.py", "A = 1"),), None),
]


@pytest.mark.parametrize("spm", [True, False])
@pytest.mark.parametrize(("snippets", "path"), CASES)
def test_matches_the_trained_tokenizers_template(
    tiny_run: Path, spm: bool, snippets: tuple, path: str | None
) -> None:
    """The template the engine detects from the tokenizer training writes gives the same prompt."""
    template = fim_template_for(Tokenizer.from_dir(tiny_run / "codedraft-base"))
    assert template.family == "codedraft"
    prefix, middle, suffix = "def f(x):\n    y = ", "x + 1", "\n    return y\n"
    expected = template.build(prefix, suffix, snippets=list(snippets), path=path, spm=spm)
    text = fim_training_text(prefix, middle, suffix, spm=spm, path=path, snippets=snippets)
    assert text == expected + middle + "<|endoftext|>"


def test_layouts_the_shipped_models_were_trained_on() -> None:
    """Written out: a change to the engine's codedraft layout would leave the shipped models behind."""
    spm = fim_training_text("a", "m", "b", spm=True)
    assert spm == "<|fim_suffix|>b<|fim_prefix|>a<|fim_middle|>m<|endoftext|>"
    assert (
        fim_training_text("a", "m", "b", spm=False, path="x.py", snippets=[("y.py", "Y")])
        == "<|file_sep|>y.py\nY\n<|file_sep|>x.py\n<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>m<|endoftext|>"
    )
    assert plain_training_text("x = 1\n", "x.py", ends_file=True) == "<|file_sep|>x.py\nx = 1\n<|endoftext|>"
    assert plain_training_text("x = 1\n", None, ends_file=False) == "x = 1\n"
