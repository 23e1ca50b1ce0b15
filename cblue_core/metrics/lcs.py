"""Longest common subsequence length, shared by every ROUGE-L in the project."""
from __future__ import annotations

from collections.abc import Hashable, Sequence


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence (bit-parallel, Hyyro 2004).

    Args:
        a: a string or a sequence of hashable tokens.
        b: another one.

    Returns:
        The length of the longest common subsequence of ``a`` and ``b``.

    Examples:
        >>> lcs_length("ABCBDAB", "BDCABA")   # e.g. BCBA
        4
        >>> lcs_length(["患者", "发热", "咳嗽"], ["发热", "三天", "咳嗽"])
        2
        >>> lcs_length("", "abc")
        0
    """
    # The bit vectors span the shorter sequence and the loop runs over the longer: building a
    # mask costs as much as the bits below it (``1 << i``), so masks over a long answer were
    # quadratic in its length (minutes for a megabyte), while each step of the loop costs the
    # shorter length, so the whole stays linear in the longer one.
    if len(a) > len(b):
        a, b = b, a
    m = len(a)
    if m == 0 or len(b) == 0:
        return 0
    masks: dict[Hashable, int] = {}
    for i, c in enumerate(a):
        masks[c] = masks.get(c, 0) | (1 << i)
    full = (1 << m) - 1
    v = full
    for c in b:
        u = v & masks.get(c, 0)
        v = ((v + u) | (v - u)) & full
    return m - (v).bit_count()
