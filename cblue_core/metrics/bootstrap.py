"""Vectorised bootstrap over examples: confidence intervals and paired comparisons.

Examples are resampled with replacement (the example is the unit: a sentence, a dialogue, a
question) by a seeded :class:`numpy.random.Generator`. The index matrix is drawn in blocks of
resamples (at most ``MAX_CELLS`` indices at a time, so memory stays bounded), each block is
turned into summed statistics with a few numpy gathers / bincounts
(:meth:`~cblue_core.metrics.types.ExampleStats.aggregate`) and every metric is evaluated on the
whole block at once. 1,000 resamples of 5,000 examples take a few tens of milliseconds.

Intervals are percentile intervals ``(q(alpha/2), q(1 - alpha/2))`` of the resampled metric.
The paired bootstrap draws one index matrix and applies it to both runs (same examples, same
order), so the resampled differences keep the pairing; its p-value is two-sided:
``min(1, 2 * min(P(delta* <= 0), P(delta* >= 0)))`` over the resampled differences ``delta*``.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import NamedTuple

import numpy as np

from .types import ExampleStats, MetricFn, evaluate, metric_fn_for

__all__ = [
    "MAX_BOOTSTRAP",
    "MAX_CELLS",
    "PairedBootstrap",
    "bootstrap_distribution",
    "bootstrap_interval",
    "bootstrap_intervals",
    "check_resamples",
    "paired_bootstrap",
]

MAX_CELLS = 2_000_000  # resampled indices held at once (16 MB of int64)
# 1,000 resamples give intervals stable to a few tenths of a point; a count past this bound is
# a mistake or a way to keep the server busy (10^20 resamples never end).
MAX_BOOTSTRAP = 100_000


def check_resamples(n: object) -> int:
    """``n`` when it is a bootstrap count from 0 to MAX_BOOTSTRAP; ValueError otherwise.

    >>> check_resamples(1000)
    1000
    >>> check_resamples(10**20)
    Traceback (most recent call last):
    ...
    ValueError: bootstrap resamples must be a whole number from 0 to 100,000, not 100000000000000000000
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= MAX_BOOTSTRAP:
        raise ValueError(f"bootstrap resamples must be a whole number from 0 to {MAX_BOOTSTRAP:,}, not {n!r:.40}")
    return int(n)


class PairedBootstrap(NamedTuple):
    delta: float      # metric(b) - metric(a) on all examples
    low: float
    high: float
    p_value: float


def _resolve(stats: ExampleStats, fn: MetricFn | str) -> MetricFn:
    if callable(fn):
        return fn
    resolved = metric_fn_for(stats, fn)
    if resolved is None:
        raise ValueError(f"metric {fn!r} cannot be recomputed from {stats!r}")
    return resolved


