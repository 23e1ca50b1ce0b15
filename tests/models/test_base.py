"""model_input: what a predictor is given of a gold example."""
from __future__ import annotations

from cblue_core.models.base import model_input
from cblue_core.records import Example, Span, Triple, Turn
from cblue_core.tasks import get_task


def test_answers_are_dropped_inputs_kept():
    gold = Example(key="k", index=3, text="患者头痛", text2="头痛怎么办", label="病情诊断",
                   spans=[Span(2, 4, "sym", "头痛")], triples=[Triple("a", "b", "c")], terms=["x"],
                   target="答案", turns=[Turn("患者", "头痛三天", "1", "Inform-Symptom", (Span(0, 2, "Symptom"),),
                                              (("头痛", "1"),))],
                   choices=["A", "B"], meta={"tree": [{"role": "C"}], "self_report": "头痛"}, raw={"id": "k"})
    x = model_input(get_task("KUAKE-QIC"), gold)
    assert (x.key, x.index, x.text, x.text2, x.choices) == ("k", 3, "患者头痛", "头痛怎么办", ["A", "B"])
    assert x.label is None and not (x.spans or x.triples or x.terms or x.events or x.target or x.raw)
    assert x.turns == [Turn("患者", "头痛三天", "1")]
    assert x.meta == {"self_report": "头痛"}


def test_prompt_sub_task_is_an_input():
    gold = Example(key="s1", index=0, text="找出实体", label="CMeEE", target="答案",
                   meta={"task_dataset": "CMeEE-V2", "task_type": "ner"})
    x = model_input(get_task("PromptCBLUE"), gold)
    assert x.label == "CMeEE" and x.target == "" and x.meta == gold.meta
