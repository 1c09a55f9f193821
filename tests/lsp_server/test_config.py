from __future__ import annotations

import dataclasses
import logging

import pytest

from lsp_server.config import Settings, camel_case, load_settings


def test_defaults_without_input() -> None:
    settings, warnings = load_settings(None)
    assert settings == Settings()
    assert warnings == []


def test_camel_case_values_are_read() -> None:
    settings, warnings = load_settings(
        {
            "daemon": {"draftModel": "/m/draft", "device": "cpu"},
            "completion": {"maxTokens": 32, "enabledLanguages": ["python", "go"], "temperature": 0.2},
            "agent": {"checkCommand": "pytest -x -q", "stepLimit": 2},
        }
    )
    assert warnings == []
    assert settings.daemon.draft_model == "/m/draft"
    assert settings.daemon.device == "cpu"
    assert settings.completion.max_tokens == 32
    assert settings.completion.enabled_languages == ["python", "go"]
    assert settings.completion.temperature == 0.2
    assert settings.agent.check_command == "pytest -x -q"
    assert settings.agent.step_limit == 2
    assert settings.index == Settings().index


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({"completion": {"maxTokens": "many"}}, "codedraft.completion.maxTokens = 'many'"),
        ({"completion": {"maxTokens": -1}}, "codedraft.completion.maxTokens = -1"),
        ({"completion": {"enabled": 1}}, "codedraft.completion.enabled = 1"),
        ({"completion": {"enabledLanguages": ["python", 3]}}, "codedraft.completion.enabledLanguages"),
        ({"completion": {"enabledLanguages": "python"}}, "codedraft.completion.enabledLanguages = 'python'"),
        ({"completion": {"maxTokens": "5"}}, "codedraft.completion.maxTokens = '5'"),
        ({"completion": {"maxTokens": 5.0}}, "codedraft.completion.maxTokens = 5.0"),
        ({"completion": {"disableInComments": "false"}}, "codedraft.completion.disableInComments = 'false'"),
        ({"daemon": {"device": "tpu"}}, "codedraft.daemon.device = 'tpu'"),
        ({"completion": {"speculation": "always"}}, "codedraft.completion.speculation = 'always'"),
        ({"completion": {"temperature": -0.5}}, "codedraft.completion.temperature = -0.5"),
        ({"completion": {"coldPromptMs": -1}}, "codedraft.completion.coldPromptMs = -1"),
        ({"completion": {"coldPromptMs": 1e9}}, "codedraft.completion.coldPromptMs = 1000000000.0"),
        ({"daemon": "unix:/x"}, "codedraft.daemon must be an object"),
        ({"colour": "blue"}, "codedraft.colour is not a setting"),
    ],
)
def test_bad_values_are_logged_and_replaced_by_defaults(
    raw: dict, named: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        settings, warnings = load_settings(raw)
    assert settings == Settings()
    assert len(warnings) == 1 and warnings[0].startswith(named)
    assert named in caplog.text


def test_cold_prompt_ms_zero_turns_local_prompts_off_and_is_accepted() -> None:
    settings, warnings = load_settings({"completion": {"coldPromptMs": 0}})
    assert warnings == [] and settings.completion.cold_prompt_ms == 0


def test_a_bad_value_keeps_the_previous_good_one() -> None:
    first, _ = load_settings({"completion": {"maxTokens": 16}})
    second, warnings = load_settings({"completion": {"maxTokens": None, "debounceMs": 20}}, first)
    assert second.completion.max_tokens == 16
    assert second.completion.debounce_ms == 20
    assert len(warnings) == 1


def test_every_setting_has_a_camel_case_name() -> None:
    names = [camel_case(f.name) for f in dataclasses.fields(Settings().completion)]
    assert "maxTokens" in names and "disableInComments" in names


def test_empty_strings_mean_unset() -> None:
    settings, warnings = load_settings({"agent": {"checkCommand": ""}, "daemon": {"model": "", "device": ""}})
    assert settings.agent.check_command is None and settings.daemon.model is None
    assert settings.daemon.device == "auto"
    assert len(warnings) == 1 and "device" in warnings[0]
