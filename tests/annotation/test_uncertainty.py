"""Uncertainty queues: margin and entropy order classifier examples, the least confident span
orders span examples, training records are left out and counted, each item says why."""
from __future__ import annotations

import pytest

from cblue_core.annotation.label_issues import NoClassProbabilities, ProbabilitiesMissing
from cblue_core.annotation.uncertainty import rank_uncertain
from cblue_core.records import Example, Span
from cblue_core.tasks import get_task

QIC = get_task("KUAKE-QIC")
# index -> class probabilities: 2 is a near tie, 0 sure, 1 split three ways (low margin, high entropy)
DISTS = {
    0: {"病情诊断": 0.97, "病因分析": 0.01, "治疗方案": 0.01, "其他": 0.01},
    1: {"病情诊断": 0.40, "病因分析": 0.30, "治疗方案": 0.30, "其他": 0.0},
    2: {"病情诊断": 0.49, "病因分析": 0.46, "治疗方案": 0.05, "其他": 0.0},
    3: {"病情诊断": 0.10, "病因分析": 0.10, "治疗方案": 0.10, "其他": 0.70},
}


def classified():
    gold = [Example(key=f"q{i}", index=i, text=f"问题{i}", label="其他") for i in DISTS]
    preds = [Example(key=f"q{i}", index=i, label=max(d, key=d.__getitem__), meta={"probabilities": d})
             for i, d in DISTS.items()]
    return gold, preds


def test_margin_puts_the_near_tie_first_and_says_between_which_classes():
    gold, preds = classified()
    result = rank_uncertain(QIC, gold, preds)
    assert [it.idx for it in result.items] == [2, 1, 3, 0]
    assert result.items[0].reason == "margin 0.03 between 病情诊断 and 病因分析"
    assert result.items[0].score == pytest.approx(0.97)
    assert result.examined == 4 and result.excluded_training == 0


def test_entropy_puts_the_three_way_split_first():
    gold, preds = classified()
    result = rank_uncertain(QIC, gold, preds, measure="entropy")
    assert [it.idx for it in result.items] == [1, 3, 2, 0]   # spread mass counts, not only the top two
    assert result.items[0].reason.startswith("entropy 0.79 of its maximum (病情诊断 0.40, ")
    assert 0 < result.items[-1].score < result.items[0].score <= 1


def test_training_records_are_left_out_and_counted():
    gold, preds = classified()
    result = rank_uncertain(QIC, gold, preds, excluded={2, 7})
    assert [it.idx for it in result.items] == [1, 3, 0]
    assert result.excluded_training == 1 and result.examined == 3


def test_span_examples_are_ordered_by_their_least_confident_span():
    text = "发热咳嗽"
    found = {0: [0.9, 0.8], 1: [0.95, 0.52], 2: [], 3: [0.7]}
    gold = [Example(key=f"t{i}", index=i, text=text) for i in found]
    preds = [Example(key=f"t{i}", index=i, text=text,
                     spans=[Span(2 * n, 2 * n + 2, "sym", text[2 * n:2 * n + 2]) for n in range(len(ps))],
                     meta={"span_probabilities": ps}) for i, ps in found.items()]
    result = rank_uncertain(get_task("CMeEE"), gold, preds)
    assert [it.idx for it in result.items] == [1, 3, 0, 2]
    assert result.items[0].reason == "least confident span sym '咳嗽' [2, 4) at 0.52 (of 2)"
    assert result.items[-1].reason == "no predicted span" and result.items[-1].score == 0


def test_missing_probabilities_and_other_tasks_are_refused():
    gold, preds = classified()
    preds[1].meta = {}
    with pytest.raises(ProbabilitiesMissing, match=r"'q1' \(index 1\)"):
        rank_uncertain(QIC, gold, preds)
    with pytest.raises(NoClassProbabilities, match="CHIP-CDN"):
        rank_uncertain(get_task("CHIP-CDN"), gold, preds)
    with pytest.raises(ValueError, match="measure"):
        rank_uncertain(QIC, gold, preds, measure="variance")
