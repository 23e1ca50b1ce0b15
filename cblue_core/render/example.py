"""One example of any task as self-contained HTML, dispatching on ``task.kind``.

The renderer of a kind is looked up in :data:`RENDERERS` (no per-task-name branches); adding a
kind means adding one entry. :func:`comparison_html` shows gold and prediction one above the
other with the same renderer and the same error marks.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping

from ..records import Example, Span
from ..tasks import Kind, TaskSpec
from . import kinds
from .base import RenderContext, document, esc, section, text_block
from .bounds import bounded
from .relation_marks import relation_marks
from .relations import render_relations

Renderer = Callable[[Example, TaskSpec, RenderContext], str]

RENDERERS: dict[Kind, Renderer] = {
    Kind.SPANS: kinds.render_spans,
    Kind.RELATIONS: render_relations,
    Kind.NORMALIZATION: kinds.render_normalization,
    Kind.CLASSIFICATION: kinds.render_classification,
    Kind.PAIR: kinds.render_pair,
    Kind.EVENTS: kinds.render_events,
    Kind.DIALOGUE: kinds.render_dialogue,
    Kind.RETRIEVAL: kinds.render_retrieval,
    Kind.GENERATION: kinds.render_generation,
    Kind.TREE: kinds.render_tree,
    Kind.PROMPT: kinds.render_prompt,
    Kind.MULTIPLE_CHOICE: kinds.render_multiple_choice,
}


def renderer_for(task: TaskSpec) -> Renderer:
    return RENDERERS.get(task.kind, kinds.render_fallback)


def example_body(example: Example, task: TaskSpec, *, big: bool = False,
                 marks: Mapping[Span, str] | None = None) -> str:
    """The fragment (no stylesheet) of one example, within :data:`~.bounds.MAX_HTML_CHARS`."""
    body = renderer_for(task)(example, task, RenderContext(big=big, marks=dict(marks or {})))
    return bounded(body, example.text)


def example_html(example: Example, task: TaskSpec, *, big: bool = False,
                 marks: Mapping[Span, str] | None = None) -> str:
    """Self-contained, escaped HTML of ``example`` as a ``task`` record.

    ``marks`` (span -> error category) is used by the kinds that draw spans (entities, and the
    spans of dialogue turns); ``big`` gives large type for demos.
    """
    return document(example_body(example, task, big=big, marks=marks), big=big)


def comparison_html(gold: Example, pred: Example, task: TaskSpec, *,
                    marks: Mapping[Span, str] | None = None, big: bool = False) -> str:
    """Gold above prediction, both with the kind's renderer; ``marks`` apply to both (a gold
    span marked ``missed`` shows in the gold view, a ``spurious`` one in the prediction view).
    Relations are marked on their arcs by matching the gold and predicted triples
    (:func:`~cblue_core.render.relation_marks.relation_marks`)."""
    marks = dict(marks or {})
    ctx = RenderContext(big=big, marks=marks)
    render = renderer_for(task)
    if task.kind is Kind.RELATIONS:  # triples carry no offsets: their marks come from matching them
        gmarks, pmarks = relation_marks(gold.triples, pred.triples)
        gold_html = render_relations(gold, task, ctx, marks=gmarks)
        pred_html = render_relations(pred, task, ctx, marks=pmarks)
    else:
        gold_html, pred_html = render(gold, task, ctx), render(pred, task, ctx)
    gold_html, pred_html = bounded(gold_html, gold.text), bounded(pred_html, pred.text)
    out = ['<div class="cbr-cmp-h">标准答案 / Gold</div>', gold_html,
           '<div class="cbr-cmp-h">模型预测 / Prediction</div>', pred_html]
    if gold.label != pred.label and (gold.label or pred.label):
        out.append(f'<div class="cbr-warn">标签不一致 / labels differ: {esc(gold.label)} → '
                   f'{esc(pred.label)}</div>')
    if (gold.target or pred.target) and gold.target != pred.target and task.kind in (
            Kind.PROMPT, Kind.GENERATION, Kind.MULTIPLE_CHOICE):
        out.append('<div class="cbr-note">输出与参考不同 / output differs from the reference</div>')
    return document("".join(out), big=big)


def input_html(example: Example, *, big: bool = False) -> str:
    """What a model is about to read (the text, and the second text of a pair), and nothing
    else: before a prediction there is no result to draw, and a kind's renderer would say "no
    entities" of a text nothing has looked at yet."""
    body = section("待分析文本", "text to analyse", text_block(example.text))
    if example.text2:
        body += section("第二段文本", "second text", text_block(example.text2))
    return document(body, big=big)
