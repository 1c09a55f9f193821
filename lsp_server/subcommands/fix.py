"""``codedraft fix``: the agent loop that proposes a fix and verifies it with a check in a sandbox."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lsp_server.subcommands.errors import CommandError
from lsp_server.subcommands.values import add_daemon_client_flags, positive_int

if TYPE_CHECKING:
    from lsp_server.agent.loop import FixResult, FixTask
    from lsp_server.subcommands.complete import StartedDaemon

HELP = "fix FILE[:LINE] until CHECK passes in a sandboxed scratch copy; prints the verified diff"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="FILE[:LINE]", help="the file (and line, from 1) to fix")
    parser.add_argument(
        "--check", required=True, metavar="CMD", help="the command that must pass, e.g. 'pytest -x -q'"
    )
    parser.add_argument(
        "--steps", type=positive_int, default=4, help="most propose-check attempts (default: 4)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--workspace",
        type=Path,
        default=None,
        help="the workspace the check runs in (a scratch copy of it); default: the current directory",
    )
    parser.add_argument(
        "--time-limit", type=positive_int, default=120, help="seconds for the whole fix (default: 120)"
    )
    parser.add_argument(
        "--sandbox",
        choices=("auto", "bwrap", "unshare", "none"),
        default="auto",
        help="how checks are contained (default: auto, the best that works here)",
    )
    add_daemon_client_flags(parser)


def parse_target(text: str, workspace: Path) -> tuple[str, int | None]:
    """The workspace-relative file of ``FILE[:LINE]`` and its line (from 0), if one was given."""
    path_text, line = text, None
    head, _, tail = text.rpartition(":")
    if head and tail.isdigit():
        if int(tail) < 1:
            raise CommandError(f"LINE counts from 1, got {text!r}")
        path_text, line = head, int(tail) - 1
    path = Path(path_text)
    if not path.is_file():
        raise CommandError(f"no such file: {path_text!r}")
    resolved = path.resolve()
    if not resolved.is_relative_to(workspace):
        raise CommandError(f"{path_text!r} is outside the workspace {workspace}")
    return resolved.relative_to(workspace).as_posix(), line


def build_task(args: argparse.Namespace) -> FixTask:
    from lsp_server.agent.edits import Target
    from lsp_server.agent.loop import FixTask

    workspace = (args.workspace or Path.cwd()).resolve()
    if not workspace.is_dir():
        raise CommandError(f"--workspace {str(workspace)!r} is not a directory")
    relative, line = parse_target(args.target, workspace)
    lines = (workspace / relative).read_text(encoding="utf-8", errors="replace").split("\n")
    if line is not None and line >= len(lines):
        raise CommandError(f"{args.target!r}: the file has {len(lines)} lines")
    target = Target(relative, line, line) if line is not None else Target(relative, 0, len(lines) - 1)
    return FixTask(workspace, target, args.check, step_limit=args.steps, time_limit_s=float(args.time_limit))


async def _fix(
    args: argparse.Namespace, task: FixTask, address: str, started: StartedDaemon | None
) -> FixResult:
    import dataclasses

    from inference.client import DaemonError, InferenceClient
    from lsp_server.agent.loop import run_fix
    from lsp_server.agent.model_calls import daemon_generate, reply_token_limit, supports_tool_calls
    from lsp_server.agent.sandbox import Limits, Sandbox
    from lsp_server.subcommands.complete import _wait_started

    token = args.token_file.read_text().strip() if args.token_file else None
    async with InferenceClient(address, token=token, tls=args.tls, tls_ca=args.tls_ca) as client:
        try:
            if started is not None:
                await _wait_started(client, started)
            else:
                await client.wait_ready(timeout=10.0)
            info = await client.model_info(timeout=10.0)
            task = dataclasses.replace(task, use_tools=supports_tool_calls(info.model.path))

            def stream(request, timeout):  # type: ignore[no-untyped-def]
                return client.generate(request, timeout=timeout)

            def progress(message: str) -> None:
                if not args.json:
                    print(f"codedraft fix: {message}", file=sys.stderr, flush=True)

            generate = daemon_generate(stream, f"cli-fix-{os.getpid()}", max_tokens=reply_token_limit(info))
            sandbox = Sandbox(args.sandbox, Limits(wall_s=float(args.time_limit)))
            return await run_fix(task, generate, sandbox, progress)
        except DaemonError as error:
            raise CommandError(f"the daemon at {address} answered {error}") from None


def run(args: argparse.Namespace) -> int:
    from inference.defaults import default_socket_path
    from inference.server.listen import socket_is_live
    from lsp_server.subcommands.complete import StartedDaemon

    task = build_task(args)
    if args.token_file is not None and not args.token_file.is_file():
        raise CommandError(f"cannot read --token-file {args.token_file}")
    if args.daemon is not None:
        result = asyncio.run(_fix(args, task, args.daemon, None))
    elif args.model is None and socket_is_live(default_socket_path()):
        result = asyncio.run(_fix(args, task, f"unix:{default_socket_path()}", None))
    else:
        started = StartedDaemon(args.model)
        try:
            result = asyncio.run(_fix(args, task, str(started.address), started))
        finally:
            started.stop()
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        print(result.report(), file=sys.stderr)
        sys.stdout.write(result.diff())
    return 0 if result.status != "no verified fix" else 1
