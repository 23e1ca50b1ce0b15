"""A test HTTP server on loopback, served from a daemon thread (the fault proxy and the hostile
server both run one)."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackServer:
    """``handler`` served on 127.0.0.1 at a free port until :meth:`stop`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL (``/v1``) of the server."""
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
