import pytest

from cblue_core.records import Example, Span
from cblue_core.render import RENDERERS, comparison_html, example_html
from cblue_core.render.kinds import parse_sections
from cblue_core.render.tree import tree_positions
from cblue_core.tasks import TASKS, Kind, get_task

from .helpers import BOLD, EVIL, IMG, SCRIPT, check_html, evil_task, make_example, visible_text


def test_every_kind_has_a_renderer():
    assert set(RENDERERS) == set(Kind)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_example_html_for_every_task(task):
    ex = make_example(task)
    out = example_html(ex, task)
    text = visible_text(out)
    for field in (ex.text, ex.text2):
        if field and task.kind is not Kind.MULTIPLE_CHOICE:
            assert field in text
    assert example_html(ex, task, big=True).count('class="cbr cbr-big"') == 1  # one container


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_every_kind_escapes_hostile_strings(task):
    bad_task = evil_task(task)
    ex = make_example(bad_task, EVIL)
    for out in (example_html(ex, bad_task), example_html(ex, bad_task, big=True),
                comparison_html(ex, make_example(bad_task), bad_task,
                                marks={s: EVIL for s in ex.spans})):
        text = visible_text(out)  # raises on any foreign tag, attribute, class or style
        assert BOLD in out and BOLD in text
        assert IMG in text and SCRIPT in text  # shown literally, as text


def test_spans_kind_uses_task_labels_and_legend():
    task = get_task("CMeEE")
    out = example_html(make_example(task), task)
    assert "临床表现 / clinical manifestation (sym): 呼吸肌麻痹" in out
    assert "cbr-legend" in out and "身体部位" in out


def test_relations_kind_predicate_names():
    task = get_task("CMeIE")
    out = example_html(make_example(task), task)
    assert "预防 (prevention)" in out
    task = get_task("CMedCausal")
    out = example_html(make_example(task), task)
    assert "上下位 / hypernym (3)" in out  # stored as the Chinese name, shown with its code


def test_classification_and_pair_label_chips():
    task = get_task("KUAKE-QIC")
    assert "病情诊断 (diagnosis)" in example_html(make_example(task), task)
    task = get_task("CHIP-STS")
    out = example_html(make_example(task), task)
    assert "不同 / different meaning (0)" in out and "cbr-pair" in out and "diabetes" in out
    check_html(example_html(Example("x", 0, "文本", label=None), task))


def test_dialogue_bubbles_acts_symptoms_report():
    task = get_task("IMCS-V2-DAC")
    out = example_html(make_example(task), task)
    assert "cbr-sp-doctor" in out and "cbr-sp-patient" in out
    assert "关于症状的询问" in out  # act name
    assert "咳嗽 · 患有该症状 / present (1)" in out  # symptom with status
    assert "上呼吸道感染" in out and "cbr-dl" in out  # MRG report target
    assert "Symptom: 发烧" in out or "症状 / symptom (Symptom): 发烧" in out


def test_events_table_and_missing_core():
    task = get_task("CHIP-CDEE")
    out = example_html(make_example(task), task)
    assert out.count("<tr>") == 4
    assert "肯定 / present" in out and "否定" in out
    assert "not found in the text" in out  # 不在原文


def test_prompt_and_multiple_choice():
    task = get_task("PromptCBLUE")
    out = example_html(make_example(task), task)
    assert "task_dataset: CMeEE-V2" in out and "cbr-pre" in out and "选项：疾病，症状" in out
    task = get_task("CliMedBench")
    ex = make_example(task)
    out = example_html(ex, task)
    assert "Clinical QA" in out and "<dt>入院情况</dt>" in out and "<dt>现病史</dt>" in out
    assert '<li class="cbr-ref"><span class="cbr-key">A</span>血常规' in out


def test_parse_sections():
    assert parse_sections("前言\n## 入院情况: 发热\\n续行\n## 选项：A 是") == [
        (None, "前言"), ("入院情况", "发热\n续行"), ("选项", "A 是")]


def test_tree_positions_and_table():
    nodes = [{"role": "C"}, {"role": "C"}, {"role": "D"}, {"role": "D"}, {"role": "D"}]
    assert tree_positions(nodes) == [(0, ""), (1, "是 yes"), (2, "是 yes"), (2, "否 no"), (1, "否 no")]
    assert tree_positions([{"role": "C"}, {"role": "D"}]) is None
    task = get_task("Text2DT")
    out = example_html(make_example(task), task)
    assert "治疗药物 (drug)" in out and "条件 / condition" in out


def test_comparison_gold_above_prediction_with_marks():
    task = get_task("CMeEE")
    gold = Example("k", 0, "呼吸肌麻痹伴发热", spans=[Span(0, 5, "sym"), Span(6, 8, "sym")])
    pred = Example("k", 0, "呼吸肌麻痹伴发热", spans=[Span(0, 5, "sym"), Span(6, 8, "dis")])
    marks = {Span(0, 5, "sym"): "correct", Span(6, 8, "sym"): "missed", Span(6, 8, "dis"): "spurious"}
    out = comparison_html(gold, pred, task, marks=marks)
    check_html(out)
    assert out.index("Gold") < out.index("Prediction")
    gold_part, pred_part = out.split("Prediction", 1)
    assert "cbr-m-missed" in gold_part and "cbr-m-spurious" in pred_part
    assert "cbr-m-spurious" not in gold_part.split("</style>", 1)[1]


def test_unknown_and_empty_examples_do_not_crash():
    for task in TASKS:
        check_html(example_html(Example("k", 0), task))
