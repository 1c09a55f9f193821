"""Addresses and socket safety: private sockets, one daemon per path, stale sockets, TCP tokens."""

from __future__ import annotations

import socket
import stat
from pathlib import Path

import pytest

from inference.server.address import AddressError, DaemonAddress, parse_address
from inference.server.grpc_server import GrpcServer
from inference.server.listen import (
    ListenError,
    UnixSocketClaim,
    check_tcp_security,
    socket_is_live,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("unix:/run/x.sock", DaemonAddress(unix_path=Path("/run/x.sock"))),
        ("/run/y.sock", DaemonAddress(unix_path=Path("/run/y.sock"))),
        ("tcp:127.0.0.1:7070", DaemonAddress(host="127.0.0.1", port=7070)),
        ("tcp:[::1]:0", DaemonAddress(host="::1", port=0)),
        ("tcp:localhost:80", DaemonAddress(host="localhost", port=80)),
    ],
)
def test_addresses_parse(text: str, expected: DaemonAddress) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["tcp:host", "tcp::80", "tcp:h:99999", "unix:", "daemon.sock", "http://x"])
def test_bad_addresses_name_themselves(text: str) -> None:
    with pytest.raises(AddressError, match=repr(text).replace("[", r"\[")):
        parse_address(text)


def test_loopback_and_targets() -> None:
    assert DaemonAddress(host="127.0.0.1", port=1).is_loopback
    assert DaemonAddress(host="::1", port=1).is_loopback
    assert DaemonAddress(host="localhost", port=1).is_loopback
    assert not DaemonAddress(host="0.0.0.0", port=1).is_loopback
    assert not DaemonAddress(host="example.org", port=1).is_loopback
    assert DaemonAddress(host="::1", port=5).grpc_target() == "[::1]:5"
    assert str(DaemonAddress(host="::1", port=5)) == "tcp:[::1]:5"


def test_tcp_beyond_loopback_needs_a_token_and_tls() -> None:
    with pytest.raises(ListenError, match="without --token-file"):
        check_tcp_security(DaemonAddress(host="0.0.0.0", port=7070), None, tls=True)
    with pytest.raises(ListenError, match=r"without TLS \(--tls-cert and --tls-key\)"):
        check_tcp_security(DaemonAddress(host="0.0.0.0", port=7070), "secret")
    check_tcp_security(DaemonAddress(host="0.0.0.0", port=7070), "secret", tls=True)
    check_tcp_security(DaemonAddress(host="127.0.0.1", port=7070), None)


async def test_socket_is_private_single_and_removed_on_stop(short_dir: Path) -> None:
    path = short_dir / "run" / "d.sock"
    first = GrpcServer(DaemonAddress(unix_path=path))
    await first.start()
    try:
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert stat.S_ISSOCK(path.lstat().st_mode)
        assert stat.S_IMODE(path.lstat().st_mode) == 0o600
        assert socket_is_live(path)
        second = GrpcServer(DaemonAddress(unix_path=path))
        with pytest.raises(ListenError, match=r"another codedraft daemon \(pid \d+\) is already running on"):
            await second.start()
        assert socket_is_live(path), "the second daemon must not steal or remove the socket"
    finally:
        await first.stop()
    assert not path.exists()
    assert not (path.parent / "d.sock.lock").exists()


def test_a_live_listener_without_lock_is_refused(short_dir: Path) -> None:
    path = short_dir / "other.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    try:
        with pytest.raises(ListenError, match="a daemon is already listening on"):
            UnixSocketClaim(path).acquire()
        assert path.exists()
    finally:
        listener.close()


async def test_a_stale_socket_is_replaced(short_dir: Path) -> None:
    path = short_dir / "d.sock"
    crashed = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    crashed.bind(str(path))
    crashed.close()  # the file stays, nobody listens: what a killed daemon leaves behind
    assert path.exists() and not socket_is_live(path)
    daemon = GrpcServer(DaemonAddress(unix_path=path))
    await daemon.start()
    try:
        assert socket_is_live(path)
    finally:
        await daemon.stop()
    assert not path.exists()


def test_a_regular_file_is_never_removed(short_dir: Path) -> None:
    path = short_dir / "notes.txt"
    path.write_text("keep me")
    with pytest.raises(ListenError, match="exists and is not a socket"):
        UnixSocketClaim(path).acquire()
    assert path.read_text() == "keep me"
