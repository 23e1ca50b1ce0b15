"""A fake OpenAI-compatible server on loopback that misbehaves on purpose: it answers chat and
completions requests (streamed or not) itself, no model behind it, and each request takes the
next behaviour from its queue (else ``default``).

Behaviours:
- ``ok``: a normal answer, ``answer(prompt)`` (default: ``"答：" + prompt[:8]``), with ``usage``
  (streamed: in a last chunk when the request asks ``stream_options.include_usage``).
- ``echo401`` / ``echo500``: that status with a body repeating the request's ``Authorization``
  header (as many gateways do).
- ``echo_stream``: a streamed answer that starts, then an error event repeating the header.
- ``drip``: a valid answer sent one byte every ``drip_s`` seconds (headers at once).
- ``flood``: an answer of ``flood_chars`` characters without spaces (streamed: pieces of
  ``piece_chars`` until the client goes away or the flood is sent).
- ``usage``: a normal answer whose ``usage`` is ``usage_override`` (absurd or negative counts).

It records every request (prompt, headers, whether streamed) and counts open streams, so a test
can see that a client stopped reading. Loopback only."""
from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from .loopback import LoopbackServer

BEHAVIOURS = ("ok", "echo401", "echo500", "echo_stream", "drip", "flood", "usage")


def _prompt(data: dict[str, Any]) -> str:
    if "messages" in data:
        return str(data["messages"][-1]["content"])
    return str(data.get("prompt", ""))


