"""Clean mode: plain metrics, worked out by hand."""
from __future__ import annotations

import pytest

from cblue_core.metrics.promptcblue import clean, clean_scores, clean_task_score, structure
from cblue_core.metrics.promptcblue.clean import clean_rouge

from ._util import mini_records


def items(*answers):
    return [{"sample_id": f"s{i}", "answer": a} for i, a in enumerate(answers)]


def test_classification_against_fixed_labels():
    gold = items("完全匹配", "部分匹配", "部分匹配", "完全不匹配或者没有参考价值")
    pred = items("完全匹配", "乱写", "完全匹配", "")
    d = clean_task_score("KUAKE-QTR", gold, pred).details
    # TP 1 (完全匹配); FP 1 (完全匹配 for a 部分匹配); FN 3; "乱写" and "" are errors, no class's FP
    assert d["accuracy"] == 0.25
    assert (d["micro_precision"], d["micro_recall"], d["micro_f1"]) == (0.5, 0.25, pytest.approx(1 / 3))
    # classes that occur: 完全不匹配 F 0, 部分匹配 F 0, 完全匹配 F 2/3 -> 2/9
    assert d["macro_f1"] == pytest.approx(2 / 9) and d["invalid"] == 2
    assert clean_task_score("KUAKE-QTR", gold, pred).metric == "micro_f1"
    assert clean_task_score("CHIP-CTC", items("疾病"), items("疾病")).metric == "macro_f1"


def test_ie_conventions():
    g = items([{"entity": "a", "type": "t"}, {"entity": "b", "type": "t"}, {"entity": "c", "type": "t"}])
    d = clean_task_score("CMeEE-V2", g, items([])).details
    assert (d["precision"], d["recall"], d["f1"]) == (0.0, 0.0, 0.0)
    d = clean_task_score("CMeEE-V2", g, items([{"entity": "a", "type": "t"}, {"entity": "x", "type": "t"}])).details
    # tp 1, fp 1, fn 2: P 1/2, R 1/3, F 2/(2+1+2)
    assert (d["precision"], d["recall"], d["f1"]) == (0.5, pytest.approx(1 / 3), 0.4)
    assert clean_task_score("CMeEE-V2", items([]), items([])).details["f1"] == 1.0


def test_rouge_plain():
    assert clean_rouge("建议多喝水。", "建议多喝水。") == (1.0, 1.0, 1.0)
    assert clean_rouge("", "多喝水") == (0.0, 0.0, 0.0)
    assert clean_rouge("", "") == (1.0, 1.0, 1.0)
    # hyp 胃 痛 怎 么 办 vs ref 胃 痛: R1 2*2/7, R2 2*1/(4+1), RL 2*2/7
    r1, r2, rl = clean_rouge("胃痛怎么办", "胃痛")
    assert (r1, r2, rl) == (pytest.approx(4 / 7), pytest.approx(2 / 5), pytest.approx(4 / 7))
    assert clean_rouge("好", "好") == (1.0, 1.0, 1.0)  # no bigram on either side, equal tokens
    assert clean_rouge("好", "坏")[1] == 0.0


def test_text2dt_is_robust():
    tree = [{"role": "C", "logical_rel": "null", "triples": [["患者", "临床表现", "发热"]]},
            {"role": "D", "logical_rel": "null", "triples": [["患者", "治疗药物", "布洛芬"]]},
            {"role": "D", "logical_rel": "null", "triples": []}]
    assert clean_task_score("Text2DT", items(tree), items(tree)).value == 1.0
    # an empty node list is the default node here (the official scorer crashes)
    empty = clean_task_score("Text2DT", items(tree), items([])).details
    assert 0.0 <= empty["tree_edit_ratio"] < 1.0
    bad = [{"role": "D", "logical_rel": "null", "triples": [[1, 2, 3], ["a", "b", "c"]]}]
    d = clean_task_score("Text2DT", items(tree), items(bad)).details
    assert d["dropped"] == 1 and 0.0 <= d["tree_edit_ratio"] <= 1.0


def test_clean_scores_cover_present_tasks_and_carry_issue_counts():
    g = structure(mini_records())
    result = clean_scores(g, g, parse_issues={"MedDG": {"error": 0, "dropped": 2, "invalid": 0}})
    assert len(result.per_task) == 18 and result.score == 100.0
    assert result.to_json()["parse_failures"] == {"MedDG": {"error": 0, "dropped": 2, "invalid": 0}}
    only = clean_scores(g, g, tasks=["CMeIE"])  # either naming
    assert list(only.per_task) == ["CMeIE-V2"]


def test_module_documents_the_differences():
    doc = clean.__doc__
    for phrase in ("official", "无 。", "weighted", "1e-6", "parse", "multiset"):
        assert phrase in doc
