"""One fragment renderer per task kind: ``(example, task, ctx) -> HTML fragment``.

:mod:`cblue_core.render.example` maps each :class:`~cblue_core.tasks.Kind` to one of these;
nothing here branches on a task's name. Every value from the example is escaped.
"""
from __future__ import annotations

import re
from typing import Any

from ..records import Example
from ..tasks import CLIMEDBENCH_SCENARIOS, IMCS_ACTS, IMCS_NER_TYPES, IMCS_SR_VALUES, TaskSpec
from .base import RenderContext, badge, chip, esc, heading, label_title, section, task_label_name, text_block
from .dialogue import dialogue_body
from .events import events_body
from .palette import color_for
from .spans import legend_body, marks_legend_body, span_styler, spans_body, valid_spans
from .tree import tree_body


def _label_chip(task: TaskSpec, code: str | None) -> str:
    if code is None or code == "":
        return chip("无标签 / no label", extra="cbr-missing")
    name = task_label_name(task)(code)
    return chip(name, color_for(code, task.labels), title=name)


def _meta_badges(meta: dict[str, Any], keys: tuple[str, ...]) -> str:
    return "".join(badge(f"{k}: {meta[k]}") for k in keys if meta.get(k) not in (None, ""))


def _spans_legend(text: str, spans, labels, marks) -> str:
    present = {str(s.type) for s in valid_spans(text, spans)[0]}
    known = [lab for lab in labels if lab.code in present]
    rest = sorted(present - {lab.code for lab in known})
    out = legend_body(known + rest, order=labels) if present else ""
    drawn = set(valid_spans(text, spans)[0])
    out += marks_legend_body(str(v) for k, v in marks.items() if k in drawn)
    return out


# ---------------------------------------------------------------- kinds


