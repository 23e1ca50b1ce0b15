"""One request to an endpoint with the official ``openai`` client, and one streamed answer.

The client's own retry machinery does the back-off: it retries connection errors, timeouts,
408/409/429 and 5xx answers ``max_retries`` times, waiting what ``Retry-After`` (or
``retry-after-ms``) says when it is at most two minutes, else 0.5 s doubling up to 8 s with
jitter (``openai._base_client``). What it does not retry, an answer that is not the JSON it
expects or a body that broke off or ran out of time while we read it, raises here so that the
runner can retry it the same way (:func:`is_retryable`).

Bounds on what an endpoint can make us do: every attempt has ``timeout_s`` of wall-clock time
from connecting to its last byte (:class:`DeadlineTransport`; httpx's own timeout only bounds the
gap between two bytes), and no body is read past :func:`byte_cap` bytes. Every text an endpoint
or the client library hands back reaches a message only through :func:`describe`, which redacts
the key.
"""
from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from .config import EndpointConfig, EndpointConfigError
from .redact import redact

LENGTH_CAP = "length_cap"       # the finish reason of an answer cut at ``answer_char_cap``
# Token counts above this are not counts (DuckDB's INTEGER ends at 2**31 - 1): stored as unknown.
MAX_TOKEN_COUNT = 10**9
# A body's bytes per answer character: JSON's \uXXXX escape takes 6 for one character (what
# Python servers send by default); the rest of the body (ids, usage, logprobs) gets the slack.
BYTES_PER_CHAR = 6
BODY_SLACK_BYTES = 64 * 1024
MAX_BODY_LINE = 160             # of an error body quoted in a failure line


class EndpointFailure(Exception):
    """A request that failed for good; its message is one line, without the key."""


class MalformedAnswer(EndpointFailure):
    """The endpoint answered 200 with something that is not a completion."""


class AnswerTooLarge(EndpointFailure):
    """The body ran past the byte cap before any answer text could be read from it."""


@dataclass(frozen=True)
class Answer:
    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    usage_unusable: bool = False    # the endpoint sent a count that is not one (stored as None)


def byte_cap(cfg: EndpointConfig) -> int:
    """The most bytes of one body read (an answer of ``answer_char_cap`` characters, escaped)."""
    return cfg.answer_char_cap * BYTES_PER_CHAR + BODY_SLACK_BYTES


def secrets_of(cfg: EndpointConfig) -> list[str]:
    """What must not appear in a message: the key (when its variable is set) and a password
    written into ``base_url``."""
    found: list[str] = []
    try:
        found.append(cfg.api_key())
    except EndpointConfigError:     # unset: nothing of it can be echoed
        pass
    password = urlsplit(cfg.base_url).password
    if password:
        found.append(password)
    return found


def client_kwargs(cfg: EndpointConfig) -> dict[str, Any]:
    return {"base_url": cfg.base_url, "api_key": cfg.api_key(), "max_retries": cfg.max_retries,
            "timeout": cfg.timeout_s}


def async_client(cfg: EndpointConfig) -> Any:
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient

    from .transport import deadline_transport

    http = DefaultAsyncHttpxClient(transport=deadline_transport(cfg.base_url, cfg.timeout_s, byte_cap(cfg)))
    return AsyncOpenAI(**client_kwargs(cfg), http_client=http)


def sync_client(cfg: EndpointConfig) -> Any:
    from openai import OpenAI

    return OpenAI(**client_kwargs(cfg))


def request_kwargs(cfg: EndpointConfig, prompt: str) -> dict[str, Any]:
    kw: dict[str, Any] = {"model": cfg.model, "max_tokens": cfg.max_tokens, "temperature": cfg.temperature}
    if cfg.mode == "chat":
        kw["messages"] = [{"role": "user", "content": prompt}]
    else:
        kw["prompt"] = prompt
    return kw


