"""Loading the models the daemon serves, and describing them for GetModelInfo."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from inference import codedraft_version
from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.local_engine import EngineBackend
from inference.backends.model_facts import measured_chars_per_token, report_limits
from inference.backends.served_model import ServedModel
from inference.backends.served_models import ServedModels
from inference.config import EngineConfig
from inference.cpu_threads import engine_cpu_threads
from inference.defaults import DEFAULT_MAX_NEW_TOKENS
from inference.engine.engine import LLMEngine
from inference.loading import LoadedModel, ModelLoadError, load_model
from inference.loading.model_form import return_freed_memory
from inference.prompts.next_edit.choice import next_edit_format_for
from inference.prompts.vocabulary import vocabulary_index
from inference.reply_limits import request_limits
from inference.tokenizer import Tokenizer


@dataclass(frozen=True)
class ServeSettings:
    """What `codedraft daemon` loads and how."""

    model_dir: Path
    draft_dir: Path | None
    device: str = "auto"
    kv_cache_mb: float | None = None
    """The KV pool in MiB (``--kv-cache-mb``); None with `kv_tokens` None: sized by the model."""
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    weights: str = "auto"
    adapt_threads: bool = True
    """On the CPU, use fewer torch threads while other processes hold cores (`inference/cpu_threads.py`)."""
    chat_dir: Path | None = None
    """The chat model served beside the target (`--chat-model`), with its own engine and KV pool
    (sized as the target's); None: the target serves every task."""
    chat_fallback: bool = False
    """When the target fails to load, serve the chat model alone (the default pair does: a completion
    model this build cannot load must not stop `make run`)."""
    kv_tokens: int | None = None
    """The KV pool in tokens (``--kv-tokens``); wins over `kv_cache_mb`."""


def _device_name(device: torch.device) -> str:
    """ "cpu" or "cuda:N" (a bare "cuda" names the current device)."""
    if device.type == "cuda":
        return f"cuda:{device.index if device.index is not None else torch.cuda.current_device()}"
    return device.type


def describe(loaded: LoadedModel) -> pb.ModelDescription:
    """The wire description of one loaded model."""
    return pb.ModelDescription(
        name=loaded.name,
        path=str(loaded.path.resolve()),
        architecture=loaded.config.model_type,
        parameters=loaded.model.parameter_count,
        context_length=loaded.config.max_position_embeddings,
        vocab_size=loaded.config.vocab_size,
    )


def _build_vocabulary_index(tokenizer: Tokenizer) -> None:
    """Build token healing's vocabulary index on a thread of its own, so that the first request does not
    wait for it and the daemon's ready does not either (Gemma 3's 262,144 tokens: about a second of
    Python, while the repacking thread also runs); a request that comes first waits on the index's lock.
    The thread gives back what building freed (`return_freed_memory`). It is not a daemon thread: one
    still building when the interpreter finalizes is stopped as it takes the GIL back from the tokenizer's
    native code, and that unwinding aborts the process (a shutdown right after start, under load, ended
    with signal 6), so the exit waits for it instead (about a second at most)."""

    def build() -> None:
        vocabulary_index(tokenizer)
        return_freed_memory()

    threading.Thread(target=build, name="codedraft-vocabulary-index").start()


def served_context(target: LoadedModel, engine: LLMEngine) -> int:
    """The context the daemon serves: the model's, or the tokens of a default KV pool that memory kept
    shorter (the prompt budgets then fit the pool, and prompts are cut instead of refused)."""
    sizing = engine.target.sizing
    if sizing is not None and sizing.short_of_context:
        return sizing.tokens
    return target.config.max_position_embeddings


def load_served_model(settings: ServeSettings, engine_config: EngineConfig | None = None) -> ServedModel:
    """Load the target (and draft) model, build the engine around them, and describe them.

    `engine_config` replaces the engine settings derived from `settings` (a pool of a given number of
    blocks, other step sizes).
    """
    target = load_model(settings.model_dir, settings.device, weights=settings.weights)
    draft = (
        load_model(settings.draft_dir, settings.device, weights=settings.weights)
        if settings.draft_dir is not None
        else None
    )
    config = engine_config or EngineConfig(kv_cache_mb=settings.kv_cache_mb, kv_tokens=settings.kv_tokens)
    try:
        engine = LLMEngine.from_loaded(target, config, draft)
    except ValueError as error:  # a draft model that does not match the target
        raise ModelLoadError(str(error)) from None
    try:
        next_edit = next_edit_format_for(target.tokenizer, target.name)
    except ValueError as error:  # tokenizer_config.json names an unknown next_edit_format
        raise ModelLoadError(f"{settings.model_dir}: {error}") from None
    context = served_context(target, engine)
    limits = request_limits(context, settings.max_new_tokens, draft is not None)
    info = report_limits(
        pb.ModelInfo(
            model=describe(target),
            has_draft_model=draft is not None,
            device=_device_name(target.device),
            dtype=str(target.dtype).removeprefix("torch."),
            fim_template=target.fim.family,
            fim_spm=target.fim.supports_spm,
            prefix_only=target.fim.family == "prefix-only",
            has_chat_template=target.chat is not None and target.chat.source is not None,
            supports_tools=target.chat is not None and target.chat.supports_tools,
            kv_block_size=config.block_size,
            kv_blocks_total=engine.stats().kv_blocks_total,
            version=codedraft_version(),
            chars_per_token=measured_chars_per_token(target.tokenizer),
            next_edit_format=next_edit.name,
        ),
        limits,
    )
    info.model.context_length = context
    if draft is not None:
        info.draft_model.CopyFrom(describe(draft))
    torch.set_grad_enabled(False)
    _build_vocabulary_index(target.tokenizer)
    threads = engine_cpu_threads(target.device.type, settings.adapt_threads)
    return_freed_memory()  # again: the engine freed what it built from
    return ServedModel(
        backend=EngineBackend(engine, threads.apply if threads is not None else None),
        tokenizer=target.tokenizer,
        fim=target.fim,
        chat=target.chat,
        context_length=context,
        limits=limits,
        info=info,
        next_edit=next_edit,
        weights=target.weights,
    )


def load_served_models(
    settings: ServeSettings,
    say: Callable[[str], object] = print,
    engine_config: EngineConfig | None = None,
) -> ServedModels:
    """The target (with its draft) as the completion model and, when `settings.chat_dir` names one,
    the chat model beside it, each with its own engine and KV pool (`engine_config`, when given, for
    each, as in `load_served_model`).

    With `settings.chat_fallback`, a target that fails to load is reported in one line through `say`
    and the chat model serves every task alone.
    """
    if settings.chat_dir is None:
        return ServedModels(load_served_model(settings, engine_config))
    chat_settings = replace(settings, model_dir=settings.chat_dir, draft_dir=None, chat_dir=None)
    try:
        completion = load_served_model(settings, engine_config)
    except Exception as error:  # any failure: the chat model alone is still a working daemon
        if not settings.chat_fallback:
            raise
        lines = str(error).strip().splitlines()
        say(
            f"the completion model {settings.model_dir.name} cannot be loaded "
            f"({lines[0] if lines else type(error).__name__}); serving {settings.chat_dir.name} alone "
            "for every task"
        )
        return ServedModels(load_served_model(chat_settings, engine_config))
    return ServedModels(completion, load_served_model(chat_settings, engine_config))
