"""Each model family's own prompt through a real daemon, token healing on the wire, and a model
without FIM tokens (its prompt, its suffix stop, and GetModelInfo saying it is prefix-only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import InferenceClient
from inference.config import EngineConfig, SamplingParams
from inference.engine.engine import LLMEngine
from inference.engine.sequence import Request
from inference.loading import load_model
from inference.prompts.token_boundary import heal_prompt
from lsp_server.config import DaemonSettings
from lsp_server.daemon_supervisor import PREFIX_ONLY_MESSAGE, DaemonSupervisor
from lsp_server.status import StatusReporter
from tests.fixtures.scripted_model import make_scripted_checkpoint
from tests.fixtures.tiny_models import make_tiny_checkpoint, train_tokenizer_json
from tests.inference.prompts.test_prompts_fim import FAMILY_TOKENS
from tests.inference.server.helpers import SMALL_POOL_BLOCKS, RunningDaemon, start_daemon

PREFIX = "def total(items):\n    result = 0\n    for item in items:\n        resu"
SUFFIX = "\n    return result\n"
SNIPPET = pb.ContextSnippet(path="util.py", text="def helper():\n    pass", score=1.0)
MAX_TOKENS = 10


def _family_checkpoint(directory: Path, family: str) -> Path:
    """A tiny random llama whose tokenizer carries `family`'s special tokens (and nothing of ours)."""
    make_tiny_checkpoint(directory, "llama", seed=5)
    tokens, config = FAMILY_TOKENS[family]
    (directory / "tokenizer.json").write_text(
        train_tokenizer_json(("<|endoftext|>", *tokens)), encoding="utf-8"
    )
    (directory / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def _engine_text(model_dir: Path, prompt: str, stops: tuple[str, ...] = (), heal: bool = True) -> str:
    """The completion the engine gives for the prompt text run directly (no daemon, no gRPC)."""
    loaded = load_model(model_dir, "cpu", weights="auto")  # the weight form the daemon serves
    ids = loaded.tokenizer.encode(prompt)
    healed = heal_prompt(loaded.tokenizer, ids) if heal else None
    sampling = SamplingParams(
        max_tokens=MAX_TOKENS + (healed.removed_tokens if healed else 0),
        stop=stops,
        stop_token_ids=tuple(sorted(loaded.fim.stop_token_ids)),
    )
    engine = LLMEngine.from_loaded(loaded, EngineConfig(num_kv_blocks=SMALL_POOL_BLOCKS))
    request = Request(
        "reference",
        prompt_token_ids=healed.token_ids if healed else ids,
        sampling=sampling,
        healing=healed.removed if healed else b"",
    )
    engine.add_request(request)
    pieces: list[str] = []
    while engine.has_work():
        pieces += [output.delta for output in engine.step()]
    return "".join(pieces)


async def _serve(model_dir: Path, socket_dir: Path) -> RunningDaemon:
    return await start_daemon(model_dir, socket_dir)


@pytest.mark.parametrize("family", ["qwen", "starcoder2", "deepseek", "codellama", "codestral"])
async def test_each_family_gets_its_own_layout_through_the_daemon(
    tmp_path: Path, short_dir: Path, family: str
) -> None:
    model_dir = _family_checkpoint(tmp_path / family, family)
    running = await _serve(model_dir, short_dir)
    try:
        info = await running.client.model_info()
        assert info.fim_template == family and not info.prefix_only
        request = pb.CompleteRequest(
            prefix=PREFIX,
            suffix=SUFFIX,
            path="sums.py",
            snippets=[SNIPPET],
            sampling=pb.SamplingParams(max_tokens=MAX_TOKENS),
        )
        got = await InferenceClient.collect(running.client.complete(request))
    finally:
        await running.client.close()
        await running.daemon.stop()
    template = load_model(model_dir, "cpu").fim
    prompt = template.build(PREFIX, SUFFIX, [("util.py", SNIPPET.text)], "sums.py")
    assert got.text == _engine_text(model_dir, prompt)
    # Layouts that end with the prefix are healed (fewer prompt tokens); the others end with a token.
    tokenizer = load_model(model_dir, "cpu").tokenizer
    healed = heal_prompt(tokenizer, tokenizer.encode(prompt))
    assert got.figures.prompt_tokens == len(healed.token_ids)
    assert bool(healed.removed) == (family in ("starcoder2", "codestral", "codellama"))


@pytest.fixture(scope="module")
def prefix_only_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model without FIM tokens whose greedy text after the document start is known."""
    return make_scripted_checkpoint(
        tmp_path_factory.mktemp("models") / "prefix-only",
        completion="return result\n    done",
        after="<|endoftext|>",
        tokenizer_config={"fim_template": "prefix-only", "bos_token": "<|im_start|>"},
    )


async def test_a_prefix_only_model_stops_where_it_runs_into_the_suffix(
    prefix_only_dir: Path, short_dir: Path
) -> None:
    running = await _serve(prefix_only_dir, short_dir)
    try:
        info = await running.client.model_info()
        assert info.prefix_only and info.fim_template == "prefix-only"

        async def complete(prefix: str, suffix: str, healing: bool | None = None) -> str:
            request = pb.CompleteRequest(
                prefix=prefix, suffix=suffix, sampling=pb.SamplingParams(max_tokens=20)
            )
            if healing is not None:
                request.token_healing = healing
            return (await InferenceClient.collect(running.client.complete(request))).text

        # The prompt is the document start, never the chat-turn opener the tokenizer calls BOS.
        assert load_model(prefix_only_dir, "cpu").fim.build("", "") == "<|endoftext|>"
        assert await complete("", "\n") == "return result\n    done"
        assert await complete("", "\n    done\n") == "return result"
        assert await complete("", "\n\n  \n    done") == "return result"
        # Token healing: the cursor sits inside "return", whose first token is "re": the prompt is cut
        # back to the document start and the reply starts at the cursor.
        assert await complete("ret", "\n    done\n") == "urn result"
        unhealed = await complete("ret", "\n    done\n", healing=False)
        assert unhealed == _engine_text(prefix_only_dir, "<|endoftext|>ret", ("\n    done",), heal=False)
        assert unhealed != "urn result"
    finally:
        await running.client.close()
        await running.daemon.stop()


async def test_the_editor_status_says_the_model_is_prefix_only(
    prefix_only_dir: Path, short_dir: Path
) -> None:
    running = await _serve(prefix_only_dir, short_dir)
    sent: list[dict[str, object]] = []
    reporter = StatusReporter(lambda _method, params: sent.append(params), lambda _text: None)
    supervisor = DaemonSupervisor(lambda: DaemonSettings(address=str(running.address)), reporter)
    try:
        await supervisor.client()
    finally:
        await supervisor.close()
        await running.client.close()
        await running.daemon.stop()
    assert sent[-1]["state"] == "ready" and sent[-1]["prefixOnly"] is True
    assert sent[-1]["message"] == PREFIX_ONLY_MESSAGE and "code above the cursor" in PREFIX_ONLY_MESSAGE
