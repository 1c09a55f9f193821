"""Chat prompts from a model's `chat_template` (sandboxed jinja2), with a plain fallback."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from jinja2 import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from inference.tokenizer import Tokenizer

Message = Mapping[str, Any]  # {"role": "system"|"user"|"assistant", "content": str}


class ChatTemplateError(ValueError):
    """The chat template rejected the messages (`raise_exception`) or failed to render."""


def _raise_exception(message: str) -> None:
    raise ChatTemplateError(message)


def _tojson(
    value: Any, indent: int | None = None, ensure_ascii: bool = False, sort_keys: bool = False
) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def _environment() -> ImmutableSandboxedEnvironment:
    # The same settings Hugging Face templates are written against.
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


def renders_tool_calls(source: str) -> bool:
    """Whether a chat template renders Hermes-style tool calls: ``<tool_call>`` markup fed by ``tools``."""
    return "<tool_call>" in source and "tools" in source


class ChatTemplate:
    """Renders chat messages into one prompt string.

    With a jinja2 `source` (a model's `chat_template`) the template runs sandboxed; without one the
    fallback is ChatML when the tokenizer has `<|im_start|>`/`<|im_end|>`, else "role: content" lines.
    """

    def __init__(
        self,
        source: str | None,
        bos_token: str | None = None,
        eos_token: str | None = None,
        chatml: bool = False,
    ) -> None:
        self.source = source
        self.bos_token = bos_token or ""
        self.eos_token = eos_token or ""
        self.chatml = chatml
        self.supports_tools = source is not None and renders_tool_calls(source)
        self._compiled = None
        if source is not None:
            try:
                self._compiled = _environment().from_string(source)
            except TemplateError as exc:
                raise ChatTemplateError(f"chat_template does not compile: {exc}") from exc

    @classmethod
    def from_tokenizer(cls, tokenizer: Tokenizer) -> ChatTemplate:
        """The chat template of tokenizer_config.json (`chat_template`, string or named list)."""
        source = tokenizer.config.get("chat_template")
        named: dict[Any, Any] = {}
        if isinstance(source, list):
            named = {t.get("name"): t.get("template") for t in source if isinstance(t, dict)}
            source = named.get("default") or next(iter(named.values()), None)
        chatml = (
            tokenizer.token_id("<|im_start|>") is not None and tokenizer.token_id("<|im_end|>") is not None
        )
        template = cls(
            source if isinstance(source, str) else None, tokenizer.bos_token, tokenizer.eos_token, chatml
        )
        # A named list may keep the tool format in a "tool_use" template beside the default one.
        if named:
            sources = [t for t in named.values() if isinstance(t, str)]
            template.supports_tools = any(renders_tool_calls(t) for t in sources)
        return template

    def render(
        self, messages: Sequence[Message], add_generation_prompt: bool = True, **variables: Any
    ) -> str:
        """The prompt text for `messages`, ending with the assistant's turn opener when asked.

        `variables` (e.g. `tools`) are passed to the model's template; the fallback ignores them.
        """
        for message in messages:
            if not isinstance(message.get("role"), str) or not isinstance(message.get("content"), str):
                raise ChatTemplateError("every chat message needs a string 'role' and 'content'")
        if self._compiled is None:
            return self._fallback(messages, add_generation_prompt)
        try:
            return self._compiled.render(
                messages=[dict(m) for m in messages],
                add_generation_prompt=add_generation_prompt,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
                **variables,
            )
        except ChatTemplateError:
            raise
        except TemplateError as exc:
            raise ChatTemplateError(f"chat_template failed to render: {exc}") from exc

    def _fallback(self, messages: Sequence[Message], add_generation_prompt: bool) -> str:
        if self.chatml:
            text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
            return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")
        text = "".join(f"{m['role']}: {m['content']}\n\n" for m in messages)
        return self.bos_token + text + ("assistant: " if add_generation_prompt else "")
