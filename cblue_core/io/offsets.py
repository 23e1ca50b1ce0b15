"""Offset-convention detection: is a file's ``end`` inclusive (CMeEE) or exclusive (some V2 copies)?

Each annotated mention fits at most one convention, because the two slices differ in length:
``text[s:e+1]`` (inclusive) or ``text[s:e]`` (exclusive). A file is *inclusive* or *exclusive*
when every mention that fits a convention fits the same one; mentions that fit neither are
annotation defects reported by the reader. A file mixing both, or whose mentions fit neither
at all, is refused.
"""
from __future__ import annotations

from dataclasses import dataclass, field

INCLUSIVE = "inclusive"
EXCLUSIVE = "exclusive"
NONE = "none"            # no offsets in the file (or none carrying a mention string)


@dataclass(frozen=True)
class OffsetItem:
    record: int
    field: str
    text: str
    start: int
    end: int
    mention: str


@dataclass
class ConventionReport:
    convention: str
    inclusive: int = 0
    exclusive: int = 0
    neither: int = 0
    first_inclusive: list[OffsetItem] = field(default_factory=list)
    first_exclusive: list[OffsetItem] = field(default_factory=list)
    first_neither: list[OffsetItem] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        return not (self.inclusive and self.exclusive) and not (
            self.neither and not self.inclusive and not self.exclusive)


def fits(item: OffsetItem) -> str | None:
    s, e, text, m = item.start, item.end, item.text, item.mention
    if s < 0 or e < s or not m:
        return None
    if e < len(text) and text[s:e + 1] == m:
        return INCLUSIVE
    if e <= len(text) and text[s:e] == m:
        return EXCLUSIVE
    return None


def detect_convention(items: list[OffsetItem], default: str = INCLUSIVE, keep: int = 3) -> ConventionReport:
    rep = ConventionReport(NONE)
    seen_any = False
    for it in items:
        seen_any = True
        kind = fits(it)
        if kind == INCLUSIVE:
            rep.inclusive += 1
            if len(rep.first_inclusive) < keep:
                rep.first_inclusive.append(it)
        elif kind == EXCLUSIVE:
            rep.exclusive += 1
            if len(rep.first_exclusive) < keep:
                rep.first_exclusive.append(it)
        else:
            rep.neither += 1
            if len(rep.first_neither) < keep:
                rep.first_neither.append(it)
    if rep.inclusive and not rep.exclusive:
        rep.convention = INCLUSIVE
    elif rep.exclusive and not rep.inclusive:
        rep.convention = EXCLUSIVE
    elif rep.inclusive and rep.exclusive:
        rep.convention = "mixed"
    elif seen_any and rep.neither:
        rep.convention = "unknown"
    else:
        rep.convention = NONE if not seen_any else default
    return rep


def to_half_open(start: int, end: int, convention: str) -> tuple[int, int]:
    return (start, end + 1) if convention == INCLUSIVE else (start, end)


def from_half_open(start: int, end: int, convention: str) -> tuple[int, int]:
    return (start, end - 1) if convention == INCLUSIVE else (start, end)
