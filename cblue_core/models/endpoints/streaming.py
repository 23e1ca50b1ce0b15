"""One answer streamed piece by piece (the Live page's ``st.write_stream``)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .client import EndpointFailure, describe, request_kwargs, sync_client
from .config import EndpointConfig


def stream_answer(cfg: EndpointConfig, prompt: str, client: Any = None) -> Iterator[str]:
    """The answer's text piece by piece as the endpoint streams it (for ``st.write_stream``).
    Raises :class:`EndpointFailure` when the request fails or the stream ends before the
    endpoint said why it stopped (a stream cut short)."""
    import httpx2  # the openai client's transport
    import openai

    own = client is None
    client = client or sync_client(cfg)
    received = 0
    finished = False
    try:
        kw = request_kwargs(cfg, prompt)
        api = client.chat.completions if cfg.mode == "chat" else client.completions
        for chunk in api.create(stream=True, **kw):
            for choice in getattr(chunk, "choices", None) or []:
                if cfg.mode == "chat":
                    delta = getattr(getattr(choice, "delta", None), "content", None)
                else:
                    delta = getattr(choice, "text", None)
                if delta:
                    received += len(delta)
                    yield delta
                if getattr(choice, "finish_reason", None):
                    finished = True
    except (openai.OpenAIError, ValueError) as exc:
        raise EndpointFailure(describe(cfg, exc, received=received or None)) from exc
    except (httpx2.HTTPError, httpx2.StreamError) as exc:   # the body broke off mid-stream
        raise EndpointFailure(describe(cfg, exc, received=received)) from exc
    finally:
        if own:
            client.close()
    if not finished:
        raise EndpointFailure(f"endpoint {cfg.name!r} ({cfg.public_url}): the answer stream ended after "
                              f"{received} characters without a finish reason (cut short)")
