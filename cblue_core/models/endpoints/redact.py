"""Keys out of every text that comes back from an endpoint or its client library.

Gateways echo the request's ``Authorization`` header in error bodies (a 401 that says what it
received, a 5xx that dumps the request), so any text an endpoint or the ``openai`` client hands
back can hold the key. Every failure line goes through :func:`redact` before it is stored,
logged, printed or shown.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[redacted]"
# A credential after the words that introduce one, whatever the quoting: ``Authorization: Bearer
# sk-...``, ``"authorization": "sk-..."``, ``api_key=sk-...``, ``x-api-key: ...``, a bare ``Bearer sk-...``.
_CREDENTIAL = re.compile(
    r"""(?ix)
    (?P<lead>
        (?:\b(?:proxy-)?authorization|\bx-api-key|\bapi[-_]?key|\baccess[-_]?token)
        ["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token)\s+)?
      | \b(?:bearer|basic)\s+
    )
    (?P<secret>[^\s"',;}\])]+)
    """)
# Shorter values are not secrets worth hiding, and replacing them would mangle ordinary words
# (the placeholder key "EMPTY" for servers that need none).
MIN_SECRET_LENGTH = 8


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every occurrence of each secret and every credential-looking header value
    replaced by ``[redacted]``.

    >>> redact('401: got Authorization: Bearer sk-live-123456 for {"api_key": "sk-live-123456"}')
    '401: got Authorization: Bearer [redacted] for {"api_key": "[redacted]"}'
    >>> redact("key sk-abcdefgh rejected", ["sk-abcdefgh"])
    'key [redacted] rejected'
    """
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_LENGTH:
            text = text.replace(secret, REDACTED)
    return _CREDENTIAL.sub(lambda m: m.group("lead") + REDACTED, text)
