"""A real ``transformers serve`` on the tiny Llama of tests/models (loopback, a free port,
offline), started once per session, and a fault proxy in front of it per test."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cblue_core.models.endpoints.config import EndpointConfig

from .fault_proxy import FaultProxy

START_TIMEOUT_S = 240
LOOPBACK = ("127.0.0.1", "::1", "localhost")   # the tiny model loads in seconds; a busy shared machine takes longer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Loopback only (the served model and the proxy); any other address fails the test.
    Replaces tests/models' fixture of the same name, which refuses every connection."""
    connect, create = socket.socket.connect, socket.create_connection

    def check(address) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if host not in LOOPBACK:
            raise AssertionError(f"network access attempted: {address}")

    def loopback_connect(self, address, *args):
        check(address)
        return connect(self, address, *args)

    def loopback_create(address, *args, **kwargs):
        check(address)
        return create(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", loopback_connect)
    monkeypatch.setattr(socket, "create_connection", loopback_create)


class Server:
    def __init__(self, url: str, model: str):
        self.url, self.model = url, model


@pytest.fixture(scope="session")
def served(tiny, tmp_path_factory) -> Server:
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    exe = Path(sys.executable).with_name("transformers")
    cmd = [str(exe) if exe.exists() else "transformers", "serve", str(tiny.lm_chat), "--host", "127.0.0.1",
           "--port", str(port), "--device", "cpu", "--log-level", "warning"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"transformers serve exited with {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"transformers serve did not answer within {START_TIMEOUT_S} s")
            time.sleep(0.5)
        yield Server(f"http://127.0.0.1:{port}", str(tiny.lm_chat))
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def proxy(served):
    p = FaultProxy(served.url)
    yield p
    p.close()


def endpoint(proxy: FaultProxy, served: Server, name: str = "tiny", **kw) -> EndpointConfig:
    settings = {"mode": "chat", "max_concurrency": 4, "timeout_s": 20.0, "max_retries": 2,
                "max_tokens": 6, "temperature": 0.0, **kw}
    return EndpointConfig(name=name, base_url=proxy.url, model=served.model, **settings)


def write_endpoints(path: Path, configs: list[EndpointConfig]) -> Path:
    lines = []
    for c in configs:
        lines.append(f"[endpoints.{c.name}]")
        for key in ("base_url", "model", "mode", "api_key_env"):
            value = getattr(c, key)
            if value is not None:
                lines.append(f'{key} = "{value}"')
        for key in ("max_concurrency", "timeout_s", "max_retries", "max_tokens", "temperature"):
            lines.append(f"{key} = {getattr(c, key)}")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
