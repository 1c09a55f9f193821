"""Containment: real attempts from inside a check, with bubblewrap and with the unshare fallback."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_server.agent.process_tree import OUTPUT_HEAD, OUTPUT_TAIL
from lsp_server.agent.sandbox import CheckRun, Limits, Sandbox, backend_works
from lsp_server.agent.scratch import ScratchCopy

BACKENDS = [
    pytest.param("bwrap", marks=pytest.mark.skipif(not backend_works("bwrap"), reason="no working bwrap")),
    pytest.param(
        "unshare", marks=pytest.mark.skipif(not backend_works("unshare"), reason="no usable namespaces")
    ),
]


_MADE: list[Path] = []


@pytest.fixture(autouse=True)
def _remove_scratch() -> Iterator[None]:
    yield
    while _MADE:
        shutil.rmtree(_MADE.pop(), ignore_errors=True)


def run(tmp_path: Path, backend: str, command: str, **limits: float) -> CheckRun:
    # like ScratchCopy: a private temporary folder (bubblewrap, run as an unprivileged uid, must reach it)
    scratch = Path(tempfile.mkdtemp(prefix="codedraft-test-")) / "ws"
    scratch.mkdir()
    _MADE.append(scratch.parent)
    if not (tmp_path / "scratch").exists():
        (tmp_path / "scratch").symlink_to(scratch.parent)
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    sandbox = Sandbox(backend, Limits(**{"wall_s": 20, **limits}))  # type: ignore[arg-type]
    return sandbox.run(command, scratch, workspace, [], limits.get("wall_s", 20))


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_check_runs_in_the_scratch_copy_at_the_workspace_path(tmp_path: Path, backend: str) -> None:
    result = run(tmp_path, backend, "pwd; echo made > made.txt")
    assert result.passed, result.output
    assert result.backend == backend and result.warnings == []
    assert result.output.strip() == str(tmp_path / "workspace")
    assert (tmp_path / "scratch" / "ws" / "made.txt").read_text() == "made\n"
    assert not (tmp_path / "workspace" / "made.txt").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_outside_the_scratch_copy_fail_or_stay_inside(tmp_path: Path, backend: str) -> None:
    host_file = tmp_path / "host.txt"
    result = run(
        tmp_path,
        backend,
        f"echo pwned > {host_file}; echo $? ; touch /usr/pwned /etc/pwned /pwned; "
        f"mount -o remount,rw /usr 2>&1; echo pwned > /usr/pwned",
    )
    assert not host_file.exists()  # the sandbox's /tmp is its own
    assert not Path("/usr/pwned").exists() and not Path("/etc/pwned").exists() and not Path("/pwned").exists()
    # a read-only mount refuses a new file before permissions are looked at, whatever the uid
    assert "touch: cannot touch '/usr/pwned': Read-only file system" in result.output
    assert not result.passed


@pytest.mark.parametrize("backend", BACKENDS)
def test_secrets_outside_are_unreadable_and_the_environment_is_scrubbed(
    tmp_path: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-token-value")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock")
    result = run(tmp_path, backend, f"cat {secret}; cat /root/.bashrc /etc/shadow; env; ls -a ~")
    assert "hunter2-secret" not in result.output
    assert "ghp-token-value" not in result.output and "SSH_AUTH_SOCK" not in result.output
    assert "No such file or directory" in result.output
    assert "HOME=/tmp" in result.output


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_network_not_even_the_hosts_loopback(tmp_path: Path, backend: str) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[object] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                accepted.append(server.accept())
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept)
    thread.start()
    code = (
        "import socket\n"
        f"for address in [('127.0.0.1', {port}), ('1.1.1.1', 53), ('8.8.8.8', 443)]:\n"
        "    try:\n"
        "        socket.create_connection(address, timeout=2); print('CONNECTED', address)\n"
        "    except OSError as error: print('refused', address, error)\n"
    )
    result = run(tmp_path, backend, f'python3 -c "{code}"')
    done.set()
    thread.join()
    server.close()
    assert "CONNECTED" not in result.output and accepted == []
    assert [line.split()[0] for line in result.output.splitlines()] == ["refused"] * 3


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fork_bomb_is_capped_and_cleared(tmp_path: Path, backend: str) -> None:
    marker = f"bomb{os.getpid()}{backend}"
    counted = (
        "import os, time\nn = 0\nfor _ in range(500):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(60); os._exit(0)\n"
        "    n += 1\n"
        'print("forked", n, flush=True)\ntime.sleep(60)\n'
    )
    result = run(tmp_path, backend, f"exec python3 -c '{counted}' {marker}", wall_s=4, processes=32)
    forked = int(result.output.split("forked")[1].split()[0])
    assert forked < 32
    assert result.timed_out and not result.passed
    assert processes_with(marker) == []
    bomb = run(tmp_path, backend, f"bomb() {{ bomb | bomb & }}; bomb; sleep 30 # {marker}", wall_s=3)
    assert not bomb.passed
    time.sleep(0.5)
    assert processes_with(marker) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_and_file_size_are_limited(tmp_path: Path, backend: str) -> None:
    hog = "a = []\nwhile True: a.append(bytearray(64 << 20))"
    result = run(
        tmp_path,
        backend,
        f'python3 -c "{hog}"; head -c 8000000 /dev/zero > big; echo $?',
        memory_mb=512,
        file_mb=1,
    )
    assert "MemoryError" in result.output
    assert (tmp_path / "scratch" / "ws" / "big").stat().st_size == 1 << 20
    # bubblewrap's check gets SIGXFSZ's default action (the shell reports the kill); unshare's init is
    # Python, which ignores SIGXFSZ, and its check inherits that (the write fails with EFBIG instead)
    killed = {
        "bwrap": "File size limit exceeded",
        "unshare": "head: error writing 'standard output': File too large",
    }
    assert killed[backend] in result.output


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_sleeping_forever_is_killed_at_the_wall_clock_limit(tmp_path: Path, backend: str) -> None:
    started = time.monotonic()
    result = run(tmp_path, backend, "sleep 1000", wall_s=2)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 15
    assert "stopped after" in result.summary()


@pytest.mark.parametrize("backend", BACKENDS)
def test_background_processes_do_not_outlive_the_check(tmp_path: Path, backend: str) -> None:
    marker = f"77{os.getpid() % 1000}1"
    result = run(tmp_path, backend, f"(sleep {marker} &); nohup sleep {marker} >/dev/null 2>&1 & echo left")
    assert result.passed and "left" in result.output
    time.sleep(0.5)
    assert processes_with(f"sleep\0{marker}") == []


def test_without_any_isolation_the_result_says_so_loudly(tmp_path: Path) -> None:
    result = run(tmp_path, "none", "true")
    assert result.passed
    assert result.warnings == [
        "NO SANDBOX: neither bubblewrap nor unshare works here, so the check ran with only resource "
        "limits: it could reach the network and read or write the user's files"
    ]


def test_without_bubblewrap_auto_falls_back_to_unshare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_which = shutil.which
    monkeypatch.setattr("lsp_server.agent.sandbox._PROBED", {})  # probe again, without bwrap
    monkeypatch.setattr(
        "lsp_server.agent.sandbox.shutil.which", lambda name: None if name == "bwrap" else real_which(name)
    )
    result = run(tmp_path, "auto", f"cat {tmp_path / 'secret'}; touch /usr/x; echo done")
    assert result.backend == "unshare" and result.warnings == []
    assert f"cat: {tmp_path / 'secret'}: No such file or directory" in result.output
    assert "touch: cannot touch '/usr/x': Read-only file system" in result.output


def test_the_workspace_virtualenv_is_usable_and_read_only(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(workspace / ".venv")], check=True)
    (workspace / "m.py").write_text("VALUE = 41\n")
    scratch = ScratchCopy(workspace)
    try:
        result = Sandbox().run(
            "python -c 'import sys, m; print(sys.prefix, m.VALUE + 1)'; touch .venv/pwned",
            scratch.root, scratch.workspace, scratch.tools, 30,
        )  # fmt: skip
    finally:
        scratch.close()
    assert f"{workspace / '.venv'} 42" in result.output
    assert "Read-only file system" in result.output
    assert not (workspace / ".venv" / "pwned").exists()


def test_endless_output_keeps_its_start_and_end(tmp_path: Path) -> None:
    result = run(tmp_path, "auto", "echo first; yes filler | head -c 5000000; echo; echo last")
    assert result.output.startswith("first\n") and result.output.endswith("last\n")
    written = len("first\n") + 5_000_000 + len("\nlast\n")
    left_out = f"\n[... {written - OUTPUT_HEAD - OUTPUT_TAIL} bytes left out ...]\n"
    assert result.output[OUTPUT_HEAD : OUTPUT_HEAD + len(left_out)] == left_out
    assert len(result.output) == OUTPUT_HEAD + len(left_out) + OUTPUT_TAIL
