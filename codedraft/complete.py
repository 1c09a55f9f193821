"""``codedraft complete``: the suggestion an editor would show at a file position.

It goes through the language server's own completion service: the window around the cursor, the
prompt budgets fitted to the daemon's model, snippets from the workspace's index when ``codedraft
index`` made one, and the post-processing filters; so a user who tries it sees what the editor would.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from codedraft.daemon_flags import add_daemon_client_flags, daemon_for_call, wait_for_daemon
from codedraft.errors import CommandError
from codedraft.values import FilePosition, file_position, positive_int
from indexer.languages import language_for_path

if TYPE_CHECKING:
    from indexer.workspace import WorkspaceIndex
    from inference.api.codedraft.v1 import inference_pb2 as pb
    from inference.daemon_launcher import DaemonProcess
    from inference.server.address import DaemonAddress
    from lsp_server.completion.service import Retrieve

HELP = (
    "the suggestion an editor would show at FILE:LINE:COL (from 1; COL counts characters), with a "
    "running daemon or one started for it"
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "position",
        type=file_position,
        metavar="FILE:LINE:COL",
        help="where to complete: LINE and COL from 1, COL in Unicode characters (code points, not bytes "
        "nor the UTF-16 units of LSP positions); FILE:LINE alone: the end of the line",
    )
    parser.add_argument("--json", action="store_true", help="print the completion and its figures as JSON")
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        default=None,
        help="most tokens to generate (default: the language server's completion.maxTokens)",
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


def _retrieval(path: Path, text: str) -> tuple[Retrieve | None, str, WorkspaceIndex | None]:
    """Retrieval from the workspace's index when ``codedraft index`` made one (refreshed first, as the
    editor keeps it fresh), the file's path as the editor names it, and the index to close."""
    from codedraft.context import find_workspace
    from indexer.schema import default_db_path
    from indexer.workspace import WorkspaceIndex

    workspace = find_workspace(path, None)
    if not default_db_path(workspace).exists():
        return None, path.name, None
    index = WorkspaceIndex(workspace)
    index.refresh()
    return index.retrieve, index.relative_path(path), index


async def _complete(
    address: DaemonAddress,
    token: str | None,
    args: argparse.Namespace,
    text: str,
    offset: int,
    started: DaemonProcess | None,
) -> dict[str, object]:
    """The suggestion the editor would show at ``offset``: the language server's completion service
    (window, budgets, snippets, post-processing) over this daemon."""
    from indexer.positions import utf16_length
    from inference.api.codedraft.v1 import inference_pb2 as pb
    from inference.client import DaemonError, InferenceClient
    from lsp_server.completion.request import CompletionQuery
    from lsp_server.completion.service import CompletionService
    from lsp_server.config import CompletionSettings
    from lsp_server.daemon_supervisor import CANCEL_TIMEOUT_S, stream_error
    from lsp_server.model_room import ModelRoom

    path: Path = args.position.path.resolve()
    settings = CompletionSettings()
    if args.max_tokens is not None:
        settings = dataclasses.replace(settings, max_tokens=args.max_tokens)
    last = pb.CompleteChunk()
    async with InferenceClient(address, token=token, tls=args.tls, tls_ca=args.tls_ca) as client:
        try:
            await wait_for_daemon(client, started)
            room = ModelRoom.of(await client.model_info())
        except DaemonError as error:
            raise CommandError(f"the daemon at {address} answered {error}") from None

        async def stream(request: pb.CompleteRequest, timeout_s: float) -> AsyncIterator[pb.CompleteChunk]:
            nonlocal last
            try:
                async for chunk in client.complete(request, timeout=timeout_s):
                    last = chunk
                    yield chunk
            except DaemonError as error:
                raise stream_error(error) from None

        async def cancel(request_id: str) -> bool:
            try:
                return await client.cancel(request_id, timeout=CANCEL_TIMEOUT_S)
            except DaemonError:
                return False  # the suggestion stands; only its figures are lost

        retrieve, relative, index = await asyncio.to_thread(_retrieval, path, text)
        try:
            # with Cancel, a suggestion whose block ended early still gets the daemon's final figures
            service = CompletionService(lambda: settings, stream, retrieve, lambda: room, cancel)
            before = text[:offset]
            line = before.count("\n")
            column = utf16_length(before[before.rfind("\n") + 1 :])
            query = CompletionQuery(
                uri=path.as_uri(),
                path=relative,
                language=_language(path),
                text=text,
                offset=offset,
                line=line,
                column=column,
            )
            outcome = await service.complete(query)
        finally:
            if index is not None:
                index.close()
    # Only what the daemon said: no request sent, or a stream closed before its last chunk, is null.
    figures = outcome.figures
    return {
        "completion": outcome.text,
        "reason": outcome.reason,
        "finish_reason": (
            pb.FinishReason.Name(last.finish_reason).removeprefix("FINISH_REASON_").lower()
            if last.done
            else None
        ),
        "figures": None if figures is None else _figures_dict(figures),
        "snippets": [f"{s.path}:{s.start_line + 1}-{s.end_line + 1}" for s in outcome.snippets],
        "local_prompt": outcome.local,
        "request_id": last.request_id or None,
        "daemon": str(address),
    }


def _figures_dict(figures: pb.RequestFigures) -> dict[str, object]:
    """The daemon's figures as JSON, every field named (a 0 here is the daemon's own)."""
    from google.protobuf.json_format import MessageToDict

    return MessageToDict(figures, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)


def run(args: argparse.Namespace) -> int:
    position: FilePosition = args.position
    if not position.path.is_file():
        raise CommandError(f"no such file: {position.path}")
    try:
        text = position.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read {position.path} as UTF-8 text: {error}") from None
    prefix, _ = split_at(text, position)
    with daemon_for_call(args) as (address, token, started):
        result = asyncio.run(_complete(address, token, args, text, len(prefix), started))
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        if result["completion"] is None:
            print(f"no suggestion: {result['reason']}", file=sys.stderr)
        print(result["completion"] or "")
    return 0
