"""A run's headline metric on each saved slice, with its bootstrap interval, from the run's
per-example sufficient statistics (no re-scoring)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..metrics.bootstrap import bootstrap_interval
from ..metrics.types import evaluate as eval_stats
from ..metrics.types import metric_fn_for
from ..runs.evaluation import Evaluation


@dataclass(frozen=True)
class SliceScore:
    name: str
    predicate: str
    examples: int
    value: float | None = None
    low: float | None = None
    high: float | None = None
    error: str | None = None     # why the slice could not be used


def slice_scores(ev: Evaluation, slices: Sequence[tuple[str, str]],
                 indices: Mapping[str, Sequence[int] | str], *, n_boot: int = 300) -> list[SliceScore]:
    """``indices`` maps each slice name to its example indices, or to the reason it failed."""
    fn = metric_fn_for(ev.stats, ev.headline) if ev.stats is not None else None
    out = []
    for name, predicate in slices:
        got = indices.get(name, "not evaluated")
        if isinstance(got, str):
            out.append(SliceScore(name, predicate, 0, error=got))
            continue
        idxs = list(got)
        if not idxs or fn is None or ev.stats is None:
            out.append(SliceScore(name, predicate, len(idxs)))
            continue
        sub = ev.stats.subset(idxs)
        low, high = bootstrap_interval(sub, fn, n=n_boot)
        out.append(SliceScore(name, predicate, len(idxs), eval_stats(sub, fn), low, high))
    return out
