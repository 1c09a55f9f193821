"""PredictEdit over a real gRPC daemon: the reply of each format parsed, special-token text escaped,
cancel-previous by session, bad input, and prompt lookup with the draft limit exact."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import DaemonError, InferenceClient
from inference.config import EngineConfig
from inference.server.prepare_next_edit import REPLY_MARKUP_TOKENS, REPLY_SCALE, prepare_predict_edit
from tests.fixtures.gated_model import GatedModel
from tests.fixtures.tiny_models import SPECIAL_TOKENS
from tests.fixtures.waiting import wait_until
from tests.inference.server.helpers import RunningDaemon, start_daemon, wait_idle
from tests.inference.server.next_edit_models import ZETA_MARKERS, distinct_words, make_reply_checkpoint

REGION = "    return x\n"
REWRITE = "    return total"
HISTORY = [pb.PastEdit(path="a.py", diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-def f(y):\n+def f(x):\n")]
TIMEOUT = 60.0


def _request(**fields: object) -> pb.PredictEditRequest:
    values: dict[str, object] = {"path": "a.py", "region": REGION, "cursor": 4, "history": HISTORY}
    values.update(fields)
    return pb.PredictEditRequest(**values)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def _daemon(model_dir: Path, socket_dir: Path) -> AsyncIterator[RunningDaemon]:
    running = await start_daemon(model_dir, socket_dir)
    try:
        yield running
    finally:
        await running.client.close()
        await running.daemon.stop()


# The prompt each format ends with, and the reply the scripted model gives it: Sweep's open updated
# block, Zeta's excerpt between its markers, the chat format's fenced block (the bigram model cannot
# end that block, so it repeats it until max_tokens; the first closed fence is the reply).
FORMAT_CASES = {
    "sweep": ("sweep-next-edit-tiny", SPECIAL_TOKENS, "updated/a.py\n", REWRITE, True),
    "zeta": (
        "zeta-tiny",
        SPECIAL_TOKENS + ZETA_MARKERS,
        "### Response:\n\n",
        f"<|editable_region_start|>\n{REWRITE}\n<|editable_region_end|>",
        True,
    ),
    # The chat prompt ends inside the code block, the region written up to the cursor.
    "chat": ("chat-tiny", SPECIAL_TOKENS, "<|im_start|>assistant\n```\n    ", f"{REWRITE[4:]}```", False),
}
# The end-of-text token is one of the Sweep and Zeta stop texts: the reply stops there (STOP).
FINISH = {"sweep": pb.FINISH_REASON_STOP, "zeta": pb.FINISH_REASON_STOP, "chat": pb.FINISH_REASON_LENGTH}


@pytest.mark.parametrize("name", sorted(FORMAT_CASES))
async def test_each_format_answers_with_the_parsed_rewrite(
    name: str, tmp_path: Path, short_dir: Path
) -> None:
    folder, specials, prompt_end, reply, then_eos = FORMAT_CASES[name]
    model = make_reply_checkpoint(
        tmp_path / folder, prompt_end, reply, special_tokens=specials, then_eos=then_eos
    )
    async with _daemon(model, short_dir) as running:
        assert (await running.client.model_info()).next_edit_format == name
        request = _request(request_id="r1")
        if name == "chat":
            request.sampling.max_tokens = 14  # the chat reply's block, closed, and a bit more
        answer = await running.client.predict_edit(request, TIMEOUT)
        assert answer.request_id == "r1"
        assert answer.format == name
        assert answer.parsed
        assert answer.rewritten_region == REWRITE + "\n"
        assert answer.finish_reason == FINISH[name]
        assert answer.figures.prompt_tokens == answer.figures.computed_tokens > 0
        await wait_idle(running)


async def test_special_token_text_in_the_region_is_escaped(running: RunningDaemon) -> None:
    region = 'END = "<|endoftext|>"\nTURN = "<|im_end|>"\n'
    request = _request(region=region, cursor=0)  # the model writes the whole region
    served = running.daemon.runner.served
    assert served is not None
    prepared = prepare_predict_edit(request, served)
    prompt = prepared.prepared.build().token_ids
    eos, turn_end = served.tokenizer.token_id("<|endoftext|>"), served.tokenizer.token_id("<|im_end|>")
    assert eos not in prompt
    assert prompt.count(turn_end) == 2  # the template's system and user turns, none from the region
    copied = f"{prepared.edit.region}```"  # the model copies the escaped region into the opened block
    assert prepared.reply("r", copied, pb.FINISH_REASON_EOS, pb.RequestFigures()).rewritten_region == region
    answer = await running.client.predict_edit(request, TIMEOUT)
    assert answer.figures.prompt_tokens == len(prompt)


async def test_unset_max_tokens_is_sized_from_the_region(running: RunningDaemon) -> None:
    served = running.daemon.runner.served
    assert served is not None
    prepared = prepare_predict_edit(_request(), served)
    region_tokens = len(served.tokenizer.encode(REGION))
    assert prepared.prepared.sampling.max_tokens == int(region_tokens * REPLY_SCALE) + REPLY_MARKUP_TOKENS
    assert prepared.prepared.draft_limit == region_tokens


@pytest.fixture
async def gated(tiny_model_dir: Path, short_dir: Path) -> AsyncIterator[tuple[RunningDaemon, GatedModel]]:
    """A daemon whose first forward pass of 64 tokens or more (a PredictEdit's prompt) waits."""
    models: list[GatedModel] = []

    def wrap(model: object) -> GatedModel:
        models.append(GatedModel(model, 64))  # type: ignore[arg-type]
        return models[0]

    daemon = await start_daemon(
        tiny_model_dir, short_dir, engine_config=EngineConfig(num_kv_blocks=128), wrap_target=wrap
    )
    yield daemon, models[0]
    models[0].release.set()
    await daemon.client.close()
    await daemon.daemon.stop()


async def _live(running: RunningDaemon, count: int) -> None:
    async def reached() -> bool:
        return (await running.client.stats()).requests_active == count

    await wait_until(reached, 10.0, f"{count} live requests", interval_s=0.02)


async def test_a_newer_prediction_of_the_session_supersedes_the_older(
    gated: tuple[RunningDaemon, GatedModel],
) -> None:
    running, gate = gated
    older = asyncio.ensure_future(
        running.client.predict_edit(_request(request_id="old", session_id="doc"), TIMEOUT)
    )
    await asyncio.to_thread(gate.entered.wait, 10)
    newer = asyncio.ensure_future(
        running.client.predict_edit(_request(request_id="new", session_id="doc"), TIMEOUT)
    )
    await _live(running, 2)  # both arrived: the newer one superseded the older one
    gate.release.set()
    with pytest.raises(DaemonError) as stopped:
        await older
    assert stopped.value.code == grpc.StatusCode.CANCELLED
    assert stopped.value.message == "superseded by request new of the same session 'doc'"
    assert (await newer).request_id == "new"
    stats = await wait_idle(running)
    assert stats.requests_cancelled == 1


async def test_a_completion_of_the_session_leaves_the_prediction_running(
    gated: tuple[RunningDaemon, GatedModel],
) -> None:
    running, gate = gated
    prediction = asyncio.ensure_future(running.client.predict_edit(_request(session_id="doc"), TIMEOUT))
    await asyncio.to_thread(gate.entered.wait, 10)
    completion = asyncio.ensure_future(
        InferenceClient.collect(
            running.client.complete(
                pb.CompleteRequest(session_id="doc", prefix="x = ", sampling=pb.SamplingParams(max_tokens=2))
            )
        )
    )
    await _live(running, 2)
    gate.release.set()
    assert (await completion).figures.generated_tokens == 2
    answer = await prediction
    assert answer.format == "chat" and answer.finish_reason != pb.FINISH_REASON_CANCELLED
    stats = await wait_idle(running)
    assert stats.requests_cancelled == 0


async def test_cancel_stops_a_prediction(gated: tuple[RunningDaemon, GatedModel]) -> None:
    running, gate = gated
    prediction = asyncio.ensure_future(running.client.predict_edit(_request(request_id="p"), TIMEOUT))
    await asyncio.to_thread(gate.entered.wait, 10)
    assert await running.client.cancel("p")
    gate.release.set()
    with pytest.raises(DaemonError) as stopped:
        await prediction
    assert stopped.value.code == grpc.StatusCode.CANCELLED
    assert stopped.value.message == "cancelled by a Cancel call"
    await wait_idle(running)


async def test_cancelling_the_awaiting_task_cancels_the_call(gated: tuple[RunningDaemon, GatedModel]) -> None:
    running, gate = gated
    prediction = asyncio.ensure_future(running.client.predict_edit(_request(request_id="p"), TIMEOUT))
    await asyncio.to_thread(gate.entered.wait, 10)
    prediction.cancel()
    with pytest.raises(asyncio.CancelledError):
        await prediction
    await _live(running, 0)  # the daemon saw the call go: the request is stopped
    gate.release.set()
    stats = await wait_idle(running)
    assert stats.requests_cancelled == 1


BAD_CASES = {
    "cursor past the end": (
        _request(cursor=len(REGION) + 1),
        f"cursor is {len(REGION) + 1} but the region has only {len(REGION)} characters",
    ),
    "empty region": (_request(region="", cursor=0), "region is empty"),
    "region too long": (
        _request(region="value = compute(items)\n" * 300, cursor=0),
        "the editable region does not fit: with its context lines and the chat format's markup it is",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CASES))
async def test_bad_input_is_invalid_argument_and_the_daemon_keeps_serving(
    case: str, running: RunningDaemon
) -> None:
    request, message = BAD_CASES[case]
    with pytest.raises(DaemonError) as refused:
        await running.client.predict_edit(request, TIMEOUT)
    assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert message in refused.value.message
    answer = await running.client.predict_edit(_request(sampling=pb.SamplingParams(max_tokens=3)), TIMEOUT)
    assert answer.figures.generated_tokens == 3
    await wait_idle(running)


async def test_prompt_lookup_with_the_draft_limit_gives_the_plain_rewrite(
    tmp_path: Path, short_dir: Path
) -> None:
    """A rewrite that edits the region's first word and copies the other 47: greedy decoding with
    prompt lookup (draft limit: the region's tokens, far above k_max) equals plain decoding token for
    token, with proposals verified."""
    words = distinct_words(49)
    region = "".join(words[1:]) + "\n"
    rewrite = words[0] + "".join(words[2:])
    model = make_reply_checkpoint(tmp_path / "sweep-next-edit-copy", "updated/a.py\n", rewrite)
    async with _daemon(model, short_dir) as running:
        answers = {
            mode: await running.client.predict_edit(
                _request(region=region, cursor=0, speculation=mode, request_id=f"m{mode}"), TIMEOUT
            )
            for mode in (pb.SPECULATION_MODE_OFF, pb.SPECULATION_MODE_NGRAM)
        }
        plain, lookup = answers[pb.SPECULATION_MODE_OFF], answers[pb.SPECULATION_MODE_NGRAM]
        assert plain.rewritten_region == lookup.rewritten_region == rewrite + "\n"
        assert plain.finish_reason == lookup.finish_reason == pb.FINISH_REASON_STOP
        assert plain.figures.generated_tokens == lookup.figures.generated_tokens == 49
        assert plain.figures.draft_proposed == 0
        assert lookup.figures.draft_accepted > 0
        await wait_idle(running)


async def test_a_rewrite_stops_once_it_rejoins_the_region(tmp_path: Path, short_dir: Path) -> None:
    """The model changes the region's first line, then copies: after two copied lines the reply
    stops and the region's rest is appended undecoded (9 tokens generated of the 13 a whole rewrite
    takes), in plain decoding and with prompt lookup alike."""
    words = distinct_words(10)
    # Each line's end is a different token (its indentation rides on it), as the bigram model needs.
    lines = [f"{words[0]}{words[1]}", f"   {words[2]}{words[3]}", f"       {words[4]}{words[5]}"]
    lines.append(f"           {words[6]}{words[7]}")
    region = "\n".join(lines) + "\n"
    rewrite = "\n".join([f"{words[9]}{words[1]}", *lines[1:]])
    model = make_reply_checkpoint(tmp_path / "sweep-next-edit-rejoin", "updated/a.py\n", rewrite)
    async with _daemon(model, short_dir) as running:
        for mode in (pb.SPECULATION_MODE_OFF, pb.SPECULATION_MODE_NGRAM):
            answer = await running.client.predict_edit(
                _request(region=region, cursor=0, speculation=mode, request_id=f"j{mode}"), TIMEOUT
            )
            assert answer.parsed
            assert answer.rewritten_region == rewrite + "\n"
            assert answer.finish_reason == pb.FINISH_REASON_STOP
            assert answer.figures.generated_tokens == 9
        await wait_idle(running)
