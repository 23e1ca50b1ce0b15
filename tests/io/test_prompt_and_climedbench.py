"""PromptCBLUE prompt records in both namings, and CliMedBench items in the documented shape."""
from __future__ import annotations

import json
from collections import Counter

from cblue_core.io.validate import load, validate
from cblue_core.tasks import PROMPT_TASKS


def test_toy_files_old_naming(promptcblue_dir):
    ds = load(promptcblue_dir / "toy_examples/dev.json", "PromptCBLUE")
    tasks = Counter(ex.meta["task_dataset"] for ex in ds.examples)
    assert "CMeIE" in tasks and "CMeIE-V2" not in tasks and len(tasks) == 16
    assert {ex.label for ex in ds.examples} <= set(PROMPT_TASKS)  # canonical names
    assert not ds.report.warnings


def test_reference_file_new_naming(promptcblue_dir):
    ds = load(promptcblue_dir / "reference/inputs/dev_v2.jsonl", "PromptCBLUE")
    assert ds.report.records == 86
    assert {ex.meta["task_dataset"] for ex in ds.examples} == set(PROMPT_TASKS)


def test_content_detection_without_task(promptcblue_dir):
    assert load(promptcblue_dir / "toy_examples/test.json").report.task == "PromptCBLUE"


def test_unknown_prompt_task_is_a_warning(tmp_path):
    rec = {"input": "问题", "target": "答案", "answer_choices": None, "task_type": "cls",
           "task_dataset": "NoSuchTask", "sample_id": "dev-1"}
    p = tmp_path / "dev.json"
    p.write_text(json.dumps(rec, ensure_ascii=False) + "\n", encoding="utf-8")
    rep = validate(p, "PromptCBLUE").report
    assert rep.ok and rep.warnings[0].code == "unknown_label"


def test_climedbench_item_shape(tmp_path):
    items = [
        {"id": "1", "scenario": "BKT", "dimension": "Knowledge Application", "prompt": "请回答",
         "input": "## 问题: 高血压首选药物？\n## 选项: A: 甲 B: 乙", "options": {"A": "甲", "B": "乙"},
         "reference": "A"},
        {"id": "2", "scenario": "SSO", "prompt": "排序", "input": "## 步骤", "options": ["切开", "缝合"],
         "reference": "AB"},
        {"id": "3", "scenario": "XYZ", "prompt": "", "input": "", "reference": "自由文本"},
    ]
    p = tmp_path / "CliMedBench.jsonl"
    p.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    ds = load(p)
    assert ds.report.task == "CliMedBench" and ds.report.records == 3
    assert ds.examples[1].meta["dimension"] == "Reasoning"          # from the scenario table
    assert ds.examples[1].meta["options"] == {"A": "切开", "B": "缝合"}
    assert [w.field for w in ds.report.warnings] == ["scenario"]     # unknown scenario listed
