"""The blind first pass (as INCEpTION does): an annotator sees the others' work on an example
only once they have saved their own on it, so that the first pass is independent and agreement
measures it. Curators see everything (they adjudicate)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .model import Annotation


@dataclass(frozen=True)
class BlindView:
    """Each annotator's saved work as one annotator may see it, and how much is held back."""

    work: dict[str, dict[int, Annotation]]
    hidden: int          # examples of the others' not shown yet (``me`` has not saved them)


def blind_view(saved: Mapping[str, Mapping[int, Annotation]], me: str) -> BlindView:
    """``saved``: {author: {example: their latest annotation}}. ``me``'s work in full; the
    others' only on the examples ``me`` has saved.

    >>> a = Annotation(label="x")
    >>> view = blind_view({"me": {1: a}, "other": {1: a, 2: a}}, "me")
    >>> {k: sorted(v) for k, v in view.work.items()}, view.hidden
    ({'me': [1], 'other': [1]}, 1)
    """
    mine = set(saved.get(me, {}))
    work: dict[str, dict[int, Annotation]] = {}
    hidden: set[int] = set()
    for author, theirs in saved.items():
        if author == me:
            work[author] = dict(theirs)
            continue
        work[author] = {i: x for i, x in theirs.items() if i in mine}
        hidden |= set(theirs) - mine
    return BlindView(work, len(hidden))
