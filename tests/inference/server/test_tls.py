"""TLS on the gRPC listener and the HTTP face: the right CA works; a wrong CA, plain text, a missing or
wrong token are refused with a message that says why; off loopback the daemon needs TLS and a token;
the token never appears in a log line."""

from __future__ import annotations

import logging
import ssl
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import grpc
import pytest

from inference.api.codedraft.v1 import inference_pb2 as pb
from inference.backends.local_model import ServeSettings, load_served_model
from inference.client import DaemonError, InferenceClient
from inference.config import EngineConfig
from inference.daemon_launcher import codedraft_command
from inference.http.face import HttpFace
from inference.server.address import DaemonAddress
from inference.server.grpc_server import GrpcServer
from inference.server.listen import ListenError
from inference.server.tls import ServerTls
from tests.fixtures.certificates import CertificateFiles, make_certificates

TOKEN = "tls-test-token-5f2a9c"
REQUEST = pb.CompleteRequest(prefix="def add(a, b):\n", sampling=pb.SamplingParams(max_tokens=4))


@dataclass
class TlsDaemon:
    daemon: GrpcServer
    face: HttpFace
    grpc_address: DaemonAddress
    http_url: str
    certs: CertificateFiles
    wrong_ca: Path


@pytest.fixture
async def tls_daemon(tiny_model_dir: Path, tmp_path: Path) -> AsyncIterator[TlsDaemon]:
    certs = make_certificates(tmp_path / "good")
    wrong = make_certificates(tmp_path / "other", ca_name="some other CA")
    tls = ServerTls.load(certs.cert, certs.key)
    daemon = GrpcServer(DaemonAddress(host="127.0.0.1", port=0), token=TOKEN, tls=tls)
    bound = await daemon.start()
    face = HttpFace(
        daemon.runner, DaemonAddress(host="127.0.0.1", port=0), TOKEN, ssl_context=tls.ssl_context()
    )
    http = await face.start()
    settings = ServeSettings(tiny_model_dir, None, "cpu", max_new_tokens=64)
    await daemon.serve_model(lambda: load_served_model(settings, EngineConfig(num_kv_blocks=64)))
    yield TlsDaemon(daemon, face, bound, f"https://127.0.0.1:{http.port}", certs, wrong.ca)
    await daemon.stop()
    await face.stop()


async def _complete(client: InferenceClient) -> str:
    async with client:
        await client.wait_ready(timeout=30)  # a guard against a hang: the daemon already serves
        return (await InferenceClient.collect(client.complete(REQUEST, timeout=10))).text


async def test_grpc_over_tls(tls_daemon: TlsDaemon, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    address, certs = tls_daemon.grpc_address, tls_daemon.certs
    text = await _complete(InferenceClient(address, TOKEN, tls_ca=certs.ca))
    assert text

    with pytest.raises(DaemonError, match="not signed by a CA you trust; check --tls-ca"):
        await _complete(InferenceClient(address, TOKEN, tls_ca=tls_daemon.wrong_ca))
    with pytest.raises(DaemonError, match="if the daemon uses TLS, connect with --tls-ca or --tls"):
        await _complete(InferenceClient(address, TOKEN))
    with pytest.raises(DaemonError, match="this daemon needs a token") as missing:
        async with InferenceClient(address, None, tls_ca=certs.ca) as client:
            await client.model_info()
    assert missing.value.code == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(DaemonError, match="wrong token") as wrong:
        async with InferenceClient(address, "not-the-token", tls_ca=certs.ca) as client:
            await client.model_info()
    assert wrong.value.code == grpc.StatusCode.UNAUTHENTICATED
    # every refusal left the daemon serving
    assert await _complete(InferenceClient(address, TOKEN, tls_ca=certs.ca)) == text
    assert caplog.records
    assert not [r for r in caplog.records if TOKEN in r.getMessage()]


async def test_http_face_over_tls(tls_daemon: TlsDaemon, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    good = ssl.create_default_context(cafile=str(tls_daemon.certs.ca))
    other = ssl.create_default_context(cafile=str(tls_daemon.wrong_ca))
    body = {"prompt": "x = ", "max_tokens": 3}
    headers = {"Authorization": f"Bearer {TOKEN}"}
    url = f"{tls_daemon.http_url}/v1/completions"
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json=body, headers=headers, ssl=good) as reply:
            assert reply.status == 200
            assert (await reply.json())["usage"]["completion_tokens"] == 3
        with pytest.raises(aiohttp.ClientConnectorCertificateError, match="certificate verify failed"):
            await session.post(url, json=body, headers=headers, ssl=other)
        with pytest.raises(aiohttp.ClientError):
            await session.post(url.replace("https://", "http://"), json=body, headers=headers)
        async with session.post(url, json=body, ssl=good) as reply:
            assert reply.status == 401
            assert "needs a token" in (await reply.json())["error"]["message"]
        async with session.post(url, json=body, headers={"Authorization": "Bearer nope"}, ssl=good) as reply:
            assert reply.status == 401
            assert "wrong token" in (await reply.json())["error"]["message"]
        async with session.post(url, json=body, headers=headers, ssl=good) as reply:
            assert reply.status == 200  # every refusal left the face serving
    assert not [r for r in caplog.records if TOKEN in r.getMessage()]


async def test_off_loopback_the_daemon_needs_tls_and_a_token(tmp_path: Path) -> None:
    with pytest.raises(ListenError, match="without TLS"):
        await GrpcServer(DaemonAddress(host="0.0.0.0", port=0), token=TOKEN).start()
    with pytest.raises(ListenError, match="without --token-file"):
        certs = make_certificates(tmp_path)
        await GrpcServer(
            DaemonAddress(host="0.0.0.0", port=0), tls=ServerTls.load(certs.cert, certs.key)
        ).start()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--listen", "tcp:0.0.0.0:0"], "without TLS (--tls-cert and --tls-key)"),
        (["--http", "tcp:0.0.0.0:0"], "refusing to listen on tcp:0.0.0.0:0 without TLS"),
        (["--tls-cert", "{cert}"], "--tls-cert and --tls-key go together"),
        (["--tls-cert", "{ca}", "--tls-key", "{ca}"], "do not form a usable pair"),
        (["--backend", "openai:http://127.0.0.1:9/v1"], "--backend needs --backend-model NAME"),
    ],
)
def test_the_daemon_command_refuses_unsafe_or_incomplete_flags(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    certs = make_certificates(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    argv = [f.format(cert=certs.cert, ca=certs.ca) for f in flags]
    done = subprocess.run(
        codedraft_command("daemon", "--token-file", str(token_file), *argv),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert message in done.stderr
    assert TOKEN not in done.stderr + done.stdout
