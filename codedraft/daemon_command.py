"""``codedraft daemon``: serve the inference engine over gRPC."""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codedraft import daemon_models
from codedraft.daemon_models import ModelPaths, resolve_model_dirs
from codedraft.errors import CommandError
from codedraft.values import positive_int
from inference.defaults import (
    DEFAULT_DRAIN_SECONDS,
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_MAX_REQUEST_MB,
    default_socket_path,
    megabytes,
)
from inference.server import daemon_options
from inference.server.address import AddressError, DaemonAddress, parse_address
from inference.server.daemon_options import NetworkOptions

HELP = "run the inference daemon (gRPC) on a model; the default model unless --model says"


def configure(parser: argparse.ArgumentParser) -> None:
    daemon_models.add_arguments(parser)
    parser.add_argument(
        "--listen",
        default=None,
        help=f"unix:PATH or tcp:HOST:PORT (default: unix:{default_socket_path()}); TCP on anything but "
        "loopback needs --token-file",
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        default=None,
        help="file holding the token every call must carry (metadata 'authorization: Bearer TOKEN')",
    )
    parser.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where the model runs (default: auto, CUDA when available); float32 on CPU, bfloat16 on CUDA",
    )
    pool = parser.add_mutually_exclusive_group()
    pool.add_argument(
        "--kv-tokens",
        type=positive_int,
        default=None,
        help="tokens the paged KV pool holds (default: sized by the model: its context and two sessions "
        "of 4,096 tokens beside it, within three quarters of the free memory)",
    )
    pool.add_argument(
        "--kv-cache-mb",
        type=positive_int,
        default=None,
        help="memory for the paged KV pool in MiB, per served model, instead of --kv-tokens",
    )
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="most CPU threads for each tensor operation (default: torch's choice, one per core); fewer "
        "while other processes hold cores, unless --fixed-threads",
    )
    parser.add_argument(
        "--fixed-threads",
        action="store_true",
        help="keep the CPU thread count at --threads (or one per core) even while other processes hold "
        "cores (default: follow the cores left free)",
    )
    parser.add_argument(
        "--max-new-tokens",
        type=positive_int,
        default=DEFAULT_MAX_NEW_TOKENS,
        help=f"largest max_tokens a request may ask for (default: {DEFAULT_MAX_NEW_TOKENS}, at most the "
        "model's context)",
    )
    parser.add_argument(
        "--max-request-mb",
        type=positive_int,
        default=DEFAULT_MAX_REQUEST_MB,
        help="largest request message in MB; bigger ones get RESOURCE_EXHAUSTED "
        f"(default: {DEFAULT_MAX_REQUEST_MB})",
    )
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=DEFAULT_DRAIN_SECONDS,
        help=f"on SIGTERM, how long running requests may finish before they are stopped (default: "
        f"{DEFAULT_DRAIN_SECONDS:g})",
    )
    daemon_options.add_arguments(parser)


def listen_address(args: argparse.Namespace) -> DaemonAddress:
    """The address `--listen` names (default: the user's private unix socket)."""
    if args.listen is None:
        return DaemonAddress(unix_path=default_socket_path())
    try:
        return parse_address(args.listen)
    except AddressError as error:
        raise CommandError(f"--listen: {error}") from None


def run(args: argparse.Namespace) -> int:
    from inference.daemon_launcher import TokenFileError, read_token_file
    from inference.openmp import set_openmp_spin
    from inference.server.listen import ListenError, check_tcp_security

    set_openmp_spin()  # before torch loads

    try:
        network = daemon_options.resolve(args)
    except daemon_options.OptionError as error:
        raise CommandError(str(error)) from None
    # With a remote engine there is no model to load here: the engine serves it.
    if network.remote is not None:
        if args.chat_model is not None:
            raise CommandError(
                "--chat-model needs a local model: with --backend the remote engine serves every task"
            )
        paths = ModelPaths(Path(network.remote.base_url), None)
    else:
        paths = resolve_model_dirs(args)
        for line in daemon_models.serving_lines(paths):
            print(line, flush=True)
    address = listen_address(args)
    if args.drain_seconds < 0:
        raise CommandError(f"--drain-seconds must be >= 0, got {args.drain_seconds}")
    try:
        token = read_token_file(args.token_file) if args.token_file is not None else None
    except TokenFileError as error:
        raise CommandError(f"--token-file: {error}") from None
    try:
        for listener in (address, network.http):
            if listener is not None:
                check_tcp_security(listener, token, network.tls is not None)
    except ListenError as error:
        raise CommandError(str(error)) from None
    return asyncio.run(_serve(args, paths, address, token, network))