def render_spans(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    styler = span_styler(labels=task.labels, big=ctx.big)
    out = spans_body(ex.text, ex.spans, styler, marks=ctx.marks)
    if not ex.spans:
        out += '<div class="cbr-muted">无实体 / no entities</div>'
    return out + _spans_legend(ex.text, ex.spans, task.labels, ctx.marks)


def render_normalization(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    terms = "".join(chip(t, color_for(t, ex.terms)) for t in ex.terms) or \
        '<span class="cbr-muted">无标准词 / no terms</span>'
    return text_block(ex.text) + section("标准词", f"normalized terms ({len(ex.terms)})", terms)


def render_classification(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    return text_block(ex.text) + section("类别", "label", _label_chip(task, ex.label))


def render_pair(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    f1 = task.fields.get("text", "text1")
    f2 = task.fields.get("text2", "text2")
    extra = "".join(badge(f"{k}: {v}") for k, v in ex.meta.items()
                    if isinstance(v, (str, int, float)) and v != "")
    pair = (f'<div class="cbr-pair"><div class="cbr-box">{heading("文本一", f1)}'
            f'{text_block(ex.text)}</div><div class="cbr-box">{heading("文本二", f2)}'
            f'{text_block(ex.text2)}</div></div>')
    return (f"<div>{extra}</div>" if extra else "") + pair + section(
        "关系", "label", _label_chip(task, ex.label))


def render_events(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    return events_body(ex.text, ex.events, tendency_name=task_label_name(task))


def render_dialogue(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    # Dialogue tasks share IMCS dialogues: names come from the task's labels first, then from
    # the shared IMCS label sets (acts, entity types, symptom statuses).
    span_labels = list(task.labels) + [lab for lab in IMCS_NER_TYPES if lab not in task.labels]
    styler = span_styler(labels=span_labels, big=ctx.big)
    out = []
    if ex.text:
        out.append(section("自述", "self report", text_block(ex.text)))
    diag = ex.meta.get("diagnosis")
    if diag not in (None, ""):
        out.append(badge(f"诊断 diagnosis: {diag}"))
    out.append(dialogue_body(
        ex.turns, span_style=styler, marks=ctx.marks,
        act_name=task_label_name(task, IMCS_ACTS),
        status_name=task_label_name(None, IMCS_SR_VALUES),
        act_order=[lab.code for lab in IMCS_ACTS]))
    spans = [s for t in ex.turns for s in t.spans]
    if spans:
        present = {str(s.type) for s in spans}
        known = [lab for lab in span_labels if lab.code in present]
        rest = sorted(present - {lab.code for lab in known})
        out.append(legend_body([*known, *rest], order=span_labels))
        drawn = set(spans)
        out.append(marks_legend_body(str(v) for k, v in ctx.marks.items() if k in drawn))
    if ex.terms:
        out.append(section("隐含症状", "implicit symptoms",
                           "".join(chip(t) for t in ex.terms)))
    if ex.target:
        out.append(section("诊疗报告", "report (target)", _report(ex.target)))
    return "".join(out)


def _report(target: str) -> str:
    rows = []
    for line in target.splitlines():
        key, sep, value = line.partition("：")
        if not sep:
            key, sep, value = line.partition(":")
        if sep and key.strip() and len(key) <= 12:
            rows.append(f"<dt>{esc(key.strip())}</dt><dd>{esc(value.strip())}</dd>")
        elif line.strip():
            rows.append(f"<dt></dt><dd>{esc(line)}</dd>")
    return f'<dl class="cbr-dl">{"".join(rows)}</dl>' if rows else text_block(target, "cbr-pre")


def render_retrieval(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    docs = "".join(chip(f"{i}. {d}") for i, d in enumerate(ex.terms, start=1)) or \
        '<span class="cbr-muted">无相关文档 / no documents</span>'
    return (section("查询", f"query {ex.key}", text_block(ex.text))
            + section("相关文档", f"relevant doc ids ({len(ex.terms)})", docs))


def render_generation(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    out = []
    if ex.text:
        out.append(text_block(ex.text))
    out.append(section("对话历史", f"history ({len(ex.turns)} turns)", dialogue_body(ex.turns)))
    out.append(section("参考回复", "reference output",
                       text_block(ex.target or "—", "cbr-pre")))
    return "".join(out)


def render_tree(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    return tree_body(ex.text, ex.meta.get("tree"), relation_name=task_label_name(task))


def render_prompt(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    dataset = ex.meta.get("task_dataset") or ex.label or ""
    badges = ""
    if dataset:
        lab = task.label(str(ex.label or dataset))
        title = label_title(lab) if lab else str(dataset)
        badges += badge(f"任务 task_dataset: {dataset}", title=title)
    badges += _meta_badges(ex.meta, ("task_type",))
    out = [f"<div>{badges}</div>" if badges else "",
           section("提示", "prompt (input)", text_block(ex.text, "cbr-pre"))]
    if ex.choices:
        out.append(section("候选答案", f"answer choices ({len(ex.choices)})",
                           "".join(chip(c) for c in ex.choices)))
    out.append(section("参考答案", "target", text_block(ex.target or "—", "cbr-pre")))
    return "".join(out)


_SECTION_RE = re.compile(r"^\s*#{2,}\s*([^:：\n]{1,40}?)\s*[:：]\s?(.*)$")
_SCENARIOS = {s.code: s for s in CLIMEDBENCH_SCENARIOS}


def parse_sections(text: str) -> list[tuple[str | None, str]]:
    """``## field: value`` sections (literal ``\\n`` accepted as a line break); lines before
    the first section have field ``None``; continuation lines join the current section."""
    lines = str(text).replace("\\n", "\n").splitlines()
    out: list[tuple[str | None, str]] = []
    for line in lines:
        m = _SECTION_RE.match(line)
        if m:
            out.append((m.group(1).strip(), m.group(2)))
        elif out and out[-1][0] is not None:
            out[-1] = (out[-1][0], f"{out[-1][1]}\n{line}")
        elif line.strip():
            out.append((None, line))
    return out


def _options(meta: dict[str, Any]) -> list[tuple[str, str]]:
    opts = meta.get("options")
    if isinstance(opts, dict):
        return [(str(k), "" if v is None else str(v)) for k, v in opts.items()]
    if isinstance(opts, (list, tuple)):
        return [(chr(65 + i) if i < 26 else str(i + 1), str(v)) for i, v in enumerate(opts)]
    return []


def render_multiple_choice(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    meta = ex.meta
    scen_code = str(meta.get("scenario") or ex.label or "")
    scen = _SCENARIOS.get(scen_code)
    badges = ""
    if scen_code:
        badges += badge(f"场景 scenario: {task_label_name(task)(scen_code)}")
    dim = meta.get("dimension") or (scen.dimension if scen else "")
    if dim:
        badges += badge(f"维度 dimension: {dim}")
    out = [f"<div>{badges}</div>" if badges else ""]
    if meta.get("prompt"):
        out.append(section("提示", "prompt", text_block(meta["prompt"], "cbr-pre")))
    parts = parse_sections(ex.text)
    if parts:
        rows = "".join(f"<dt>{esc(k) if k is not None else ''}</dt><dd>{esc(v)}</dd>"
                       for k, v in parts)
        out.append(section("输入", "input", f'<dl class="cbr-dl">{rows}</dl>'))
    ref = (ex.target or "").strip()
    answer = scen.answer if scen else ("letter" if len(ref) == 1 else "text")
    opts = _options(meta)
    if opts:
        items = []
        for key, value in opts:
            is_ref = answer == "letter" and ref.upper() == key.upper()
            cls = ' class="cbr-ref"' if is_ref else ""
            items.append(f'<li{cls}><span class="cbr-key">{esc(key)}</span>{esc(value)}'
                         f'{" ✓" if is_ref else ""}</li>')
        out.append(section("选项", f"options ({len(opts)})",
                           f'<ol class="cbr-opts">{"".join(items)}</ol>'))
    elif ex.choices:
        out.append(section("选项", "options", "".join(chip(c) for c in ex.choices)))
    if answer == "order" and ref:
        ref_view = " → ".join(ref)
    else:
        ref_view = ref or "—"
    out.append(section("参考答案", "reference", text_block(ref_view, "cbr-pre")))
    return "".join(out)


def render_fallback(ex: Example, task: TaskSpec, ctx: RenderContext) -> str:
    out = [text_block(ex.text)] if ex.text else []
    if ex.text2:
        out.append(text_block(ex.text2))
    if ex.label not in (None, ""):
        out.append(_label_chip(task, ex.label))
    if ex.target:
        out.append(section("参考", "target", text_block(ex.target, "cbr-pre")))
    return "".join(out)
