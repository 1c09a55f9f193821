"""The training format is the engine's codedraft FIM template, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.training.fim_format import fim_prompt

CASES = [
    ((), None),
    ((), "pkg/mod.py"),
    ((("pkg/a.py", "def a():\n    pass"), ("pkg/b.py", "B = 2")), "pkg/mod.py"),
    ((("pkg/a.py", "A = 1"),), None),
]


@pytest.mark.parametrize("spm", [True, False])
@pytest.mark.parametrize(("snippets", "path"), CASES)
def test_matches_engine_template(tiny_run: Path, spm: bool, snippets: tuple, path: str | None) -> None:
    fim = pytest.importorskip("inference.prompts.fim")
    tokenizer_module = pytest.importorskip("inference.tokenizer")
    template = fim.fim_template_for(tokenizer_module.Tokenizer.from_dir(tiny_run / "codedraft-base"))
    assert template.family == "codedraft"
    prefix, suffix = "def f(x):\n    y = ", "\n    return y\n"
    expected = template.build(prefix, suffix, snippets=list(snippets), path=path, spm=spm)
    assert fim_prompt(prefix, suffix, spm=spm, path=path, snippets=snippets) == expected


def test_plain_layouts() -> None:
    assert fim_prompt("a", "b", spm=True) == "<|fim_suffix|>b<|fim_prefix|>a<|fim_middle|>"
    assert (
        fim_prompt("a", "b", spm=False, path="x.py")
        == "<|file_sep|>x.py\n<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>"
    )
