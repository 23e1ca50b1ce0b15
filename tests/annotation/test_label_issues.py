"""Confident learning over a run's class probabilities: planted gold errors come first, the
model's training records are left out and counted, tasks and runs without class
probabilities are refused."""
from __future__ import annotations

import pytest

from cblue_core.annotation.label_issues import (
                                                 NoClassProbabilities,
                                                 ProbabilitiesMissing,
                                                 find_label_issues,
)
from cblue_core.records import Example
from cblue_core.tasks import get_task

QIC = get_task("KUAKE-QIC")
CLASSES = ("病情诊断", "病因分析", "治疗方案", "其他")
# Planted errors: position -> (the true label the model believes, its confidence). Higher
# confidence in another class is stronger evidence that gold is wrong.
FLIPS = {7: ("治疗方案", 0.97), 19: ("其他", 0.93), 30: ("病因分析", 0.89)}


def dist(best: str, p: float, classes=CLASSES) -> dict[str, float]:
    rest = (1 - p) / (len(classes) - 1)
    return {c: p if c == best else rest for c in classes}


def planted(n: int = 48, task=QIC, classes=CLASSES, flips=FLIPS):
    """Gold examples with labels cycling over ``classes``, some flipped to a wrong class; a run
    whose probabilities point at the true label (0.85 on the clean records)."""
    gold, preds = [], []
    for i in range(n):
        true = classes[i % len(classes)]
        given = true
        if i in flips:
            true, p = flips[i]
            given = next(c for c in classes if c != true)
        else:
            p = 0.85
        gold.append(Example(key=f"s{i}", index=i, text=f"问题{i}", text2=f"问题{i}b", label=given))
        preds.append(Example(key=f"s{i}", index=i, label=true, meta={"probabilities": dist(true, p, classes)}))
    return task, gold, preds


def test_planted_errors_are_found_and_ranked_first():
    task, gold, preds = planted()
    result = find_label_issues(task, gold, preds)
    assert [i.idx for i in result.issues] == [7, 19, 30]   # most confident evidence first
    assert result.excluded_training == 0 and result.examined == 48
    first = result.issues[0]
    assert (first.key, first.given, first.suggested) == ("s7", gold[7].label, "治疗方案")
    assert first.reason == f"model gives 0.97 to 治疗方案, gold says {gold[7].label} (0.01)"
    assert 0 <= first.score < result.issues[1].score < result.issues[2].score


def test_normalized_margin_ranking_finds_the_same_errors():
    task, gold, preds = planted()
    result = find_label_issues(task, gold, preds, rank_by="normalized_margin")
    assert [i.idx for i in result.issues] == [7, 19, 30]


def test_training_records_are_left_out_and_counted():
    task, gold, preds = planted()
    result = find_label_issues(task, gold, preds, excluded={7, 8, 9, 500})
    assert [i.idx for i in result.issues] == [19, 30]
    assert result.excluded_training == 3   # 500 is not in the split
    assert result.examined == 45


def test_pair_task_with_numeric_codes():
    classes = ("0", "1", "2")
    task, gold, preds = planted(task=get_task("KUAKE-QQR"), classes=classes,
                                flips={4: ("2", 0.95), 11: ("0", 0.9)})
    result = find_label_issues(task, gold, preds)
    assert [i.idx for i in result.issues] == [4, 11]
    assert result.issues[0].suggested == "2"


def test_records_without_gold_label_are_not_examined():
    task, gold, preds = planted()
    gold[7].label = None
    result = find_label_issues(task, gold, preds)
    assert [i.idx for i in result.issues] == [19, 30] and result.examined == 47


def test_rounded_probabilities_are_accepted():
    task, gold, preds = planted()
    for p in preds:   # stored probabilities are rounded, so rows need not sum to exactly 1
        p.meta["probabilities"] = {k: round(v, 2) for k, v in p.meta["probabilities"].items()}
    assert [i.idx for i in find_label_issues(task, gold, preds).issues] == [7, 19, 30]


def test_run_without_probabilities_is_refused():
    task, gold, preds = planted()
    preds[5].meta = {}
    with pytest.raises(ProbabilitiesMissing, match=r"record 's5' \(index 5\)"):
        find_label_issues(task, gold, preds)


def test_missing_prediction_is_refused():
    task, gold, preds = planted()
    with pytest.raises(ProbabilitiesMissing, match="s3"):
        find_label_issues(task, gold, preds[:3] + preds[4:])


def test_span_task_is_refused():
    gold = [Example(key="a", index=0, text="发热")]
    with pytest.raises(NoClassProbabilities, match="CMeEE"):
        find_label_issues(get_task("CMeEE"), gold, gold)


def test_unknown_ranking_is_refused():
    task, gold, preds = planted()
    with pytest.raises(ValueError, match="rank_by"):
        find_label_issues(task, gold, preds, rank_by="entropy")