def _loader(args: argparse.Namespace, paths: ModelPaths, network: NetworkOptions) -> Callable[[], Any]:
    """What loads the served models: the remote engine's tokenizer and limits, or the models."""
    from inference.backends.local_model import ServeSettings, load_served_models

    remote = network.remote
    if remote is None:
        settings = ServeSettings(
            paths.model,
            paths.draft,
            args.device,
            args.kv_cache_mb,
            args.max_new_tokens,
            weights=args.weights,
            adapt_threads=not args.fixed_threads,
            chat_dir=paths.chat,
            chat_fallback=paths.chat_fallback,
            kv_tokens=args.kv_tokens,
        )
        return lambda: load_served_models(settings, lambda line: print(line, flush=True))
    from inference.backends.remote_model import RemoteSettings, load_remote_model
    from inference.server.tls import client_ssl_context

    remote_settings = RemoteSettings(
        base_url=remote.base_url,
        model=remote.model,
        tokenizer_path=remote.tokenizer_path,
        api_key=remote.api_key,
        context_length=remote.context_length,
        prompt_format="tokens" if remote.prompt_format == "tokens" else "text",
        max_new_tokens=args.max_new_tokens,
        ssl=client_ssl_context(remote.ca) if remote.ca is not None else None,
    )
    return lambda: load_remote_model(remote_settings)


async def _serve(
    args: argparse.Namespace,
    paths: ModelPaths,
    address: DaemonAddress,
    token: str | None,
    network: NetworkOptions,
) -> int:
    # Torch and the engine load only here, after the flags were checked.
    from inference.http.face import HttpFace
    from inference.loading import ModelLoadError
    from inference.server.grpc_server import GrpcServer
    from inference.server.listen import ListenError

    if args.threads is not None:
        import torch

        torch.set_num_threads(args.threads)
    daemon = GrpcServer(address, token, megabytes(args.max_request_mb), args.drain_seconds, network.tls)
    face = None
    try:
        bound = await daemon.start()
        if network.http is not None:
            ssl_context = network.tls.ssl_context() if network.tls is not None else None
            face = HttpFace(daemon.runner, network.http, token, daemon.max_request_bytes, ssl_context)
            http_bound = await face.start()
            scheme = "https" if ssl_context is not None else "http"
            print(f"OpenAI API and /infill on {scheme}://{http_bound.grpc_target()}/v1", flush=True)
    except ListenError as error:
        await daemon.stop()
        raise CommandError(str(error)) from None
    loop = asyncio.get_running_loop()
    stop_requested = asyncio.Event()
    received: list[str] = []

    def request_stop(name: str) -> None:
        received.append(name)
        stop_requested.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, request_stop, signum.name)
    chat = f" and chat model {paths.chat}" if paths.chat is not None else ""
    serving = (
        f"remote engine {network.remote.base_url}"
        if network.remote
        else f"{paths.model}{chat} on {args.device}"
    )
    print(f"codedraft daemon listening on {bound} (loading {serving})", flush=True)
    loading = asyncio.ensure_future(daemon.serve_model(_loader(args, paths, network)))
    stopping = asyncio.ensure_future(stop_requested.wait())
    await asyncio.wait({loading, stopping}, return_when=asyncio.FIRST_COMPLETED)
    models = daemon.runner.models
    if loading.done() and loading.exception() is None and models is not None:
        info = models.completion.info
        if network.remote is not None:
            print(
                f"ready: {info.model.name} on {info.device}, loaded in {loading.result():.1f} s", flush=True
            )
        else:
            for line in daemon_models.ready_lines(models, loading.result()):
                print(line, flush=True)
        print(f"editors connect with: codedraft lsp --daemon {bound}", flush=True)
        await stopping
    stopped = await daemon.stop(received[0] if received else "shutdown")
    if face is not None:
        await face.stop()
    if loading.done() and (failure := loading.exception()) is not None:
        if isinstance(failure, ModelLoadError):
            raise CommandError(str(failure))
        raise failure
    if not loading.done():
        loading.cancel()
    removed = f"; removed {bound.unix_path}" if bound.unix_path is not None else ""
    print(f"codedraft daemon stopped ({stopped} request(s) cut short){removed}", flush=True)
    return 0
