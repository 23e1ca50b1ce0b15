"""evaluate_promptcblue: id matching, parse failures, official vs clean, to_json."""
from __future__ import annotations

import json

import pytest

from cblue_core.metrics.promptcblue import (
    PromptParseError,
    SampleIdError,
    TaskMismatchError,
    evaluate_promptcblue,
)

from ._util import mini_records, with_targets

BAD_T2DT = "根据给定的指南文本抽取的诊疗决策树如下：\n节点0：role=C；logical_rel=null；triples=[[\"患者\", \"临床表现\", \"发热\"]]\n节点1 没有角色"
BAD_CAUSAL = "上述文本中的因果关系三元组如下：\n头实体：感冒；尾实体：发热\n感冒导致发热"


def test_perfect_mini_run():
    gold = mini_records()
    ev = evaluate_promptcblue(gold, list(reversed(gold)))  # order of predictions is free
    out = ev.to_json()
    assert set(out) >= {"score", "tasks", "clean", "parse_failures"}
    assert out["score"] == pytest.approx(99.99999994444444, abs=1e-9)
    assert out["clean"]["score"] == 100.0
    assert all(v == {"error": 0, "dropped": 0, "invalid": 0} for v in out["parse_failures"].values())
    json.dumps(out, ensure_ascii=False)


def test_sample_id_problems_are_named():
    gold = mini_records()
    pred = [r for r in gold if r["sample_id"] != "m3"] + [{**gold[0], "sample_id": "zz"}, gold[5]]
    with pytest.raises(SampleIdError) as info:
        evaluate_promptcblue(gold, pred)
    err = info.value
    assert (err.missing, err.extra, err.duplicates) == (["m3"], ["zz"], ["m5"])
    assert "'m3'" in str(err) and "'zz'" in str(err) and "'m5'" in str(err)
    with pytest.raises(SampleIdError) as info:
        evaluate_promptcblue(gold + [gold[0]], gold)
    assert info.value.gold_duplicates == ["m0"]


def test_task_mismatch_is_named():
    gold = mini_records()
    pred = [dict(r) for r in gold]
    pred[0]["task_dataset"] = "CHIP-CDN"
    with pytest.raises(TaskMismatchError) as info:
        evaluate_promptcblue(gold, pred)
    assert info.value.mismatches == [("m0", "CMeEE-V2", "CHIP-CDN")]
    # the old name of the relation task is no mismatch
    pred = [dict(r, task_dataset="CMeIE") if r["task_dataset"] == "CMeIE-V2" else r for r in gold]
    assert evaluate_promptcblue(gold, pred).official.success


def test_gold_must_parse():
    gold = with_targets(mini_records(), {"Text2DT": BAD_T2DT})
    with pytest.raises(PromptParseError):
        evaluate_promptcblue(gold, gold)


def test_parse_failures_fail_official_and_are_counted():
    gold = mini_records()
    pred = with_targets(gold, {"Text2DT": BAD_T2DT, "CMedCausal": BAD_CAUSAL})
    ev = evaluate_promptcblue(gold, pred)
    assert not ev.official.success and ev.official.error.code == -1
    assert ev.official.error.task == "Text2DT" and "节点1 没有角色" in ev.official.error.message
    out = ev.to_json()
    assert out["score"] is None and out["official"]["success"] is False
    assert out["parse_failures"]["Text2DT"] == {"error": 1, "dropped": 0, "invalid": 0}
    assert out["parse_failures"]["CMedCausal"]["error"] == 1
    assert out["tasks"]["Text2DT"] is None and out["tasks"]["CMedCausal"] is None
    assert "Text2DT" in out["task_errors"]
    assert out["tasks"]["MedDG"] == pytest.approx(99.9999995, abs=1e-9)
    # clean mode scores anyway, with the failing lines skipped, and reports the counts
    assert out["clean"]["parse_failures"]["Text2DT"]["error"] == 1
    causal = out["clean"]["tasks"]["CMedCausal"]
    assert causal["score"] == 100.0  # the good triple still matches; the bad line was skipped
    t2dt = out["clean"]["tasks"]["Text2DT"]
    assert 0 < t2dt["score"] < 100


def test_on_parse_error_skip_scores_officially():
    gold = mini_records()
    pred = with_targets(gold, {"Text2DT": BAD_T2DT})
    ev = evaluate_promptcblue(gold, pred, on_parse_error="skip")
    assert ev.official.success and ev.score is not None
    # predicted tree: one C node only (no children) vs gold C(D, D):
    # node 0 matches (0); gold's extra subtree is costed against missing nodes
    # {"role": "", "logical_rel": "null", "triples": []}: D1 = role 1 + 1 triple, D2 = role 1
    # -> distance 3; maximum = (1 triple + 2*1 node) + (2 triples + 2*2 nodes) = 9 -> 1 - 3/9
    assert ev.tasks["Text2DT"].value == pytest.approx(2 / 3, abs=1e-12)
    assert ev.parse_failures["Text2DT"]["error"] == 1
    with pytest.raises(ValueError):
        evaluate_promptcblue(gold, pred, on_parse_error="ignore")


def test_subset_of_tasks_fails_officially_but_scores_per_task():
    gold = [r for r in mini_records() if r["task_dataset"] not in ("Text2DT", "CMedCausal")]
    ev = evaluate_promptcblue(gold, gold)
    # the 18-task scorer cannot score 16 tasks (Text2DT has no tree: division by zero)
    assert not ev.official.success and ev.official.error.code == 4
    out = ev.to_json()
    assert out["score"] is None and len(out["tasks"]) == 16
    assert out["tasks"]["CMeEE-V2"] == 100.0 and out["clean"]["score"] == 100.0


def test_prediction_without_target_is_rejected():
    gold = mini_records()
    pred = [dict(r) for r in gold]
    del pred[2]["target"]
    with pytest.raises(ValueError, match="m2"):
        evaluate_promptcblue(gold, pred)
