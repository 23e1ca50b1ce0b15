"""Shared helpers for the renderer tests: hostile strings, an HTML safety checker, and one small
hand-built example per task kind."""
from __future__ import annotations

import re
from dataclasses import replace
from html.parser import HTMLParser

from cblue_core.records import Event, Example, Span, Triple, Turn
from cblue_core.render.base import stylesheet
from cblue_core.tasks import Kind, Label, TaskSpec

IMG = "<img src=x onerror=alert(1)>"
BOLD = "**bold**"
SCRIPT = "<script>alert(1)</script>"
QUOTE = '"onmouseover="x'
EVIL = f"{IMG}{BOLD}{SCRIPT}{QUOTE}"

ALLOWED_TAGS = {"style", "div", "span", "table", "tr", "th", "td", "dl", "dt", "dd", "ol", "li", "br"}
ALLOWED_ATTRS = {"class", "style", "title"}
CLASS_RE = re.compile(r"^cbr[\w\- ]*$")
STYLE_RE = re.compile(r"^(top|padding-bottom|width):\d+(\.\d+)?em$")


class Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._in_style = False
        self._skip = 0  # depth inside a bar label (not part of the visible text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        if tag == "style":
            self._in_style = True
        cls = dict(attrs).get("class") or ""
        if self._skip or "cbr-lbl" in cls.split():
            self._skip += 1

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False
        if self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)
        elif not self._skip:
            self.text.append(data)


def check_html(out: str) -> Checker:
    """Assert the output is made only of the renderer's own tags, classes and styles."""
    low = out.lower()
    assert "<img" not in low and "<script" not in low and "<svg" not in low
    assert "javascript:" not in low and "url(" not in low
    p = Checker()
    p.feed(out)
    p.close()
    assert set(p.tags) <= ALLOWED_TAGS, set(p.tags) - ALLOWED_TAGS
    for name, value in p.attrs:
        assert name in ALLOWED_ATTRS, (name, value)
        if name == "class":
            assert CLASS_RE.match(value or ""), value
        if name == "style":
            assert STYLE_RE.match(value or ""), value
    assert p.styles in ([], [stylesheet()]), "the only <style> is the fixed stylesheet"
    return p


def visible_text(out: str) -> str:
    return "".join(check_html(out).text)


def evil_task(task: TaskSpec) -> TaskSpec:
    """The task with one more label whose code and names are hostile."""
    return replace(task, labels=task.labels + (Label(EVIL, EVIL, EVIL),))


def make_example(task: TaskSpec, s: str = "") -> Example:
    """A small example of ``task``; ``s`` is injected into every string field."""
    return FACTORIES[task.kind](task, s)


def _spans(task, s):
    text = "呼吸肌麻痹伴发热" + s
    spans = [Span(0, 5, task.labels[1].code, "呼吸肌麻痹"), Span(0, 3, task.labels[5].code, "呼吸肌"),
             Span(6, 8, task.labels[1].code, "发热")]
    if s:
        spans.append(Span(8, 8 + len(s), s, s))
    return Example(key="k", index=0, text=text, spans=spans)


def _relations(task, s):
    text = "肺癌可引起咳嗽，肺癌晚期可见咯血" + s
    pred = task.labels[0].code if task.labels else "p"
    triples = [Triple("肺癌", pred, "咳嗽", "疾病", "症状", True),
               Triple("肺癌", task.labels[-1].zh if task.labels else "q", "咯血")]
    if s:
        triples.append(Triple(s, s, s, s, s, True))
        triples.append(Triple("肺癌", s, "不存在的提及" + s))
    return Example(key="k", index=0, text=text, triples=triples)


def _normalization(task, s):
    return Example(key="k", index=0, text="左膝退变伴游离体" + s,
                   terms=["膝骨关节病", "膝关节游离体"] + ([s] if s else []))


def _label(task, s):
    return s or (task.labels[0].code if task.labels else "0")


def _classification(task, s):
    return Example(key="1", index=0, text="年龄18至65岁" + s, label=_label(task, s))


def _pair(task, s):
    return Example(key="1", index=0, text="糖尿病能吃西瓜吗" + s, text2="糖尿病人吃西瓜好吗" + s,
                   label=_label(task, s), meta={"category": "diabetes" + s})


