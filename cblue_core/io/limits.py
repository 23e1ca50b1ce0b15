"""Bounds on what a reader accepts, so that a hostile or broken file is refused with a message
instead of exhausting memory, the stack or the CPU of the process serving the app.

Every bound is far above what the real benchmark files need (the largest CBLUE file is about
10 MB, the deepest JSON nests 5 levels, the longest integer has 6 digits).
"""
from __future__ import annotations

import array
import re
import stat
from itertools import accumulate
from pathlib import Path

from ..records import Example
from .errors import Defect, FileRefused

MAX_FILE_BYTES = 1 << 30          # 1 GiB; the app passes its (smaller) upload limit instead
MAX_JSON_DEPTH = 64
MAX_INT_DIGITS = 100
MAX_XLSX_MEMBER_BYTES = 256 << 20  # uncompressed size of one member of an .xlsx workbook
# Per record (the real files: at most 84 entities, nested 3 deep, and 32 triples in one record).
# One crafted record under these still renders in a bounded time; far over them it is no text
# a person annotated, and every page that lists or draws it would pay for it.
MAX_SPANS_PER_RECORD = 1_000
MAX_NESTING_PER_RECORD = 16
MAX_TRIPLES_PER_RECORD = 500


def human_size(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"


def too_large(label: str, size: int, max_bytes: int, what: str = "the file") -> FileRefused:
    return FileRefused([Defect(label, f"{what} is {human_size(size)}, over the {human_size(max_bytes)} limit",
                               code="too_large", expected=f"at most {human_size(max_bytes)}")])


def check_regular_file(path: Path, label: str, max_bytes: int = MAX_FILE_BYTES) -> int:
    """The size of ``path``, or a refusal when it is missing, not a regular file or too large.

    Devices, pipes and sockets are refused before they are opened: /dev/zero never ends and
    opening a FIFO blocks until a writer comes.
    """
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileRefused([Defect(label, "no such file", code="missing")]) from None
    except OSError as exc:
        raise _unreadable(label, exc) from None
    if stat.S_ISDIR(st.st_mode):
        raise FileRefused([Defect(label, "is a folder, not a file", code="missing")])
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused([Defect(label, "not a regular file (a device, pipe or socket)",
                                  code="not_a_file", expected="a regular file")])
    if st.st_size > max_bytes:
        raise too_large(label, st.st_size, max_bytes)
    return st.st_size


def read_file_bytes(path: Path, label: str, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The content of a regular file of at most ``max_bytes`` bytes."""
    check_regular_file(path, label, max_bytes)
    try:
        with path.open("rb") as f:
            # One byte more than allowed: a file that grew since stat() is still caught.
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise _unreadable(label, exc) from None
    if len(data) > max_bytes:
        raise too_large(label, len(data), max_bytes)
    return data


def _unreadable(label: str, exc: OSError) -> FileRefused:
    return FileRefused([Defect(label, f"cannot be read: {exc.strerror or type(exc).__name__}",
                               code="unreadable", expected="a readable file")])


# ---------------------------------------------------------------- JSON nesting depth

# The scan runs on the UTF-8 bytes: multi-byte sequences never contain ASCII bytes, so the
# structural characters can be picked out with bytes.translate, which runs in C (about 30 ms
# for the 10 MB CMeEE training file, a fifth of json.loads).
_DELETE_ALL_BUT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_ESCAPE_RE = re.compile(rb"\\.", re.DOTALL)
_STRING_RE = re.compile(rb'"[^"]*"?')      # on the reduced text: a string with brackets in it
_DELTAS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def max_json_depth(data: bytes) -> int:
    """Deepest nesting of arrays and objects in JSON text ``data``, brackets inside strings
    excluded. On malformed text the result is what the same scan of a valid prefix gives, so
    the depth of any prefix is at most the depth of the whole."""
    if b"\\" in data:
        # Escape pairs go first, so that an escaped quote does not end its string.
        data = _ESCAPE_RE.sub(b"", data)
    # Two adjacent quotes can go without changing which brackets lie inside a string:
    # nothing lies between them, and the parity of every later quote is kept.
    kept = data.translate(None, _DELETE_ALL_BUT_STRUCTURE).replace(b'""', b"")
    if b'"' in kept:
        kept = _STRING_RE.sub(b"", kept)
    if not kept:
        return 0
    return max(accumulate(array.array("b", kept.translate(_DELTAS)), initial=0))


def check_json_depth(data: bytes, label: str, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Refuse JSON text nested deeper than ``max_depth`` before any parser recurses into it."""
    if max_json_depth(data) <= max_depth:
        return
    # Locate the first bracket past the limit: the depth of a prefix only grows with its
    # length, so gallop then bisect over prefix lengths (each step runs in C).
    lo, hi = 0, 1024
    while hi < len(data) and max_json_depth(data[:hi]) <= max_depth:
        lo, hi = hi, hi * 2
    hi = min(hi, len(data))
    while lo < hi:  # the shortest prefix past the limit lies in (lo, hi]
        mid = (lo + hi) // 2
        if max_json_depth(data[:mid]) > max_depth:
            hi = mid
        else:
            lo = mid + 1
    line = data.count(b"\n", 0, hi) + 1
    raise FileRefused([Defect(
        label, f"JSON nested deeper than {max_depth} levels of arrays and objects", line=line,
        code="limit", expected=f"at most {max_depth} levels; the CBLUE files use at most 5")])


# ---------------------------------------------------------------- per-record annotation counts


def record_over_limits(ex: Example) -> list[tuple[str, int, int]]:
    """(what, count, limit) for each per-record bound ``ex`` passes: spans (its own and its
    turns'), their nesting depth, triples."""
    spans = len(ex.spans) + sum(len(t.spans) for t in ex.turns)
    counts = (("spans", spans, MAX_SPANS_PER_RECORD),
              ("levels of nested spans", ex.depth, MAX_NESTING_PER_RECORD),
              ("triples", len(ex.triples), MAX_TRIPLES_PER_RECORD))
    return [(what, count, limit) for what, count, limit in counts if count > limit]
