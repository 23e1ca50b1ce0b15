"""The published toy examples: older 16-task naming (``CMeIE``), made by the older parser.

* ``variant="legacy"`` (the older post-processor) must reproduce ``results.json`` and
  ``dev_structured.json`` exactly, keys and key order included.
* The HEAD parse (``CMeIE`` accepted as an alias) differs from them only in the documented
  ways: the key ``CMeIE-V2`` instead of ``CMeIE`` and two more (empty) keys, Text2DT and
  CMedCausal. The other documented parser differences (ASCII punctuation, the CHIP-MDCFNPC
  replacement label) do not occur in these files; they are asserted on hand-made records.
"""
from __future__ import annotations

import pytest

from cblue_core.metrics.promptcblue import (
    PARSER_TASKS,
    UnknownTaskError,
    parse_generation,
    score_structured,
    structure,
)
from cblue_core.metrics.promptcblue.tasks import LEGACY_PARSER_TASKS

from ._util import comparable, load_json, load_jsonl

PAIRS = [("test_predictions.json", "results.json"), ("dev.json", "dev_structured.json")]


@pytest.mark.parametrize("source,reference", PAIRS)
def test_legacy_variant_reproduces_old_files(toy_dir, source, reference):
    records = load_jsonl(toy_dir / source)
    assert {r["task_dataset"] for r in records} >= {"CMeIE"}
    old = load_json(toy_dir / reference)
    mine = structure(records, variant="legacy")
    assert list(mine) == list(old) == list(LEGACY_PARSER_TASKS)
    assert comparable(mine) == comparable(old)


@pytest.mark.parametrize("source,reference", PAIRS)
def test_head_parse_differs_only_as_documented(toy_dir, source, reference):
    records = load_jsonl(toy_dir / source)
    old = load_json(toy_dir / reference)
    head = structure(records)
    assert list(head) == list(PARSER_TASKS)
    # documented difference 1: the relation task is keyed CMeIE-V2
    assert "CMeIE" in old and "CMeIE" not in head
    assert comparable({"x": head["CMeIE-V2"]}) == comparable({"x": old["CMeIE"]})
    # documented difference 2: the HEAD results.json always has the two newer tasks
    assert set(head) - {"CMeIE-V2"} == set(old) - {"CMeIE"} | {"Text2DT", "CMedCausal"}
    assert head["Text2DT"] == [] and head["CMedCausal"] == []
    # everything else is identical
    for task in old:
        if task != "CMeIE":
            assert comparable({task: head[task]}) == comparable({task: old[task]}), task
    # and no record uses ASCII ':' ',' ';' (where the older parser's replacement would differ)
    assert not any(c in r["target"] for r in records for c in ":,;")


def test_toy_predictions_are_empty_generations(toy_dir):
    records = load_jsonl(toy_dir / "test_predictions.json")
    assert len(records) == 80 and all(r["target"] == "" for r in records)
    results = load_json(toy_dir / "results.json")
    assert results["CHIP-STS"][0]["answer"] == "" and results["CMeEE-V2"][0]["answer"] == []


def test_old_files_fed_to_head_scorer_fail_as_documented(toy_dir):
    old = load_json(toy_dir / "dev_structured.json")
    # gold without the task CMeIE-V2: evaluate.py's assertion, caught as error 99, empty message
    result = score_structured(old, old)
    assert not result.success and result.error.code == 99 and result.error.message == ""
    assert result.to_eval_result() == {"errorDetail": "Other error unknown!", "errorMsg": "", "score": 0,
                                       "scoreJson": {}, "success": False}
    # renamed, the 16-task data still lacks Text2DT trees: ZeroDivisionError -> error 4
    head = structure(load_jsonl(toy_dir / "dev.json"))
    result = score_structured(head, head)
    assert not result.success and result.error.code == 4 and result.error.task == "Text2DT"
    assert result.error.message == "division by zero"


# --------------------------------------------------------------- documented parser differences


def test_legacy_replaces_ascii_punctuation_head_does_not():
    gen = "上述句子中的实体包含：\n疾病实体:发热,咳嗽"
    legacy = parse_generation("CMeEE-V2", gen, ["疾病"], variant="legacy").answer
    head = parse_generation("CMeEE-V2", gen, ["疾病"]).answer
    assert legacy == [{"entity": "发热", "type": "疾病"}, {"entity": "咳嗽", "type": "疾病"}]
    # HEAD: the line still starts with "疾病实体", the ASCII colon keeps the prefix in the mention
    assert head == [{"entity": "疾病实体:发热,咳嗽", "type": "疾病"}]


def test_legacy_replaces_at_most_100_of_each():
    gen = ",".join(str(i) for i in range(102))  # 101 ASCII commas
    choices = [str(i) for i in range(102)]
    legacy = parse_generation("CHIP-CDN", gen, choices, variant="legacy")
    # the first 100 commas became "，"; the last piece "100,101" is no choice and is filtered out
    assert [a["entity"] for a in legacy.answer] == [str(i) for i in range(100)]
    assert [i.line for i in legacy.issues] == ["100,101"]
    # HEAD splits on "，" only: the whole line is one piece, not a choice
    assert parse_generation("CHIP-CDN", gen, choices).answer == []


def test_mdcfnpc_invalid_attribute_replacement_differs():
    choices = ["已有症状疾病或者假设未来可能发生的疾病等", "未患有症状疾病",
               "没有回答、不知道、回答不明确或者模棱两可不好推断", "无实际意义的不标注或者和病人当前的状态独立不标注"]
    gen = "上述对话中临床发现实体以及其阴阳性判别如下：\n咳嗽：阳性"
    head = parse_generation("CHIP-MDCFNPC", gen, choices).answer
    legacy = parse_generation("CHIP-MDCFNPC", gen, choices, variant="legacy").answer
    assert head == [{"entity": "咳嗽", "attr": "不标注"}]
    assert legacy == [{"entity": "咳嗽", "attr": "无实际意义的不标注或者和病人当前的状态独立不标注"}]


def test_legacy_has_no_text2dt_or_cmedcausal():
    for task in ("Text2DT", "CMedCausal"):
        with pytest.raises(UnknownTaskError):
            parse_generation(task, "", variant="legacy")
