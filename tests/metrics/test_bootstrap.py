"""Bootstrap: intervals, seeds, paired comparisons, and the vectorised statistics against a
plain per-resample recomputation."""
from __future__ import annotations

import time

import numpy as np
import pytest

from cblue_core.metrics.bootstrap import bootstrap_interval, bootstrap_intervals, paired_bootstrap
from cblue_core.metrics.types import (
    PRF,
    ExampleStats,
    accuracy,
    evaluate,
    group_mean,
    macro_f1,
    mean_score,
    micro_f1,
)


def _counts(n=400, seed=0):
    rng = np.random.default_rng(seed)
    tp = rng.integers(0, 5, n)
    return ExampleStats.from_counts(tp, rng.integers(0, 3, n), rng.integers(0, 3, n))


def _labels(n=300, seed=0, k=5):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.7, g, rng.integers(0, k + 1, n))
    p[rng.random(n) < 0.05] = -1   # missing predictions
    return ExampleStats.from_labels(g, p, tuple(f"l{i}" for i in range(k + 1)))


def test_prf_properties():
    # tp 3, fp 1, fn 2: P 3/4, R 3/5, F = 6/(6+1+2) = 2/3
    p = PRF(3, 1, 2)
    assert (p.precision, p.recall) == (0.75, 0.6) and p.f1 == pytest.approx(2 / 3)
    assert PRF().f1 == PRF().precision == PRF().recall == 0.0
    assert (p + PRF(1, 0, 0)).tp == 4


def test_interval_contains_point_estimate_and_is_reproducible():
    for stats, fn in ((_counts(), micro_f1), (_labels(), macro_f1), (_labels(), accuracy),
                      (ExampleStats.from_scores(np.random.default_rng(2).random(200)), mean_score)):
        point = evaluate(stats, fn)
        lo, hi = bootstrap_interval(stats, fn, n=500, seed=7)
        assert lo <= point <= hi
        assert bootstrap_interval(stats, fn, n=500, seed=7) == (lo, hi)
        assert bootstrap_interval(stats, fn, n=500, seed=8) != (lo, hi)


def test_metric_names_resolve():
    stats = _counts()
    assert bootstrap_interval(stats, "f1", n=200) == bootstrap_interval(stats, micro_f1, n=200)
    with pytest.raises(ValueError):
        bootstrap_interval(stats, "macro_f1", n=10)


def _naive_macro_f1(g, p):
    labels = sorted(set(g.tolist()) | set(p[p >= 0].tolist()))
    fs = []
    for lab in labels:
        tp = int(np.sum((g == lab) & (p == lab)))
        d = int(np.sum(g == lab)) + int(np.sum(p == lab))
        fs.append(2 * tp / d if d else 0.0)
    return float(np.mean(fs))


def test_metric_names_resolve_for_scores():
    from cblue_core.metrics.types import metric_fn_for
    s = ExampleStats.from_scores([1, 0, 0.5], group=[0, 0, 1], groups=("ID1", "KE"), name="overall")
    assert evaluate(s, metric_fn_for(s, "overall")) == pytest.approx((0.5 + 0.5) / 2)
    assert evaluate(s, metric_fn_for(s, "scenario:KE")) == 0.5
    assert metric_fn_for(s, "scenario:XX") is None and metric_fn_for(s, "rouge_l") is None
    one = ExampleStats.from_scores([1, 0], name="rouge_l")
    assert metric_fn_for(one, "rouge_l") is mean_score and metric_fn_for(one, "rouge_l[主诉]") is None


def test_vectorised_resamples_equal_naive_recomputation():
    counts, labels = _counts(50), _labels(60)
    rng = np.random.default_rng(11)
    idx_c = rng.integers(0, 50, size=(7, 50))
    f = micro_f1(counts.aggregate(idx_c))
    for r in range(7):
        tp, fp, fn = (counts.tp[idx_c[r]].sum(), counts.fp[idx_c[r]].sum(), counts.fn[idx_c[r]].sum())
        assert f[r] == pytest.approx(2 * tp / (2 * tp + fp + fn))
    idx_l = rng.integers(0, 60, size=(7, 60))
    agg = labels.aggregate(idx_l)
    for r in range(7):
        g, p = labels.gold[idx_l[r]], labels.pred[idx_l[r]]
        assert macro_f1(agg)[r] == pytest.approx(_naive_macro_f1(g, p))
        assert accuracy(agg)[r] == pytest.approx(np.mean(g == p))


