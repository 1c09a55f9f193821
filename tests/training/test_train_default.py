"""The recipe end to end on a tiny budget: its output loads with transformers and speaks the FIM format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from transformers import AutoModelForCausalLM, AutoTokenizer

from training.example_text import CODEDRAFT_FIM, EOS, SPECIAL_TOKENS, fim_training_text
from training.train_default import main as train_main

MODEL_DIRS = ("codedraft-base", "codedraft-draft")


@pytest.mark.parametrize("name", MODEL_DIRS)
def test_run_writes_hugging_face_layout(tiny_run: Path, name: str) -> None:
    model_dir = tiny_run / name
    assert sorted(p.name for p in model_dir.iterdir()) == [
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    config = json.loads((model_dir / "config.json").read_text())
    assert config["model_type"] == "llama"
    assert config["rope_theta"] == 10000.0
    assert config["tie_word_embeddings"] is True
    with safe_open(str(model_dir / "model.safetensors"), "pt") as weights:
        assert {weights.get_tensor(k).dtype for k in weights.keys()} == {torch.float16}
    tokenizer_config = json.loads((model_dir / "tokenizer_config.json").read_text())
    assert tokenizer_config["fim_template"] == "codedraft"
    assert tokenizer_config["eos_token"] == EOS


def test_both_models_share_the_tokenizer(tiny_run: Path) -> None:
    base, draft = (tiny_run / name / "tokenizer.json" for name in MODEL_DIRS)
    assert base.read_bytes() == draft.read_bytes()


def test_training_summary_records_the_run(tiny_run: Path) -> None:
    summary = json.loads((tiny_run / "training_run.json").read_text())
    assert summary["final"] is True
    assert summary["steps"] == 3
    assert summary["tokens_seen"] == 3 * 2 * 64  # steps * batch * context of the tiny recipe
    assert summary["train_files"] + len(summary["held_out_files"]) == 12
    assert summary["held_out_files"]


def test_output_loads_with_transformers_and_generates(tiny_run: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_run / "codedraft-base", dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(tiny_run / "codedraft-base")
    assert tokenizer.eos_token_id == model.config.eos_token_id == 0
    ids = tokenizer(CODEDRAFT_FIM.build("def f(x):\n", "\n", spm=True), return_tensors="pt").input_ids
    out = model.generate(ids, max_new_tokens=4, do_sample=False)
    # Greedy and seeded: the tiny run's model writes four tokens and no end of text.
    assert out.shape == (1, ids.shape[1] + 4)
    assert torch.equal(out[:, : ids.shape[1]], ids)


def test_special_tokens_are_single_ids_and_fim_round_trips(tiny_run: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny_run / "codedraft-base")
    ids = [tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS]
    assert ids == list(range(len(SPECIAL_TOKENS)))
    text = fim_training_text(
        "def add(a, b):\n",
        "    return a + b",
        "\n\nprint('é ✓')\n",
        spm=True,
        path="pkg/m.py",
        snippets=[("pkg/n.py", "X = 1")],
    )
    encoded = tokenizer(text).input_ids
    assert tokenizer.decode(encoded) == text
    specials = [tokenizer.convert_ids_to_tokens(i) for i in encoded if i < len(SPECIAL_TOKENS)]
    assert specials == [
        "<|file_sep|>",
        "<|file_sep|>",
        "<|fim_suffix|>",
        "<|fim_prefix|>",
        "<|fim_middle|>",
        "<|endoftext|>",
    ]


def test_chat_template_renders(tiny_run: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny_run / "codedraft-base")
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_resume_continues_with_the_same_tokenizer(tiny_run: Path, tiny_corpus: Path, tmp_path: Path) -> None:
    argv = ["--recipe", "tiny", "--corpus-root", str(tiny_corpus), "--out-dir", str(tmp_path / "models"),
            "--work-dir", str(tmp_path / "work"), "--held-out-percent", "40", "--threads", "1",
            "--resume-from", str(tiny_run), "--lr-scale", "0.5"]  # fmt: skip
    assert train_main(argv) == 0
    summary = json.loads((tmp_path / "models" / "training_run.json").read_text())
    assert summary["resumed_from"]["steps"] == 3 and summary["steps"] == 3
    assert summary["recipe"]["lr"] == pytest.approx(1e-3)
    for name in MODEL_DIRS:
        assert (tmp_path / "models" / name / "tokenizer.json").read_bytes() == (
            tiny_run / name / "tokenizer.json"
        ).read_bytes()


def test_middle_weights_cover_fim_middles_and_their_end() -> None:
    from training.loss_weights import middle_weights
    from training.trainer import lm_loss

    mid, end = 3, 0
    ids = torch.tensor([[9, 1, 9, 2, 9, mid, 7, 7, end, 9, 9]])  # a FIM example, then plain text
    weights = middle_weights(ids, mid, end, 3.0)
    assert weights is not None
    # label j is ids[j + 1]: the two middle tokens and the end of text weigh 3
    assert weights[0].tolist() == [1, 1, 1, 1, 1, 3, 3, 3, 1, 1]
    assert middle_weights(ids, mid, end, 1.0) is None
    logits = torch.randn(1, ids.size(1), 12)
    assert torch.allclose(lm_loss(logits, ids, torch.ones(1, ids.size(1) - 1)), lm_loss(logits, ids))


def test_copy_weights_mark_tokens_that_repeat_an_earlier_ngram() -> None:
    from training.loss_weights import combine, copy_weights

    ids = torch.tensor([[5, 6, 7, 8, 1, 5, 6, 7, 9, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]])
    weights = copy_weights(ids, 3, 2.0)
    assert weights is not None and weights.shape == (2, 12)
    # row 0: tokens 7 (position 7), 7 (11) and 8 (12) end a 3-gram seen before; label j is token j + 1
    assert weights[0].tolist() == [1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 2, 2]
    assert weights[1].tolist() == [1] * 12  # nothing repeats
    assert copy_weights(ids, 3, 1.0) is None
    middle = torch.full((2, 12), 3.0)
    assert torch.equal(combine(None, weights, middle), middle)
    assert combine(None, None) is None
