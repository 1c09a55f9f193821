"""The sizes and hyper-parameters of the default pair, and a tiny variant for tests."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from training.examples import SHORT_CONTEXT_MIX, ExampleMix


@dataclass(frozen=True)
class ModelShape:
    """A Llama architecture; ``head_dim = hidden_size // num_heads``."""

    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    intermediate_size: int


@dataclass(frozen=True)
class TrainRecipe:
    """Everything that determines the trained weights, besides the corpus and the machine."""

    target: ModelShape
    draft: ModelShape
    vocab_size: int = 8192
    seq_len: int = 512
    batch_size: int = 8
    steps: int = 2400
    warmup_steps: int = 100
    lr: float = 2e-3
    draft_lr: float = 3e-3
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    distill_weight: float = 0.5  # draft loss = (1 - w) * CE(data) + w * KL(target || draft)
    held_out_percent: int = 3
    seed: int = 1234
    rope_theta: float = 10000.0
    mix: ExampleMix = field(default_factory=ExampleMix)
    middle_weight: float = 1.0  # loss weight of the target's FIM-middle tokens (the rest weigh 1)
    copy_weight: float = 1.0  # loss weight of tokens that end an n-gram seen earlier in the row
    copy_ngram: int = 6  # the n of copy_weight
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready record of the recipe, written into the run's log and the card."""
        return asdict(self)


# Sized for two shared CPU cores (see models/MODEL_CARD.md): a 10-40 M target would see under one
# pass over the corpus there, so the target is ~4 M and the draft ~1 M (mostly embedding).
# The shipped pair ran SHORT_CONTEXT three times, then LONG_CONTEXT, FIM_FOCUS and COPY_FOCUS
# (the phases are listed in training/schedule.py). COPY_LONG, COPY_WEIGHTED and FIM_POLISH
# were tried after them and not shipped: they made the target copy more but infill single lines worse
# (models/MODEL_CARD.md, "Copying").
SHORT_CONTEXT = TrainRecipe(
    target=ModelShape(hidden_size=192, num_layers=6, num_heads=3, num_kv_heads=1, intermediate_size=512),
    draft=ModelShape(hidden_size=96, num_layers=2, num_heads=2, num_kv_heads=1, intermediate_size=256),
    seq_len=512,
    batch_size=8,
    mix=SHORT_CONTEXT_MIX,
)

# 2,048-token rows of whole examples, windows of mixed length and rename examples. The run ends by
# its time budget; the step count only sets the length of the warm-up (1.5 %).
LONG_CONTEXT = replace(
    SHORT_CONTEXT, seq_len=2048, batch_size=2, steps=100_000, warmup_steps=1500, mix=ExampleMix()
)

# The same rows, the target's loss on FIM middles weighted 3 to 1 (a one-line middle is
# under 1 % of a 2,048-token row's tokens, yet it is what a completion is) and more one-line middles.
FIM_FOCUS = replace(
    LONG_CONTEXT,
    middle_weight=3.0,
    mix=ExampleMix(line_middle_rate=0.55, single_line_rate=0.8, rest_of_line_rate=0.2),
)

# A short last phase for copying: rename examples (a function, then the same function with one name
# replaced) become 30 % of the examples, so the target learns to copy a long stretch of its prompt.
COPY_FOCUS = replace(FIM_FOCUS, mix=replace(FIM_FOCUS.mix, rename_rate=0.3))

# The same, with each rename example's function drawn in proportion to its length: most functions
# are short, but a refactor copies one of 60 lines from hundreds of tokens back.
COPY_LONG = replace(COPY_FOCUS, mix=replace(COPY_FOCUS.mix, rename_by_length=True))

# More of them (40 %), and the loss on every token that continues a 6-gram seen earlier in its row (a
# copy: in a renamed function, a repeated identifier, a snippet's line) weighted 3 to 1.
COPY_WEIGHTED = replace(COPY_LONG, mix=replace(COPY_LONG.mix, rename_rate=0.4), copy_weight=3.0)

# A last, gentle phase back towards infilling: the copy phases cost single-line exact match, so the
# rename examples drop to 15 % (still drawn by length) and copies weigh 1 again.
FIM_POLISH = replace(COPY_LONG, mix=replace(COPY_LONG.mix, rename_rate=0.15))

TINY = TrainRecipe(
    target=ModelShape(hidden_size=32, num_layers=2, num_heads=2, num_kv_heads=1, intermediate_size=64),
    draft=ModelShape(hidden_size=16, num_layers=1, num_heads=1, num_kv_heads=1, intermediate_size=32),
    vocab_size=400,
    seq_len=64,
    batch_size=2,
    steps=3,
    warmup_steps=1,
)

RECIPES = {
    "copy-focus": COPY_FOCUS,
    "copy-long": COPY_LONG,
    "copy-weighted": COPY_WEIGHTED,
    "fim-focus": FIM_FOCUS,
    "fim-polish": FIM_POLISH,
    "long-context": LONG_CONTEXT,
    "short-context": SHORT_CONTEXT,
    "tiny": TINY,
}
