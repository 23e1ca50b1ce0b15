"""A small HTTP proxy between the client and a real server: it counts every request per prompt
(received, and answered in full) and injects the faults it is told to, one per request, in order.

Faults: ``429`` (with ``Retry-After``), ``500``, ``drop`` (the connection closed without an
answer), ``cut`` (the server's answer sent half and the connection closed), ``badjson`` (200
with a body that is not JSON), ``stall`` (no answer for 60 s). Loopback only."""
from __future__ import annotations

import http.client
import json
import threading
import time
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from .loopback import LoopbackServer

FAULTS = ("429", "500", "drop", "cut", "badjson", "stall")


def prompt_of(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    if "messages" in data:
        return str(data["messages"][-1]["content"])
    return str(data.get("prompt", ""))


class FaultProxy:
    def __init__(self, upstream: str, retry_after_s: int = 2):
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.retry_after_s = retry_after_s
        self.faults: deque[str] = deque()
        self.delay_s = 0.0
        self.received: Counter[str] = Counter()
        self.finished: Counter[str] = Counter()
        self.arrivals: list[tuple[float, str]] = []     # (time, prompt) of every request
        self.auth: set[str] = set()
        self.lock = threading.Lock()
        self.closing = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):   # quiet
                pass

            def do_GET(self):
                self._forward(b"")

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                prompt = prompt_of(body)
                with proxy.lock:
                    proxy.received[prompt] += 1
                    proxy.arrivals.append((time.monotonic(), prompt))
                    proxy.auth.add(self.headers.get("Authorization", ""))
                    fault = proxy.faults.popleft() if proxy.faults else None
                if fault == "429":
                    return self._send(429, b'{"error": {"message": "slow down"}}',
                                      {"Retry-After": str(proxy.retry_after_s)})
                if fault == "500":
                    return self._send(500, b'{"error": {"message": "boom"}}')
                if fault == "drop":
                    self.close_connection = True
                    return None
                if fault == "badjson":
                    return self._send(200, b'{"choices": [ this is not json')
                if fault == "stall":
                    proxy.closing.wait(60)
                    self.close_connection = True
                    return None
                if proxy.delay_s:
                    time.sleep(proxy.delay_s)
                self._forward(body, prompt, cut=fault == "cut")

            def _send(self, status, body, headers=None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def _forward(self, body, prompt=None, cut=False):
                con = http.client.HTTPConnection(*proxy.upstream, timeout=120)
                headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                con.request(self.command, self.path, body=body or None, headers=headers)
                resp = con.getresponse()
                data = resp.read()
                con.close()
                self.send_response(resp.status)
                self.send_header("Content-Type", resp.getheader("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if cut:
                    self.wfile.write(data[:len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)
                self.wfile.flush()
                if prompt is not None:
                    with proxy.lock:
                        proxy.finished[prompt] += 1

        self.loopback = LoopbackServer(Handler)
        self.server = self.loopback.server

    @property
    def url(self) -> str:
        return self.loopback.url

    def reset(self) -> None:
        with self.lock:
            self.faults.clear()
            self.received.clear()
            self.finished.clear()
            self.arrivals.clear()
            self.auth.clear()
            self.delay_s = 0.0

    def close(self) -> None:
        self.closing.set()
        self.loopback.stop()
