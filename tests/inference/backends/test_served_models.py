"""Loading two models routed by task, and the default pair's fallback when its completion model cannot
load (as Gemma's architecture is refused by a build without it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inference.backends.local_model import ServeSettings, load_served_models
from inference.backends.served_models import CHAT, COMPLETION, TASKS
from inference.config import EngineConfig
from inference.loading import ModelLoadError

POOL = EngineConfig(num_kv_blocks=16)


@pytest.fixture
def unknown_architecture(tiny_model_dir: Path, tmp_path: Path) -> Path:
    """The tiny checkpoint, claiming an architecture no build serves."""
    folder = shutil.copytree(tiny_model_dir, tmp_path / "gemma9-tiny")
    config = json.loads((folder / "config.json").read_text())
    config["model_type"] = "gemma9"
    (folder / "config.json").write_text(json.dumps(config))
    return folder


async def test_two_models_load_each_with_its_own_engine(tiny_model_dir: Path, tiny_draft_dir: Path) -> None:
    settings = ServeSettings(tiny_model_dir, tiny_draft_dir, "cpu", chat_dir=tiny_draft_dir)
    models = load_served_models(settings, engine_config=POOL)
    try:
        assert models.chat is not None
        assert (models.completion.info.model.name, models.chat.info.model.name) == ("tiny-base", "tiny-draft")
        assert models.completion.backend is not models.chat.backend
        # The draft pairs with the completion model; the chat model has none.
        assert models.completion.info.has_draft_model and not models.chat.info.has_draft_model
        assert [models.role_for(task) for task in TASKS] == [COMPLETION, CHAT, CHAT, COMPLETION]
    finally:
        for _, served in models.roles():
            await served.backend.close()


async def test_the_default_pair_serves_its_chat_model_alone_when_the_completion_model_fails(
    unknown_architecture: Path, tiny_model_dir: Path
) -> None:
    said: list[str] = []
    settings = ServeSettings(unknown_architecture, None, "cpu", chat_dir=tiny_model_dir, chat_fallback=True)
    models = load_served_models(settings, said.append, POOL)
    try:
        assert models.chat is None and models.completion.info.model.name == "tiny-base"
        assert len(said) == 1
        assert said[0].startswith("the completion model gemma9-tiny cannot be loaded (")
        assert "gemma9" in said[0].removeprefix("the completion model gemma9-tiny")
        assert said[0].endswith("); serving tiny-base alone for every task")
        assert "\n" not in said[0]
        assert {models.role_for(task) for task in TASKS} == {COMPLETION}
    finally:
        await models.completion.backend.close()


def test_models_the_user_named_fail_loudly(unknown_architecture: Path, tiny_model_dir: Path) -> None:
    settings = ServeSettings(unknown_architecture, None, "cpu", chat_dir=tiny_model_dir)
    with pytest.raises(ModelLoadError, match="gemma9"):
        load_served_models(settings, pytest.fail, POOL)
