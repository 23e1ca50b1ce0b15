"""Record helpers: nesting depth against a character-by-character count."""
from __future__ import annotations

import random

from cblue_core.records import Span, nesting_depth


def stacked_by_hand(spans) -> int:
    width = max((s.end for s in spans), default=0)
    return max([sum(s.start <= c < s.end for s in spans) for c in range(width)], default=0)


def test_examples():
    assert nesting_depth([]) == 0
    assert nesting_depth([Span(3, 3, "x")]) == 0                       # empty span covers nothing
    assert nesting_depth([Span(0, 2, "x"), Span(2, 4, "x")]) == 1      # touching is not nesting
    assert nesting_depth([Span(0, 5, "x"), Span(0, 2, "y"), Span(1, 2, "z")]) == 3


def test_matches_counting_characters():
    rng = random.Random(7)
    for _ in range(2000):
        spans = []
        for _ in range(rng.randint(0, 8)):
            a = rng.randint(0, 15)
            spans.append(Span(a, a + rng.randint(0, 6), "t"))
        assert nesting_depth(spans) == stacked_by_hand(spans), spans
