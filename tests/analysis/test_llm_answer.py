"""An LLM answer read as the benchmark reads it and marked item by item against the gold."""
from __future__ import annotations

from pathlib import Path

from cblue_core.analysis.llm_answer import MISSED, RIGHT, WRONG, judge_llm_answer
from cblue_core.io.validate import load
from cblue_core.records import Example
from cblue_core.tasks import get_task

ROOT = Path(__file__).resolve().parents[2]
PROMPT = get_task("PromptCBLUE")
CLIMED = get_task("CliMedBench")


def prompt_example(i: int) -> Example:
    return load(ROOT / "sample_data/promptcblue/dev.json", PROMPT).examples[i]


def answered(gold: Example, text: str) -> Example:
    return Example(key=gold.key, index=gold.index, text=gold.text, label=gold.label,
                   choices=list(gold.choices), target=text, meta=dict(gold.meta))


def test_ner_entities_are_marked_right_wrong_and_missed():
    gold = prompt_example(0)     # CMeEE-V2: 川崎病, 冠状动脉瘤 (疾病), ...
    v = judge_llm_answer(PROMPT, gold, answered(gold, "上述句子中的实体包含：\n疾病实体：川崎病，杨梅舌\n"
                                                     "临床表现实体：\n身体部位实体："))
    marks = {(i.text, i.mark) for i in v.items}
    assert ("entity：川崎病；type：疾病", RIGHT) in marks and ("entity：杨梅舌；type：疾病", WRONG) in marks
    assert ("entity：冠状动脉瘤；type：疾病", MISSED) in marks and v.correct is False
    assert judge_llm_answer(PROMPT, gold, answered(gold, gold.target)).correct is True


def test_a_classification_answer_is_one_item_and_the_gold_is_shown_when_wrong():
    gold = prompt_example(14)    # IMCS-V2-DAC: 关于用药建议的提问
    v = judge_llm_answer(PROMPT, gold, answered(gold, "关于症状的询问"))
    assert [(i.text, i.mark) for i in v.items] == [("关于症状的询问", WRONG), ("关于用药建议的提问", MISSED)]
    assert judge_llm_answer(PROMPT, None, answered(gold, "关于症状的询问")).items[0].mark is None


def test_climedbench_letters_orders_and_free_text():
    options = {"A": "心电图", "B": "胸片", "C": "血常规"}
    item = Example("1", 0, label="ID1", target="A", meta={"scenario": "ID1", "options": options})
    v = judge_llm_answer(CLIMED, item, Example("1", 0, target="答案：B"))
    assert [(i.text, i.mark) for i in v.items] == [("B", WRONG), ("A", MISSED)] and v.correct is False
    assert judge_llm_answer(CLIMED, item, Example("1", 0, target="应选A")).correct is True
    assert judge_llm_answer(CLIMED, item, Example("1", 0, target="不知道")).notes[0].startswith("no answer letter")
    order = Example("2", 1, label="SSO", target="DCBA", meta={"scenario": "SSO"})
    v = judge_llm_answer(CLIMED, order, Example("2", 1, target="顺序：D→C→A→B"))
    assert (v.items[0].text, v.items[0].mark) == ("DCAB", WRONG)
    assert v.score is not None and 0 < v.score < 1 and "Kendall tau" in v.notes[0]