def token_count(value: Any) -> int | None:
    """A usage count as stored: an int from 0 to :data:`MAX_TOKEN_COUNT`, else unknown (None):
    a bool, float, string, negative or absurd count is no count."""
    if type(value) is int and 0 <= value <= MAX_TOKEN_COUNT:
        return value
    return None


def clean_text(text: str) -> str:
    """``text`` storable as UTF-8: a JSON ``\\ud800`` escape decodes to a lone surrogate, which
    DuckDB refuses (the whole batch of answers would not be stored); each becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def capped(cfg: EndpointConfig, answer: Answer) -> Answer:
    """``answer`` cut to ``answer_char_cap`` characters (finish reason ``"length_cap"``) when longer."""
    cap = cfg.answer_char_cap
    if len(answer.text) <= cap:
        return answer
    return replace(answer, text=answer.text[:cap], finish_reason=LENGTH_CAP)


def _field(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else None


def answer_of(cfg: EndpointConfig, payload: Any, latency_s: float) -> Answer:
    """The answer in a completion's parsed JSON body, checked: text a string (storable, cut to the
    cap), token counts sane integers or None (``usage_unusable`` says one was dropped)."""
    choices = _field(payload, "choices")
    if not choices or not isinstance(choices, list):
        raise MalformedAnswer(f"endpoint {cfg.name!r} answered without choices "
                              f"({type(payload).__name__} instead of a completion)")
    first = choices[0]
    if cfg.mode == "chat":
        text = _field(_field(first, "message"), "content")
    else:
        text = _field(first, "text")
    if text is not None and not isinstance(text, str):
        raise MalformedAnswer(f"endpoint {cfg.name!r} answered a {type(text).__name__} as text")
    finish = _field(first, "finish_reason")
    usage = _field(payload, "usage")
    sent = (_field(usage, "prompt_tokens"), _field(usage, "completion_tokens"))
    prompt_tokens, completion_tokens = (token_count(v) for v in sent)
    unusable = any(v is not None and token_count(v) is None for v in sent)
    return capped(cfg, Answer(clean_text(text or ""), finish[:40] if isinstance(finish, str) else None,
                              prompt_tokens, completion_tokens, latency_s, unusable))


_TEXT_START = {"chat": re.compile(rb'"content"\s*:\s*"'), "completions": re.compile(rb'"text"\s*:\s*"')}
_OPEN_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?$")
_LENIENT = json.JSONDecoder(strict=False)


def answer_prefix(cfg: EndpointConfig, raw: bytes) -> str | None:
    """The answer text at the start of a body cut at the byte cap (the first ``content`` or
    ``text`` string, closed where the body was cut), or None when there is none."""
    found = _TEXT_START[cfg.mode].search(raw)
    if found is None:
        return None
    # "ignore": the character the cap cut in two is dropped
    rest = raw[found.end():].decode("utf-8", "ignore")
    try:    # the string ended before the cap
        return str(_LENIENT.raw_decode(f'"{rest}')[0])
    except ValueError:
        pass
    escape = _OPEN_ESCAPE.search(rest)
    if escape is not None:
        before = len(rest[:escape.start()]) - len(rest[:escape.start()].rstrip("\\"))
        if before % 2 == 0:     # an escape cut in two, not an escaped backslash
            rest = rest[:escape.start()]
    try:
        return str(_LENIENT.decode(f'"{rest}"'))
    except ValueError:
        return None


async def read_body(response: Any, max_bytes: int) -> tuple[bytes, bool]:
    """At most ``max_bytes`` of a streamed httpx response's body, and whether that is all of it."""
    from .transport import BodyTooLarge

    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                return b"".join(parts)[:max_bytes], False
    except BodyTooLarge:
        return b"".join(parts)[:max_bytes], False
    return b"".join(parts), True


