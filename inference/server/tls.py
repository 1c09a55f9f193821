"""TLS for the daemon's listeners (gRPC and HTTP) and for the clients that connect to them.

A daemon given ``--tls-cert``/``--tls-key`` serves both listeners over TLS with that pair. A client
trusts ``--tls-ca`` (a PEM bundle, e.g. a team's private CA) or, without it, the system's store.
No torch here; grpc is imported only by the functions that build grpc credentials.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class TlsError(ValueError):
    """A certificate, key or CA file that cannot be used; the message names the file."""


def _read(path: Path, what: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise TlsError(f"cannot read {what} {path}: {error.strerror or error}") from None
    if b"-----BEGIN" not in data:
        raise TlsError(f"{what} {path} is not a PEM file")
    return data


@dataclass(frozen=True)
class ServerTls:
    """A certificate chain and its private key, as PEM bytes."""

    cert_chain: bytes
    private_key: bytes
    cert_path: Path
    key_path: Path

    @classmethod
    def load(cls, cert: Path, key: Path) -> ServerTls:
        """Read and check the pair (the key must match the certificate)."""
        tls = cls(_read(cert, "--tls-cert"), _read(key, "--tls-key"), cert, key)
        tls.ssl_context()  # fails now, with the file names, rather than at the first connection
        return tls

    def ssl_context(self) -> ssl.SSLContext:
        """A server-side context for the HTTP face."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        try:
            context.load_cert_chain(self.cert_path, self.key_path)
        except (ssl.SSLError, OSError) as error:
            raise TlsError(
                f"--tls-cert {self.cert_path} and --tls-key {self.key_path} "
                f"do not form a usable pair: {error}"
            ) from None
        return context

    def grpc_credentials(self) -> Any:
        """grpc server credentials for the gRPC listener."""
        import grpc

        return grpc.ssl_server_credentials([(self.private_key, self.cert_chain)])


def client_root_certificates(ca: Path | None) -> bytes | None:
    """The PEM roots a client trusts: `ca`'s, or None for the system store."""
    return _read(ca, "--tls-ca") if ca is not None else None


def client_ssl_context(ca: Path | None) -> ssl.SSLContext:
    """An HTTPS client context that trusts `ca` (or the system store) and checks host names."""
    context = ssl.create_default_context()
    if ca is not None:
        _read(ca, "--tls-ca")
        context = ssl.create_default_context(cafile=str(ca))
    return context
