"""The service end to end through a real daemon: the same output as the engine in-process, figures,
prefix reuse across calls, model info, stats, and the truncation policy."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.model_facts import CODE_SAMPLE
from inference.client import DaemonError, InferenceClient
from inference.config import EngineConfig, SamplingParams
from inference.loading import load_model
from inference.tokenizer import Tokenizer
from tests.fixtures.tiny_models import TOOL_CALL_TEMPLATE, make_tiny_checkpoint
from tests.inference.server.helpers import SMALL_POOL_BLOCKS, RunningDaemon, engine_reference, start_daemon

PREFIX = "import json\n\n\ndef load(path):\n    with open(path) as handle:\n        return "
SUFFIX = "\n\n\ndef dump(value, path):\n    pass\n"


async def test_complete_streams_what_the_engine_gives_in_process(
    running: RunningDaemon, tiny_model_dir: Path
) -> None:
    request = pb.CompleteRequest(
        prefix=PREFIX, suffix=SUFFIX, path="store.py", sampling=pb.SamplingParams(max_tokens=24)
    )
    deltas = []
    async for chunk in running.client.complete(request):
        deltas.append(chunk)
    assert all(not c.done for c in deltas[:-1]) and deltas[-1].done
    text = "".join(c.text_delta for c in deltas)

    loaded = load_model(tiny_model_dir, "cpu")
    prompt_ids = loaded.tokenizer.encode(loaded.fim.build(PREFIX, SUFFIX, [], "store.py"))
    sampling = SamplingParams(max_tokens=24, stop_token_ids=tuple(sorted(loaded.fim.stop_token_ids)))
    expected_text, expected = engine_reference(tiny_model_dir, prompt_ids, sampling)
    assert text == expected_text
    figures = deltas[-1].figures
    assert figures.prompt_tokens == len(prompt_ids)
    assert figures.computed_tokens == len(prompt_ids) and figures.reused_tokens == 0
    assert figures.generated_tokens == expected.metrics.generated_tokens
    assert figures.truncated_tokens == 0
    assert 0 < figures.time_to_first_token_ms <= figures.total_ms
    assert deltas[-1].finish_reason == {"length": pb.FINISH_REASON_LENGTH, "eos": pb.FINISH_REASON_EOS}.get(
        str(expected.finish_reason), pb.FINISH_REASON_STOP
    )
    assert len({c.request_id for c in deltas}) == 1 and deltas[0].request_id


async def test_a_repeated_prompt_reuses_its_cached_blocks(running: RunningDaemon) -> None:
    request = pb.CompleteRequest(prefix=PREFIX, suffix=SUFFIX, sampling=pb.SamplingParams(max_tokens=4))
    cold = await InferenceClient.collect(running.client.complete(request))
    warm = await InferenceClient.collect(running.client.complete(request))
    n = cold.figures.prompt_tokens
    assert warm.text == cold.text
    assert warm.figures.reused_tokens == n - 1
    assert warm.figures.computed_tokens == n - warm.figures.reused_tokens
    stats = await running.client.stats()
    assert stats.requests_total == stats.requests_finished == 2
    assert stats.cache_hit_requests == 1
    assert stats.prompt_tokens == 2 * n
    assert stats.reused_tokens == warm.figures.reused_tokens
    assert stats.generated_tokens == cold.figures.generated_tokens + warm.figures.generated_tokens
    assert stats.kv_blocks_total == SMALL_POOL_BLOCKS and stats.kv_blocks_used == 0
    assert stats.requests_active == 0 and stats.queue_depth == 0


async def test_stats_count_the_evictions_of_a_small_pool(tiny_model_dir: Path, short_dir: Path) -> None:
    small = await start_daemon(tiny_model_dir, short_dir, engine_config=EngineConfig(num_kv_blocks=8))
    try:
        for i in range(4):  # about 3 blocks each: the fourth prompt needs blocks the first ones cache
            prefix = "".join(f"def f{i}_{j}(x):\n    return x * {j}\n" for j in range(4))
            request = pb.CompleteRequest(prefix=prefix, sampling=pb.SamplingParams(max_tokens=2))
            await InferenceClient.collect(small.client.complete(request))
        stats = await small.client.stats()
        assert stats.kv_evictions == 8 and stats.preemptions == 0  # one request at a time: none preempted
        assert stats.kv_blocks_total == 8 and stats.kv_blocks_used == 0
    finally:
        await small.client.close()
        await small.daemon.stop()


async def test_generate_from_a_raw_prompt_and_from_chat(running: RunningDaemon, tiny_model_dir: Path) -> None:
    prompt = "def fibonacci(n):\n"
    raw = await InferenceClient.collect(
        running.client.generate(pb.GenerateRequest(prompt=prompt, sampling=pb.SamplingParams(max_tokens=16)))
    )
    loaded = load_model(tiny_model_dir, "cpu")
    expected_text, _ = engine_reference(
        tiny_model_dir, loaded.tokenizer.encode(prompt), SamplingParams(max_tokens=16)
    )
    assert raw.text == expected_text
    assert raw.figures.prompt_tokens == len(loaded.tokenizer.encode(prompt))

    messages = [pb.ChatMessage(role="system", content="Be brief."), pb.ChatMessage(role="user", content="Hi")]
    chat = await InferenceClient.collect(
        running.client.generate(
            pb.GenerateRequest(
                chat=pb.ChatMessages(messages=messages), sampling=pb.SamplingParams(max_tokens=8)
            )
        )
    )
    assert loaded.chat is not None
    rendered = loaded.chat.render([{"role": m.role, "content": m.content} for m in messages])
    assert chat.figures.prompt_tokens == len(loaded.tokenizer.encode(rendered))
    assert chat.finish_reason != pb.FINISH_REASON_UNSPECIFIED


async def test_model_info_describes_the_served_model(running: RunningDaemon) -> None:
    info = await running.client.model_info()
    assert info.model.name == "tiny-base" and info.model.architecture == "llama"
    assert info.model.context_length == 512 and info.model.vocab_size == 1024
    assert info.model.parameters == 205120 and Path(info.model.path).is_dir()
    assert not info.has_draft_model and not info.HasField("draft_model")
    assert (info.device, info.dtype, info.fim_template, info.fim_spm) == ("cpu", "float32", "codedraft", True)
    assert info.has_chat_template and not info.supports_tools  # ChatML without tool markup
    assert (info.kv_block_size, info.kv_blocks_total) == (16, SMALL_POOL_BLOCKS)
    assert info.max_new_tokens == 256 and info.max_request_bytes == 1024 * 1024
    # the reply limits' one owner (inference/reply_limits.py), as the language server reads them
    assert (info.default_completion_tokens, info.reply_reserve_limit) == (128, 256)
    tokenizer = Tokenizer.from_dir(Path(info.model.path))
    measured = len(CODE_SAMPLE) / len(tokenizer.encode(CODE_SAMPLE))
    assert info.chars_per_token == pb.ModelInfo(chars_per_token=measured).chars_per_token  # as float32


async def test_model_info_says_whether_the_template_takes_tools(tmp_path: Path, short_dir: Path) -> None:
    model = make_tiny_checkpoint(tmp_path / "tools", tokenizer_config={"chat_template": TOOL_CALL_TEMPLATE})
    daemon = await start_daemon(model, short_dir)
    try:
        info = await daemon.client.model_info()
        assert info.has_chat_template and info.supports_tools
    finally:
        await daemon.client.close()
        await daemon.daemon.stop()


async def test_a_long_prompt_is_cut_near_the_cursor_or_rejected(running: RunningDaemon) -> None:
    far = "".join(f"def far_{i}(x):\n    return x + {i}\n\n" for i in range(120))
    near = "def near(y):\n    return "
    snippets = [pb.ContextSnippet(path=f"lib{i}.py", text=far[:800], score=float(i)) for i in range(3)]
    request = pb.CompleteRequest(
        prefix=far + near, suffix="\n" + far, snippets=snippets, sampling=pb.SamplingParams(max_tokens=100)
    )
    cut = await InferenceClient.collect(running.client.complete(request))
    assert cut.figures.truncated_tokens == 5074
    assert cut.figures.prompt_tokens == 408  # of the 512 - 100 that fit: the cuts fall on whole lines

    request.truncation = pb.TRUNCATION_POLICY_REJECT
    with pytest.raises(DaemonError) as caught:
        await InferenceClient.collect(running.client.complete(request))
    assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "only 412 fit" in caught.value.message and "TRUNCATION_POLICY_REJECT" in caught.value.message


async def test_reflection_lets_generic_tools_find_the_service(running: RunningDaemon) -> None:
    from google.protobuf import descriptor_pb2
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    stub = reflection_pb2_grpc.ServerReflectionStub(running.client._channel)
    asks = [
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="codedraft.v1.Inference"),
    ]
    answers = [answer async for answer in stub.ServerReflectionInfo(iter(asks))]
    services = {s.name for s in answers[0].list_services_response.service}
    assert services == {
        "codedraft.v1.Inference",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    }
    files = [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in answers[1].file_descriptor_response.file_descriptor_proto
    ]
    methods = {m.name for f in files for s in f.service if s.name == "Inference" for m in s.method}
    assert methods == {"Complete", "Generate", "Prefill", "PredictEdit", "Cancel", "GetModelInfo", "GetStats"}
