"""Endpoint declarations: the TOML file named by ``$CBLUE_STUDIO_ENDPOINTS``, one table per
endpoint under ``[endpoints.NAME]``.

Only the person running the server declares endpoints: a URL typed by a visitor would let
anyone make the server call any address. The API key is never in the file, only the *name* of
the environment variable holding it (``api_key_env``), read at call time
(:meth:`EndpointConfig.api_key`), so it cannot reach a run's settings, the workspace or a log.
"""
from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ENV_ENDPOINTS = "CBLUE_STUDIO_ENDPOINTS"
PREFIX = "endpoint:"
MODES = ("chat", "completions")
# Servers that need no key (transformers serve, vLLM without --api-key) still get one: the
# openai client refuses to start without it.
NO_KEY = "EMPTY"
# The default answer-size cap, from max_tokens: generous enough that no honest answer is cut (a
# token decodes to at most a few characters in the tokenizers of the models people serve; 16
# covers runs of spaces or dashes merged into one token), small enough that a server ignoring
# max_tokens cannot fill memory or the cache.
CHARS_PER_TOKEN = 16
MIN_ANSWER_CHARS = 1024


class EndpointConfigError(ValueError):
    """The endpoints file is missing, unreadable, or declares something unusable."""


@dataclass(frozen=True)
class EndpointConfig:
    """One declared endpoint. ``settings`` (the server's public address and the generation
    settings) and ``model`` key the response cache, so changing any sends the prompts again."""

    name: str
    base_url: str
    model: str
    api_key_env: str | None = None
    mode: str = "chat"
    max_concurrency: int = 8
    timeout_s: float = 120.0
    max_retries: int = 4
    max_tokens: int = 512
    temperature: float = 0.0
    max_answer_chars: int | None = None     # None: max_tokens * CHARS_PER_TOKEN (at least MIN_ANSWER_CHARS)

    @property
    def ref(self) -> str:
        """How the endpoint is named wherever a model name goes."""
        return PREFIX + self.name

    @property
    def settings(self) -> dict[str, Any]:
        """What changes an answer besides the model and the prompt: the server too, since two
        servers can serve different weights under one model name (a new setting that changes
        what is sent or kept belongs here, so that it keys the cache)."""
        return {"base_url": self.public_url, "mode": self.mode, "max_tokens": self.max_tokens,
                "temperature": self.temperature, "max_answer_chars": self.answer_char_cap}

    @property
    def answer_char_cap(self) -> int:
        """The most characters of an answer kept: a longer one is cut (``finish_reason``
        ``"length_cap"``); ``max_answer_chars`` when declared, else derived from ``max_tokens``."""
        if self.max_answer_chars is not None:
            return self.max_answer_chars
        return max(self.max_tokens * CHARS_PER_TOKEN, MIN_ANSWER_CHARS)

    @property
    def public_url(self) -> str:
        """``base_url`` without a user or password written into it."""
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        netloc = host + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))

    def api_key(self) -> str:
        """The key from the environment, read now (never stored); an unset variable is an error
        that names the variable, not a silent request without a key."""
        if not self.api_key_env:
            return NO_KEY
        value = os.environ.get(self.api_key_env)
        if not value:
            raise EndpointConfigError(f"endpoint {self.name!r} reads its API key from ${self.api_key_env}, "
                                      "which is not set")
        return value

    def run_params(self) -> dict[str, Any]:
        """What a run made with this endpoint records: no key, no key variable."""
        return {"model": self.ref, "kind": "openai-endpoint", "endpoint_model": self.model,
                **self.settings, "max_concurrency": self.max_concurrency,
                "timeout_s": self.timeout_s, "max_retries": self.max_retries}


def is_endpoint(model: str | os.PathLike[str]) -> bool:
    return str(model).startswith(PREFIX)


def endpoints_path() -> Path | None:
    value = os.environ.get(ENV_ENDPOINTS, "").strip()
    return Path(value).expanduser() if value else None


