"""The training loop: the target on the data, the draft distilled from the target in the same step.

Each step draws one batch; the target's logits on it (already computed for its own loss) are the
draft's soft labels, so distillation costs no extra forward pass of the target.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from transformers import LlamaForCausalLM

from training.examples import ExampleStream
from training.loss_weights import combine, copy_weights, middle_weights
from training.recipe import TrainRecipe


@dataclass
class TrainProgress:
    """What the run has done so far; written into the model card."""

    steps: int = 0
    tokens: int = 0
    seconds: float = 0.0
    target_loss: float = math.nan
    draft_loss: float = math.nan


def lr_factor(progress: float, warmup_fraction: float, min_ratio: float) -> float:
    """Linear warm-up, then cosine decay to ``min_ratio`` at ``progress == 1``."""
    if progress < warmup_fraction:
        return max(progress / warmup_fraction, 1e-3)
    done = min(1.0, (progress - warmup_fraction) / max(1e-9, 1.0 - warmup_fraction))
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * done))


def _optimizer(model: torch.nn.Module, lr: float, weight_decay: float) -> torch.optim.AdamW:
    # Norm weights are not decayed; matrices and the (tied) embedding are.
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8)


def lm_loss(logits: torch.Tensor, ids: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
    """Mean next-token cross-entropy of (B, T, V) logits against (B, T) ids; with (B, T-1) ``weights``,
    the weighted mean."""
    losses = F.cross_entropy(
        logits[:, :-1].reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1), reduction="none"
    )  # (B*(T-1),)
    if weights is None:
        return losses.mean()
    flat = weights.reshape(-1)
    return (losses * flat).sum() / flat.sum()


def distill_loss(draft_logits: torch.Tensor, target_logits: torch.Tensor) -> torch.Tensor:
    """KL(target || draft) per token, averaged over positions."""
    vocab = draft_logits.size(-1)
    log_p_draft = F.log_softmax(draft_logits.reshape(-1, vocab), dim=-1)  # (B*T, V)
    log_p_target = F.log_softmax(target_logits.reshape(-1, vocab), dim=-1)  # (B*T, V)
    return F.kl_div(log_p_draft, log_p_target, log_target=True, reduction="batchmean")


@torch.no_grad()
def evaluate_loss(model: LlamaForCausalLM, batches: list[torch.Tensor]) -> float:
    """Mean next-token loss over fixed batches (the held-out set)."""
    model.eval()
    total = sum(lm_loss(model(input_ids=b).logits, b).item() for b in batches)
    model.train()
    return total / max(1, len(batches))


# Gradients whatever the caller's grad mode: a process that served a model before (its loader turns
# gradients off for the thread) still trains.
@torch.enable_grad()
def train_pair(
    target: LlamaForCausalLM,
    draft: LlamaForCausalLM,
    stream: ExampleStream,
    recipe: TrainRecipe,
    held_out: list[torch.Tensor],
    log: Callable[[str], None],
    checkpoint: Callable[[TrainProgress], None],
    time_budget_s: float | None = None,
    stop_after_s: float | None = None,
    eval_every: int = 200,
    checkpoint_every_s: float = 600.0,
) -> TrainProgress:
    """Train both models for ``recipe.steps`` steps or until ``time_budget_s`` runs out.

    The schedule follows progress = max(step fraction, time fraction), so a run on a slower or
    busier machine still ends annealed instead of being cut at a high learning rate. ``stop_after_s``
    ends the run early without changing that schedule (a phase that was stopped part-way).
    """
    target.train()
    draft.train()
    opt_target = _optimizer(target, recipe.lr, recipe.weight_decay)
    opt_draft = _optimizer(draft, recipe.draft_lr, recipe.weight_decay)
    warmup_fraction = recipe.warmup_steps / recipe.steps
    progress = TrainProgress()
    start = last_checkpoint = time.monotonic()
    while True:
        elapsed = time.monotonic() - start
        fraction = progress.steps / recipe.steps
        if time_budget_s is not None:
            fraction = max(fraction, elapsed / time_budget_s)
        if fraction >= 1.0 or (stop_after_s is not None and elapsed >= stop_after_s):
            break
        # The step about to run counts towards warm-up, so the first step does not have a zero rate.
        factor = lr_factor(
            max(fraction, (progress.steps + 1) / recipe.steps), warmup_fraction, recipe.min_lr_ratio
        )
        for opt, base in ((opt_target, recipe.lr), (opt_draft, recipe.draft_lr)):
            for group in opt.param_groups:
                group["lr"] = base * factor
        ids = stream.batch(recipe.batch_size)  # (B, T)

        target_logits = target(input_ids=ids).logits  # (B, T, V)
        weights = combine(
            middle_weights(ids, stream.middle_id, stream.end_id, recipe.middle_weight),
            copy_weights(ids, recipe.copy_ngram, recipe.copy_weight),
        )
        target_loss = lm_loss(target_logits, ids, weights)
        target_loss.backward()
        torch.nn.utils.clip_grad_norm_(target.parameters(), recipe.grad_clip)
        opt_target.step()
        opt_target.zero_grad(set_to_none=True)

        # The draft learns from half the rows: it is ten times smaller and needs fewer tokens, and the
        # vocabulary-wide KL would otherwise cost it half of the target's step time.
        draft_rows = max(1, ids.size(0) // 2)
        draft_ids = ids[:draft_rows]  # (B/2, T)
        draft_logits = draft(input_ids=draft_ids).logits  # (B/2, T, V)
        w = recipe.distill_weight
        draft_ce = lm_loss(draft_logits, draft_ids)
        draft_loss = (1 - w) * draft_ce + w * distill_loss(draft_logits, target_logits[:draft_rows].detach())
        draft_loss.backward()
        torch.nn.utils.clip_grad_norm_(draft.parameters(), recipe.grad_clip)
        opt_draft.step()
        opt_draft.zero_grad(set_to_none=True)

        progress.steps += 1
        progress.tokens += ids.numel()
        progress.seconds = time.monotonic() - start
        progress.target_loss, progress.draft_loss = target_loss.item(), draft_ce.item()
        if progress.steps % 10 == 0 or progress.steps == 1:
            record = {
                "step": progress.steps,
                "tokens": progress.tokens,
                "s": round(progress.seconds, 1),
                "tok_per_s": round(progress.tokens / max(progress.seconds, 1e-9)),
                "lr": round(recipe.lr * factor, 6),
                "target_loss": round(progress.target_loss, 4),
                "draft_ce": round(progress.draft_loss, 4),
            }
            log(json.dumps(record))
        if held_out and progress.steps % eval_every == 0:
            log(
                json.dumps(
                    {
                        "step": progress.steps,
                        "held_out_target": round(evaluate_loss(target, held_out), 4),
                        "held_out_draft": round(evaluate_loss(draft, held_out), 4),
                    }
                )
            )
        if time.monotonic() - last_checkpoint >= checkpoint_every_s:
            checkpoint(progress)
            last_checkpoint = time.monotonic()
    return progress