def _index_blocks(n_examples: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    block = max(1, min(n_boot, MAX_CELLS // max(n_examples, 1)))
    done = 0
    while done < n_boot:
        b = min(block, n_boot - done)
        yield rng.integers(0, n_examples, size=(b, n_examples), dtype=np.int64)
        done += b


def bootstrap_distribution(stats: ExampleStats, metric_fns: Mapping[str, MetricFn | str],
                           n: int = 1000, seed: int = 0) -> dict[str, np.ndarray]:
    """The resampled values of each metric.

    Args:
        stats: per-example statistics (``TaskScore.stats``).
        metric_fns: name -> vectorised metric function of :mod:`cblue_core.metrics.types`, or a
            metric name such as ``"f1"``.
        n: the number of resamples.
        seed: the seed of the resampling generator.

    Returns:
        name -> array of shape ``(n,)``.

    Examples:
        >>> from cblue_core.metrics.types import ExampleStats
        >>> stats = ExampleStats.from_counts(tp=[2, 1, 1], fp=[0, 1, 0], fn=[0, 0, 0])
        >>> dist = bootstrap_distribution(stats, {"recall": "recall"}, n=5)
        >>> dist["recall"].tolist()   # every example has a hit and no miss: recall 1 in every resample
        [1.0, 1.0, 1.0, 1.0, 1.0]
    """
    n = check_resamples(n)
    fns = {name: _resolve(stats, fn) for name, fn in metric_fns.items()}
    out: dict[str, list[np.ndarray]] = {name: [] for name in fns}
    if stats.n == 0 or n <= 0:
        return {name: np.full(max(n, 0), evaluate(stats, fn)) for name, fn in fns.items()}
    for idx in _index_blocks(stats.n, n, seed):
        agg = stats.aggregate(idx)
        for name, fn in fns.items():
            out[name].append(np.asarray(fn(agg), dtype=np.float64))
    return {name: np.concatenate(v) for name, v in out.items()}


def _interval(values: np.ndarray, alpha: float) -> tuple[float, float]:
    lo, hi = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def bootstrap_intervals(stats: ExampleStats, metric_fns: Mapping[str, MetricFn | str],
                        n: int = 1000, seed: int = 0, alpha: float = 0.05
                        ) -> dict[str, tuple[float, float]]:
    """Percentile intervals of several metrics from one set of resamples.

    Args:
        stats: per-example statistics (``TaskScore.stats``).
        metric_fns: name -> vectorised metric function, or a metric name such as ``"f1"``.
        n: the number of resamples.
        seed: the seed of the resampling generator.
        alpha: 1 - the coverage (0.05: 95% intervals).

    Returns:
        name -> ``(low, high)``, the ``alpha/2`` and ``1 - alpha/2`` quantiles.

    Examples:
        >>> from cblue_core.metrics.types import ExampleStats
        >>> stats = ExampleStats.from_counts(tp=[2, 1, 1], fp=[0, 1, 0], fn=[0, 0, 0])
        >>> intervals = bootstrap_intervals(stats, {"recall": "recall", "precision": "precision"}, n=200)
        >>> intervals["recall"]   # every example has a hit and no miss
        (1.0, 1.0)
        >>> 0.5 <= intervals["precision"][0] <= 0.8 <= intervals["precision"][1] <= 1.0   # P = 4/5
        True
    """
    dist = bootstrap_distribution(stats, metric_fns, n=n, seed=seed)
    return {name: _interval(v, alpha) for name, v in dist.items()}


def bootstrap_interval(stats: ExampleStats, metric_fn: MetricFn | str, n: int = 1000,
                       seed: int = 0, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap interval of one metric.

    Args:
        stats: per-example statistics (``TaskScore.stats``).
        metric_fn: a vectorised metric function of :mod:`cblue_core.metrics.types`, or a metric
            name such as ``"f1"`` or ``"macro_f1"``.
        n: the number of resamples.
        seed: the seed of the resampling generator.
        alpha: 1 - the coverage (0.05: a 95% interval).

    Returns:
        ``(low, high)``.

    Raises:
        ValueError: when the metric cannot be recomputed from ``stats``.

    Examples:
        >>> from cblue_core.metrics.types import ExampleStats, evaluate, micro_f1
        >>> stats = ExampleStats.from_counts(tp=[1, 1, 1, 0], fp=[0, 0, 0, 1], fn=[0, 0, 0, 1])
        >>> evaluate(stats, micro_f1)   # 2*3 / (2*3 + 1 + 1)
        0.75
        >>> low, high = bootstrap_interval(stats, "f1", n=1000, seed=0)
        >>> 0.0 <= low <= 0.75 <= high <= 1.0
        True
    """
    return bootstrap_intervals(stats, {"m": metric_fn}, n=n, seed=seed, alpha=alpha)["m"]


def paired_bootstrap(stats_a: ExampleStats, stats_b: ExampleStats, metric_fn: MetricFn | str,
                     n: int = 1000, seed: int = 0, alpha: float = 0.05) -> PairedBootstrap:
    """Compare run B with run A on the same examples by a paired bootstrap.

    Both runs are resampled with the same indices, so the resampled differences keep the pairing.

    Args:
        stats_a: per-example statistics of run A.
        stats_b: per-example statistics of run B (same examples, same order).
        metric_fn: a vectorised metric function, or a metric name such as ``"f1"``.
        n: the number of resamples.
        seed: the seed of the resampling generator.
        alpha: 1 - the coverage of the interval of the difference.

    Returns:
        ``PairedBootstrap(delta, low, high, p_value)``: ``delta = metric(B) - metric(A)``, its
        percentile interval and the two-sided p-value
        ``min(1, 2 * min(P(delta* <= 0), P(delta* >= 0)))``.

    Raises:
        ValueError: when the runs cover a different number of examples.

    Examples:
        B is right on every example and A on none, so every resample gives delta = 1:

        >>> from cblue_core.metrics.types import ExampleStats
        >>> a = ExampleStats.from_counts(tp=[0, 0, 0], fp=[1, 1, 1], fn=[1, 1, 1])
        >>> b = ExampleStats.from_counts(tp=[1, 1, 1], fp=[0, 0, 0], fn=[0, 0, 0])
        >>> paired_bootstrap(a, b, "f1", n=100)
        PairedBootstrap(delta=1.0, low=1.0, high=1.0, p_value=0.0)
        >>> paired_bootstrap(a, a, "f1", n=100).p_value
        1.0
    """
    n = check_resamples(n)
    if stats_a.n != stats_b.n:
        raise ValueError(f"paired bootstrap needs the same examples: {stats_a.n} vs {stats_b.n}")
    fa, fb = _resolve(stats_a, metric_fn), _resolve(stats_b, metric_fn)
    delta = evaluate(stats_b, fb) - evaluate(stats_a, fa)
    if stats_a.n == 0 or n <= 0:
        return PairedBootstrap(delta, delta, delta, 1.0)
    diffs = []
    for idx in _index_blocks(stats_a.n, n, seed):
        diffs.append(np.asarray(fb(stats_b.aggregate(idx)), dtype=np.float64)
                     - np.asarray(fa(stats_a.aggregate(idx)), dtype=np.float64))
    d = np.concatenate(diffs)
    lo, hi = _interval(d, alpha)
    p = min(1.0, 2.0 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
    return PairedBootstrap(delta, lo, hi, p)

