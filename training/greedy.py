"""Greedy completion and scoring with transformers' model, for the evaluation of the default pair.

``CompletionFn`` is the seam where the project engine plugs in later: the evaluation only needs a
function from a prompt (text with special tokens) to the completion's token ids.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from tokenizers import Tokenizer

from training.example_text import SPECIAL_TOKENS

CompletionFn = Callable[[str, int], list[int]]  # (prompt, max_new_tokens) -> generated ids


class TransformersModel:
    """A model directory loaded with transformers in float32, with its tokenizer and FIM stop ids."""

    def __init__(self, model_dir: Path) -> None:
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        self.model.eval()
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # Any special token ends a completion: the model writes <|endoftext|> after the middle.
        self.stop_ids = frozenset(
            i for t in SPECIAL_TOKENS if (i := self.tokenizer.token_to_id(t)) is not None
        )
        self.context = int(self.model.config.max_position_embeddings)

    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text).ids

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    @torch.no_grad()
    def complete_line(self, prompt: str, max_new_tokens: int) -> list[int]:
        """Greedy ids after ``prompt`` until a stop token or a newline in the text; the stop token is
        kept in the result (the draft's agreement is scored on it too)."""
        ids = self.encode(prompt)
        cache = None  # transformers 5 names the KV cache `cache` (it was `past_key_values` before)
        step_input = torch.tensor([ids], dtype=torch.int64)  # (1, T)
        out: list[int] = []
        for _ in range(max_new_tokens):
            result = self.model(input_ids=step_input, cache=cache, use_cache=True)
            cache = result.cache
            token = int(result.logits[0, -1].argmax())
            out.append(token)
            if token in self.stop_ids or "\n" in self.decode(out):
                break
            step_input = torch.tensor([[token]], dtype=torch.int64)  # (1, 1)
        return out

    @torch.no_grad()
    def greedy_agreement(self, prompt: str, continuation: Sequence[int]) -> list[bool]:
        """For each token of ``continuation``: is it this model's greedy choice after the prompt and
        the continuation's earlier tokens? (A greedy draft's proposal is accepted exactly then.)"""
        ids = self.encode(prompt) + list(continuation)
        logits = self.model(input_ids=torch.tensor([ids[:-1]], dtype=torch.int64)).logits[0]  # (T-1, V)
        choices = logits[len(ids) - 1 - len(continuation) :].argmax(dim=-1).tolist()
        return [int(a) == int(b) for a, b in zip(choices, continuation, strict=True)]

    @torch.no_grad()
    def mean_nll(self, rows: Sequence[torch.Tensor]) -> tuple[float, int]:
        """(mean next-token negative log-likelihood, tokens scored) over (1, T) rows."""
        total, count = 0.0, 0
        for row in rows:
            logits = self.model(input_ids=row).logits[0, :-1]  # (T-1, V)
            nll = torch.nn.functional.cross_entropy(logits, row[0, 1:], reduction="sum")
            total += float(nll)
            count += row.size(1) - 1
        return total / max(count, 1), count


def tokens_per_target_pass(agreement: Sequence[bool], k: int) -> float:
    """Greedy speculative decoding with k proposals per step, replayed on known agreements: each target
    pass keeps the agreeing run (at most k) plus one token of its own."""
    i, passes = 0, 0
    while i < len(agreement):
        run = 0
        while run < k and i + run < len(agreement) and agreement[i + run]:
            run += 1
        i += run + 1
        passes += 1
    return len(agreement) / passes if passes else math.nan
