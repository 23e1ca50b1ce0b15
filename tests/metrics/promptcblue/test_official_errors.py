"""evaluate.py's failure behaviour: typed unsuccessful results with its codes and messages."""
from __future__ import annotations

import copy

from cblue_core.metrics.promptcblue import SCORER_TASKS, score_structured, structure

from ._util import mini_records


def gold():
    return structure(mini_records())


def test_success_shape():
    g = gold()
    result = score_structured(g, copy.deepcopy(g))
    assert result.success and result.error is None
    out = result.to_eval_result()
    assert list(out) == ["success", "score", "scoreJson"]
    assert list(out["scoreJson"])[-1] == "score" and len(out["scoreJson"]) == 19
    assert list(result.per_task) == list(SCORER_TASKS)
    assert result.per_task["KUAKE-QTR"].score_key == "KUAKE-QTR-Micro-F1"
    assert result.per_task["KUAKE-QIC"].metric == "macro-f1"


def test_missing_task_in_prediction_is_error_1():
    g = gold()
    p = copy.deepcopy(g)
    del p["MedDG"]
    result = score_structured(g, p)
    assert not result.success and result.score == 0 and result.score_json == {}
    assert result.error.code == 1 and result.error.task == "MedDG"
    assert result.to_eval_result() == {
        "errorDetail": "There are missing predictions in the submission, please check again!",
        "errorMsg": "There are missing predictions in the submission, please check again!",
        "score": 0, "scoreJson": {}, "success": False}


def test_length_mismatch_is_error_1():
    g = gold()
    p = copy.deepcopy(g)
    p["CHIP-STS"].append({"sample_id": "extra", "answer": "是的"})
    assert score_structured(g, p).error.code == 1


def test_missing_task_in_gold_is_error_99():
    g = gold()
    del g["CMedCausal"]
    result = score_structured(g, gold())
    assert result.error.code == 99 and result.error.message == "" and result.error.detail == "Other error unknown!"


def test_sample_id_mismatch_ends_as_error_4():
    g = gold()
    g["KUAKE-IR"].append({"sample_id": "x2", "answer": "不相关"})
    p = copy.deepcopy(g)
    p["KUAKE-IR"].reverse()
    result = score_structured(g, p)
    # error 3 is written first, then the metric's own assertion overwrites it with error 4
    assert result.error.code == 4 and result.error.task == "KUAKE-IR"
    assert result.to_eval_result()["errorMsg"] == "sample ordering is wrong!"
    assert result.to_eval_result()["errorDetail"] == "Error in calculating metrics!"


def test_wrong_item_formats_end_as_error_4_with_python_messages():
    g = gold()
    p = copy.deepcopy(g)
    p["MedDG"][0] = "多喝水"
    assert score_structured(g, p).error.message == "string indices must be integers, not 'str'"
    p = copy.deepcopy(g)
    del p["CHIP-CTC"][0]["sample_id"]
    assert score_structured(g, p).error.message == "'sample_id'"
    p = copy.deepcopy(g)
    p["CMeEE-V2"][0]["answer"] = "发热"
    assert score_structured(g, p).error.message == "sample format is wrong!"


def test_metric_failures_are_error_4():
    g = gold()
    p = copy.deepcopy(g)
    p["Text2DT"][0]["answer"] = []  # an empty node list: IndexError in the node matrix
    result = score_structured(g, p)
    assert (result.error.code, result.error.message) == (4, "list index out of range")
    p["Text2DT"][0]["answer"] = [{"role": "D", "logical_rel": "null", "triples": [[1, 2, 3]]}]
    assert score_structured(g, p).error.message == "'int' object has no attribute 'lower'"
    g2 = copy.deepcopy(g)
    g2["CHIP-CTC"][0]["answer"] = ""  # empty gold label: bare assertion
    assert (score_structured(g2, g).error.code, score_structured(g2, g).error.message) == (4, "")
    # no triple in any tree: ZeroDivisionError
    g3 = copy.deepcopy(g)
    g3["Text2DT"][0]["answer"] = [{"role": "D", "logical_rel": "null", "triples": []}]
    assert score_structured(g3, g3).error.message == "division by zero"


def test_inputs_are_not_modified():
    g = gold()
    before = copy.deepcopy(g)
    score_structured(g, g)
    assert g == before
