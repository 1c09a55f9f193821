"""FIM templates per family, detected from hand-made tokenizers carrying each family's special tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inference.prompts.fim import detect_fim_family, fim_template_for
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import train_tokenizer_json, write_tokenizer

FAMILY_TOKENS: dict[str, tuple[list[str], dict[str, Any]]] = {
    "qwen": (
        [
            "<|fim_prefix|>",
            "<|fim_suffix|>",
            "<|fim_middle|>",
            "<|fim_pad|>",
            "<|file_sep|>",
            "<|repo_name|>",
        ],
        {"eos_token": "<|endoftext|>"},
    ),
    "starcoder2": (
        ["<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<fim_pad>", "<file_sep>", "<repo_name>"],
        {"eos_token": "<|endoftext|>"},
    ),
    "deepseek": (
        [
            "<｜begin▁of▁sentence｜>",
            "<｜end▁of▁sentence｜>",
            "<｜fim▁begin｜>",
            "<｜fim▁hole｜>",
            "<｜fim▁end｜>",
        ],
        {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    ),
    "codellama": (
        ["<s>", "</s>", "▁<PRE>", "▁<SUF>", "▁<MID>", "▁<EOT>"],
        {"bos_token": "<s>", "eos_token": "</s>"},
    ),
    "codestral": (
        ["<s>", "</s>", "[INST]", "[/INST]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]"],
        {"bos_token": "<s>", "eos_token": "</s>"},
    ),
}


def family_tokenizer(directory: Path, family: str) -> Tokenizer:
    """The tiny BPE without the codedraft tokens, plus the special tokens of `family`."""
    tokens, config = FAMILY_TOKENS[family]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tokenizer.json").write_text(
        train_tokenizer_json(("<|endoftext|>", *tokens)), encoding="utf-8"
    )
    (directory / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return Tokenizer.from_dir(directory)


@pytest.fixture(scope="module")
def tokenizers_by_family(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Tokenizer]:
    root = tmp_path_factory.mktemp("families")
    found = {name: family_tokenizer(root / name, name) for name in FAMILY_TOKENS}
    found["codedraft"] = Tokenizer.from_dir(write_tokenizer(root / "codedraft"))
    return found


SNIPPETS = [("util.py", "def helper():\n    pass")]


@pytest.mark.parametrize(
    ("family", "spm", "expected"),
    [
        (
            "codedraft",
            None,
            "<|file_sep|>util.py\ndef helper():\n    pass\n<|file_sep|>main.py\n"
            "<|fim_suffix|>\nprint(x)<|fim_prefix|>x = <|fim_middle|>",
        ),
        (
            "codedraft",
            False,
            "<|file_sep|>util.py\ndef helper():\n    pass\n<|file_sep|>main.py\n"
            "<|fim_prefix|>x = <|fim_suffix|>\nprint(x)<|fim_middle|>",
        ),
        (
            "qwen",
            None,
            "<|repo_name|>demo\n<|file_sep|>util.py\ndef helper():\n    pass\n<|file_sep|>main.py\n"
            "<|fim_prefix|>x = <|fim_suffix|>\nprint(x)<|fim_middle|>",
        ),
        (
            "starcoder2",
            None,
            "<repo_name>demo<file_sep>util.py\ndef helper():\n    pass\n"
            "<file_sep><fim_prefix><fim_suffix>\nprint(x)<fim_middle>main.py\nx = ",
        ),
        (
            "starcoder2",
            False,
            "<repo_name>demo<file_sep>util.py\ndef helper():\n    pass\n"
            "<file_sep><fim_prefix>main.py\nx = <fim_suffix>\nprint(x)<fim_middle>",
        ),
        (
            "deepseek",
            None,
            "<｜begin▁of▁sentence｜><｜fim▁begin｜># util.py\ndef helper():\n    pass\n# main.py\n"
            "x = <｜fim▁hole｜>\nprint(x)<｜fim▁end｜>",
        ),
        (
            "codellama",
            None,
            "<s>▁<PRE>▁<SUF>\nprint(x)▁<MID># util.py\ndef helper():\n    pass\n# main.py\nx = ",
        ),
        (
            "codellama",
            False,
            "<s>▁<PRE># util.py\ndef helper():\n    pass\n# main.py\nx = ▁<SUF>\nprint(x)▁<MID>",
        ),
        (
            "codestral",
            None,
            "<s>[SUFFIX]\nprint(x)[PREFIX]# util.py\ndef helper():\n    pass\n# main.py\nx = ",
        ),
    ],
)
def test_prompt_layout(
    tokenizers_by_family: dict[str, Tokenizer], family: str, spm: bool | None, expected: str
) -> None:
    tokenizer = tokenizers_by_family[family]
    template = fim_template_for(tokenizer)
    assert template.family == family
    prompt = template.build("x = ", "\nprint(x)", SNIPPETS, "main.py", spm=spm, repo="demo")
    assert prompt == expected
    # Every special token of the layout reaches the model as one id (Codestral has no middle token).
    ids = tokenizer.encode(prompt)
    for token in (template.prefix, template.suffix, template.middle)[: 2 if family == "codestral" else 3]:
        assert ids.count(tokenizer.token_id(token)) == 1  # type: ignore[arg-type]


def test_no_context_omits_file_separators(tokenizers_by_family: dict[str, Tokenizer]) -> None:
    template = fim_template_for(tokenizers_by_family["codedraft"])
    assert template.build("a", "b") == "<|fim_suffix|>b<|fim_prefix|>a<|fim_middle|>"
    assert template.build("a", "b", spm=False) == "<|fim_prefix|>a<|fim_suffix|>b<|fim_middle|>"


def test_spm_typing_only_appends(tokenizers_by_family: dict[str, Tokenizer]) -> None:
    template = fim_template_for(tokenizers_by_family["codedraft"])
    before = template.build("def f(", ")\n", SNIPPETS, "a.py")
    after = template.build("def f(x", ")\n", SNIPPETS, "a.py")
    assert after.startswith(before.removesuffix("<|fim_middle|>"))


def test_codestral_is_suffix_first_only(tokenizers_by_family: dict[str, Tokenizer]) -> None:
    template = fim_template_for(tokenizers_by_family["codestral"])
    assert template.build("a", "b") == "<s>[SUFFIX]b[PREFIX]a"
    with pytest.raises(ValueError, match="only the suffix-prefix order"):
        template.build("a", "b", spm=False)


def test_psm_only_family_refuses_spm(tokenizers_by_family: dict[str, Tokenizer]) -> None:
    for family in ("qwen", "deepseek"):
        template = fim_template_for(tokenizers_by_family[family])
        assert not template.supports_spm
        with pytest.raises(ValueError, match=f"the {family} FIM format has no suffix-prefix-middle order"):
            template.build("a", "b", spm=True)


@pytest.mark.parametrize(
    ("family", "stops"),
    [
        ("codedraft", {"<|endoftext|>", "<|file_sep|>", "<|fim_pad|>", "<|im_end|>"}),
        ("qwen", {"<|endoftext|>", "<|file_sep|>", "<|fim_pad|>", "<|repo_name|>"}),
        ("starcoder2", {"<|endoftext|>", "<file_sep>", "<fim_pad>"}),
        ("deepseek", {"<｜end▁of▁sentence｜>"}),
        ("codellama", {"▁<EOT>", "</s>"}),
        ("codestral", {"</s>", "[PREFIX]", "[SUFFIX]", "[MIDDLE]"}),
    ],
)
def test_stop_tokens(tokenizers_by_family: dict[str, Tokenizer], family: str, stops: set[str]) -> None:
    tokenizer = tokenizers_by_family[family]
    template = fim_template_for(tokenizer)
    assert stops <= set(template.stop_tokens)
    assert {tokenizer.token_id(t) for t in stops} <= template.stop_token_ids
    assert tokenizer.eos_token_ids <= template.stop_token_ids


def test_named_template_overrides_detection(tmp_path: Path) -> None:
    qwen_like = Tokenizer.from_dir(write_tokenizer(tmp_path / "a", fim_template="qwen"))
    assert detect_fim_family(qwen_like) == "qwen"
    no_name = Tokenizer.from_dir(write_tokenizer(tmp_path / "b", fim_template=None))
    assert detect_fim_family(no_name) == "qwen"  # the codedraft tokens alone look like Qwen's
    unknown = Tokenizer.from_dir(write_tokenizer(tmp_path / "c", fim_template="gpt9"))
    with pytest.raises(ValueError, match="unknown FIM template 'gpt9'"):
        fim_template_for(unknown)


def test_tokenizer_without_fim_tokens_completes_the_prefix(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text(train_tokenizer_json(("<|endoftext|>",)), encoding="utf-8")
    template = fim_template_for(Tokenizer.from_dir(tmp_path))
    assert template.family == "prefix-only"
    assert (
        template.build("x = ", "\ny", SNIPPETS, "m.py")
        == "<|endoftext|># util.py\ndef helper():\n    pass\n# m.py\nx = "
    )


def test_line_after_middle_keeps_typing_appending(tokenizers_by_family: dict[str, Tokenizer]) -> None:
    template = fim_template_for(tokenizers_by_family["qwen"])
    prompt = template.build("import os\nx = os.pa", "\nprint(x)", line_after_middle=True)
    assert prompt == "<|fim_prefix|>import os\n<|fim_suffix|>\nprint(x)<|fim_middle|>x = os.pa"
    typed = template.build("import os\nx = os.path", "\nprint(x)", line_after_middle=True)
    assert typed.startswith(prompt)
    deepseek = fim_template_for(tokenizers_by_family["deepseek"])
    assert deepseek.build("a\nb", "c", line_after_middle=True).endswith("<｜fim▁end｜>b")
    codedraft = fim_template_for(tokenizers_by_family["codedraft"])
    with pytest.raises(ValueError, match="pass spm=False"):
        codedraft.build("a\nb", "c", line_after_middle=True)
    assert codedraft.build("a\nb", "c", spm=False, line_after_middle=True).endswith("<|fim_middle|>b")
