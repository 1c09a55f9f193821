"""`codedraft daemon` and `codedraft complete` as real subprocesses, the way a user runs them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import grpc
import pytest

from codedraft.complete import split_at
from codedraft.values import FilePosition
from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.client import DaemonError, InferenceClient

CODEDRAFT = Path(sys.executable).parent / "codedraft"
SOURCE = "def add(a, b):\n    return \n\n\nprint(add(1, 2))\n"
# The endless model (8k context) does not end a reply to "x" before this many tokens: a stream that
# takes seconds, so it is live when SIGTERM comes and outlasts the daemon's drain.
LONG_PREFIX, ENDLESS_TOKENS = "x", 6000


def codedraft(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CODEDRAFT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


class WatchedDaemon:
    """A `codedraft daemon` subprocess whose stdout lines are collected as they come."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [str(CODEDRAFT), "daemon", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("editors connect with"):
                self._ready.set()
        self._ready.set()

    def wait_ready(self) -> None:
        assert self._ready.wait(120), "the daemon printed no readiness line"
        assert self.process.poll() is None, self.process.stderr.read() if self.process.stderr else ""

    def terminate(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=60)
        self._ready.wait(5)  # the reader thread has seen the last line once stdout closed
        return status


@pytest.fixture
def source_file(tmp_path: Path) -> Path:
    path = tmp_path / "calc.py"
    path.write_text(SOURCE)
    return path


@pytest.mark.slow
def test_daemon_serves_completes_refuses_a_second_and_cleans_up(
    endless_model_dir: Path, short_dir: Path, source_file: Path
) -> None:
    # a model that never stops by itself (nor loops), so the stream is surely live when SIGTERM comes
    socket_path = short_dir / "run" / "d.sock"
    daemon = WatchedDaemon(
        "--model",
        str(endless_model_dir),
        "--no-draft",
        "--max-new-tokens",
        str(ENDLESS_TOKENS),
        "--listen",
        f"unix:{socket_path}",
        "--drain-seconds",
        "0.2",
    )
    try:
        daemon.wait_ready()
        assert (
            daemon.lines[0]
            == f"codedraft daemon listening on unix:{socket_path} (loading {endless_model_dir} on auto)"
        )
        assert daemon.lines[1].startswith(
            "ready: endless (llama, 0.2M parameters, no draft model) on cpu float32, weights float16"
        )
        assert "loaded in" in daemon.lines[1]
        # The pool sized by the model: its 8,192-token context and two sessions of 4,096 beside it.
        assert (
            daemon.lines[2]
            == "KV pool: 16,384 tokens (1,024 blocks of 16; holds the context of 8,192 tokens)"
        )
        assert daemon.lines[3] == f"editors connect with: codedraft lsp --daemon unix:{socket_path}"
        assert oct(socket_path.stat().st_mode & 0o777) == "0o600"

        async def ask() -> tuple[str, str]:
            async with InferenceClient(f"unix:{socket_path}") as client:
                health = await client.health()
                result = await InferenceClient.collect(
                    client.complete(
                        pb.CompleteRequest(prefix="x = ", sampling=pb.SamplingParams(max_tokens=4))
                    )
                )
                return health, result.finish_reason_name

        assert asyncio.run(ask()) == ("SERVING", "length")  # the endless model never ends by itself

        second = codedraft("daemon", "--model", str(endless_model_dir), "--listen", f"unix:{socket_path}")
        assert second.returncode == 2
        assert second.stderr.strip().splitlines() == [
            f"codedraft: error: another codedraft daemon (pid {daemon.process.pid}) is already running on "
            f"{socket_path}; stop it or choose another --listen address"
        ]

        completed = codedraft(
            "complete",
            f"{source_file}:2:12",
            "--daemon",
            f"unix:{socket_path}",
            "--json",
            "--max-tokens",
            "6",
        )
        assert completed.returncode == 0, completed.stderr
        answer = json.loads(completed.stdout)
        assert answer["daemon"] == f"unix:{socket_path}"
        assert (answer["completion"], answer["reason"], answer["finish_reason"]) == (
            "return total t",
            None,
            "length",
        )
        assert (answer["figures"]["prompt_tokens"], answer["figures"]["generated_tokens"]) == (37, 6)
        assert re.fullmatch("[0-9a-f]{32}", answer["request_id"])

        plain = codedraft(
            "complete", f"{source_file}:2", "--daemon", f"unix:{socket_path}", "--max-tokens", "3"
        )
        assert plain.returncode == 0, plain.stderr
        assert plain.stdout == "return to\n"

        async def sigterm_during_a_stream() -> DaemonError:
            long_request = pb.CompleteRequest(
                prefix=LONG_PREFIX, sampling=pb.SamplingParams(max_tokens=ENDLESS_TOKENS)
            )
            async with InferenceClient(f"unix:{socket_path}") as client:
                stream = client.complete(long_request)
                async for chunk in stream:
                    if chunk.text_delta:
                        daemon.process.send_signal(signal.SIGTERM)
                        break
                try:
                    async for _ in stream:
                        pass
                except DaemonError as error:
                    return error
            raise AssertionError("the stream was not cut by SIGTERM")

        cut = asyncio.run(sigterm_during_a_stream())
        assert cut.code == grpc.StatusCode.UNAVAILABLE and "shutting down (SIGTERM)" in cut.message
        assert daemon.process.wait(timeout=60) == 0
    finally:
        status = daemon.terminate()
    assert status == 0
    assert daemon.lines[-1] == f"codedraft daemon stopped (1 request(s) cut short); removed {socket_path}"
    assert not socket_path.exists()