def answer_from_body(cfg: EndpointConfig, raw: bytes, complete: bool, latency_s: float) -> Answer:
    if complete:
        return answer_of(cfg, json.loads(raw), latency_s)
    text = answer_prefix(cfg, raw)
    if text is None:
        raise AnswerTooLarge(f"endpoint {cfg.name!r} ({cfg.public_url}) answered over {len(raw)} bytes "
                             f"without an answer text before them (max_answer_chars {cfg.answer_char_cap})")
    return replace(capped(cfg, Answer(clean_text(text), None, None, None, latency_s)), finish_reason=LENGTH_CAP)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _reason(cfg: EndpointConfig, exc: BaseException, secrets: list[str], retried: bool = True) -> str:
    import httpx2
    import openai

    from .transport import BodyTooLarge

    tries = f"(after {cfg.max_retries} retries)" if retried else "(not retried)"
    if isinstance(exc, (openai.APITimeoutError, httpx2.TimeoutException)):
        return f"no complete answer within {cfg.timeout_s:g} s {tries}"
    if isinstance(exc, BodyTooLarge):
        return f"a body over {byte_cap(cfg)} bytes (max_answer_chars {cfg.answer_char_cap}), not read further"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        detail = f": {type(cause).__name__}" if cause is not None else ""
        return f"connection failed{detail} {tries}"
    if isinstance(exc, httpx2.TransportError):     # the body broke off while we read it
        return f"connection failed: {type(exc).__name__} {tries}"
    if isinstance(exc, openai.APIStatusError):
        # redacted before it is cut: a key cut in two would not be found
        body = _one_line(redact(str(getattr(exc, "message", "") or ""), secrets))[:MAX_BODY_LINE]
        return f"HTTP {exc.status_code}" + (f": {body}" if body else "")
    if isinstance(exc, openai.APIError):            # e.g. an error event in a stream
        body = _one_line(redact(str(getattr(exc, "message", "") or ""), secrets))[:MAX_BODY_LINE]
        return "the endpoint reported an error" + (f": {body}" if body else f" ({type(exc).__name__})")
    if isinstance(exc, ValueError):     # json.JSONDecodeError from the parse
        return f"the answer is not valid JSON ({type(exc).__name__})"
    return type(exc).__name__


def describe(cfg: EndpointConfig, exc: BaseException, *, received: int | None = None) -> str:
    """One line saying why a request failed (status, timeout, connection, what the endpoint said),
    with the key and any credential-looking value redacted. ``received``: the characters of a
    streamed answer shown before it broke."""
    secrets = secrets_of(cfg)
    if isinstance(exc, EndpointFailure):
        line = str(exc)
    else:
        where = f"endpoint {cfg.name!r} ({cfg.public_url})"
        reason = _reason(cfg, exc, secrets, retried=received is None)
        if received is not None:
            line = f"{where}: the answer stream broke after {received} characters ({reason})"
        else:
            line = f"{where}: {reason}"
    return redact(_one_line(line), secrets)


def is_retryable(exc: BaseException) -> bool:
    """A failure the client does not retry itself but another try may mend: an answer it received
    and could not use, or a body that broke off or ran out of time while we read it."""
    import httpx2
    import openai

    from .transport import BodyTooLarge

    if isinstance(exc, (AnswerTooLarge, BodyTooLarge)):
        return False
    return isinstance(exc, (MalformedAnswer, ValueError, openai.APIResponseValidationError, httpx2.TransportError))


async def request(client: Any, cfg: EndpointConfig, prompt: str) -> Answer:
    """One completion (the client retries transport and status failures itself), its body read
    up to :func:`byte_cap` bytes and parsed here."""
    start = time.perf_counter()
    api = client.chat.completions if cfg.mode == "chat" else client.completions
    async with api.with_streaming_response.create(**request_kwargs(cfg, prompt)) as response:
        raw, complete = await read_body(response.http_response, byte_cap(cfg))
    return answer_from_body(cfg, raw, complete, time.perf_counter() - start)
