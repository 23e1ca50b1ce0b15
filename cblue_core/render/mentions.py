"""Subject and object strings of relation triples located in the text (CMeIE has no offsets).

Every mention is located at its occurrences in the text (:func:`locate_mentions`), leaving out
those inside a longer mention when it has others, and each triple takes the CLOSEST pair of
occurrences of its subject and object (:func:`closest_pair`).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..records import Span, Triple
from .bounds import MAX_OCCURRENCES


def find_all(text: str, mention: str, limit: int | None = None) -> list[int]:
    """Start offsets of every occurrence of ``mention`` in ``text`` (overlapping ones too), the
    first ``limit`` of them when given."""
    if not mention:
        return []
    out: list[int] = []
    i = text.find(mention)
    while i != -1 and (limit is None or len(out) < limit):
        out.append(i)
        i = text.find(mention, i + 1)
    return out


@dataclass(frozen=True)
class Mention:
    """A distinct subject/object string of an example's triples, located in the text."""

    text: str
    number: int                    # 1-based, by first occurrence (missing mentions last)
    occurrences: tuple[int, ...]   # start offsets
    roles: tuple[str, ...]         # "subject" and/or "object"
    types: tuple[str, ...]         # subject_type / object_type values seen
    capped: bool = False           # occurs more often: only the first MAX_OCCURRENCES are kept

    @property
    def ambiguous(self) -> bool:
        return len(self.occurrences) > 1

    @property
    def missing(self) -> bool:
        return not self.occurrences

    @property
    def type(self) -> str:
        """The first type seen ('' when none)."""
        return self.types[0] if self.types else ""

    def spans(self) -> list[Span]:
        return [Span(o, o + len(self.text), f"#{self.number}", self.text) for o in self.occurrences]


def mention_key(value: object) -> str:
    return "" if value is None else str(value)


def locate_mentions(text: str, triples: Iterable[Triple]) -> dict[str, Mention]:
    """Every distinct subject/object of ``triples`` with its occurrences in ``text`` (the first
    :data:`~.bounds.MAX_OCCURRENCES`: a mention found at every offset of a long text would make
    each of its triples compare every pair of places)."""
    roles: dict[str, list[str]] = {}
    types: dict[str, list[str]] = {}
    for t in triples:
        for mention, role, typ in ((t.subject, "subject", t.subject_type),
                                   (t.object, "object", t.object_type)):
            mention = mention_key(mention)
            r = roles.setdefault(mention, [])
            if role not in r:
                r.append(role)
            ty = types.setdefault(mention, [])
            if typ and str(typ) not in ty:
                ty.append(str(typ))
    found = {m: find_all(text, m, MAX_OCCURRENCES + 1) for m in roles}
    found = _outside_longer_mentions(found)
    order = sorted(roles, key=lambda m: (0, found[m][0], -len(m)) if found[m] else (1, 0, 0))
    return {m: Mention(m, n, tuple(found[m][:MAX_OCCURRENCES]), tuple(roles[m]), tuple(types[m]),
                       len(found[m]) > MAX_OCCURRENCES)
            for n, m in enumerate(order, start=1)}


def _outside_longer_mentions(found: dict[str, list[int]]) -> dict[str, list[int]]:
    """Each mention's occurrences without those inside an occurrence of a longer mention of the
    same example (关节 inside 腕关节, 病毒 inside 乙型肝炎病毒), when it has any other: an arc
    attached there would point into the other mention. A mention found only inside others keeps
    its occurrences. Linear after sorting: an interval is inside another one when an interval
    sorted before it (by start, then longest first) reaches as far."""
    intervals = sorted({(o, o + len(m)) for m, starts in found.items() for o in starts},
                       key=lambda iv: (iv[0], -iv[1]))
    contained: set[tuple[int, int]] = set()
    reach = -1
    for start, end in intervals:
        if reach >= end:
            contained.add((start, end))
        reach = max(reach, end)
    out: dict[str, list[int]] = {}
    for m, starts in found.items():
        free = [o for o in starts if (o, o + len(m)) not in contained]
        out[m] = free or starts
    return out


def closest_pair(subject_starts: Sequence[int], subject_len: int,
                 object_starts: Sequence[int], object_len: int) -> tuple[int, int] | None:
    """The (subject start, object start) pair of occurrences that are closest in the text.

    Preference: two distinct occurrences over the same one (a triple whose subject and object are
    the same string), then disjoint over overlapping ones, then the fewest characters between
    them, then the closest centres, then the earliest. None when either side has no occurrence.
    """
    best: tuple[tuple[int, ...], tuple[int, int]] | None = None
    for s in subject_starts:
        se = s + subject_len
        for o in object_starts:
            oe = o + object_len
            same = (s, se) == (o, oe)
            overlap = s < oe and o < se
            gap = max(0, max(s, o) - min(se, oe))
            key = (int(same), int(overlap), gap, abs((s + se) - (o + oe)), s, o)
            if best is None or key < best[0]:
                best = (key, (s, o))
    return None if best is None else best[1]
