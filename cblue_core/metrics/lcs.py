"""Longest common subsequence length, shared by every ROUGE-L in the project."""
from __future__ import annotations

from typing import Sequence


def lcs_length(a: str | Sequence, b: str | Sequence) -> int:
    """Length of the longest common subsequence (bit-parallel, Hyyro 2004)."""
    if len(a) < len(b):
        a, b = b, a
    m = len(a)
    if m == 0 or len(b) == 0:
        return 0
    masks: dict = {}
    for i, c in enumerate(a):
        masks[c] = masks.get(c, 0) | (1 << i)
    full = (1 << m) - 1
    v = full
    for c in b:
        u = v & masks.get(c, 0)
        v = ((v + u) | (v - u)) & full
    return m - bin(v).count("1")
