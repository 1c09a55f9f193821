"""``codedraft complete``: one completion at a file position, from the daemon."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from indexer.languages import language_for_path
from inference.defaults import default_socket_path
from inference.server.address import AddressError, DaemonAddress, parse_address
from lsp_server.subcommands.errors import CommandError
from lsp_server.subcommands.values import FilePosition, add_daemon_client_flags, file_position, positive_int

if TYPE_CHECKING:
    from inference.client import InferenceClient

HELP = "complete the code at FILE:LINE:COL (counting from 1) with a running daemon, or one started for it"
DAEMON_START_TIMEOUT_S = 300.0
# A running daemon may still be loading its model.
RUNNING_DAEMON_READY_TIMEOUT_S = 120.0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("position", type=file_position, metavar="FILE:LINE:COL", help="where to complete")
    parser.add_argument("--json", action="store_true", help="print the completion and its figures as JSON")
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        default=None,
        help="most tokens to generate (default: the daemon's)",
    )
    add_daemon_client_flags(parser)


def split_at(text: str, position: FilePosition) -> tuple[str, str]:
    """The text before and after LINE:COL (both from 1; COL counts characters; no COL: end of line).

    Lines end at "\n" only, as editors count them (a form feed inside a line does not start one).
    """
    lines = text.split("\n")
    if position.line > len(lines):
        shown = len(lines) - 1 if text.endswith("\n") else len(lines)
        raise CommandError(f"{position.path} has {shown} lines; line {position.line} does not exist")
    content = lines[position.line - 1].removesuffix("\r")
    column = len(content) + 1 if position.column is None else position.column
    if column > len(content) + 1:
        raise CommandError(
            f"{position.path}:{position.line} has {len(content)} characters; column {column} is past its end"
        )
    offset = sum(len(line) + 1 for line in lines[: position.line - 1]) + column - 1
    return text[:offset], text[offset:]


def _language(path: Path) -> str:
    spec = language_for_path(path)
    return spec.name if spec is not None else path.suffix.lstrip(".")


class StartedDaemon:
    """A daemon started on a private socket for one call; `stop` ends it with SIGTERM."""

    def __init__(self, model: Path | None) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="codedraft-complete-"))
        self.address = DaemonAddress(unix_path=self.folder / "daemon.sock")
        self.log_path = self.folder / "daemon.log"
        argv = [sys.executable, "-m", "lsp_server.cli", "--log-level", "warning", "daemon"]
        argv += ["--listen", str(self.address)]
        if model is not None:
            argv += ["--model", str(model), "--no-draft"]
        with open(self.log_path, "w", encoding="utf-8") as log_file:
            self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log_file)

    def failure(self) -> str | None:
        """Why the daemon exited (the last line it logged), or None while it runs."""
        if self.process.poll() is None:
            return None
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        return lines[-1] if lines else f"exit status {self.process.returncode}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


async def _wait_started(client: InferenceClient, started: StartedDaemon) -> None:
    """Wait for a daemon started for this call, failing fast with its own message if it exits."""
    from inference.client import DaemonError

    loop = asyncio.get_running_loop()
    deadline = loop.time() + DAEMON_START_TIMEOUT_S
    while loop.time() < deadline:
        failure = started.failure()
        if failure is not None:
            raise CommandError(f"the daemon started for this call exited: {failure}")
        with contextlib.suppress(DaemonError):
            await client.wait_ready(timeout=0.5)
            return
    raise CommandError(f"the daemon started for this call was not ready after {DAEMON_START_TIMEOUT_S:g} s")


async def _complete(
    address: DaemonAddress,
    token: str | None,
    args: argparse.Namespace,
    prefix: str,
    suffix: str,
    started: StartedDaemon | None,
) -> dict[str, object]:
    from google.protobuf.json_format import MessageToDict

    from inference.api.codedraft.v1 import inference_pb2 as pb
    from inference.client import DaemonError, InferenceClient

    path: Path = args.position.path
    request = pb.CompleteRequest(
        session_id=f"cli-{os.getpid()}",
        prefix=prefix,
        suffix=suffix,
        path=path.name,
        language=_language(path),
        sampling=pb.SamplingParams(max_tokens=args.max_tokens),
    )
    async with InferenceClient(address, token=token) as client:
        try:
            if started is not None:
                await _wait_started(client, started)
            else:
                await client.wait_ready(timeout=RUNNING_DAEMON_READY_TIMEOUT_S)
            pieces: list[str] = []
            last = pb.CompleteChunk()
            chunks: AsyncIterator[pb.CompleteChunk] = client.complete(request)
            async for chunk in chunks:
                pieces.append(chunk.text_delta)
                if not args.json:
                    sys.stdout.write(chunk.text_delta)
                    sys.stdout.flush()
                last = chunk
        except DaemonError as error:
            raise CommandError(f"the daemon at {address} answered {error}") from None
    text = "".join(pieces)
    if not args.json and not text.endswith("\n"):
        sys.stdout.write("\n")
    return {
        "completion": text,
        "finish_reason": pb.FinishReason.Name(last.finish_reason).removeprefix("FINISH_REASON_").lower(),
        "figures": MessageToDict(
            last.figures, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        ),
        "request_id": last.request_id,
        "daemon": str(address),
    }


def run(args: argparse.Namespace) -> int:
    from inference.server.listen import socket_is_live

    position: FilePosition = args.position
    if not position.path.is_file():
        raise CommandError(f"no such file: {position.path}")
    try:
        text = position.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read {position.path} as UTF-8 text: {error}") from None
    prefix, suffix = split_at(text, position)
    token = None
    if args.token_file is not None:
        try:
            token = args.token_file.read_text(encoding="utf-8").strip()
        except OSError as error:
            raise CommandError(f"cannot read --token-file {args.token_file}: {error}") from None
    if args.daemon is not None:
        try:
            address = parse_address(args.daemon)
        except AddressError as error:
            raise CommandError(f"--daemon: {error}") from None
        if address.unix_path is not None and not socket_is_live(address.unix_path):
            raise CommandError(f"no daemon is listening on {address}; start one with `codedraft daemon`")
        result = asyncio.run(_complete(address, token, args, prefix, suffix, None))
    elif args.model is None and socket_is_live(default_socket_path()):
        address = DaemonAddress(unix_path=default_socket_path())
        result = asyncio.run(_complete(address, token, args, prefix, suffix, None))
    else:
        started = StartedDaemon(args.model)
        try:
            result = asyncio.run(_complete(started.address, token, args, prefix, suffix, started))
        finally:
            started.stop()
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0
