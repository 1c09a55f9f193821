"""The gRPC listener's lifecycle: listen, report health while the model loads, serve, drain on SIGTERM.

`GrpcServer.start()` binds first and answers at once: health is NOT_SERVING and model calls get
UNAVAILABLE until `serve_model` has loaded the model (in a thread, so health checks are answered
meanwhile) and attached it. `stop()` refuses new calls, lets live streams finish within a grace period,
ends the rest with UNAVAILABLE, stops the server and removes the unix socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from inference.backends.served_model import ServedModel
from inference.backends.served_models import ServedModels
from inference.defaults import DEFAULT_DRAIN_SECONDS, DEFAULT_MAX_REQUEST_BYTES
from inference.server.address import DaemonAddress
from inference.server.grpc_auth import TokenAuthInterceptor
from inference.server.listen import ListenError, UnixSocketClaim, check_tcp_security
from inference.server.request_runner import RequestRunner
from inference.server.servicer import SERVICE_NAME, InferenceServicer
from inference.server.tls import ServerTls

log = logging.getLogger(__name__)

_SERVING = health_pb2.HealthCheckResponse.SERVING
_NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


Loaded = ServedModel | ServedModels
"""What a loader gives: one model serving every task, or the models routed by task."""


def _in_daemon_thread(load: Callable[[], Loaded]) -> asyncio.Future[Loaded]:
    """Run `load` in a daemon thread: a SIGTERM during a long load must not wait for it to finish."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Loaded] = loop.create_future()

    def settle(result: Loaded | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def work() -> None:
        try:
            result = load()
        except BaseException as error:
            outcome: tuple[Loaded | None, BaseException | None] = (None, error)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # the loop closed: the daemon stopped meanwhile
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="codedraft-model-load", daemon=True).start()
    return future


class GrpcServer:
    """One gRPC server serving `InferenceServicer`, health and reflection on one address."""

    def __init__(
        self,
        address: DaemonAddress,
        token: str | None = None,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        drain_seconds: float = DEFAULT_DRAIN_SECONDS,
        tls: ServerTls | None = None,
    ) -> None:
        self.address = address
        self.tls = tls
        self.token = token
        self.max_request_bytes = max_request_bytes
        self.drain_seconds = drain_seconds
        self.runner = RequestRunner()
        self.servicer = InferenceServicer(self.runner)
        self.health = health.aio.HealthServicer()
        self._server: grpc.aio.Server | None = None
        self._claim: UnixSocketClaim | None = None

    async def start(self) -> DaemonAddress:
        """Bind and start serving health (NOT_SERVING); returns the bound address (TCP port resolved)."""
        check_tcp_security(self.address, self.token, self.tls is not None)
        interceptors = [TokenAuthInterceptor(self.token)] if self.token else []
        server = grpc.aio.server(
            interceptors=interceptors,
            options=[
                ("grpc.max_receive_message_length", self.max_request_bytes),
                ("grpc.so_reuseport", 0),
            ],
        )
        server.add_generic_rpc_handlers((self.servicer.method_handlers(),))
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        for service in (health.OVERALL_HEALTH, SERVICE_NAME):
            await self.health.set(service, _NOT_SERVING)
        bound = self.address
        if self.address.unix_path is not None:
            self._claim = UnixSocketClaim(self.address.unix_path)
            self._claim.acquire()
            try:
                with self._claim.binding():
                    server.add_insecure_port(self.address.grpc_target())
            except RuntimeError as error:
                self._claim.release()
                raise ListenError(f"cannot listen on {self.address}: {error}") from None
        else:
            try:
                if self.tls is not None:
                    port = server.add_secure_port(self.address.grpc_target(), self.tls.grpc_credentials())
                else:
                    port = server.add_insecure_port(self.address.grpc_target())
            except RuntimeError as error:
                raise ListenError(f"cannot listen on {self.address}: {error} (is the port in use?)") from None
            bound = DaemonAddress(host=self.address.host, port=port)
        await server.start()
        self._server = server
        self.address = bound
        log.info("listening on %s", bound)
        return bound

    async def serve_model(self, load: Callable[[], Loaded]) -> float:
        """Load the model (or the models routed by task) with `load` in a thread, then serve it;
        returns the load time in seconds."""
        started = time.perf_counter()
        loaded = await _in_daemon_thread(load)
        self.runner.attach(loaded)
        assert self.runner.models is not None
        for _, served in self.runner.models.roles():
            served.info.max_request_bytes = self.max_request_bytes
        for service in (health.OVERALL_HEALTH, SERVICE_NAME):
            await self.health.set(service, _SERVING)
        return time.perf_counter() - started

    async def stop(self, reason: str = "shutdown") -> int:
        """Drain and stop; returns how many streams had to be cut. Safe to call twice."""
        if self._server is None:
            return 0
        log.info("%s: draining %d live request(s)", reason, len(self.runner.live))
        await self.health.enter_graceful_shutdown()
        stopped = await self.runner.drain(self.drain_seconds, reason)
        server, self._server = self._server, None
        await server.stop(grace=1.0)
        await self.runner.close()
        if self._claim is not None:
            self._claim.release()
            self._claim = None
        return stopped
