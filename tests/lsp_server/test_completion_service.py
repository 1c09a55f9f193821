"""The completion service with a scripted daemon stream (the real daemon is in the end-to-end tests)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import AsyncIterator

import pytest

from indexer.retrieval.base import RetrievalQuery, Snippet
from inference.api.codedraft.v1 import inference_pb2 as pb
from lsp_server.completion.request import CompletionQuery
from lsp_server.completion.service import CompletionService
from lsp_server.completion.suggestion_stream import FINAL_CHUNK_WAIT_S
from lsp_server.config import CompletionSettings
from lsp_server.model_room import ModelRoom
from tests.fixtures.waiting import wait_until

SETTINGS = CompletionSettings(debounce_ms=1, max_debounce_ms=2)


class ScriptedDaemon:
    """Streams the scripted deltas; records requests and whether each stream was closed, and how far
    it was read. Like the daemon, a newer request of a session (or a Cancel) stops the older stream,
    which then ends with a final chunk: FINISH_REASON_CANCELLED and the figures."""

    def __init__(
        self,
        deltas: list[str],
        hang: bool = False,
        error: Exception | None = None,
        stall_after: int | None = None,
    ) -> None:
        """``hang``: each delta waits for ``release`` (or a stop); ``stall_after``: after that many
        deltas the stream waits for ``release`` whatever happens (a daemon that stopped answering)."""
        self.deltas = deltas
        self.hang = hang
        self.stall_after = stall_after
        self.error = error
        self.requests: list[pb.CompleteRequest] = []
        self.figures = pb.RequestFigures(prompt_tokens=40, reused_tokens=32, computed_tokens=8)
        self.closed: list[bool] = []
        self.sent: list[int] = []
        self.cancelled: list[str] = []
        self.release = asyncio.Event()
        self._stops: dict[str, asyncio.Event] = {}
        self._by_session: dict[str, str] = {}

    async def cancel(self, request_id: str) -> bool:
        self.cancelled.append(request_id)
        stop = self._stops.get(request_id)
        if stop is not None:
            stop.set()
        return stop is not None

    async def stream(self, request: pb.CompleteRequest, timeout_s: float) -> AsyncIterator[pb.CompleteChunk]:
        self.requests.append(request)
        index = len(self.closed)
        request_id = f"r{index}"
        self.closed.append(False)
        self.sent.append(0)
        stop = self._stops[request_id] = asyncio.Event()
        older = self._stops.get(self._by_session.get(request.session_id, ""))
        if older is not None:
            older.set()
        self._by_session[request.session_id] = request_id
        figures = self.figures
        finish = pb.FINISH_REASON_EOS
        try:
            if self.error is not None:
                raise self.error
            for delta in self.deltas:
                if self.sent[index] == self.stall_after:
                    await self.release.wait()
                if self.hang:
                    await _first_of(self.release, stop)
                if stop.is_set():
                    finish = pb.FINISH_REASON_CANCELLED
                    break
                self.sent[index] += 1
                yield pb.CompleteChunk(request_id=request_id, text_delta=delta)
                await asyncio.sleep(0)
            yield pb.CompleteChunk(request_id=request_id, done=True, finish_reason=finish, figures=figures)
        finally:
            self.closed[index] = True
            del self._stops[request_id]


async def _first_of(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for wait in pending:
        wait.cancel()


def query(text: str, uri: str = "file:///w/a.py", deleted: bool = False) -> CompletionQuery:
    offset = text.index("|")
    body = text.replace("|", "", 1)
    line = body[:offset].count("\n")
    column = offset - (body.rfind("\n", 0, offset) + 1)
    return CompletionQuery(uri, "a.py", "python", body, offset, line, column, deleted)


async def test_a_suggestion_is_cleaned_and_carries_figures() -> None:
    daemon = ScriptedDaemon(["return a", " + b   \n", "\n"])
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    outcome = await service.complete(query("def add(a, b):\n    |\n"))
    assert outcome.text == "return a + b"
    assert outcome.figures is not None and outcome.figures.reused_tokens == 32
    request = daemon.requests[0]
    assert request.prefix == "def add(a, b):\n    " and request.suffix == "\n"
    assert request.session_id == "file:///w/a.py"
    assert request.sampling.max_tokens == SETTINGS.max_tokens
    assert daemon.closed == [True]


async def test_reading_stops_once_the_block_has_ended() -> None:
    deltas = ["x = 1\n", "    return x\n", "\n", "def g():\n"] + ["    pass\n"] * 50
    daemon = ScriptedDaemon(deltas)
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    outcome = await service.complete(query("def f():\n    |\n"))
    assert outcome.text == "x = 1\n    return x"
    assert daemon.sent[0] == 4
    assert daemon.closed == [True]
    assert outcome.figures is None  # the stream was closed before its last chunk


async def test_a_finished_block_is_cancelled_so_its_figures_still_arrive() -> None:
    deltas = ["x = 1\n", "    return x\n", "\n", "def g():\n"] + ["    pass\n"] * 50
    daemon = ScriptedDaemon(deltas)
    service = CompletionService(lambda: SETTINGS, daemon.stream, cancel=daemon.cancel)
    outcome = await service.complete(query("def f():\n    |\n"))
    assert outcome.text == "x = 1\n    return x"
    assert daemon.cancelled == ["r0"] and daemon.sent[0] == 4
    assert outcome.figures is not None
    assert (outcome.figures.prompt_tokens, outcome.figures.reused_tokens) == (40, 32)


async def test_a_daemon_that_stops_answering_after_the_block_costs_the_figures_only() -> None:
    deltas = ["x = 1\n", "    return x\n", "\n", "def g():\n", "    pass\n"]
    daemon = ScriptedDaemon(deltas, stall_after=4)
    service = CompletionService(lambda: SETTINGS, daemon.stream, cancel=daemon.cancel)
    # The stalled stream is never released: the suggestion comes anyway, once the wait for its last
    # chunk (FINAL_CHUNK_WAIT_S) is over; the guard only stops a hang, it does not time the service.
    outcome = await asyncio.wait_for(service.complete(query("def f():\n    |\n")), FINAL_CHUNK_WAIT_S + 60)
    assert outcome.text == "x = 1\n    return x" and outcome.figures is None
    assert daemon.cancelled == ["r0"] and daemon.closed == [True]


async def test_typing_through_a_suggestion_does_not_ask_again() -> None:
    daemon = ScriptedDaemon(["compute(1, 2)"])
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    first = await service.complete(query("x = |\n"))
    second = await service.complete(query("x = comp|\n"))
    assert first.text == "compute(1, 2)"
    assert second.text == "ute(1, 2)" and second.from_cache
    assert len(daemon.requests) == 1


async def test_the_older_request_the_daemon_superseded_gives_that_reason() -> None:
    daemon = ScriptedDaemon(["slow"], hang=True)
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    older = asyncio.ensure_future(service.complete(query("x = |\n")))
    await wait_until(lambda: daemon.requests, 10, "the request reached the daemon", 0.001)
    newer = asyncio.ensure_future(service.complete(query("x = 1|\n")))
    outcome = await older
    assert outcome.text is None and outcome.reason == "superseded by a newer request"
    assert daemon.closed[0] is True
    daemon.release.set()
    assert (await newer).text == "slow"


async def test_cancel_request_reaches_the_stream() -> None:
    daemon = ScriptedDaemon(["slow"], hang=True)
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    task = asyncio.ensure_future(service.complete(query("x = |\n")))
    await wait_until(lambda: daemon.requests, 10, "the request reached the daemon", 0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert daemon.closed == [True]


@pytest.mark.parametrize(
    ("error", "reason"),
    [(TimeoutError(), "timed out"), (ConnectionError("socket gone"), "daemon unavailable: socket gone")],
)
async def test_daemon_failures_give_a_reason(error: Exception, reason: str) -> None:
    daemon = ScriptedDaemon([], error=error)
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    outcome = await service.complete(query("x = |\n"))
    assert outcome.text is None and outcome.reason == reason


async def test_suppressed_cursor_does_not_call_the_daemon() -> None:
    daemon = ScriptedDaemon(["never"])
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    in_comment = await service.complete(query("# a comment|\n"))
    deleting = await service.complete(query("x = |\n", deleted=True))
    assert in_comment.reason == "the cursor is in a comment"
    assert deleting.reason == "the last edit deleted text"
    assert daemon.requests == []


async def test_filtered_suggestions_say_which_filter() -> None:
    daemon = ScriptedDaemon(["}"])
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    outcome = await service.complete(query("x = |\n"))
    assert outcome.text is None and outcome.reason == "filtered (balance_brackets)"


async def test_snippets_are_sent_and_kept_while_on_one_line() -> None:
    calls: list[RetrievalQuery] = []

    def retrieve(q: RetrievalQuery, budget: int, ms: float, cancel: threading.Event) -> list[Snippet]:
        calls.append(q)
        return [Snippet("lib.py", 9, 11, "def helper():\n    return 1\n", ("definitions",), 0.5)]

    daemon = ScriptedDaemon(["helper()"])
    service = CompletionService(lambda: SETTINGS, daemon.stream, retrieve)
    await service.complete(query("x = |\n"))
    await service.complete(query("x = y|\n"))
    await service.complete(query("x = y\n|"))
    assert [c.line for c in calls] == [0, 1]
    sent = daemon.requests[0].snippets[0]
    assert (sent.path, sent.start_line, sent.source) == ("lib.py", 10, "definitions")


async def test_debounce_follows_changed_settings() -> None:
    current = {"settings": SETTINGS}
    daemon = ScriptedDaemon(["x"])
    service = CompletionService(lambda: current["settings"], daemon.stream)
    current["settings"] = CompletionSettings(debounce_ms=40, max_debounce_ms=90)
    await service.complete(query("y = |\n"))
    assert (service.debounce.min_ms, service.debounce.max_ms) == (40, 90)


async def test_an_older_request_never_reaches_the_daemon_after_a_newer_one() -> None:
    """Retrieval (or a longer debounce) can hold an older request back until a newer one of the same
    document was sent; sent then, it would supersede the newer one in the daemon."""
    older_may_finish = threading.Event()

    def retrieve(q: RetrievalQuery, budget: int, ms: float, cancel: threading.Event) -> list[Snippet]:
        if q.column == 4:  # the older cursor: its retrieval is slow
            assert older_may_finish.wait(10)
        return []

    daemon = ScriptedDaemon(["1"])
    service = CompletionService(lambda: SETTINGS, daemon.stream, retrieve)
    older = asyncio.ensure_future(service.complete(query("x = |\n")))
    await asyncio.sleep(0.05)
    newer = await service.complete(query("x = 1|\n"))
    older_may_finish.set()
    assert (await older).reason == "superseded by a newer request"
    assert (newer.text, newer.reason) == ("1", None)
    assert [r.prefix for r in daemon.requests] == ["x = 1"]


async def test_prompts_are_sized_to_the_daemons_context() -> None:
    """With a small model context the window shrinks to fit it (so the daemon need not cut it at a
    place that moves with every keystroke); with the context unknown the settings' budgets apply."""
    text = "".join(f"value_{i} = compute({i}, 'padding padding padding')\n" for i in range(400)) + "|\n"
    requests = {}
    whole = dataclasses.replace(SETTINGS, cold_prompt_ms=0)  # no local stand-in (cold_prompts)
    for context_length in (0, 512):
        daemon = ScriptedDaemon(["x"])
        service = CompletionService(lambda: whole, daemon.stream, room=lambda n=context_length: ModelRoom(n))
        await service.complete(query(text))
        requests[context_length] = daemon.requests[0]
    unknown, small = requests[0], requests[512]
    # 512 tokens less 64 for the reply and 32 reserved, 85 % of it: 353 of the 3,072 the settings ask,
    # so 176 tokens (616 characters) of prefix: the 11 whole lines of 52 characters above the cursor
    assert (len(unknown.prefix), len(small.prefix)) == (4992, 11 * 52)
    assert unknown.prefix.endswith(small.prefix)  # the nearest lines are the ones kept


