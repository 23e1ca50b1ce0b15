"""Comparing two runs on the same split: metric deltas with paired bootstrap intervals, overall
and per slice or bucket, and the examples each run gets right or wrong."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..metrics.bootstrap import paired_bootstrap
from ..metrics.types import ExampleStats


@dataclass(frozen=True)
class Delta:
    slice: str
    examples: int
    a: float
    b: float
    delta: float          # b - a
    low: float
    high: float
    p_value: float
    resamples: int = 1000

    @property
    def p_text(self) -> str:
        """The p-value as a paper prints it: below the smallest value the bootstrap can
        resolve (one resample in ``resamples``) it is a bound, not 0."""
        return format_p(self.p_value, self.resamples)


@dataclass
class Comparison:
    metric: str
    overall: Delta
    slices: list[Delta] = field(default_factory=list)
    a_right_b_wrong: list[int] = field(default_factory=list)
    b_right_a_wrong: list[int] = field(default_factory=list)
    both_wrong: list[int] = field(default_factory=list)


def example_correct(stats: ExampleStats) -> np.ndarray:
    """Per example: did the run get everything right (no false positive or negative, the right
    label, or a full score)?"""
    if stats.kind == "counts":
        _, fp, fn = stats.counts()
        return np.logical_and(fp == 0, fn == 0)
    if stats.kind == "labels":
        gold, pred = stats.label_ids()
        wrong = np.zeros(stats.n, dtype=bool)
        units = np.arange(len(gold)) if stats.unit is None else stats.unit
        np.logical_or.at(wrong, units, gold != pred)
        return ~wrong
    score, _, _ = stats.scores()
    return np.greater_equal(score, 1.0 - 1e-9)


def _delta(name: str, a: ExampleStats, b: ExampleStats, metric: str, n_boot: int, seed: int) -> Delta:
    from ..metrics.types import evaluate, metric_fn_for

    res = paired_bootstrap(a, b, metric, n=n_boot, seed=seed)
    fa, fb = metric_fn_for(a, metric), metric_fn_for(b, metric)
    if fa is None or fb is None:   # paired_bootstrap has already refused such a metric
        raise ValueError(f"metric {metric!r} cannot be recomputed from {a!r} / {b!r}")
    return Delta(name, a.n, evaluate(a, fa), evaluate(b, fb), res.delta, res.low, res.high, res.p_value, n_boot)


def format_p(p: float, resamples: int) -> str:
    """``"p < 0.001"`` when ``p`` is under the resolution of ``resamples`` bootstrap draws, else
    ``"p = 0.042"``.

    >>> format_p(0.0, 1000), format_p(0.0421, 1000), format_p(0.0, 10000)
    ('p < 0.001', 'p = 0.042', 'p < 0.0001')
    """
    floor = 1.0 / max(resamples, 1)
    if p < floor:
        return f"p < {floor:.{max(1, len(str(resamples)) - 1)}f}"
    return f"p = {p:.3f}"


def compare(stats_a: ExampleStats, stats_b: ExampleStats, metric: str, *,
            slices: dict[str, list[int]] | None = None, n_boot: int = 1000, seed: int = 0,
            within: list[int] | None = None, overall: str = "all examples") -> Comparison:
    """Run B against run A (same examples, same order): ``delta = B - A``. ``within``: only
    these examples (e.g. those neither model was trained on), named ``overall``; the slices are
    cut to them, and the example lists still give positions in the whole split."""
    if stats_a.n != stats_b.n:
        raise ValueError(f"the runs cover different examples: {stats_a.n} vs {stats_b.n}")
    keep = np.arange(stats_a.n) if within is None else np.asarray(sorted(set(within)), dtype=np.int64)
    if within is not None:
        stats_a, stats_b = stats_a.subset(keep), stats_b.subset(keep)
        position = {int(i): n for n, i in enumerate(keep)}
        slices = {name: [position[i] for i in idxs if i in position] for name, idxs in (slices or {}).items()}
    out = Comparison(metric, _delta(overall, stats_a, stats_b, metric, n_boot, seed))
    for name, idxs in (slices or {}).items():
        if idxs:
            out.slices.append(_delta(name, stats_a.subset(idxs), stats_b.subset(idxs), metric, n_boot, seed))
    ra, rb = example_correct(stats_a), example_correct(stats_b)
    out.a_right_b_wrong = keep[np.flatnonzero(ra & ~rb)].tolist()
    out.b_right_a_wrong = keep[np.flatnonzero(rb & ~ra)].tolist()
    out.both_wrong = keep[np.flatnonzero(~ra & ~rb)].tolist()
    return out
