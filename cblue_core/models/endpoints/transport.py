"""The transport under the endpoints' async client: each attempt gets a wall-clock deadline from
connecting to its last byte, and no body is read past a byte cap.

httpx's own timeout bounds the wait for each next byte, so a server dripping one byte a second
holds a request for ever; and the client reads a whole body before parsing it (an error body
too), so a 50 MB answer lands in memory whole. Both are bounded here, below the ``openai``
client, so that its retries see an attempt that ran out of time as the timeout it is (and retry
it with their own back-off), and every body it reads is bounded.
"""
from __future__ import annotations

import asyncio
import ssl
import urllib.request
from collections.abc import AsyncIterator
from functools import cache
from urllib.parse import urlsplit

import httpx2

# The openai client's own defaults (openai._constants), restated: a transport of our own does not
# inherit them.
LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)


class BodyTooLarge(httpx2.ReadError):
    """A body ran past the byte cap: what came before the cap was passed on, the rest never read."""


class BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, deadline: float, max_bytes: int, seconds: float,
                 request: httpx2.Request) -> None:
        self.inner, self.deadline, self.max_bytes = inner, deadline, max_bytes
        self.seconds, self.request = seconds, request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self.inner.__aiter__()
        seen = 0
        while True:
            try:
                async with asyncio.timeout_at(self.deadline):
                    chunk = await chunks.__anext__()
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise httpx2.ReadTimeout(f"no complete answer within {self.seconds:g} s",
                                         request=self.request) from None
            seen += len(chunk)
            if seen > self.max_bytes:
                kept = chunk[:len(chunk) - (seen - self.max_bytes)]
                if kept:
                    yield kept
                raise BodyTooLarge(f"the body is over {self.max_bytes} bytes", request=self.request)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class DeadlineTransport(httpx2.AsyncBaseTransport):
    """``inner`` with ``seconds`` of wall-clock time per attempt (connect, send, headers and the
    whole body) and at most ``max_bytes`` of body; running out of time is an
    ``httpx2.ReadTimeout``, as httpx's own timeouts are."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, seconds: float, max_bytes: int) -> None:
        self.inner, self.seconds, self.max_bytes = inner, seconds, max_bytes

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        deadline = asyncio.get_running_loop().time() + self.seconds
        try:
            async with asyncio.timeout_at(deadline):
                response = await self.inner.handle_async_request(request)
        except TimeoutError:
            raise httpx2.ReadTimeout(f"no answer within {self.seconds:g} s", request=request) from None
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        return httpx2.Response(status_code=response.status_code, headers=response.headers,
                               stream=BoundedStream(response.stream, deadline, self.max_bytes, self.seconds,
                                                    request),
                               extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


def environment_proxy(url: str) -> str | None:
    """The proxy the environment (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``)
    names for ``url``, as the default httpx client would use it: a transport of our own is not
    given the environment's proxies by httpx."""
    parts = urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


@cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (the certifi bundle, or ``SSL_CERT_FILE``/``SSL_CERT_DIR`` as
    set when first used), made once per process: loading the bundle took 40-80 ms, which every
    run paid again with a client of its own (about 3 ms a request over a 32-prompt run)."""
    return httpx2.create_ssl_context()


def deadline_transport(base_url: str, seconds: float, max_bytes: int) -> DeadlineTransport:
    inner = httpx2.AsyncHTTPTransport(verify=tls_context(), limits=LIMITS, proxy=environment_proxy(base_url))
    return DeadlineTransport(inner, seconds, max_bytes)
