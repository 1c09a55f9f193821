"""The `ServedModel` of a remote OpenAI-compatible engine: its tokenizer, prompt templates and limits.

codedraft builds the prompt itself (FIM layout, snippets, the context budget), so it needs the served
model's tokenizer: `--backend-tokenizer` names a Hugging Face folder with tokenizer.json (and
tokenizer_config.json for the special tokens and chat template), or the GGUF file the engine serves.
Asking the engine to tokenize instead would cost a round trip per keystroke and is not part of the
OpenAI API.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.model_facts import measured_chars_per_token, report_limits
from inference.backends.openai_remote import OpenAIRemoteBackend, PromptFormat
from inference.backends.openai_stream import OpenAIEndpoint, RemoteEngineError, display_url
from inference.backends.served_model import ServedModel
from inference.defaults import DEFAULT_MAX_NEW_TOKENS
from inference.loading import ModelLoadError
from inference.prompts.chat import ChatTemplate, ChatTemplateError
from inference.prompts.fim import fim_template_for
from inference.prompts.next_edit.choice import next_edit_format_for
from inference.reply_limits import request_limits
from inference.tokenizer import Tokenizer

# Used when neither --backend-context nor the engine's /v1/models says how long the context is.
FALLBACK_CONTEXT = 4096


@dataclass(frozen=True)
class RemoteSettings:
    """What `codedraft daemon --backend openai:URL` serves from and how."""

    base_url: str
    model: str
    tokenizer_path: Path  # a Hugging Face folder or a GGUF file
    api_key: str | None = None
    context_length: int | None = None
    prompt_format: PromptFormat = "text"
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    ssl: Any = None


def _context_from_models(listing: Any, model: str) -> tuple[list[str], int | None]:
    """The model ids an engine's /v1/models lists, and the context length it gives for `model`."""
    entries = listing.get("data") if isinstance(listing, dict) else None
    names: list[str] = []
    context: int | None = None
    for entry in entries or ():
        if not isinstance(entry, dict):
            continue
        names.append(str(entry.get("id")))
        if entry.get("id") == model:
            meta = entry.get("meta")
            meta = meta if isinstance(meta, dict) else {}
            for value in (entry.get("max_model_len"), meta.get("n_ctx"), meta.get("n_ctx_train")):
                if isinstance(value, int) and value > 0:
                    context = value
                    break
    return names, context


async def probe_engine(settings: RemoteSettings) -> int | None:
    """Check that the engine answers and serves the model; the context length it reports, if any."""
    endpoint = OpenAIEndpoint(settings.base_url, settings.api_key, settings.ssl)
    try:
        listing = await endpoint.get_json("/models")
    except RemoteEngineError as error:
        raise ModelLoadError(str(error)) from None
    finally:
        await endpoint.close()
    names, context = _context_from_models(listing, settings.model)
    if names and settings.model not in names:
        raise ModelLoadError(
            f"the engine at {display_url(settings.base_url)} serves {', '.join(names)}, "
            f"not --backend-model {settings.model}"
        )
    return context


def _installed_version() -> str:
    try:
        return version("codedraft")
    except PackageNotFoundError:
        return "0+unknown"


def load_tokenizer(path: Path) -> Tokenizer:
    """The tokenizer in `path`: a GGUF file's own (as `--model` reads it), or a Hugging Face folder's."""
    if path.is_file() or path.suffix.lower() == ".gguf":
        from inference.loading.gguf_metadata import GGUFFile
        from inference.loading.gguf_tokenizer import gguf_tokenizer

        try:
            return gguf_tokenizer(GGUFFile(path))
        except ModelLoadError as error:
            raise ModelLoadError(f"--backend-tokenizer: {error}") from None
        except Exception as error:  # tokenizers raises untyped errors on a bad vocabulary
            raise ModelLoadError(f"cannot build the tokenizer of {path}: {error}") from None
    if not (path / "tokenizer.json").is_file():
        raise ModelLoadError(f"--backend-tokenizer {path} has no tokenizer.json")
    try:
        return Tokenizer.from_dir(path)
    except (OSError, ValueError) as error:
        raise ModelLoadError(f"cannot load the tokenizer in {path}: {error}") from None


def load_remote_model(settings: RemoteSettings) -> ServedModel:
    """Load the tokenizer, ask the engine about the model, and describe what is served."""
    tokenizer = load_tokenizer(settings.tokenizer_path)
    try:
        chat = ChatTemplate.from_tokenizer(tokenizer)
    except (ValueError, ChatTemplateError) as error:
        folder = settings.tokenizer_path
        raise ModelLoadError(f"cannot load the chat template of {folder}: {error}") from None
    fim = fim_template_for(tokenizer)
    try:
        # The engine's model id names Sweep's model as well as the tokenizer's folder does.
        next_edit = next_edit_format_for(tokenizer, f"{settings.model} {settings.tokenizer_path.name}")
    except ValueError as error:
        raise ModelLoadError(f"--backend-tokenizer {settings.tokenizer_path}: {error}") from None
    reported = asyncio.run(probe_engine(settings))
    context = settings.context_length or reported or FALLBACK_CONTEXT
    limits = request_limits(context, settings.max_new_tokens, has_draft_model=False)
    shown = display_url(settings.base_url)
    info = report_limits(
        pb.ModelInfo(
            model=pb.ModelDescription(
                name=settings.model,
                path=shown,
                architecture="remote (OpenAI API)",
                context_length=context,
                vocab_size=tokenizer.vocab_size,
            ),
            has_draft_model=False,
            device=f"remote:{shown}",
            fim_template=fim.family,
            fim_spm=fim.supports_spm,
            has_chat_template=chat.source is not None,
            supports_tools=chat.supports_tools,
            version=_installed_version(),
            chars_per_token=measured_chars_per_token(tokenizer),
            next_edit_format=next_edit.name,
        ),
        limits,
    )
    endpoint = OpenAIEndpoint(settings.base_url, settings.api_key, settings.ssl)
    backend = OpenAIRemoteBackend(endpoint, settings.model, tokenizer, settings.prompt_format)
    return ServedModel(
        backend=backend,
        tokenizer=tokenizer,
        fim=fim,
        chat=chat,
        context_length=context,
        limits=limits,
        info=info,
        next_edit=next_edit,
        constrains_tokens=False,
        prefills=False,
    )