_TYPES: dict[str, tuple[type, ...]] = {
    "base_url": (str,), "model": (str,), "api_key_env": (str,), "mode": (str,),
    "max_concurrency": (int,), "timeout_s": (int, float), "max_retries": (int,),
    "max_tokens": (int,), "temperature": (int, float), "max_answer_chars": (int,)}


def _endpoint(name: str, table: Any, where: str) -> EndpointConfig:
    at = f"{where}: [endpoints.{name}]"
    if not isinstance(table, dict):
        raise EndpointConfigError(f"{at} must be a table")
    known = {f.name for f in fields(EndpointConfig)} - {"name"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise EndpointConfigError(f"{at}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    for key in ("base_url", "model"):
        if not isinstance(table.get(key), str) or not table[key].strip():
            raise EndpointConfigError(f"{at}: {key} must be a non-empty string")
    for key, value in table.items():
        if not isinstance(value, _TYPES[key]) or isinstance(value, bool):
            expected = " or ".join(t.__name__ for t in _TYPES[key])
            raise EndpointConfigError(f"{at}: {key} is {value!r}, expected {expected}")
    cfg = EndpointConfig(name=name, **table)
    if urlsplit(cfg.base_url).scheme not in ("http", "https"):
        raise EndpointConfigError(f"{at}: base_url must start with http:// or https:// (got {cfg.base_url!r})")
    if cfg.mode not in MODES:
        raise EndpointConfigError(f"{at}: mode is {cfg.mode!r}, expected one of {', '.join(MODES)}")
    for key, low in (("max_concurrency", 1), ("max_tokens", 1), ("max_retries", 0), ("max_answer_chars", 1)):
        if getattr(cfg, key) is not None and getattr(cfg, key) < low:
            raise EndpointConfigError(f"{at}: {key} must be at least {low} (got {getattr(cfg, key)})")
    if not (cfg.timeout_s > 0 and math.isfinite(cfg.timeout_s)):
        raise EndpointConfigError(f"{at}: timeout_s must be a positive number of seconds")
    if not (0 <= cfg.temperature <= 2):
        raise EndpointConfigError(f"{at}: temperature must be between 0 and 2 (got {cfg.temperature})")
    return cfg


def load_endpoints(path: str | Path | None = None) -> dict[str, EndpointConfig]:
    """The endpoints declared in ``path`` (default: ``$CBLUE_STUDIO_ENDPOINTS``); {} when no file
    is named. Raises :class:`EndpointConfigError` naming the file, table and key at fault."""
    file = Path(path).expanduser() if path is not None else endpoints_path()
    if file is None:
        return {}
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise EndpointConfigError(f"cannot read the endpoints file {file}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise EndpointConfigError(f"the endpoints file {file} is not UTF-8: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise EndpointConfigError(f"the endpoints file {file} is not valid TOML: {exc}") from None
    tables = data.get("endpoints", {})
    if not isinstance(tables, dict):
        raise EndpointConfigError(f"{file}: `endpoints` must be a table of [endpoints.NAME] tables")
    return {name: _endpoint(name, table, str(file)) for name, table in tables.items()}


def get_endpoint(model: str, path: str | Path | None = None) -> EndpointConfig:
    """The endpoint ``endpoint:NAME`` (or plain ``NAME``) names; EndpointConfigError otherwise."""
    name = model[len(PREFIX):] if is_endpoint(model) else model
    declared = load_endpoints(path)
    if name in declared:
        return declared[name]
    if not declared:
        where = f"${ENV_ENDPOINTS} names no file" if endpoints_path() is None and path is None else "none declared"
        raise EndpointConfigError(f"unknown endpoint {name!r}: {where} (declare endpoints in a TOML file "
                                  f"named by ${ENV_ENDPOINTS})")
    raise EndpointConfigError(f"unknown endpoint {name!r}; declared: "
                              + ", ".join(PREFIX + n for n in sorted(declared)))
