"""asyncio face of the engine, for the grpc.aio daemon.

`AsyncEngine(engine)` runs `engine.step()` in one background thread while there is work and sleeps
otherwise; `before_step`, when given, runs in that thread before each step and on each idle wake-up
(the CPU thread count, `inference/cpu_threads.py`, is set per thread). `generate(request)` is an
async iterator of `RequestOutput`s (text deltas, then a final output with figures and finish
reason). Leaving the iteration early (the client cancelled, the
consumer broke out of the loop, the task was cancelled) aborts the request, which stops within one
step and releases its KV blocks. `abort(request_id)` may be called from any thread.

    engine = AsyncEngine(LLMEngine.from_models(...))
    async for out in engine.generate(Request("r1", prompt="def f(")):
        send(out.delta)
    await engine.close()

Errors found when the request is added (`InvalidRequestError`, `ResourceExhaustedError`) are raised
by the first `__anext__`; errors while running arrive as a final output with `error` set.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncGenerator, Callable

from inference.engine.engine import LLMEngine
from inference.engine.errors import EngineError, StepFailedError
from inference.engine.sequence import FinishReason, Request, RequestMetrics, RequestOutput

log = logging.getLogger(__name__)


class AsyncEngine:
    """Drives an `LLMEngine` from a background thread and fans its outputs out to asyncio queues."""

    def __init__(self, engine: LLMEngine, before_step: Callable[[], object] | None = None) -> None:
        self.engine = engine
        self._before_step = before_step
        self._queues: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue[RequestOutput]]] = {}
        self._queues_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="codedraft-engine", daemon=True)
        self._thread.start()

    async def generate(self, request: Request) -> AsyncGenerator[RequestOutput, None]:
        """Stream a request's outputs; the last one has `finished` set."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[RequestOutput] = asyncio.Queue()
        with self._queues_lock:
            self._queues[request.request_id] = (loop, queue)
        finished = False
        try:
            self.engine.add_request(request)
            self._wake.set()
            while not finished:
                out = await queue.get()
                finished = out.finished
                yield out
        finally:
            if not finished:
                self.abort(request.request_id)
            with self._queues_lock:
                if self._queues.get(request.request_id, (None, None))[1] is queue:
                    del self._queues[request.request_id]

    def abort(self, request_id: str) -> None:
        """Stop a request within one step (thread-safe; unknown ids are ignored)."""
        self.engine.abort(request_id)
        self._wake.set()

    async def close(self) -> None:
        """Stop the background thread; streams still open end with an `error` output."""
        self._stopping = True
        self._wake.set()
        await asyncio.to_thread(self._thread.join)
        self._deliver(self._fail_open_streams(EngineError("engine shut down")))

    def _fail_open_streams(self, error: EngineError) -> list[RequestOutput]:
        with self._queues_lock:
            request_ids = list(self._queues)
        return [
            RequestOutput(request_id, "", [], True, RequestMetrics(), FinishReason.ERROR, error)
            for request_id in request_ids
        ]

    def _deliver(self, outputs: list[RequestOutput]) -> None:
        for out in outputs:
            with self._queues_lock:
                target = self._queues.get(out.request_id)
            if target is not None:
                loop, queue = target
                try:
                    loop.call_soon_threadsafe(queue.put_nowait, out)
                except RuntimeError:  # the consumer's loop is closed: nobody is listening
                    pass

    def _run(self) -> None:
        while not self._stopping:
            if self._before_step is not None:
                try:
                    self._before_step()
                except Exception:  # a broken hook must not stop the engine: serve without it
                    log.exception("the engine thread's before-step hook failed; running without it")
                    self._before_step = None
            if not self.engine.has_work():
                self._wake.wait(timeout=1.0)
                self._wake.clear()
                continue
            try:
                outputs = self.engine.step()  # a failing step ends its requests itself (`fail_all`)
            except Exception as error:  # a failure while failing them: end every stream rather than hang
                log.exception("engine step failed and its requests could not be ended")
                outputs = self._fail_open_streams(StepFailedError.caused_by(error))
                for out in outputs:
                    self.engine.abort(out.request_id)
            self._deliver(outputs)
