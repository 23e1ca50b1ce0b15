"""Dialogues (IMCS-V2, CHIP-MDCFNPC, MedDG): one bubble per turn, aligned by speaker.

Each bubble shows the speaker, the turn's text with its spans (layered, via
:func:`~cblue_core.render.spans.spans_body`), its dialogue act and its symptoms.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..records import Span, Turn
from .base import chip, document, esc
from .palette import color_for
from .spans import SpanStyle, spans_body

_DOCTOR = {"医生", "doctor", "d", "医师", "大夫"}
_PATIENT = {"患者", "patient", "p", "病人", "病患", "用户"}
_STATUS = {"0": "没有 / absent", "1": "有 / present", "2": "不确定 / undeterminable"}


def speaker_role(speaker: str) -> str:
    """doctor, patient or other: which side a bubble goes (a fixed class, never data)."""
    s = str(speaker).strip().lower()
    if s in _DOCTOR or s.startswith("医生"):
        return "doctor"
    if s in _PATIENT or s.startswith("患者"):
        return "patient"
    return "other"


def turn_html(turn: Turn, *, span_style: Callable[[Span, str], SpanStyle] | None = None,
              marks: Mapping[Span, str] | None = None,
              act_name: Callable[[str], str] | None = None,
              status_name: Callable[[str], str] | None = None,
              act_order: Iterable[object] = ()) -> str:
    role = speaker_role(turn.speaker)
    who = esc(turn.speaker or "—") + (f' <span class="cbr-code">{esc(turn.turn_id)}</span>'
                                       if turn.turn_id else "")
    if span_style is not None and turn.spans:
        body = spans_body(turn.text, turn.spans, span_style, marks=marks)
    else:
        body = f'<div class="cbr-text">{esc(turn.text)}</div>'
    extra = []
    if turn.act:
        name = act_name(turn.act) if act_name else turn.act
        extra.append(chip(f"行为 act: {name}", color_for(turn.act, act_order), title=name))
    for symptom, status in turn.symptoms:
        sname = status_name(status) if status_name else _STATUS.get(str(status), str(status))
        extra.append(chip(f"{symptom} · {sname}", title=f"症状 symptom: {symptom} ({sname})"))
    tail = f"<div>{''.join(extra)}</div>" if extra else ""
    return (f'<div class="cbr-turn cbr-sp-{role}"><div class="cbr-who">{who}</div>'
            f"{body}{tail}</div>")


def dialogue_body(turns: Sequence[Turn], *,
                  span_style: Callable[[Span, str], SpanStyle] | None = None,
                  marks: Mapping[Span, str] | None = None,
                  act_name: Callable[[str], str] | None = None,
                  status_name: Callable[[str], str] | None = None,
                  act_order: Iterable[object] = ()) -> str:
    act_order = list(act_order)
    if not turns:
        return '<div class="cbr-muted">无对话 / no turns</div>'
    return ('<div class="cbr-dlg">' + "".join(
        turn_html(t, span_style=span_style, marks=marks, act_name=act_name,
                  status_name=status_name, act_order=act_order) for t in turns) + "</div>")


def dialogue_html(turns: Sequence[Turn], *, big: bool = False,
                  span_style: Callable[[Span, str], SpanStyle] | None = None,
                  marks: Mapping[Span, str] | None = None,
                  act_name: Callable[[str], str] | None = None,
                  status_name: Callable[[str], str] | None = None) -> str:
    """Self-contained HTML of a dialogue (``span_style`` e.g. from
    :func:`~cblue_core.render.spans.span_styler`)."""
    return document(dialogue_body(turns, span_style=span_style, marks=marks, act_name=act_name,
                                  status_name=status_name), big=big)
