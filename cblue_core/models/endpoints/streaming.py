"""One answer streamed piece by piece (the Live page's ``st.write_stream``), bounded.

The ``openai`` client's stream blocks in a socket read for as long as the server says nothing
(``timeout_s`` is between bytes), so the caller could neither stop it nor notice that the
visitor left. A reader thread reads the stream into a small queue; the caller's side takes
pieces from it, polling at least every :data:`POLL_S`, and stops when the answer reaches
``max_chars``, when ``max_seconds`` have passed since the request, or when ``should_stop`` says
so (the page's check that its session ended or a rerun was asked). Stopping shuts the socket
down, which wakes the reader and tells the server at once, instead of waiting for the client's
read timeout.
"""
from __future__ import annotations

import math
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .client import EndpointFailure, describe, request_kwargs, sync_client, token_count
from .config import EndpointConfig

ENV_MAX_CHARS = "CBLUE_STUDIO_LIVE_MAX_CHARS"
ENV_MAX_SECONDS = "CBLUE_STUDIO_LIVE_MAX_SECONDS"
# Far above a demo's answer (max_tokens 512 is about 800 Chinese characters, a minute on a CPU
# server) and low enough that one answer cannot hold a server thread or a browser tab for long.
DEFAULT_MAX_CHARS = 20_000
DEFAULT_MAX_SECONDS = 180.0
POLL_S = 0.5
# Pieces read ahead of the caller: the reader waits when the caller is slower (a flood cannot
# fill the memory while the page draws).
QUEUE_PIECES = 256

# How a stream ended, when it did not end with the endpoint's finish reason.
CHARS, SECONDS, STOPPED = "chars", "seconds", "stopped"


@dataclass(frozen=True)
class StreamLimits:
    max_chars: int = DEFAULT_MAX_CHARS
    max_seconds: float = DEFAULT_MAX_SECONDS

    def __post_init__(self) -> None:
        if self.max_chars < 1 or not (self.max_seconds > 0 and math.isfinite(self.max_seconds)):
            raise ValueError(f"stream limits must be positive (got {self.max_chars} characters, "
                             f"{self.max_seconds} s)")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> StreamLimits:
        """``$CBLUE_STUDIO_LIVE_MAX_CHARS`` and ``$CBLUE_STUDIO_LIVE_MAX_SECONDS``, else the defaults;
        a value that is not a positive number is a ValueError naming its variable."""
        env = os.environ if environ is None else environ
        chars = _positive(env, ENV_MAX_CHARS, int, DEFAULT_MAX_CHARS)
        return cls(int(chars), float(_positive(env, ENV_MAX_SECONDS, float, DEFAULT_MAX_SECONDS)))


def _positive(env: Mapping[str, str], name: str, kind: type, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = 0
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"${name} is {raw!r}, expected a positive {'whole ' if kind is int else ''}number")
    return value


@dataclass
class StreamOutcome:
    """What one stream did, filled in as it goes (read it after the iteration)."""

    chars: int = 0
    seconds: float = 0.0
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    stopped: str | None = None       # CHARS, SECONDS or STOPPED when a bound or the caller ended it
    failure: str | None = None       # the one-line failure when it raised EndpointFailure

    def ended(self, limits: StreamLimits) -> str:
        """How it ended, in words (for the page and the audit trail)."""
        if self.failure is not None:
            return "failed"
        if self.stopped == CHARS:
            return f"cut at {limits.max_chars:,} characters"
        if self.stopped == SECONDS:
            return f"stopped after {limits.max_seconds:g} s"
        if self.stopped == STOPPED:
            return f"stopped by the page after {self.seconds:.1f} s (the visitor left or asked again)"
        return f"finished ({self.finish_reason})" if self.finish_reason else "ended"


