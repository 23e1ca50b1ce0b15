"""The scorer registry: every task's scorer exists, gold against itself scores 1.0, and
score() fills bootstrap intervals."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cblue_core.io.validate import load
from cblue_core.metrics.registry import SCORERS, score, scorer_for
from cblue_core.records import Event, Example, Span, Triple, Turn
from cblue_core.tasks import REGISTRY, TASKS


def test_every_scorer_name_is_registered():
    names = {t.scorer for t in TASKS}
    assert names - {"promptcblue"} <= set(SCORERS)
    assert "promptcblue" not in SCORERS
    with pytest.raises(KeyError, match="promptcblue"):
        scorer_for("PromptCBLUE")


def _synthetic(task) -> list[Example]:
    """Two gold examples with the annotations the task's scorer reads."""
    s = task.scorer
    if s == "spans":
        return [Example("a", 0, "呼吸肌麻痹", spans=[Span(0, 3, "bod"), Span(0, 5, "sym")]),
                Example("b", 1, "肺炎", spans=[Span(0, 2, "dis")])]
    if s in ("cmeie_triples", "causal_triples", "text2dt"):
        return [Example("a", 0, triples=[Triple("肺炎", task.label_codes[0], "发热")]),
                Example("b", 1, triples=[Triple("《A》", task.label_codes[-1], "B")])]
    if s == "terms":
        return [Example("a", 0, terms=["高血压", "糖尿病"]), Example("b", 1, terms=["肺炎"])]
    if s in ("macro_f1", "accuracy"):
        return [Example("a", 0, label=task.label_codes[0]), Example("b", 1, label=task.label_codes[1])]
    if s == "events":
        return [Example("a", 0, events=[Event("腹痛", "", ("剧烈",), ("腹",))]),
                Example("b", 1, events=[Event("发热", "否定")])]
    if s in ("dialogue_spans", "dialogue_acts", "dialogue_symptoms"):
        lab = task.label_codes[0]
        turns = [Turn("医生", "头痛吗", "1", act=lab, spans=(Span(0, 2, lab),), symptoms=(("头痛", "1"),)),
                 Turn("患者", "不痛", "2", act=task.label_codes[1] if len(task.label_codes) > 1 else lab)]
        return [Example("a", 0, turns=turns), Example("b", 1, turns=turns[:1])]
    if s in ("report_rouge", "generation_rouge"):
        return [Example("a", 0, target="主诉：头痛\n诊断：偏头痛"), Example("b", 1, target="多喝水")]
    if s == "mrr10":
        return [Example("q1", 0, terms=["d1", "d2"]), Example("q2", 1, terms=["d3"])]
    if s == "climedbench":
        return [Example("1", 0, label="ID1", target="B", meta={"scenario": "ID1", "options": {"A": "x", "B": "y"}}),
                Example("2", 1, label="SSO", target="DCBA", meta={"scenario": "SSO"})]
    raise AssertionError(f"no synthetic examples for scorer {s}")


@pytest.mark.parametrize("name", [t.name for t in TASKS if t.scorer != "promptcblue"])
def test_gold_against_itself_synthetic(name):
    task = REGISTRY[name]
    gold = _synthetic(task)
    pred = gold
    if task.scorer == "climedbench":   # predictions carry the model's text in target
        pred = [Example(g.key, g.index, target=g.target) for g in gold]
    s = score(task, gold, pred, n_boot=50)
    assert s.value == 1.0, (name, s.metrics)
    assert s.intervals[s.headline] == (1.0, 1.0)
    json.dumps(s.to_dict())          # JSON-ready


@pytest.mark.parametrize("name", [t.name for t in TASKS if t.scorer != "promptcblue"])
def test_empty_input_scores_zero(name):
    s = score(name, [], [], n_boot=10)
    assert s.value == 0.0 and s.intervals[s.headline] == (0.0, 0.0)


SAMPLE_FILES = {
    "CMeEE": "cblue/CMeEE/CMeEE_dev.json", "CMeIE": "cblue/CMeIE/CMeIE_dev.json",
    "CHIP-CDN": "cblue/CHIP-CDN/CHIP-CDN_dev.json", "CHIP-CTC": "cblue/CHIP-CTC/CHIP-CTC_dev.json",
    "CHIP-STS": "cblue/CHIP-STS/CHIP-STS_dev.json", "KUAKE-QIC": "cblue/KUAKE-QIC/KUAKE-QIC_dev.json",
    "KUAKE-QTR": "cblue/KUAKE-QTR/KUAKE-QTR_dev.json", "KUAKE-QQR": "cblue/KUAKE-QQR/KUAKE-QQR_dev.json",
    "CMeEE-V2": "cblue2/CMeEE-V2/CMeEE-V2_dev.json", "CMeIE-V2": "cblue2/CMeIE-V2/CMeIE-V2_dev.jsonl",
    "CHIP-CDEE": "cblue2/CHIP-CDEE/CHIP-CDEE_dev.json",
    "IMCS-V2-NER": "cblue2/IMCS-V2/IMCS-V2_dev.json", "IMCS-V2-DAC": "cblue2/IMCS-V2/IMCS-V2_dev.json",
    "IMCS-V2-SR": "cblue2/IMCS-V2/IMCS-V2_dev.json", "IMCS-V2-MRG": "cblue2/IMCS-V2/IMCS-V2_dev.json",
    "CHIP-MDCFNPC": "cblue2/CHIP-MDCFNPC/CHIP-MDCFNPC_dev.jsonl",
    "KUAKE-IR": "cblue2/KUAKE-IR/KUAKE-IR_dev.tsv", "MedDG": "cblue2/MedDG/MedDG_dev.json",
    "Text2DT": "cblue2/Text2DT/Text2DT_dev.json", "CMedCausal": "cblue2/CMedCausal/CMedCausal_dev.json",
    "CliMedBench": "climedbench/CliMedBench.jsonl",
}


@pytest.mark.parametrize("name", sorted(SAMPLE_FILES))
def test_gold_against_itself_sample_data(sample_data: Path, name):
    path = sample_data / SAMPLE_FILES[name]
    if not path.exists():
        pytest.skip(f"no sample file {path}")
    gold = load(path, name).examples
    pred = gold
    if name == "CliMedBench":
        pred = [Example(g.key, g.index, target=g.target) for g in gold]
    s = score(name, gold, pred, n_boot=100)
    assert s.value == 1.0, (name, s.metrics, s.notes)


def test_score_fills_intervals():
    gold = [Example(str(i), i, spans=[Span(0, 2, "dis"), Span(3, 5, "sym")]) for i in range(30)]
    pred = [Example(str(i), i, spans=[Span(0, 2, "dis")] if i % 3 else [Span(0, 1, "dis")])
            for i in range(30)]
    s = score("CMeEE", gold, pred, n_boot=200, seed=1)
    assert set(s.intervals) == {"f1", "precision", "recall"}
    for name, (lo, hi) in s.intervals.items():
        assert lo <= s.metrics[name] <= hi
    assert s.extra["bootstrap"]["resamples"] == 200
    assert score("CMeEE", gold, pred, n_boot=200, seed=1).intervals == s.intervals
    assert score("CMeEE", gold, pred, intervals=False).intervals == {}
    c = score("CHIP-CTC", [Example(str(i), i, label="Age" if i % 2 else "Disease") for i in range(20)],
              [Example(str(i), i, label="Age") for i in range(20)], n_boot=100)
    assert set(c.intervals) == {"macro_f1", "accuracy"}
