"""Runs one command as the root of its own process tree: bounded output, killed as a whole on time.

The command is started without ``fork()``: CPython's subprocess uses ``vfork()`` only when the child
changes no ids, so a command that must run as another user drops to it through ``setpriv``, in the
started program. A forking ``Popen`` in a process whose gRPC threads run (the ``codedraft fix``
client, the language server) makes gRPC's fork handlers print "skipping fork() handlers" to the
user's terminal, once per check, and holds every page of the parent's memory for a moment.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from typing import IO

OUTPUT_HEAD, OUTPUT_TAIL = 16_384, 48_000


def run_killing_tree(
    argv: list[str], cwd: str | None, env: dict[str, str], user: int | None, wall_s: float
) -> tuple[int | None, str, bool]:
    """Runs ``argv`` in a new session (as ``user`` when given) for at most ``wall_s`` seconds.

    Returns the exit status (None when it was killed for time), the start and end of its output,
    and whether it timed out. Whatever is left of its process group is killed when it returns.
    """
    setpriv = shutil.which("setpriv") if user is not None else None
    if setpriv is not None:
        argv = [setpriv, f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *argv]
    # Without setpriv, Popen changes the ids in its own child code (a fork; never a preexec_fn, which
    # is unsafe with threads).
    by_popen = user if setpriv is None else None
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        user=by_popen,
        group=by_popen,
        extra_groups=[] if by_popen is not None else None,
    )
    collected = BoundedOutput()
    assert process.stdout is not None
    reader = threading.Thread(target=collected.read_all, args=(process.stdout,), daemon=True)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=wall_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    # The session's process group goes; the sandboxes' PID namespaces take the rest with their init.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    reader.join(timeout=5)
    process.stdout.close()
    return (None if timed_out else process.returncode), collected.text(), timed_out


class BoundedOutput:
    """The start and the end of a stream, however long it is (the middle is counted, not kept)."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def read_all(self, stream: IO[bytes]) -> None:
        for block in iter(lambda: os.read(stream.fileno(), 65536), b""):
            room = OUTPUT_HEAD - len(self.head)
            self.head += block[: max(0, room)]
            self.tail += block[max(0, room) :]
            if len(self.tail) > OUTPUT_TAIL:
                self.dropped += len(self.tail) - OUTPUT_TAIL
                del self.tail[: len(self.tail) - OUTPUT_TAIL]

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes left out ...]\n" if self.dropped else ""
        return bytes(self.head).decode(errors="replace") + middle + bytes(self.tail).decode(errors="replace")
