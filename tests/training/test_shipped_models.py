"""The models shipped in `models/` load, generate, share a tokenizer and fit the size limit."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from inference.layers import paged_kv
from inference.loading import load_model
from inference.prompts.fim import fim_template_for
from inference.tokenizer import Tokenizer
from training.greedy import TransformersModel

MODELS = Path(__file__).resolve().parents[2] / "models"
BASE, DRAFT = MODELS / "codedraft-base", MODELS / "codedraft-draft"

pytestmark = pytest.mark.skipif(not (BASE / "model.safetensors").is_file(), reason="models/ not trained yet")


def test_sizes_and_shared_tokenizer() -> None:
    total = sum(p.stat().st_size for d in (BASE, DRAFT) for p in d.iterdir())
    assert total <= 60 * 1024 * 1024
    assert (BASE / "tokenizer.json").read_bytes() == (DRAFT / "tokenizer.json").read_bytes()


@pytest.mark.parametrize(
    ("model_dir", "line"),
    [(BASE, '        """\n       '), (DRAFT, "    def __init__(self, *args):\n   ")],
    ids=["base", "draft"],
)
def test_loads_and_completes_a_line(model_dir: Path, line: str) -> None:
    torch.set_num_threads(1)
    model = TransformersModel(model_dir)
    template = fim_template_for(Tokenizer.from_dir(model_dir))
    prompt = template.build("import os\n\n\ndef home():\n", "\n", path="pkg/paths.py", spm=True)
    ids = model.complete_line(prompt, max_new_tokens=24)
    assert model.decode(ids) == line  # greedy: the shipped weights' one line


def test_project_engine_model_matches_transformers() -> None:
    """The project's own loader and Llama implementation give transformers' logits on the shipped target."""
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(1)
    loaded = load_model(BASE, device="cpu", dtype=torch.float32)
    reference = AutoModelForCausalLM.from_pretrained(BASE, dtype=torch.float32).eval()
    prompt = loaded.fim.build("def mean(xs):\n    total = 0\n", "\n    return total\n", spm=True)
    ids = loaded.tokenizer.encode(prompt)
    count, block_size = len(ids), 8
    blocks = torch.arange(1, 1 + (count + block_size - 1) // block_size, dtype=torch.int64)
    kv = paged_kv.KVCache.allocate(loaded.config, len(blocks) + 1, block_size, torch.float32, "cpu")
    slots = torch.tensor([int(blocks[i // block_size]) * block_size + i % block_size for i in range(count)])
    meta = paged_kv.AttentionMetadata(
        slot_mapping=slots, block_table=blocks, context_len=count, block_size=block_size
    )
    with torch.no_grad():
        ours = loaded.model(torch.tensor(ids), torch.arange(count), kv, meta)  # (T, V)
        theirs = reference(input_ids=torch.tensor([ids])).logits[0]  # (T, V)
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-4)
