"""The Buckets tab's chart: ExplainaBoard-style bars, one titled panel per feature (two a row),
each bucket's score with its 95% interval across the bar, its gold items and examples under its
label, its numbers written beside it. Plain HTML (:mod:`cblue_core.render.bars`): the six Plotly
panels it replaces took Plotly's bundle to load and 0.1-0.3 s to draw on every open of the tab,
and held the interval and the example count in a hover only. Pure: no Streamlit call here.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cblue_core.render.bars import Bar, BarPanel, bars_html


class BucketLike(Protocol):
    """What a bucket chart reads (:class:`cblue_core.analysis.buckets.BucketScore`)."""

    feature: str
    bucket: str
    order: int
    f1: float
    low: float
    high: float
    examples: int

    @property
    def support(self) -> int: ...


# The unit of each bucket feature of cblue_core.analysis.buckets, for the axis line.
FEATURE_UNITS: dict[str, str] = {
    "entity length": "characters",
    "sentence length": "characters",
    "text length": "characters",
    "entity density": "entities per character",
    "nesting depth": "levels",
    "nesting role": "role of the entity",
    "training frequency": "occurrences in the train split",
    "gold label training frequency": "examples in the train split",
    "label consistency": "share of train occurrences with this label",
    "triples per example": "distinct gold triples",
    "argument nesting": "an argument inside another of the example",
    "triple in the train split": "the same triple in the train split",
    "in the model's training records": "the example's text",
}


def group_buckets(buckets: Sequence[BucketLike]) -> dict[str, list[BucketLike]]:
    """Buckets per feature (features in their first order), each list in bucket order."""
    out: dict[str, list[BucketLike]] = {}
    for b in buckets:
        out.setdefault(b.feature, []).append(b)
    return {k: sorted(v, key=lambda b: b.order) for k, v in out.items()}


def bucket_panels(buckets: Sequence[BucketLike], *, metric: str = "F1") -> list[BarPanel]:
    """One panel per feature (in their first order), its buckets in bucket order: titled with
    the feature, the axis line naming the metric and the feature's unit."""
    panels = []
    for feature, rows in group_buckets(buckets).items():
        unit = FEATURE_UNITS.get(feature)
        axis = f"{metric} (0-1) and its 95% interval per bucket of {feature}" + (f" ({unit})" if unit else "")
        bars = tuple(Bar(label=str(b.bucket), value=float(b.f1),
                         text=f"{float(b.f1):.3f} ({float(b.low):.3f}–{float(b.high):.3f})",
                         note=f"n={int(b.support):,}, {int(b.examples):,} examples",
                         low=float(b.low), high=float(b.high)) for b in rows)
        panels.append(BarPanel(title=feature[:1].upper() + feature[1:], axis=axis, bars=bars))
    return panels


def bucket_html(buckets: Sequence[BucketLike], *, metric: str = "F1", per_row: int = 2) -> str:
    """The panels as one HTML block, ``per_row`` a row, every bar on the 0-1 scale."""
    return bars_html(bucket_panels(buckets, metric=metric), scale=1.0, columns=per_row, label_px=170)