async def test_a_line_cursor_asks_for_one_line_and_a_block_cursor_for_a_block() -> None:
    """Inside a line (or at a statement's end) the request stops at the first line end, so the daemon
    decodes no line that would not be shown; on the blank line under a signature it asks for a block."""
    daemon = ScriptedDaemon(["x"])
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    await service.complete(query("x = |\n"))
    await service.complete(query("def f(a):\n    |\n", uri="file:///w/b.py"))
    await service.complete(query("def f(a):\n    b = a\n    |\n", uri="file:///w/c.py"))
    assert [list(r.sampling.stop) for r in daemon.requests] == [["\n"], [], ["\n"]]
    assert [r.sampling.max_tokens for r in daemon.requests] == [SETTINGS.max_tokens] * 3


async def test_a_blocks_later_lines_are_shown_while_the_model_was_sure_of_them() -> None:
    daemon = ScriptedDaemon(["b = a\n", "    c = b\n", "    return c"])
    # binary fractions (the wire holds float32); a model nobody measured: later lines need a least
    # token log-probability of -0.1 (LATER_CONSERVATIVE), the first line a mean of -0.5 (the gate's)
    lines = [(2, -0.125, -0.125), (3, -0.0625, -0.0625), (3, -0.0625, -0.25)]
    daemon.figures.lines.extend(
        pb.LineConfidence(tokens=t, mean_logprob=m, min_logprob=n) for t, m, n in lines
    )
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    outcome = await service.complete(query("def f(a):\n    |\n"))
    assert outcome.text == "b = a\n    c = b"
    whole = dataclasses.replace(SETTINGS, confidence="off")
    service = CompletionService(lambda: whole, daemon.stream)
    outcome = await service.complete(query("def f(a):\n    |\n"))
    assert outcome.text == "b = a\n    c = b\n    return c"


TOTAL = "def total(amount|, count):\n    return amount * count\n"


@pytest.mark.parametrize(
    ("document", "deltas", "text", "reason"),
    [
        # SmolLM2's replies at the e2e's rename: `def total(amount):, count):` is never shown
        (TOTAL, ["):\n", "    return amount"], None, "filtered (prefer_parsable)"),
        (TOTAL, ["):"], None, "filtered (prefer_parsable)"),
        # several lines that parse still do not fit inside a line
        ("x = foo(|)\n", ["a,\n", "    b"], None, "a block inside a line"),
        # one line is shown, less what the line already holds after the cursor
        ("x = foo(|)\n", ["a, b)"], "a, b", None),
        (TOTAL, ["_due"], "_due", None),
    ],
)
async def test_inside_a_line_one_line_is_shown_or_nothing(
    document: str, deltas: list[str], text: str | None, reason: str | None
) -> None:
    daemon = ScriptedDaemon(deltas)
    service = CompletionService(lambda: SETTINGS, daemon.stream)
    outcome = await service.complete(query(document))
    assert (outcome.text, outcome.reason) == (text, reason)
    assert list(daemon.requests[0].sampling.stop) == []  # the reply's later lines are judged, not cut
