"""Direction isolation of data strings: a U+202E (RIGHT-TO-LEFT OVERRIDE) in a record's text, a
type name or a file name must not reverse the rest of the line it is shown on.

:func:`isolate` wraps a string that could change the order of what surrounds it (one holding
right-to-left letters or explicit direction controls) in U+2068 FIRST STRONG ISOLATE ... U+2069
POP DIRECTIONAL ISOLATE, the characters HTML's ``<bdi>`` stands for: unlike an element they also
work inside attribute values (tooltips) and Markdown, so one escaping function serves them all.
A PDI of the data that would close our isolate early is dropped, isolates the data leaves open
are closed, and each line is isolated on its own (a line break ends every isolate). Strings
without such characters (all of CBLUE's Chinese) are returned unchanged.
"""
from __future__ import annotations

import re
import unicodedata
from functools import cache

FSI, PDI = "\u2068", "\u2069"
_OPENS_ISOLATE = {"LRI", "RLI", "FSI"}
_MOVES_NEIGHBOURS = {"R", "AL", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
# Paragraph separators (bidi class B): the bidi algorithm starts afresh after each.
_PARAGRAPH = re.compile("(\r\n|[\n\r\x1c-\x1e\x85\u2029])")


@cache
def _moves_neighbours() -> re.Pattern[str]:
    """Every character of a class in _MOVES_NEIGHBOURS (none is above U+1FFFF), as a regex
    class built once from this Python's Unicode database."""
    ranges, start = [], None
    for cp in range(0x20000):
        hit = unicodedata.bidirectional(chr(cp)) in _MOVES_NEIGHBOURS
        if hit and start is None:
            start = cp
        elif not hit and start is not None:
            ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(cp - 1))}")
            start = None
    return re.compile("[" + "".join(ranges) + "]")


def prepare() -> None:
    """Build the table of characters that move their neighbours now rather than on the first
    string shown: a scan of the Unicode database, 0.15 s of CPU, that a server makes while it
    starts instead of on its first visitor's time."""
    _moves_neighbours()


def _isolate_line(line: str) -> str:
    out, open_isolates = [], 0
    for ch in line:
        kind = unicodedata.bidirectional(ch)
        if kind in _OPENS_ISOLATE:
            open_isolates += 1
        elif kind == "PDI":
            if not open_isolates:
                continue            # it would close our isolate and free the rest of the data
            open_isolates -= 1
        out.append(ch)
    return FSI + "".join(out) + PDI * open_isolates + PDI


def isolate(text: str) -> str:
    """``text`` with each line direction-isolated when it could reorder its surroundings (see
    the module docstring); otherwise ``text`` itself."""
    if not _moves_neighbours().search(text):
        return text
    parts = _PARAGRAPH.split(text)
    return "".join(part if i % 2 or not part else _isolate_line(part) for i, part in enumerate(parts))
