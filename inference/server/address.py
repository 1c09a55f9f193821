"""Daemon addresses: ``unix:PATH`` or ``tcp:HOST:PORT``, parsed the same way by daemon and clients.

No torch and no grpc here: the language server and the CLI parse addresses without paying for either.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class AddressError(ValueError):
    """An address that is not ``unix:PATH`` or ``tcp:HOST:PORT``; the message names it."""


@dataclass(frozen=True)
class DaemonAddress:
    """Where a daemon listens. Exactly one of `unix_path` and (`host`, `port`) is set."""

    unix_path: Path | None = None
    host: str = ""
    port: int = 0

    @property
    def is_unix(self) -> bool:
        return self.unix_path is not None

    @property
    def is_loopback(self) -> bool:
        """True for unix sockets and for TCP on a loopback host (reachable from this machine only)."""
        if self.is_unix:
            return True
        if self.host.lower() in _LOOPBACK_NAMES:
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def grpc_target(self) -> str:
        """The target string grpc channels and servers understand."""
        if self.unix_path is not None:
            return f"unix:{self.unix_path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        if self.unix_path is not None:
            return f"unix:{self.unix_path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"tcp:{host}:{self.port}"


def parse_address(text: str) -> DaemonAddress:
    """Parses ``unix:PATH`` (relative paths are made absolute) or ``tcp:HOST:PORT`` (IPv6 in brackets).

    A bare path (starting with /, ./, ../ or ~) is read as a unix socket path, for convenience.
    """
    if text.startswith("unix:"):
        path = text[len("unix:") :]
        if not path:
            raise AddressError(f"expected unix:PATH, got {text!r}")
        return DaemonAddress(unix_path=Path(path).expanduser().absolute())
    if text.startswith("tcp:"):
        rest = text[len("tcp:") :]
        host, sep, port_text = rest.rpartition(":")
        if not sep or not host or not port_text.isdigit():
            raise AddressError(f"expected tcp:HOST:PORT, got {text!r}")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        port = int(port_text)
        if not 0 <= port <= 65535:
            raise AddressError(f"TCP port must be in 0..65535, got {text!r}")
        return DaemonAddress(host=host, port=port)
    if text.startswith(("/", "./", "../", "~")):
        return DaemonAddress(unix_path=Path(text).expanduser().absolute())
    raise AddressError(f"expected unix:PATH or tcp:HOST:PORT, got {text!r}")
