"""Per-sample statistics: the metric recomputed from them equals direct scoring."""
from __future__ import annotations

import random

import pytest

from cblue_core.metrics.promptcblue import (
    SCORER_TASKS,
    metric_from_stats,
    sample_stats,
    score_structured,
    score_task,
    structure,
)
from cblue_core.metrics.promptcblue.clean import clean_task_score

from ._util import load_json


def noisy(records: list[dict], seed: int) -> list[dict]:
    """Deterministically damaged predictions: truncated, swapped within a task, or kept."""
    rng = random.Random(seed)
    by_task: dict[str, list[str]] = {}
    for r in records:
        by_task.setdefault(r["task_dataset"], []).append(r["target"])
    out = []
    for r in records:
        roll = rng.random()
        target = r["target"]
        if roll < 0.3:
            target = target[: rng.randint(0, len(target))]
        elif roll < 0.6:
            target = rng.choice(by_task[r["task_dataset"]])
        out.append({**r, "target": target})
    return out


@pytest.fixture(scope="module")
def structured_runs(reference_dir, dev_records):
    gold = structure(dev_records)
    runs = {name: (load_json(reference_dir / name / "gold_structured.json"),
                   load_json(reference_dir / name / "pred_structured.json")) for name in ("perfect", "empty")}
    for seed in (1, 2, 3):
        runs[f"noisy{seed}"] = (gold, structure(noisy(dev_records, seed), strict=False))
    return runs


def test_official_recomputation_equals_direct(structured_runs):
    for name, (gold, pred) in structured_runs.items():
        direct = score_structured(gold, pred)
        assert direct.success, name
        stats = sample_stats(gold, pred)
        assert list(stats) == list(SCORER_TASKS)
        for task, task_stats in stats.items():
            assert len(task_stats) == len(gold[task])
            again = metric_from_stats(task, task_stats)
            assert again.details == direct.per_task[task].details, (name, task)  # bit for bit


def test_clean_recomputation_equals_direct(structured_runs):
    for name, (gold, pred) in structured_runs.items():
        stats = sample_stats(gold, pred, mode="clean")
        for task, task_stats in stats.items():
            direct = clean_task_score(task, gold[task], pred[task])
            assert metric_from_stats(task, task_stats, mode="clean").details == direct.details, (name, task)


def test_stats_of_a_subset_score_that_subset(structured_runs):
    """Samples are independent: the stats of any subset give that subset's direct score."""
    gold, pred = structured_runs["noisy2"]
    rng = random.Random(11)
    stats = sample_stats(gold, pred)
    for task in SCORER_TASKS:
        n = len(gold[task])
        for _ in range(3):
            idx = sorted(rng.sample(range(n), rng.randint(1, n)))
            sub_gold = [gold[task][i] for i in idx]
            sub_pred = [pred[task][i] for i in idx]
            try:
                direct = score_task(task, sub_gold, sub_pred)
            except ZeroDivisionError:  # e.g. Text2DT subsets without triples
                with pytest.raises(ZeroDivisionError):
                    metric_from_stats(task, [stats[task][i] for i in idx])
                continue
            assert metric_from_stats(task, [stats[task][i] for i in idx]).details == direct.details


def test_bootstrap_resample(structured_runs):
    gold, pred = structured_runs["noisy1"]
    stats = sample_stats(gold, pred)
    rng = random.Random(5)
    for task, s in stats.items():
        resample = [s[rng.randrange(len(s))] for _ in s]
        try:
            value = metric_from_stats(task, resample).value
        except ZeroDivisionError:
            assert task == "Text2DT"
            continue
        assert -1.0 <= value <= 1.0


def test_stat_types(structured_runs):
    gold, pred = structured_runs["noisy3"]
    stats = sample_stats(gold, pred, tasks=["CMeEE-V2", "CHIP-STS", "MedDG", "IMCS-V2-MRG", "Text2DT"])
    tp, fp, fn = stats["CMeEE-V2"][0]
    assert all(isinstance(v, int) for v in (tp, fp, fn))
    g, p = stats["CHIP-STS"][0]
    assert isinstance(g, str) and isinstance(p, str) and p != ""
    assert len(stats["MedDG"][0]) == 1 and len(stats["IMCS-V2-MRG"][0]) == len(gold["IMCS-V2-MRG"][0]["answer"])
    assert stats["Text2DT"][0].max_edit >= 0
    with pytest.raises(ValueError):
        metric_from_stats("MedDG", stats["MedDG"], mode="other")


def test_records_pipeline_exposes_stats(reference_dir, dev_records):
    from cblue_core.metrics.promptcblue import evaluate_promptcblue

    ev = evaluate_promptcblue(dev_records, noisy(dev_records, 4), on_parse_error="skip")
    for mode in ("official", "clean"):
        for task, s in ev.sample_stats(mode).items():
            again = metric_from_stats(task, s, mode=mode)
            direct = ev.tasks[task] if mode == "official" else ev.clean.per_task[task]
            assert again.details == direct.details