def test_unit_path_equals_direct_path():
    # one labelled unit per example: the per-example matrix path must agree with the gather path
    direct = _labels(80)
    units = ExampleStats.from_labels(direct.gold, direct.pred, direct.labels, n=80,
                                     unit=np.arange(80))
    idx = np.random.default_rng(5).integers(0, 80, size=(20, 80))
    for fn in (macro_f1, accuracy):
        np.testing.assert_allclose(fn(direct.aggregate(idx)), fn(units.aggregate(idx)))


def test_group_mean_is_mean_of_group_means():
    # group 0 scores 1, 1, 0 (mean 2/3); group 1 scores 0.5 (mean 0.5); weight-0 item ignored
    s = ExampleStats.from_scores([1, 1, 0, 0.5, 0.9], [1, 1, 1, 1, 0], [0, 0, 0, 1, 1], ("x", "y"))
    assert evaluate(s, group_mean) == pytest.approx((2 / 3 + 0.5) / 2)
    assert evaluate(s, mean_score) == pytest.approx(2.5 / 4)


def test_paired_bootstrap():
    a = _labels(400, seed=1)
    same = paired_bootstrap(a, a, accuracy, n=300, seed=0)
    assert same.delta == 0.0 and same.low == same.high == 0.0 and same.p_value == 1.0
    better = ExampleStats.from_labels(a.gold, a.gold.copy(), a.labels)   # B is always right
    res = paired_bootstrap(a, better, "accuracy", n=300, seed=0)
    assert res.delta == pytest.approx(1 - evaluate(a, accuracy))
    assert 0 < res.low <= res.delta <= res.high and res.p_value < 0.01
    assert paired_bootstrap(a, better, "accuracy", n=300, seed=0) == res
    with pytest.raises(ValueError):
        paired_bootstrap(a, _labels(10), accuracy)


def test_blocks_do_not_change_the_result(monkeypatch):
    # Resamples are drawn in blocks to bound memory; the Generator's stream makes the draws
    # the same whatever the block size.
    import cblue_core.metrics.bootstrap as bs
    stats = _counts(101)
    one = bs.bootstrap_distribution(stats, {"f": micro_f1}, n=50, seed=3)["f"]
    monkeypatch.setattr(bs, "MAX_CELLS", 101 * 7)   # blocks of 7 resamples
    blocks = bs.bootstrap_distribution(stats, {"f": micro_f1}, n=50, seed=3)["f"]
    np.testing.assert_array_equal(one, blocks)


def test_the_number_of_resamples_is_bounded():
    import cblue_core.metrics.bootstrap as bs
    from cblue_core.runs.evaluation import evaluate as evaluate_task
    from cblue_core.tasks import get_task

    stats = _counts(50)
    for n in (bs.MAX_BOOTSTRAP + 1, 10**20, -1, 2.5, True):
        with pytest.raises(ValueError, match="from 0 to 100,000"):
            bs.bootstrap_distribution(stats, {"f": micro_f1}, n=n)      # type: ignore[arg-type]
        with pytest.raises(ValueError, match="from 0 to 100,000"):
            paired_bootstrap(stats, stats, micro_f1, n=n)             # type: ignore[arg-type]
    with pytest.raises(ValueError, match="from 0 to 100,000"):
        evaluate_task(get_task("KUAKE-QIC"), [], [], n_boot=10**20)
    assert len(bs.bootstrap_distribution(stats, {"f": micro_f1}, n=0)["f"]) == 0


def test_empty_stats():
    s = ExampleStats.from_counts([], [], [])
    assert bootstrap_interval(s, micro_f1, n=10) == (0.0, 0.0)


def test_speed_1000_resamples_of_5000_examples():
    counts = _counts(5000)
    labels = _labels(5000, k=44)
    t = time.perf_counter()
    bootstrap_intervals(counts, {"p": "precision", "r": "recall", "f": "f1"}, n=1000, seed=0)
    t_counts = time.perf_counter() - t
    t = time.perf_counter()
    bootstrap_intervals(labels, {"m": "macro_f1", "a": "accuracy"}, n=1000, seed=0)
    t_labels = time.perf_counter() - t
    # target well under 0.5 s each; the bound leaves room for a loaded shared machine
    assert t_counts < 1.0 and t_labels < 1.0, (t_counts, t_labels)
