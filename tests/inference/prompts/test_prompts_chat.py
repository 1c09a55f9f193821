"""Chat templates: the model's jinja2 template (sandboxed) and the fallbacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.prompts.chat import ChatTemplate, ChatTemplateError
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import TOOL_CALL_TEMPLATE, train_tokenizer_json, write_tokenizer

MESSAGES = [
    {"role": "system", "content": "You fix code."},
    {"role": "user", "content": "Rename x to count."},
]
STRICT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% if m['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('unknown role ' + m['role']) }}{% endif %}"
    "[{{ m['role'] }}] {{ m['content'] }}{{ eos_token }}\n"
    "{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}"
)


def test_model_template_renders(tmp_path: Path) -> None:
    chat = ChatTemplate.from_tokenizer(Tokenizer.from_dir(write_tokenizer(tmp_path)))
    assert chat.render(MESSAGES) == (
        "<|im_start|>system\nYou fix code.<|im_end|>\n"
        "<|im_start|>user\nRename x to count.<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert chat.render(MESSAGES, add_generation_prompt=False).endswith("count.<|im_end|>\n")


def test_bos_eos_and_raise_exception(tmp_path: Path) -> None:
    tok = Tokenizer.from_dir(
        write_tokenizer(tmp_path, chat_template=STRICT_TEMPLATE, bos_token="<|file_sep|>")
    )
    chat = ChatTemplate.from_tokenizer(tok)
    assert chat.render(MESSAGES[1:]) == "<|file_sep|>[user] Rename x to count.<|endoftext|>\n[assistant] "
    with pytest.raises(ChatTemplateError, match="unknown role tool"):
        chat.render([{"role": "tool", "content": "x"}])


def test_template_is_sandboxed() -> None:
    chat = ChatTemplate("{{ messages.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(ChatTemplateError, match="failed to render"):
        chat.render(MESSAGES)
    mutate = ChatTemplate(
        "{% set _ = messages.append({'role': 'x', 'content': 'y'}) %}{{ messages | length }}"
    )
    with pytest.raises(ChatTemplateError):
        mutate.render(MESSAGES)


def test_template_errors_are_clear() -> None:
    with pytest.raises(ChatTemplateError, match="does not compile"):
        ChatTemplate("{% for m in messages %}")
    with pytest.raises(ChatTemplateError, match="string 'role' and 'content'"):
        ChatTemplate(None).render([{"role": "user"}])


def test_named_template_list(tmp_path: Path) -> None:
    templates = [{"name": "tool_use", "template": "TOOLS"}, {"name": "default", "template": "DEFAULT"}]
    chat = ChatTemplate.from_tokenizer(Tokenizer.from_dir(write_tokenizer(tmp_path, chat_template=templates)))
    assert chat.render(MESSAGES) == "DEFAULT"


def test_whether_the_template_takes_tools(tmp_path: Path) -> None:
    assert ChatTemplate(TOOL_CALL_TEMPLATE).supports_tools
    assert not ChatTemplate.from_tokenizer(Tokenizer.from_dir(write_tokenizer(tmp_path / "a"))).supports_tools
    assert not ChatTemplate(None, chatml=True).supports_tools
    named = [{"name": "default", "template": "DEFAULT"}, {"name": "tool_use", "template": TOOL_CALL_TEMPLATE}]
    tokenizer = Tokenizer.from_dir(write_tokenizer(tmp_path / "b", chat_template=named))
    chat = ChatTemplate.from_tokenizer(tokenizer)
    assert chat.supports_tools and chat.render(MESSAGES) == "DEFAULT"


def test_fallbacks(tmp_path: Path) -> None:
    chatml = ChatTemplate.from_tokenizer(
        Tokenizer.from_dir(write_tokenizer(tmp_path / "a", chat_template=None))
    )
    assert chatml.source is None
    assert (
        chatml.render(MESSAGES[1:])
        == "<|im_start|>user\nRename x to count.<|im_end|>\n<|im_start|>assistant\n"
    )
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "tokenizer.json").write_text(train_tokenizer_json(("<|endoftext|>",)), encoding="utf-8")
    plain = ChatTemplate.from_tokenizer(Tokenizer.from_dir(tmp_path / "b"))
    assert plain.render(MESSAGES) == "system: You fix code.\n\nuser: Rename x to count.\n\nassistant: "
    assert plain.render(MESSAGES, add_generation_prompt=False).endswith("count.\n\n")
