"""``codedraft fix``: the agent loop that proposes a fix and verifies it with a check in a sandbox."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from codedraft.daemon_flags import add_daemon_client_flags, daemon_for_call, wait_for_daemon
from codedraft.errors import CommandError
from codedraft.values import positive_int
from codedraft.workspace_root import workspace_of

if TYPE_CHECKING:
    from inference.daemon_launcher import DaemonProcess
    from inference.server.address import DaemonAddress
    from lsp_server.agent.loop import FixResult, FixTask

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
        help="the workspace the check runs in (a scratch copy of it); default: the git repository "
        "that holds FILE, else FILE's folder",
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


def parse_target(text: str) -> tuple[Path, int | None]:
    """The file of ``FILE[:LINE]``, resolved, and its line (from 0), if one was given."""
    path_text, line = text, None
    head, _, tail = text.rpartition(":")
    if head and tail.isdigit():
        if int(tail) < 1:
            raise CommandError(f"LINE counts from 1, got {text!r}")
        path_text, line = head, int(tail) - 1
    path = Path(path_text)
    if not path.is_file():
        raise CommandError(f"no such file: {path_text!r}")
    return path.resolve(), line


def build_task(args: argparse.Namespace) -> FixTask:
    from lsp_server.agent.edits import Target
    from lsp_server.agent.loop import FixTask

    path, line = parse_target(args.target)
    workspace = args.workspace.resolve() if args.workspace is not None else workspace_of(path)
    if not workspace.is_dir():
        raise CommandError(f"--workspace {str(workspace)!r} is not a directory")
    if not path.is_relative_to(workspace):
        raise CommandError(f"{args.target!r} is outside the workspace {workspace}")
    relative = path.relative_to(workspace).as_posix()
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    if line is not None and line >= len(lines):
        raise CommandError(f"{args.target!r}: the file has {len(lines)} lines")
    target = Target(relative, line, line) if line is not None else Target(relative, 0, len(lines) - 1)
    return FixTask(workspace, target, args.check, step_limit=args.steps, time_limit_s=float(args.time_limit))


async def _fix(
    args: argparse.Namespace,
    task: FixTask,
    address: DaemonAddress,
    token: str | None,
    started: DaemonProcess | None,
) -> FixResult:
    from inference.client import DaemonError, InferenceClient
    from lsp_server.agent.loop import run_fix
    from lsp_server.agent.model_calls import daemon_generate
    from lsp_server.agent.sandbox import Limits, Sandbox

    async with InferenceClient(address, token=token, tls=args.tls, tls_ca=args.tls_ca) as client:
        try:
            await wait_for_daemon(client, started)
            from lsp_server.agent.model_fit import reply_form
            from lsp_server.model_room import serving_model

            # The fix runs on the model that serves chat (a daemon may serve a completion model beside it).
            info = serving_model(await client.model_info(timeout=10.0), "generate_chat")
            form = reply_form(info.model.parameters, task.target)
            task = dataclasses.replace(task, use_tools=info.supports_tools, reply_form=form)

            def progress(message: str) -> None:
                if not args.json:
                    print(f"codedraft fix: {message}", file=sys.stderr, flush=True)

            generate = daemon_generate(client.generate, f"cli-fix-{os.getpid()}", reply_form=form)
            sandbox = Sandbox(args.sandbox, Limits(wall_s=float(args.time_limit)))
            return await run_fix(task, generate, sandbox, progress)
        except DaemonError as error:
            raise CommandError(f"the daemon at {address} answered {error}") from None


def run(args: argparse.Namespace) -> int:
    task = build_task(args)
    with daemon_for_call(args) as (address, token, started):
        result = asyncio.run(_fix(args, task, address, token, started))
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        print(result.report(), file=sys.stderr)
        sys.stdout.write(result.diff())
    return 0 if result.status != "no verified fix" else 1
