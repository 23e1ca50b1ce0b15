"""Patient-identifier detection for the clinician demo: warn before text that looks like it
holds a resident ID number, a phone number, or a hospital / record number is run.

Deliberately simple, documented patterns (no model): the demo warns, the user decides.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


@dataclass(frozen=True)
class IdentifierHit:
    kind: str          # "resident_id", "phone", "record_number"
    start: int
    end: int
    text: str

    @property
    def label(self) -> str:
        return {"resident_id": "居民身份证号 resident ID number",
                "phone": "电话号码 phone number",
                "record_number": "住院号/病案号 hospital or record number"}[self.kind]


def resident_id_valid(number: str) -> bool:
    """GB 11643 checksum of an 18-character resident ID (17 digits + check digit or X)."""
    if not re.fullmatch(r"\d{17}[\dXx]", number):
        return False
    total = sum(int(d) * w for d, w in zip(number[:17], _ID_WEIGHTS))
    return _ID_CHECK[total % 11] == number[17].upper()


_PATTERNS: tuple[tuple[str, re.Pattern], ...] = (
    # 18-digit IDs (checksum verified below) and the older 15-digit form with a plausible date.
    ("resident_id", re.compile(r"(?<![\dA-Za-z])(\d{17}[\dXx]|\d{6}\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3})(?![\dA-Za-z])")),
    ("phone", re.compile(r"(?<!\d)(?:\+?86[- ]?)?1[3-9]\d[- ]?\d{4}[- ]?\d{4}(?!\d)")),
    ("phone", re.compile(r"(?<!\d)0\d{2,3}-\d{7,8}(?!\d)")),
    # Every repetition is bounded: with `\s*[:：#]?\s*` a keyword followed by a long run of
    # spaces made the engine try every split of the run between the two `\s*` (quadratic:
    # 40,000 spaces took 18 s). Bounded runs keep the work per starting position constant.
    ("record_number", re.compile(
        r"(?:住院号|病案号|病历号|门诊号|就诊卡号|医保卡号|床号|登记号|ID号|MRN)"
        r"\s{0,3}[:：#]?\s{0,3}[A-Za-z]{0,10}\d[\dA-Za-z-]{3,40}")),
)


def find_identifiers(text: str) -> list[IdentifierHit]:
    """Every stretch of ``text`` that looks like a patient identifier, in text order."""
    hits: list[IdentifierHit] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            value = m.group(0)
            if kind == "resident_id" and len(value) == 18 and not resident_id_valid(value):
                continue
            hits.append(IdentifierHit(kind, m.start(), m.end(), value))
    hits.sort(key=lambda h: (h.start, -h.end))
    kept: list[IdentifierHit] = []
    for h in hits:  # drop hits inside an earlier, longer one
        if not kept or h.start >= kept[-1].end:
            kept.append(h)
    return kept
