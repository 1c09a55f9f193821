"""Where the daemon listens, made safe: private unix sockets, one daemon per socket, tokens on TCP.

A unix socket's parent folder is created 0700 and the socket itself 0600, so only this user can
connect. A lock file next to the socket (``flock``, released by the kernel even when the daemon
crashes) and a connect attempt make a second daemon on the same path fail with a clear message
instead of stealing the socket; a stale socket left by a crashed daemon is removed.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

from inference.server.address import DaemonAddress

log = logging.getLogger(__name__)

# Permission bits masked while grpc binds the socket: it is created 0600, never briefly wider.
_SOCKET_UMASK = 0o177


class ListenError(Exception):
    """The daemon cannot listen where asked; the message is one line saying why and what to do."""


class UnixSocketClaim:
    """Exclusive use of one unix socket path for the daemon's lifetime.

    Invariant: while claimed, this process holds the ``flock`` on ``PATH.lock``; `release` removes the
    socket (only if it is still the one this daemon bound) and the lock file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self._lock_fd: int | None = None
        self._socket_inode: int | None = None

    def acquire(self) -> None:
        """Create the parent folder, take the lock, and clear a stale socket; raise ListenError if taken."""
        _make_private_parent(self.path.parent)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            who = f" (pid {holder})" if holder else ""
            raise ListenError(
                f"another codedraft daemon{who} is already running on {self.path}; "
                "stop it or choose another --listen address"
            ) from None
        self._lock_fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            self._clear_stale_socket()
        except ListenError:
            self.release()
            raise

    def _clear_stale_socket(self) -> None:
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(mode):
            raise ListenError(
                f"{self.path} exists and is not a socket; remove it or choose another --listen path"
            )
        if socket_is_live(self.path):
            raise ListenError(
                f"a daemon is already listening on {self.path}; stop it or choose another --listen address"
            )
        log.info("removing the stale socket %s left by a daemon that is gone", self.path)
        self.path.unlink()

    @contextlib.contextmanager
    def binding(self) -> Iterator[None]:
        """Wrap the call that binds the socket: it is created with mode 0600, then remembered as ours."""
        previous = os.umask(_SOCKET_UMASK)
        try:
            yield
        finally:
            os.umask(previous)
        os.chmod(self.path, 0o600)
        self._socket_inode = os.lstat(self.path).st_ino

    def release(self) -> None:
        """Remove the socket this daemon bound and the lock file; safe to call twice."""
        if self._socket_inode is not None:
            with contextlib.suppress(FileNotFoundError):
                if os.lstat(self.path).st_ino == self._socket_inode:
                    self.path.unlink()
            self._socket_inode = None
        if self._lock_fd is not None:
            with contextlib.suppress(FileNotFoundError):
                self.lock_path.unlink()
            os.close(self._lock_fd)
            self._lock_fd = None


def socket_is_live(path: Path, timeout: float = 1.0) -> bool:
    """True when something accepts connections on the unix socket `path`."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        return False
    except OSError as error:
        # A full backlog (EAGAIN) still means a live listener.
        return error.errno in (errno.EAGAIN, errno.EWOULDBLOCK)
    finally:
        probe.close()
    return True


def _make_private_parent(folder: Path) -> None:
    """Create missing folders 0700; refuse a socket folder another user owns."""
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True)
        os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
        return
    if not folder.is_dir():
        raise ListenError(f"cannot create a socket in {folder}: it is not a directory")
    owner = folder.stat().st_uid
    sticky = folder.stat().st_mode & stat.S_ISVTX
    if owner != os.getuid() and not sticky:
        raise ListenError(f"cannot create a socket in {folder}: the folder belongs to another user")


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def check_tcp_security(address: DaemonAddress, token: str | None) -> None:
    """Refuse TCP on a non-loopback host without a token: anyone on the network could use the model."""
    if not address.is_unix and not address.is_loopback and token is None:
        raise ListenError(
            f"refusing to listen on {address} without --token-file: it is reachable from other machines"
        )
