"""AsyncEngine: streaming from the background thread, cancellation by leaving the stream, errors."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import pytest

from inference.config import RequestKind, SamplingParams, SpecMode
from inference.engine.async_engine import AsyncEngine
from inference.engine.errors import InvalidRequestError
from inference.engine.sequence import FinishReason, Request, RequestOutput
from inference.loading import LoadedModel
from tests.fixtures.waiting import wait_until
from tests.inference.engine.engine_helpers import PROMPTS, make_engine, one_torch_thread, run_all, tiny_model

pytestmark = pytest.mark.usefixtures(one_torch_thread.__name__)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> LoadedModel:
    return tiny_model(tmp_path_factory.mktemp("async") / "tiny")


def _request(request_id: str, max_tokens: int, **kw: object) -> Request:
    return Request(
        request_id,
        prompt=PROMPTS[0],
        sampling=SamplingParams(max_tokens=max_tokens, ignore_eos=True),
        spec_mode=SpecMode.NGRAM,
        **kw,  # type: ignore[arg-type]
    )


async def _collect(stream: AsyncIterator[RequestOutput]) -> list[RequestOutput]:
    return [out async for out in stream]


async def test_concurrent_streams_match_synchronous_runs(model: LoadedModel) -> None:
    expected = run_all(make_engine(model), [_request("x", 25)])["x"]
    engine = AsyncEngine(make_engine(model))
    try:
        a, b = await asyncio.gather(
            _collect(engine.generate(_request("a", 25))),
            _collect(engine.generate(_request("b", 25, kind=RequestKind.GENERATION))),
        )
        for outs in (a, b):
            assert outs[-1].finished and outs[-1].finish_reason == FinishReason.LENGTH
            assert "".join(o.delta for o in outs) == expected.text
            assert outs[-1].metrics.generated_tokens == 25
        engine.engine.check_invariants()
    finally:
        await engine.close()


async def test_leaving_the_stream_aborts_and_frees_blocks(model: LoadedModel) -> None:
    engine = AsyncEngine(make_engine(model))
    try:
        stream = engine.generate(_request("long", 400))
        async for out in stream:
            if out.token_ids:
                break
        await stream.aclose()  # what grpc.aio does when the client cancels
        # The abort lands within a step; a loaded machine gets 10 s.
        await wait_until(lambda: not engine.engine.has_work(), 10, "the aborted request leaving the engine")
        engine.engine.check_invariants()
        assert engine.engine.kv.pool.num_free == engine.engine.kv.pool.num_blocks
        # Bad requests surface as exceptions from the stream; the engine keeps working.
        with pytest.raises(InvalidRequestError, match="max_tokens"):
            await _collect(engine.generate(_request("bad", 0)))
        outs = await _collect(engine.generate(_request("ok", 3)))
        assert outs[-1].finish_reason == FinishReason.LENGTH
    finally:
        await engine.close()


async def test_abort_from_another_thread(model: LoadedModel) -> None:
    engine = AsyncEngine(make_engine(model))
    try:
        stream = engine.generate(_request("victim", 400))
        first = await stream.__anext__()
        await asyncio.to_thread(engine.abort, "victim")
        rest = await _collect(stream)
        assert rest[-1].finish_reason == FinishReason.CANCELLED
        assert first.metrics.generated_tokens + sum(len(o.token_ids) for o in rest) < 400
        engine.engine.check_invariants()
    finally:
        await engine.close()


async def test_close_ends_open_streams(model: LoadedModel) -> None:
    engine = AsyncEngine(make_engine(model))
    stream = engine.generate(_request("open", 400))
    await stream.__anext__()
    await engine.close()
    rest = await _collect(stream)
    assert rest[-1].finished and rest[-1].finish_reason == FinishReason.ERROR
    assert "shut down" in str(rest[-1].error)


async def test_the_before_step_hook_runs_in_the_engine_thread(model: LoadedModel) -> None:
    threads: set[str] = set()
    engine = AsyncEngine(make_engine(model), lambda: threads.add(threading.current_thread().name))
    try:
        outs = await _collect(engine.generate(_request("a", 5)))
    finally:
        await engine.close()
    assert outs[-1].finish_reason == FinishReason.LENGTH
    assert threads == {"codedraft-engine"}


async def test_a_failing_before_step_hook_is_dropped_and_the_engine_serves_on(model: LoadedModel) -> None:
    calls: list[int] = []

    def broken() -> None:
        calls.append(1)
        raise RuntimeError("no /proc")

    engine = AsyncEngine(make_engine(model), broken)
    try:
        first = await _collect(engine.generate(_request("a", 5)))
        second = await _collect(engine.generate(_request("b", 5)))
    finally:
        await engine.close()
    assert [first[-1].finish_reason, second[-1].finish_reason] == [FinishReason.LENGTH] * 2
    assert calls == [1]
