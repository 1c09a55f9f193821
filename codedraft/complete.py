"""``codedraft complete``: one completion at a file position, from the daemon."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from codedraft.daemon_flags import add_daemon_client_flags, daemon_for_call, wait_for_daemon
from codedraft.errors import CommandError
from codedraft.values import FilePosition, file_position, positive_int
from indexer.languages import language_for_path

if TYPE_CHECKING:
    from inference.daemon_process import DaemonProcess
    from inference.server.address import DaemonAddress

HELP = "complete the code at FILE:LINE:COL (counting from 1) with a running daemon, or one started for it"


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


async def _complete(
    address: DaemonAddress,
    token: str | None,
    args: argparse.Namespace,
    prefix: str,
    suffix: str,
    started: DaemonProcess | None,
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
            await wait_for_daemon(client, started)
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
    position: FilePosition = args.position
    if not position.path.is_file():
        raise CommandError(f"no such file: {position.path}")
    try:
        text = position.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read {position.path} as UTF-8 text: {error}") from None
    prefix, suffix = split_at(text, position)
    with daemon_for_call(args) as (address, token, started):
        result = asyncio.run(_complete(address, token, args, prefix, suffix, started))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0
