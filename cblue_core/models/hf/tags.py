"""Token tags (BIO, BIOES, BMES, BILOU, prefixed or suffixed) decoded to character spans."""
from __future__ import annotations

import re
from collections.abc import Sequence

_TAG_RE = re.compile(r"^([BIESMLU])[-_](.+)$")
_TAG_SUFFIX_RE = re.compile(r"^(.+)[-_]([BIESMLU])$")
_OUTSIDE = {"O", "o", "X", "[PAD]", "PAD", "<pad>", "-100"}


def parse_tag(tag: str) -> tuple[str, str | None]:
    """``"B-dis"`` -> ``("B", "dis")``; ``"O"`` -> ``("O", None)``; also ``dis-B`` and ``_``
    separators. Raises ValueError for a tag in no known scheme."""
    tag = str(tag).strip()
    if tag in _OUTSIDE:
        return "O", None
    m = _TAG_RE.match(tag)
    if m:
        return m.group(1), m.group(2)
    m = _TAG_SUFFIX_RE.match(tag)
    if m:
        return m.group(2), m.group(1)
    raise ValueError(tag)


def decode_tags(tokens: Sequence[tuple[int, int, str, str | None]]) -> list[tuple[int, int, str]]:
    """Spans ``(start, end, type)`` from tokens ``(start, end, prefix, type)`` in text order.

    B starts a span, I/M continue one of the same type (or start one: lenient), E/L end one,
    S/U are single-token spans, O closes.
    """
    spans: list[tuple[int, int, str]] = []
    cur: list | None = None

    def close():
        nonlocal cur
        if cur is not None:
            spans.append((cur[0], cur[1], cur[2]))
            cur = None

    for s, e, p, t in tokens:
        if p == "O" or t is None:
            close()
        elif p == "B":
            close()
            cur = [s, e, t]
        elif p in ("S", "U"):
            close()
            spans.append((s, e, t))
        elif p in ("I", "M"):
            if cur is not None and cur[2] == t:
                cur[1] = e
            else:
                close()
                cur = [s, e, t]
        elif p in ("E", "L"):
            if cur is not None and cur[2] == t:
                cur[1] = e
                close()
            else:
                close()
                spans.append((s, e, t))
    close()
    return spans


