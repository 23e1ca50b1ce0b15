"""The bounds every renderer keeps, so that one crafted record cannot make a page slow or huge.

Drawing every covering span on every segment, each with its mention in a tooltip, grew with the
cube of the nesting (1,000 nested spans over 2,000 characters: 721 MB of HTML); CMeIE triples
over a mention found at every offset took minutes. Renderers draw at most :data:`MAX_LAYERS`
stacked bars, clip tooltips and labels, locate a mention at most :data:`MAX_OCCURRENCES` times
and draw at most :data:`MAX_ARCS` arcs; :func:`bounded` refuses any fragment over
:data:`MAX_HTML_CHARS` with a note and the text.
"""
from __future__ import annotations

import html

MAX_LAYERS = 8             # bars stacked under one piece of text; the CBLUE records need at most 3
MAX_OCCURRENCES = 20       # places one relation mention is located; the CBLUE records need at most 11
MAX_ARCS = 500             # relation triples drawn as arcs (the validator's limit per record)
MAX_HTML_CHARS = 2_000_000  # one example's fragment: ~100 times that of the largest real record
TIP_MAX = 200              # characters of one span's or arc's tooltip
SEGMENT_TIP_MAX = 400      # characters of a piece of text's tooltip (the spans covering it) ...
SEGMENT_ENTRY_MAX = 60     # ... and of each span's entry there (the full one is on its label)
LABEL_MAX = 40             # characters of the label at the start of a bar


def clip(value: str, limit: int) -> str:
    """``value`` cut to at most ``limit`` characters, marked with "…" when cut."""
    return value if len(value) <= limit else value[:max(0, limit - 1)] + "…"


def bounded(fragment: str, text: str, max_chars: int = MAX_HTML_CHARS) -> str:
    """``fragment`` when it is at most ``max_chars`` long, else a note and the plain text (cut
    to fit): the last guard, whatever the kind renderer drew."""
    if len(fragment) <= max_chars:
        return fragment
    shown = text[:max_chars // 8]   # an escaped character takes at most 6
    return (f'<div class="cbr-warn">这个样例太大，无法绘制 / this example is too large to draw: its HTML '
            f'would be {len(fragment):,} characters, over the {max_chars:,} limit; its text follows'
            f'{"" if len(shown) == len(text) else f" (first {len(shown):,} of {len(text):,} characters)"}'
            f'</div><div class="cbr-text">{html.escape(shown, quote=True)}</div>')
