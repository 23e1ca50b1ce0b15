"""A fixed, colour-blind-friendly palette and a stable label -> colour mapping.

Colours come only from :data:`PALETTE` (hues from the Okabe-Ito and Paul Tol schemes, each with
a light background and a darker border); no colour is ever taken from data. The rendered HTML
refers to a colour by its CSS class (``cbr-c3``), defined once in the stylesheet built by
:func:`palette_css`, so no colour value appears in the markup next to data.

Colour is never the only cue: every highlight also carries its label text.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Colour:
    index: int
    name: str
    bg: str        # light background
    border: str    # darker border / bar colour

    @property
    def css_class(self) -> str:
        return f"cbr-c{self.index}"


_ROWS = (
    ("blue", "#DCEBF7", "#0072B2"),
    ("orange", "#FCEBCB", "#C98A00"),
    ("bluish green", "#CDEFE4", "#009E73"),
    ("vermillion", "#F9DCCB", "#D55E00"),
    ("reddish purple", "#F5DDEB", "#B8609A"),
    ("sky blue", "#DDF0FB", "#3C9FD8"),
    ("yellow", "#FAF5C4", "#A89A00"),
    ("indigo", "#DEDAF0", "#332288"),
    ("teal", "#D5EEEA", "#3A9384"),
    ("olive", "#EEEED3", "#888822"),
    ("rose", "#F6DDE1", "#BB5566"),
    ("wine", "#EDD4E0", "#882255"),
    ("green", "#D3E9D7", "#117733"),
    ("grey", "#E9E9E9", "#6E6E6E"),
)

PALETTE: tuple[Colour, ...] = tuple(Colour(i, n, bg, bd) for i, (n, bg, bd) in enumerate(_ROWS))

#: Every colour value the renderer may emit (backgrounds and borders).
PALETTE_VALUES: frozenset[str] = frozenset(
    v.lower() for c in PALETTE for v in (c.bg, c.border))


def _code(label: object) -> str:
    """A label's code: ``Label`` objects give ``.code``, anything else its ``str``."""
    return str(getattr(label, "code", label))


def color_for(label: object, labels_in_order: Iterable[object] = ()) -> Colour:
    """The colour of ``label``: by its position in ``labels_in_order`` (codes or ``Label``
    objects, e.g. ``task.labels``), so a task's first 14 labels never share a colour; labels
    outside the list get a colour from a CRC32 of their code, stable across runs and processes.
    """
    code = _code(label)
    for i, other in enumerate(labels_in_order):
        if _code(other) == code:
            return PALETTE[i % len(PALETTE)]
    return PALETTE[zlib.crc32(code.encode("utf-8")) % len(PALETTE)]


def colour_by_index(i: int) -> Colour:
    return PALETTE[i % len(PALETTE)]


def palette_css() -> str:
    """One CSS rule per palette colour, setting the custom properties the renderer uses."""
    return "".join(f".cbr-c{c.index}{{--cbr-bg:{c.bg};--cbr-bd:{c.border}}}" for c in PALETTE)
