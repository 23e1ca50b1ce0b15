"""How the studio learns who the visitor is, chosen by the environment:

- ``local`` (nothing set): one user, the OS account running the server;
- ``proxy`` (``CBLUE_STUDIO_AUTH=proxy``): the name a reverse proxy that authenticated the visitor
  put in ``$CBLUE_STUDIO_USER_HEADER``, believed only beside the shared secret
  ``$CBLUE_STUDIO_PROXY_SECRET`` in ``X-Proxy-Secret``;
- ``oidc`` (``CBLUE_STUDIO_AUTH=oidc``): the claims of an OpenID Connect token (Streamlit's
  ``st.login``), the user being the ``email`` claim, else ``sub``.

Pure functions over mappings: the pages hand in the request headers or ``st.user``.
"""
from __future__ import annotations

import hmac
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from .user import User

Mode = Literal["local", "proxy", "oidc"]
MODES: tuple[Mode, ...] = ("local", "proxy", "oidc")

MODE_VAR = "CBLUE_STUDIO_AUTH"
HEADER_VAR = "CBLUE_STUDIO_USER_HEADER"
SECRET_VAR = "CBLUE_STUDIO_PROXY_SECRET"
SECRET_HEADER = "X-Proxy-Secret"

# Guessable secrets make the check decorative: anyone reaching the port could send one.
MIN_SECRET_LENGTH = 16
MAX_NAME_LENGTH = 256


class IdentityConfigError(ValueError):
    """The identity settings in the environment are unusable; the message names the variable."""


@dataclass(frozen=True)
class IdentityConfig:
    mode: Mode
    user_header: str = ""       # proxy mode only
    proxy_secret: str = ""      # proxy mode only

    def __repr__(self) -> str:  # never print the secret (logs, tracebacks)
        return f"IdentityConfig(mode={self.mode!r}, user_header={self.user_header!r})"


@dataclass(frozen=True)
class Refusal:
    """Why a request names no user the studio may believe."""

    reason: str


def identity_config(environ: Mapping[str, str]) -> IdentityConfig:
    """The configuration from ``environ`` (``os.environ``); raises :class:`IdentityConfigError`."""
    raw = environ.get(MODE_VAR, "").strip().lower() or "local"
    if raw not in MODES:
        raise IdentityConfigError(f"${MODE_VAR} is {raw!r}; expected one of {', '.join(MODES)} "
                                  "(unset means local)")
    mode: Mode = raw  # type: ignore[assignment]  # checked against MODES just above
    if mode != "proxy":
        return IdentityConfig(mode)
    header = environ.get(HEADER_VAR, "").strip()
    secret = environ.get(SECRET_VAR, "")
    if not header:
        raise IdentityConfigError(f"${MODE_VAR}=proxy needs ${HEADER_VAR}: the header in which the "
                                  "proxy names the user (e.g. X-Remote-User)")
    if not _is_token(header):
        raise IdentityConfigError(f"${HEADER_VAR} is {header!r}; expected a header name "
                                  "(letters, digits and '-')")
    if header.lower() == SECRET_HEADER.lower():
        raise IdentityConfigError(f"${HEADER_VAR} cannot be {SECRET_HEADER}, which carries the secret")
    if len(secret) < MIN_SECRET_LENGTH:
        raise IdentityConfigError(f"${MODE_VAR}=proxy needs ${SECRET_VAR}, at least {MIN_SECRET_LENGTH} "
                                  f"characters, which the proxy sends in {SECRET_HEADER}")
    return IdentityConfig(mode, header, secret)


def proxy_user(headers: Mapping[str, str] | Iterable[tuple[str, str]],
               config: IdentityConfig) -> User | Refusal:
    """The user a request from the trusted proxy names, or why it is refused.

    ``headers`` is a mapping or the request's (name, value) pairs. Names are matched without
    regard to case (HTTP says they are case-insensitive, and the servers in between change their
    case); a secret or user header sent twice is refused, since which copy a server keeps varies."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    seen: dict[str, list[str]] = {}
    for k, v in pairs:
        seen.setdefault(str(k).lower(), []).append(str(v))
    secret = seen.get(SECRET_HEADER.lower(), [])
    if not secret:
        return Refusal(f"the request did not come through the studio's proxy (no {SECRET_HEADER} header)")
    if len(secret) > 1 or not hmac.compare_digest(secret[0].encode(), config.proxy_secret.encode()):
        return Refusal(f"the request's {SECRET_HEADER} does not match the studio's proxy secret")
    names = seen.get(config.user_header.lower(), [])
    if not names:
        return Refusal(f"the proxy sent no {config.user_header} header naming the user")
    if len(names) > 1:
        return Refusal(f"the proxy sent {config.user_header} {len(names)} times")
    problem = name_problem(names[0])
    if problem:
        return Refusal(f"the proxy's {config.user_header} header {problem}")
    return User(names[0].strip(), "proxy")


def oidc_user(claims: Mapping[str, object]) -> User | Refusal:
    """The user of an OpenID Connect token's claims (``st.user``): ``email``, else ``sub``."""
    for claim in ("email", "sub"):
        value = claims.get(claim)
        if isinstance(value, str) and value.strip():
            problem = name_problem(value)
            if problem:
                return Refusal(f"the token's {claim} claim {problem}")
            return User(value.strip(), "oidc")
    return Refusal("the token carries neither an email nor a sub claim")


def name_problem(name: str) -> str:
    """What makes ``name`` unfit to be shown and stored as an author ('' when it is fit)."""
    if not name.strip():
        return "is empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"is longer than {MAX_NAME_LENGTH} characters"
    # Control and format characters (newlines, NUL, bidi overrides) would forge lines in the audit
    # trail or reorder what a reader sees.
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        return "contains control characters"
    return ""


def _is_token(name: str) -> bool:
    return all(c.isascii() and (c.isalnum() or c in "-_") for c in name)
