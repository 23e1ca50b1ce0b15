"""One request to an endpoint with the official ``openai`` client, and one streamed answer.

The client's own retry machinery does the back-off: it retries connection errors, timeouts,
408/409/429 and 5xx answers ``max_retries`` times, waiting what ``Retry-After`` (or
``retry-after-ms``) says when it is at most two minutes, else 0.5 s doubling up to 8 s with
jitter (``openai._base_client``). What it does not retry, an answer that is not the JSON it
expects, raises :class:`MalformedAnswer` here so that the runner can retry it the same way.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .config import EndpointConfig


class EndpointFailure(Exception):
    """A request that failed for good; its message is one line, without the key."""


class MalformedAnswer(EndpointFailure):
    """The endpoint answered 200 with something that is not a completion."""


@dataclass(frozen=True)
class Answer:
    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float


def client_kwargs(cfg: EndpointConfig) -> dict[str, Any]:
    return {"base_url": cfg.base_url, "api_key": cfg.api_key(), "max_retries": cfg.max_retries,
            "timeout": cfg.timeout_s}


def async_client(cfg: EndpointConfig) -> Any:
    from openai import AsyncOpenAI

    return AsyncOpenAI(**client_kwargs(cfg))


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


def answer_of(cfg: EndpointConfig, response: Any, latency_s: float) -> Answer:
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedAnswer(f"endpoint {cfg.name!r} answered without choices "
                              f"({type(response).__name__} instead of a completion)")
    first = choices[0]
    if cfg.mode == "chat":
        message = getattr(first, "message", None)
        text = getattr(message, "content", None) if message is not None else None
    else:
        text = getattr(first, "text", None)
    if text is not None and not isinstance(text, str):
        raise MalformedAnswer(f"endpoint {cfg.name!r} answered a {type(text).__name__} as text")
    usage = getattr(response, "usage", None)
    return Answer(text or "", getattr(first, "finish_reason", None),
                  getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None),
                  latency_s)


def describe(cfg: EndpointConfig, exc: BaseException) -> str:
    """One line saying why a request failed (status, timeout, connection), never the key."""
    import openai

    where = f"endpoint {cfg.name!r} ({cfg.public_url})"
    if isinstance(exc, openai.APITimeoutError):
        return f"{where}: no answer within {cfg.timeout_s:g} s (after {cfg.max_retries} retries)"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        detail = f": {type(cause).__name__}" if cause is not None else ""
        return f"{where}: connection failed{detail} (after {cfg.max_retries} retries)"
    if isinstance(exc, openai.APIStatusError):
        body = " ".join(str(getattr(exc, "message", "") or "").split())[:160]
        return f"{where}: HTTP {exc.status_code}" + (f": {body}" if body else "")
    if isinstance(exc, EndpointFailure):
        return str(exc)
    if isinstance(exc, ValueError):     # json.JSONDecodeError from the client's parse
        return f"{where}: the answer is not valid JSON ({type(exc).__name__})"
    return f"{where}: {type(exc).__name__}"


def is_malformed(exc: BaseException) -> bool:
    """An answer the client received but could not use: worth another try."""
    import openai

    return isinstance(exc, (MalformedAnswer, ValueError, openai.APIResponseValidationError))


async def request(client: Any, cfg: EndpointConfig, prompt: str) -> Answer:
    """One completion (the client retries transport and status failures itself)."""
    start = time.perf_counter()
    kw = request_kwargs(cfg, prompt)
    if cfg.mode == "chat":
        response = await client.chat.completions.create(**kw)
    else:
        response = await client.completions.create(**kw)
    return answer_of(cfg, response, time.perf_counter() - start)
