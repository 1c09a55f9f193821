"""The real engine behind the daemon: `AsyncEngine` (the engine's asyncio face) as an `InferenceBackend`."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

from inference.backends.protocol import BackendStats
from inference.engine.async_engine import AsyncEngine
from inference.engine.engine import LLMEngine
from inference.engine.sequence import Request, RequestOutput


class EngineBackend:
    """Adapts one `LLMEngine`, driven by an `AsyncEngine` step thread, to the servicer's protocol.

    Invariant: `_open` holds the ids whose `generate` iterator is open here, which is what `abort`
    reports as "still live".
    """

    def __init__(self, engine: LLMEngine, before_step: Callable[[], object] | None = None) -> None:
        self.engine = engine
        self._async = AsyncEngine(engine, before_step)
        self._open: set[str] = set()

    async def generate(self, request: Request) -> AsyncGenerator[RequestOutput, None]:
        """The request's outputs until the finished one; leaving early aborts it (AsyncEngine does)."""
        self._open.add(request.request_id)
        try:
            async for output in self._async.generate(request):
                yield output
        finally:
            self._open.discard(request.request_id)

    def abort(self, request_id: str) -> bool:
        self._async.abort(request_id)
        return request_id in self._open

    def stats(self) -> BackendStats:
        stats = self.engine.stats()
        return BackendStats(
            kv_blocks_total=stats.kv_blocks_total,
            kv_blocks_used=stats.kv_blocks_total - stats.kv_blocks_free,
            kv_blocks_cached=stats.kv_blocks_cached_idle,
            running=stats.running,
            waiting=stats.waiting,
            preemptions=stats.preemptions,
            kv_evictions=stats.kv_evictions,
        )

    async def close(self) -> None:
        await self._async.close()
