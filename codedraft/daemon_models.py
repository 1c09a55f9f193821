"""``codedraft daemon``'s model flags: the completion model, its draft and the chat model beside it,
the defaults without ``--model``, and the lines that say what is served."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codedraft.errors import CommandError
from inference.default_model import DefaultModel, default_model

if TYPE_CHECKING:
    from inference.backends.served_models import ServedModels


@dataclass(frozen=True)
class ModelPaths:
    """The models to load: the completion model (`model`), its draft, the chat model beside it (None:
    the completion model serves every task), and the default choice when no --model was given."""

    model: Path
    draft: Path | None
    chat: Path | None = None
    default: DefaultModel | None = None

    @property
    def chat_fallback(self) -> bool:
        """Whether a completion model that fails to load leaves the chat model serving alone: only for
        the default pair, since a model the user named should fail loudly."""
        return self.default is not None and self.chat is not None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--model, --draft-model, --no-draft and --chat-model."""
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="the completion model (ghost text, fill-in-the-middle, /infill), which also serves every "
        "other task unless --chat-model names another: a Hugging Face folder or a GGUF file (default: "
        "Gemma 3 270M base for completions with SmolLM2-135M-Instruct for chat tasks, from their "
        "packages; SmolLM2 alone when Gemma is missing or CODEDRAFT_DEFAULT_MODEL=smollm2; else the "
        "embedded models/codedraft-base)",
    )
    parser.add_argument(
        "--chat-model",
        type=Path,
        default=None,
        help="a second model, with its own engine and KV pool (--kv-cache-mb each), for the tasks that "
        "need instructions: Generate with chat messages (refactors, fixes), next-edit predictions in "
        "the chat format, the OpenAI chat face (default: none, or SmolLM2 beside the default Gemma)",
    )
    parser.add_argument(
        "--draft-model",
        type=Path,
        default=None,
        help="draft model (folder or GGUF file) sharing the completion model's tokenizer, for "
        "speculative decoding (default: models/codedraft-draft with the embedded model, none otherwise)",
    )
    parser.add_argument("--no-draft", action="store_true", help="load no draft model")


def resolve_model_dirs(args: argparse.Namespace) -> ModelPaths:
    """The models (folders or GGUF files) the flags name, checked to exist; without --model, the
    defaults (`inference.default_model`, which assembles the Gemma file on first use)."""
    try:
        default = default_model() if args.model is None else None
    except ValueError as error:
        raise CommandError(str(error)) from None
    model = args.model if default is None else default.target
    if not model.exists():
        if default is not None:
            raise CommandError(f"the default model is missing: {model} does not exist")
        raise CommandError(f"--model is missing: {model} is not a directory or a GGUF file")
    draft: Path | None = None
    if not args.no_draft:
        draft = args.draft_model or (default.draft if default is not None else None)
        if draft is not None and not draft.exists():
            raise CommandError(f"--draft-model is missing: {draft} is not a directory or a GGUF file")
    chat = getattr(args, "chat_model", None) or (default.chat if default is not None else None)
    if chat is not None and not chat.exists():
        raise CommandError(f"--chat-model is missing: {chat} is not a directory or a GGUF file")
    return ModelPaths(model, draft, chat, default)


def serving_lines(paths: ModelPaths) -> list[str]:
    """What the daemon prints before it loads: the default's notice (Gemma's Terms of Use) first,
    then what the default serves and why; nothing for models the flags named."""
    if paths.default is None:
        return []
    notice = [paths.default.notice] if paths.default.notice else []
    return [*notice, f"no --model: serving {paths.default.reason}"]


def ready_lines(models: ServedModels, seconds: float) -> list[str]:
    """The ready lines of a daemon on its own engines: the completion model's, and the chat model's
    with the tasks it serves."""
    from inference.backends.served_models import CHAT, TASKS
    from inference.engine.kv_pool_size import pool_line

    info = models.completion.info
    drafted = f", draft {info.draft_model.name}" if info.has_draft_model else ", no draft model"
    described = f"({info.model.architecture}, {info.model.parameters / 1e6:.1f}M parameters{drafted})"
    weights = f", weights {models.completion.weights}" if models.completion.weights else ""
    lines = [f"ready: {info.model.name} {described} on {info.device} {info.dtype}{weights}"]
    lines[0] += f", loaded in {seconds:.1f} s"
    lines.append(pool_line(info.kv_blocks_total, info.kv_block_size, info.model.context_length))
    if models.chat is not None:
        chat = models.chat.info
        tasks = ", ".join(task for task in TASKS if models.role_for(task) == CHAT)
        chat_weights = f", weights {models.chat.weights}" if models.chat.weights else ""
        lines.append(
            f"chat model: {chat.model.name} ({chat.model.architecture}, {chat.model.parameters / 1e6:.1f}M "
            f"parameters{chat_weights}) serves {tasks}; {info.model.name} serves the rest"
        )
        lines.append(
            "chat model's " + pool_line(chat.kv_blocks_total, chat.kv_block_size, chat.model.context_length)
        )
    return lines
