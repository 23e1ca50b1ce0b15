"""The official reference outputs (shared/promptcblue/reference): parse and score them exactly."""
from __future__ import annotations

import json

import pytest

from cblue_core.metrics.promptcblue import PARSER_TASKS, evaluate_promptcblue, score_structured, structure

from ._util import comparable, load_json, load_jsonl

TOL = 1e-9
RUNS = {"perfect": "pred_perfect.jsonl", "empty": "pred_empty.jsonl"}


def assert_close_tree(mine, ref, path="") -> None:
    """Every number in ``ref`` is within TOL of the same entry of ``mine``; keys must match."""
    if isinstance(ref, dict):
        assert isinstance(mine, dict) and set(mine) == set(ref), f"{path}: keys {sorted(mine)} != {sorted(ref)}"
        for k in ref:
            assert_close_tree(mine[k], ref[k], f"{path}/{k}")
    elif isinstance(ref, bool) or not isinstance(ref, (int, float)):
        assert mine == ref, f"{path}: {mine!r} != {ref!r}"
    else:
        assert isinstance(mine, (int, float)) and abs(mine - ref) <= TOL, f"{path}: {mine!r} != {ref!r}"


def test_gold_parse_matches_official(reference_dir, dev_records):
    mine = structure(dev_records)
    assert list(mine) == list(PARSER_TASKS)
    for name in RUNS:
        assert comparable(mine) == comparable(load_json(reference_dir / name / "gold_structured.json"))
    assert comparable(mine) == comparable(load_json(reference_dir / "inputs" / "official_dev_structured_v2.json"))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_pred_parse_matches_official(reference_dir, name):
    mine = structure(load_jsonl(reference_dir / "inputs" / RUNS[name]))
    ref = load_json(reference_dir / name / "pred_structured.json")
    assert list(mine) == list(ref)
    assert comparable(mine) == comparable(ref)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_scores_of_official_structured_files(reference_dir, name):
    gold = load_json(reference_dir / name / "gold_structured.json")
    pred = load_json(reference_dir / name / "pred_structured.json")
    result = score_structured(gold, pred)
    assert result.success and result.error is None
    assert_close_tree(result.to_eval_result(), load_json(reference_dir / name / "eval_result.json"))
    assert_close_tree(result.all_scores(), load_json(reference_dir / name / "all_scores.json"))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_end_to_end_from_records(reference_dir, dev_records, name):
    evaluation = evaluate_promptcblue(dev_records, load_jsonl(reference_dir / "inputs" / RUNS[name]))
    ref = load_json(reference_dir / name / "eval_result.json")
    out = evaluation.to_json()
    assert abs(out["score"] - ref["score"]) <= TOL
    assert_close_tree(evaluation.official.to_eval_result(), ref)
    for task, value in out["tasks"].items():
        key = evaluation.tasks[task].score_key
        assert abs(value - ref["scoreJson"][key]) <= TOL, task
    assert set(out["tasks"]) == set(PARSER_TASKS)
    assert all(c["error"] == 0 for c in out["parse_failures"].values())
    if name == "perfect":
        assert all(c == {"error": 0, "dropped": 0, "invalid": 0} for c in out["parse_failures"].values())
    else:  # an empty label is outside every label list
        assert out["parse_failures"]["CHIP-STS"]["invalid"] == 5
    json.dumps(out, ensure_ascii=False)  # serialisable


def test_perfect_and_empty_headline_numbers(reference_dir):
    """The numbers quoted in benchmarks.md section 4."""
    perfect = score_structured(load_json(reference_dir / "perfect" / "gold_structured.json"),
                               load_json(reference_dir / "perfect" / "pred_structured.json"))
    assert perfect.score == pytest.approx(99.99999994444444, abs=TOL)
    assert perfect.score_json["MedDG-RougeL"] == pytest.approx(99.9999995, abs=TOL)
    assert perfect.score_json["IMCS-V2-MRG-RougeL"] == pytest.approx(99.9999995, abs=TOL)
    empty = score_structured(load_json(reference_dir / "empty" / "gold_structured.json"),
                             load_json(reference_dir / "empty" / "pred_structured.json"))
    assert empty.score == pytest.approx(17.780813153364885, abs=TOL)
    assert empty.score_json["CHIP-STS-Micro-F1"] == pytest.approx(45.0, abs=TOL)
    assert empty.score_json["Text2DT-TreeLenvRatio"] == pytest.approx(23.33333333333333, abs=TOL)
    # TP = 0 -> the integer 0, as the official code returns
    assert empty.per_task["CMeEE-V2"].details == {"precision": 0, "recall": 0, "f1": 0}