@pytest.mark.slow
def test_complete_starts_a_daemon_for_the_call(
    tiny_model_dir: Path, short_dir: Path, source_file: Path
) -> None:
    env = {"XDG_RUNTIME_DIR": str(short_dir)}  # no daemon on the default socket
    argv = ("complete", f"{source_file}:2:12", "--model", str(tiny_model_dir), "--json", "--max-tokens", "4")
    result = codedraft(*argv, env=env)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["daemon"].startswith("unix:")
    # The cursor ends a statement's line: the request stops at the line's end (block_or_line), which
    # the tiny model writes as its second token.
    assert (answer["figures"]["prompt_tokens"], answer["figures"]["generated_tokens"]) == (37, 2)
    assert answer["finish_reason"] == "stop", answer
    assert not Path(answer["daemon"].removeprefix("unix:")).exists()


@pytest.mark.slow
def test_complete_says_why_the_daemon_started_for_it_failed(tmp_path: Path, source_file: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    result = codedraft("complete", f"{source_file}:2", "--model", str(broken), timeout=120)
    assert result.returncode == 2
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith(
        "codedraft: error: started for this call, the daemon exited: codedraft: error: "
        "unsupported architecture 'gpt2'"
    ), line


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["complete", "{file}:9:1"], "{file} has 5 lines; line 9 does not exist"),
        (["complete", "{file}:1:40"], "{file}:1 has 14 characters; column 40 is past its end"),
        (
            ["complete", "{file}:1:1", "--daemon", "unix:{dir}/none.sock"],
            "no daemon is listening on unix:{dir}/none.sock; start one with `codedraft daemon`",
        ),
        (
            ["complete", "{file}:1:1", "--daemon", "bogus"],
            "--daemon: expected unix:PATH or tcp:HOST:PORT, got 'bogus'",
        ),
        (
            ["daemon", "--model", "{model}", "--listen", "tcp:0.0.0.0:0"],
            "refusing to listen on tcp:0.0.0.0:0 without --token-file: it is reachable from other machines",
        ),
        (
            ["daemon", "--model", "{model}", "--listen", "tcp:nohost"],
            "--listen: expected tcp:HOST:PORT, got 'tcp:nohost'",
        ),
        (
            ["daemon", "--model", "{model}", "--draft-model", "{dir}/nodraft"],
            "--draft-model is missing: {dir}/nodraft is not a directory or a GGUF file",
        ),
    ],
)
def test_user_mistakes_get_one_line(
    argv: list[str], message: str, source_file: Path, short_dir: Path, tiny_model_dir: Path
) -> None:
    values = {"file": str(source_file), "dir": str(short_dir), "model": str(tiny_model_dir)}
    result = codedraft(*(a.format(**values) for a in argv))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [f"codedraft: error: {message.format(**values)}"]


@pytest.mark.slow
def test_a_model_that_cannot_load_is_one_clear_line(tmp_path: Path, short_dir: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    result = codedraft("daemon", "--model", str(broken), "--listen", f"unix:{short_dir}/d.sock")
    assert result.returncode == 2, result.stderr
    assert (
        result.stderr.strip().splitlines()[-1].startswith("codedraft: error: unsupported architecture 'gpt2'")
    )
    assert not (short_dir / "d.sock").exists()


@pytest.mark.parametrize(
    ("line", "column", "before"),
    [
        (1, 1, ""),
        (1, 6, "ab\x0ccd"),
        (2, 3, "ab\x0ccd\nef"),
        (2, None, "ab\x0ccd\nef"),
        (4, 1, "ab\x0ccd\nef\r\ngh\n"),
    ],
)
def test_positions_count_lines_as_editors_do(line: int, column: int | None, before: str) -> None:
    text = "ab\x0ccd\nef\r\ngh\n"
    assert split_at(text, FilePosition(Path("x.py"), line, column)) == (before, text[len(before) :])


def test_columns_count_code_points_not_bytes_nor_utf16_units() -> None:
    text = "x = '😀é'\n"  # the emoji: 4 bytes in UTF-8, 2 UTF-16 units, 1 code point
    assert split_at(text, FilePosition(Path("x.py"), 1, 7)) == ("x = '😀", "é'\n")