def _events(task, s):
    text = "双肺纹理增多，未见明显结节" + s
    events = [Event("纹理增多", "", ("增多",), ("双肺",)), Event("结节", "否定"),
              Event("不在原文", "不确定")]
    if s:
        events.append(Event(s, s, (s,), (s,)))
    return Example(key="1", index=0, text=text, events=events)


def _dialogue(task, s):
    t1 = "你好，宝宝咳嗽发烧几天了" + s
    t2 = "咳嗽三天了，吃了布洛芬" + s
    sp1 = (Span(5, 7, task.labels[0].code, "咳嗽"), Span(7, 9, "Symptom", "发烧"))
    sp2 = (Span(0, 2, "Symptom", "咳嗽"), Span(7, 10, "Drug", "布洛芬"))
    if s:
        sp2 = sp2 + (Span(11, 11 + len(s), s, s),)
    turns = [Turn("医生", t1, "1", "Request-Symptom", sp1, (("咳嗽", "1"), ("发热", "1"))),
             Turn("患者", t2, "2", s or "Inform-Symptom", sp2, ((s or "咳嗽", s or "1"),))]
    if s:
        turns.append(Turn(s, s, s, s, (), ((s, s),)))
    return Example(key="d1", index=0, text="宝宝咳嗽" + s, turns=turns, terms=["咳嗽:1"] + ([s] if s else []),
                   target="主诉：咳嗽三天" + s + "\n诊断：上呼吸道感染", meta={"diagnosis": "上感" + s})


def _retrieval(task, s):
    return Example(key="q1" + s, index=0, text="新冠疫苗副作用" + s, terms=["d1", "d2"] + ([s] if s else []))


def _generation(task, s):
    turns = [Turn("患者", "胃疼怎么办" + s, "1"), Turn("医生", "疼多久了" + s, "2"), Turn("", "三天" + s, "3")]
    return Example(key="1", index=0, turns=turns, target="建议做胃镜" + s)


def _tree(task, s):
    tree = [{"role": "C", "triples": [["患者", "临床表现", "发热" + s]], "logical_rel": "null"},
            {"role": "D", "triples": [["患者", "治疗药物", "布洛芬"]], "logical_rel": "null"},
            {"role": "D", "triples": [["患者", s or "基本情况", "观察"]], "logical_rel": s or "or"}]
    if s:
        tree.append(s)
    return Example(key="t", index=0, text="发热者用布洛芬" + s,
                   triples=[Triple("患者", "治疗药物", "布洛芬")], meta={"tree": tree})


def _prompt(task, s):
    return Example(key="sid" + s, index=0, text="找出句子中的实体：\n发热\n选项：疾病，症状" + s,
                   label=s or "CMeEE-V2", target="上述句子中的实体包含：\n症状：发热" + s,
                   choices=["疾病", "症状"] + ([s] if s else []),
                   meta={"task_dataset": s or "CMeEE-V2", "task_type": "ner" + s})


def _multiple_choice(task, s):
    text = "## 入院情况: 发热三天\\n## 现病史: 咳嗽" + s + "\n伴咳痰\n## 选项: A 血常规 B 胸片"
    return Example(key="m1", index=0, text=text, label=s or "ID1", target="A" + s,
                   choices=["A: 血常规", "B: 胸片"],
                   meta={"scenario": s or "ID1", "dimension": "Clinical QA" + s,
                         "prompt": "请根据病历选择检查。\n只回答字母" + s,
                         "options": {"A": "血常规", "B": "胸片" + s, **({s: s} if s else {})}})


FACTORIES = {
    Kind.SPANS: _spans, Kind.RELATIONS: _relations, Kind.NORMALIZATION: _normalization,
    Kind.CLASSIFICATION: _classification, Kind.PAIR: _pair, Kind.EVENTS: _events,
    Kind.DIALOGUE: _dialogue, Kind.RETRIEVAL: _retrieval, Kind.GENERATION: _generation,
    Kind.TREE: _tree, Kind.PROMPT: _prompt, Kind.MULTIPLE_CHOICE: _multiple_choice,
}