class AnswerStream:
    """The answer's text piece by piece (iterate once), with :attr:`outcome` filled in.

    Raises :class:`EndpointFailure` when the request fails or the stream ends before the
    endpoint said why it stopped (a stream cut short); a bound reached or ``should_stop`` is not
    a failure: the iteration ends and :attr:`outcome` says why. ``should_stop`` is called at
    every piece and at least every second while none comes; it may also raise (Streamlit's own
    stop), and the response is shut either way. ``flush_s`` gathers the pieces that arrive
    within that many seconds into one (a page redraws the whole answer at each)."""

    def __init__(self, cfg: EndpointConfig, prompt: str, client: Any = None, *,
                 limits: StreamLimits | None = None, should_stop: Callable[[], bool] | None = None,
                 flush_s: float = 0.0) -> None:
        self.cfg, self.prompt, self.client = cfg, prompt, client
        self.limits = limits or StreamLimits()
        self.should_stop = should_stop or (lambda: False)
        self.flush_s = flush_s
        self.outcome = StreamOutcome()
        self._pieces: queue.Queue[tuple[str, Any]] = queue.Queue(QUEUE_PIECES)
        self._stop = threading.Event()
        self._response: Any = None
        self._lock = threading.Lock()
        self._started = self._ended = False
        self._start = 0.0

    def __iter__(self) -> Iterator[str]:
        if self._started:
            raise RuntimeError("an answer stream is read once")
        self._started = True
        own = self.client is None
        client = self.client or sync_client(self.cfg)   # a missing key raises here, before any thread
        start = self._start = time.monotonic()
        reader = threading.Thread(target=self._read, args=(client, own), name=f"live-stream-{self.cfg.name}",
                                  daemon=True)
        reader.start()
        try:
            yield from self._take(start)
        finally:
            self.close()
            self._ended = True

    @property
    def started(self) -> bool:
        """Whether the iteration began (the request may have been sent)."""
        return self._started

    def close(self) -> None:
        """Stop reading and shut the connection (from any thread; idempotent). A stream closed
        before it ended was stopped by its caller, and its outcome says so."""
        if self._started and not self._ended:
            out = self.outcome
            out.seconds = time.monotonic() - self._start
            if out.stopped is None and out.failure is None and out.finish_reason is None:
                out.stopped = STOPPED
        self._stop.set()
        with self._lock:
            response = self._response
        if response is not None:
            _shut(response)

    def _take(self, start: float) -> Iterator[str]:
        out = self.outcome
        deadline = start + self.limits.max_seconds
        pending: list[str] = []
        flushed = time.monotonic()
        while True:
            try:
                stop = self.should_stop()
            except BaseException:
                out.stopped = STOPPED
                raise
            if stop:
                out.stopped = STOPPED
                break
            now = time.monotonic()
            if now >= deadline:
                out.stopped = SECONDS
                break
            wait = min(POLL_S, deadline - now)
            if pending:
                wait = max(0.0, min(wait, flushed + self.flush_s - now))
            try:
                kind, value = self._pieces.get(timeout=wait)
            except queue.Empty:
                kind, value = "idle", None
            if kind == "text":
                allowed = self.limits.max_chars - out.chars
                piece = value[:allowed]
                out.chars += len(piece)
                pending.append(piece)
                if len(value) > allowed:
                    out.stopped = CHARS
                    break
            elif kind == "finish":
                out.finish_reason = value
            elif kind == "usage":
                out.prompt_tokens, out.completion_tokens = value
            elif kind == "error":
                failure = self._failure(value)
                out.failure = str(failure)
                if pending:
                    yield "".join(pending)
                if failure is value:
                    raise value
                raise failure from value
            elif kind == "end":
                break
            if pending and time.monotonic() - flushed >= self.flush_s:
                yield "".join(pending)
                pending, flushed = [], time.monotonic()
        if pending:
            yield "".join(pending)
        if out.stopped is None and out.finish_reason is None:
            out.failure = (f"endpoint {self.cfg.name!r} ({self.cfg.public_url}): the answer stream ended after "
                           f"{out.chars} characters without a finish reason (cut short)")
            raise EndpointFailure(out.failure)

    def _failure(self, exc: BaseException) -> BaseException:
        """The EndpointFailure a read error means (anything else is a bug: raised as it is)."""
        import httpx2  # the openai client's transport
        import openai

        cfg, received = self.cfg, self.outcome.chars
        if isinstance(exc, (openai.OpenAIError, ValueError)) and not received:
            return EndpointFailure(describe(cfg, exc))
        if not isinstance(exc, (openai.OpenAIError, ValueError, httpx2.HTTPError, httpx2.StreamError, OSError)):
            return exc
        # describe() redacts the key out of whatever the endpoint's error said
        return EndpointFailure(describe(cfg, exc, received=received))

    def _put(self, item: tuple[str, Any]) -> bool:
        while not self._stop.is_set():
            try:
                self._pieces.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _read(self, client: Any, own: bool) -> None:
        stream = None
        try:
            kw = request_kwargs(self.cfg, self.prompt)
            api = client.chat.completions if self.cfg.mode == "chat" else client.completions
            # the counts come in a last chunk without choices, only when asked for
            stream = api.create(stream=True, stream_options={"include_usage": True}, **kw)
            with self._lock:
                self._response = stream.response
            if self._stop.is_set():
                return
            for chunk in stream:
                usage = getattr(chunk, "usage", None)
                if usage is not None and not self._put(("usage", (
                        token_count(getattr(usage, "prompt_tokens", None)),
                        token_count(getattr(usage, "completion_tokens", None))))):
                    return
                for choice in getattr(chunk, "choices", None) or []:
                    if self.cfg.mode == "chat":
                        delta = getattr(getattr(choice, "delta", None), "content", None)
                    else:
                        delta = getattr(choice, "text", None)
                    if isinstance(delta, str) and delta and not self._put(("text", delta)):
                        return
                    reason = getattr(choice, "finish_reason", None)
                    if reason and not self._put(("finish", str(reason))):
                        return
                if self._stop.is_set():
                    return
            self._put(("end", None))
        except Exception as exc:  # noqa: BLE001 - handed to the caller's thread, which raises it
            if not self._stop.is_set():     # a stop shuts the socket: the read error that follows is ours
                self._put(("error", exc))
        finally:
            try:
                if stream is not None:
                    stream.close()
            finally:
                if own:
                    client.close()


def _shut(response: Any) -> None:
    """Shut the response's socket down: a read blocked in another thread returns at once and the
    server sees the connection end (closing the response alone waits for that read)."""
    stream = getattr(response, "extensions", {}).get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass     # already closed by the reader


def stream_answer(cfg: EndpointConfig, prompt: str, client: Any = None, *, limits: StreamLimits | None = None,
                  should_stop: Callable[[], bool] | None = None, flush_s: float = 0.0) -> AnswerStream:
    """The answer's text piece by piece as the endpoint streams it (for ``st.write_stream``),
    bounded by ``limits`` and stopped by ``should_stop``: see :class:`AnswerStream`."""
    return AnswerStream(cfg, prompt, client, limits=limits, should_stop=should_stop, flush_s=flush_s)