def _dumps(obj: Any) -> bytes:
    """UTF-8 JSON; escaped (``\\ud800``) when the text holds a lone surrogate, as a server
    answering with one must send it."""
    try:
        return json.dumps(obj, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(obj).encode()


class HostileServer:
    def __init__(self, answer: Callable[[str], str] | None = None) -> None:
        self.answer = answer or (lambda p: "答：" + p[:8])
        self.queue: deque[str] = deque()
        self.default = "ok"
        self.drip_s = 0.2
        self.flood_chars = 1_000_000
        self.flood_bodies: dict[tuple[bool, int], bytes] = {}
        self.piece_chars = 1_000
        self.piece_delay_s = 0.0
        self.usage_override: dict[str, Any] = {}
        self.requests: list[dict[str, Any]] = []
        self.open_streams = 0
        self.streams_ended = threading.Event()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:   # quiet
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                data = json.loads(body or b"{}")
                prompt = _prompt(data)
                chat = "messages" in data
                with server.lock:
                    behaviour = server.queue.popleft() if server.queue else server.default
                    server.requests.append({"prompt": prompt, "headers": dict(self.headers.items()),
                                            "stream": bool(data.get("stream")), "behaviour": behaviour,
                                            "body": data})
                auth = self.headers.get("Authorization", "")
                if behaviour in ("echo401", "echo500"):
                    status = 401 if behaviour == "echo401" else 500
                    msg = {"error": {"message": f"invalid credentials: received Authorization: {auth}",
                                     "request": {"headers": {"authorization": auth}}}}
                    return self._json(status, msg)
                text = self._text(behaviour, prompt)
                usage = {"prompt_tokens": len(prompt), "completion_tokens": len(text),
                         "total_tokens": len(prompt) + len(text)}
                if behaviour == "usage":
                    usage = {**usage, **server.usage_override}
                if data.get("stream"):
                    asked = (data.get("stream_options") or {}).get("include_usage")
                    return self._stream(chat, text, behaviour, auth, usage if asked else None)
                flood_key = (chat, server.flood_chars)
                if behaviour == "flood" and flood_key in server.flood_bodies:
                    return self._send(200, server.flood_bodies[flood_key])
                choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
                if chat:
                    choice["message"] = {"role": "assistant", "content": text}
                else:
                    choice["text"] = text
                payload = {"id": "x", "object": "chat.completion" if chat else "text_completion",
                           "created": int(time.time()), "model": data.get("model", "m"),
                           "choices": [choice], "usage": usage}
                raw = _dumps(payload)
                if behaviour == "flood":    # built once: a test can then measure its client alone
                    server.flood_bodies[flood_key] = raw
                if behaviour == "drip":
                    return self._drip(raw)
                return self._send(200, raw)

            def _text(self, behaviour: str, prompt: str) -> str:
                if behaviour == "flood":
                    return "洪" * server.flood_chars
                return server.answer(prompt)

            def _json(self, status: int, obj: Any) -> None:
                self._send(status, _dumps(obj))

            def _send(self, status: int, raw: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                try:
                    self.wfile.write(raw)
                    self.wfile.flush()
                except OSError:     # the client stopped reading (a capped flood)
                    self.close_connection = True

            def _drip(self, raw: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                try:
                    for i in range(len(raw)):
                        self.wfile.write(raw[i:i + 1])
                        self.wfile.flush()
                        time.sleep(server.drip_s)
                except OSError:
                    self.close_connection = True

            def _event(self, obj: Any) -> None:
                self.wfile.write(b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n")
                self.wfile.flush()

            def _chunk(self, chat: bool, piece: str, finish: str | None = None) -> dict[str, Any]:
                choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
                if chat:
                    choice["delta"] = {"content": piece} if piece else {}
                else:
                    choice["text"] = piece
                return {"id": "x", "object": "chat.completion.chunk" if chat else "text_completion",
                        "created": int(time.time()), "model": "m", "choices": [choice]}

            def _stream(self, chat: bool, text: str, behaviour: str, auth: str,
                usage: dict[str, Any] | None = None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.close_connection = True     # no length: the stream ends with the connection
                self.end_headers()
                with server.lock:
                    server.open_streams += 1
                    server.streams_ended.clear()
                try:
                    if behaviour == "echo_stream":
                        self._event(self._chunk(chat, text[:2]))
                        self._event({"error": {"message": f"upstream rejected Authorization: {auth}"}})
                        return
                    step = server.piece_chars if behaviour == "flood" else max(1, len(text) // 4)
                    for i in range(0, len(text), step):
                        self._event(self._chunk(chat, text[i:i + step]))
                        if behaviour == "drip" or server.piece_delay_s:
                            time.sleep(server.drip_s if behaviour == "drip" else server.piece_delay_s)
                    self._event(self._chunk(chat, "", "stop"))
                    if usage is not None:     # stream_options.include_usage: a last chunk without choices
                        self._event({**self._chunk(chat, ""), "choices": [], "usage": usage})
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except OSError:     # the client went away: what a bounded stream must do
                    pass
                finally:
                    with server.lock:
                        server.open_streams -= 1
                        if server.open_streams == 0:
                            server.streams_ended.set()

        self.loopback = LoopbackServer(Handler)
        self.server = self.loopback.server

    @property
    def url(self) -> str:
        return self.loopback.url

    def then(self, *behaviours: str) -> HostileServer:
        """Queue behaviours for the next requests, in order."""
        unknown = set(behaviours) - set(BEHAVIOURS)
        if unknown:
            raise ValueError(f"unknown behaviour(s) {sorted(unknown)}; known: {BEHAVIOURS}")
        with self.lock:
            self.queue.extend(behaviours)
        return self

    def close(self) -> None:
        self.loopback.stop()


def main() -> None:
    """``python -m tests.models.endpoints.hostile_server BEHAVIOUR [FLOOD_CHARS]``: a server in a
    process of its own (printing its URL), so that a test can measure its client's memory alone."""
    import sys

    server = HostileServer()
    server.default = sys.argv[1]
    if len(sys.argv) > 2:
        server.flood_chars = int(sys.argv[2])
    print(server.url, flush=True)
    sys.stdin.read()     # until the test closes our stdin
    server.close()


if __name__ == "__main__":
    main()
