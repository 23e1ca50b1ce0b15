"""Nested entity spans as stacked, coloured layers (the displaCy "span" style).

The text stays on its line(s); every span is an underline bar at its own depth level below the
characters, with its type label at the start of the bar. Overlapping spans (nested or crossing)
never share a level: levels are assigned greedily, shortest span first, so inner entities sit
closest to the text and outer ones below them, like brackets.

The text is cut at every span boundary (and at line breaks) into segments; each covered segment
is an ``inline-block`` carrying one absolutely-positioned bar per covering span, so long Chinese
sentences still wrap between segments. Everything from data is escaped; colours come from the
palette classes; bar positions are numbers computed here.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..records import Span
from ..tasks import Label
from .base import chip, document, esc, label_title
from .marks import MARK_STYLES, MarkStyle, mark_style
from .palette import Colour, color_for

TOP_EM = 1.5        # first bar, from the segment's top
STEP_EM = 1.05      # distance between levels
CHUNK = 8           # longest segment drawn as one inline-block (longer ones are cut for wrapping)


@dataclass(frozen=True)
class SpanStyle:
    """How one span is drawn; built by the public functions, consumed by :func:`spans_body`."""

    colour: Colour
    short: str        # text of the label at the start of the bar
    tooltip: str      # full tooltip (unescaped)


def valid_spans(text: str, spans: Iterable[Span]) -> tuple[list[Span], list[Span]]:
    """(drawable spans, skipped spans): empty, reversed or out-of-range spans are skipped,
    exact duplicates are drawn once."""
    kept: dict[Span, None] = {}
    skipped: list[Span] = []
    n = len(text)
    for s in spans:
        ok = (isinstance(s.start, int) and isinstance(s.end, int)
              and not isinstance(s.start, bool) and not isinstance(s.end, bool)
              and 0 <= s.start < s.end <= n)
        if ok:
            kept.setdefault(s, None)
        else:
            skipped.append(s)
    return sorted(kept, key=lambda s: (s.start, -s.end, str(s.type))), skipped


def label_width(label: str) -> int:
    """Approximate width of a bar label, in text characters (CJK text is ~1em a character;
    the label is set at .58em, a wide character ~.58em, a narrow one ~.36em, plus padding)."""
    em = 0.45 + sum(0.58 if ord(ch) > 0x2E7F else 0.36 for ch in label)
    return max(1, int(em + 0.99))


def assign_levels(spans: Sequence[Span], widths: Sequence[int] | None = None) -> list[int]:
    """A level per span such that overlapping spans never share one (shortest first).

    With ``widths`` (each span's label width in characters, see :func:`label_width`) a span
    also keeps its level free of the label of a span starting just before it, so labels on
    one level never overlap.
    """
    def reach(i: int) -> int:
        s = spans[i]
        return max(s.end, s.start + widths[i]) if widths is not None else s.end

    order = sorted(range(len(spans)),
                   key=lambda i: (spans[i].end - spans[i].start, spans[i].start, str(spans[i].type)))
    levels = [0] * len(spans)
    placed: list[int] = []
    for i in order:
        s, r = spans[i], reach(i)
        used = {levels[j] for j in placed if spans[j].start < r and s.start < reach(j)}
        lvl = 0
        while lvl in used:
            lvl += 1
        levels[i] = lvl
        placed.append(i)
    return levels


def _boundaries(text: str, spans: Sequence[Span]) -> list[int]:
    cuts = {0, len(text)}
    for s in spans:
        cuts.add(s.start)
        cuts.add(s.end)
    for i, ch in enumerate(text):
        if ch in "\r\n":
            cuts.add(i)
            cuts.add(i + 1)
    ordered = sorted(c for c in cuts if 0 <= c <= len(text))
    out: list[int] = []
    for a, b in zip(ordered, ordered[1:] + [None]):
        out.append(a)
        if b is not None:  # cut long segments so that they can wrap
            out.extend(range(a + CHUNK, b, CHUNK))
    return out


def spans_body(text: str, spans: Iterable[Span], style_of: Callable[[Span, str], SpanStyle], *,
               marks: Mapping[Span, str] | None = None) -> str:
    """The text with its spans as a fragment (no stylesheet); used by every renderer."""
    marks = marks or {}
    kept, skipped = valid_spans(text, spans)
    styles = [style_of(s, text[s.start:s.end]) for s in kept]
    mstyles: list[MarkStyle | None] = [mark_style(marks[s]) if s in marks else None for s in kept]
    levels = assign_levels(kept, [label_width((f"{m.symbol} " if m else "") + st.short)
                                  for st, m in zip(styles, mstyles)])
    tips = []
    for s, st, m in zip(kept, styles, mstyles):
        tip = st.tooltip
        if m is not None:
            raw = str(marks[s])
            name = f"{m.zh} / {m.en}" if m.key != "other" else f"{raw}"
            tip += f" [{m.symbol} {name}]"
        tips.append(tip)

    starting: dict[int, list[int]] = {}
    ending: dict[int, list[int]] = {}
    for i, s in enumerate(kept):
        starting.setdefault(s.start, []).append(i)
        ending.setdefault(s.end, []).append(i)

    bounds = _boundaries(text, kept)
    active: set[int] = set()
    out: list[str] = ['<div class="cbr-text">']
    for a, b in itertools.pairwise(bounds):
        for i in ending.get(a, ()):
            active.discard(i)
        for i in starting.get(a, ()):
            active.add(i)
        piece = text[a:b]
        if not active or piece in ("\n", "\r", "\r\n"):
            out.append(esc(piece))
            continue
        act = sorted(active, key=lambda i: levels[i])
        deepest = max(levels[i] for i in act)
        pad = TOP_EM - 0.7 + deepest * STEP_EM
        bars = []
        for i in act:
            s = kept[i]
            cls = ["cbr-bar", styles[i].colour.css_class]
            if s.start == a:
                cls.append("cbr-bs")
            if s.end == b:
                cls.append("cbr-be")
            m = mstyles[i]
            if m is not None:
                cls.append(m.css_class)
            label = ""
            if s.start == a:
                sym = f"{m.symbol} " if m is not None else ""
                label = f'<span class="cbr-lbl">{esc(sym + styles[i].short)}</span>'
            top = TOP_EM + levels[i] * STEP_EM
            bars.append(f'<span class="{" ".join(cls)}" style="top:{top:.2f}em" '
                        f'title="{esc(tips[i])}">{label}</span>')
        seg_tip = "\n".join(tips[i] for i in act)
        out.append(f'<span class="cbr-seg" style="padding-bottom:{pad:.2f}em" '
                   f'title="{esc(seg_tip)}">{esc(piece)}{"".join(bars)}</span>')
    out.append("</div>")
    if skipped:
        listed = ", ".join(f"[{s.start}, {s.end}) {s.type} {s.text!r}" for s in skipped[:10])
        more = f" … (+{len(skipped) - 10})" if len(skipped) > 10 else ""
        out.append(f'<div class="cbr-note">跳过 {len(skipped)} 个无效片段 / {len(skipped)} invalid '
                   f'span(s) skipped (empty or outside the text): {esc(listed)}{esc(more)}</div>')
    return "".join(out)


def _codes(labels: Iterable[object] | None) -> list[object]:
    return list(labels) if labels is not None else []


def _label_objects(labels: Iterable[object] | None) -> dict[str, Label]:
    return {lab.code: lab for lab in _codes(labels) if isinstance(lab, Label)}


def span_styler(*, labels: Iterable[object] | None = None,
                label_name: Callable[[str], str] | None = None,
                big: bool = False) -> Callable[[Span, str], SpanStyle]:
    """The default span styler: colour by the type's position in ``labels``; tooltip
    '中文名 / English (code): mention'; bar label: the code, or the Chinese name where that is
    narrower (``Symptom`` -> 症状) and always in ``big`` mode."""
    order = _codes(labels)
    objs = _label_objects(order)

    def name(code: str) -> str:
        if label_name is not None:
            return str(label_name(code))
        lab = objs.get(code)
        return label_title(lab) if lab else code

    def style(s: Span, mention: str) -> SpanStyle:
        code = str(s.type)
        lab = objs.get(code)
        short = code
        if lab is not None and lab.zh and (big or label_width(lab.zh) < label_width(code)):
            short = lab.zh
        tip = f"{name(code)}: {mention}"
        if s.text and s.text != mention:
            tip += f" (recorded mention: {s.text})"
        return SpanStyle(color_for(code, order), short, tip)
    return style


def legend_body(labels: Iterable[object], *, order: Iterable[object] | None = None) -> str:
    """Legend entries: each label's colour with its Chinese and English names and its code."""
    labels = list(labels)
    order = list(order) if order is not None else labels
    items = []
    for lab in labels:
        code = str(getattr(lab, "code", lab))
        if isinstance(lab, Label):
            names = " ".join(x for x in (lab.zh, lab.en) if x and x != code)
            text = f"{names} ({code})" if names else code
            title = label_title(lab)
        else:
            text, title = code, code
        items.append(chip(text, color_for(code, order), title=title))
    return f'<div class="cbr-legend">{"".join(items)}</div>' if items else ""


def marks_legend_body(categories: Iterable[str]) -> str:
    """Legend of the error categories present (bar style + symbol + names)."""
    seen: dict[str, MarkStyle] = {}
    unknown: list[str] = []
    for c in categories:
        m = mark_style(c)
        if m.key == "other" and str(c) not in unknown and c not in MARK_STYLES:
            unknown.append(str(c))
        seen.setdefault(m.key, m)
    if not seen:
        return ""
    items = []
    for key in MARK_STYLES:
        if key in seen:
            m = seen[key]
            extra = f" ({', '.join(unknown)})" if key == "other" and unknown else ""
            items.append(f'<span class="cbr-chip"><span class="cbr-swbar {m.css_class}"></span>'
                         f'{esc(m.symbol)} {esc(m.zh)} / {esc(m.en)}{esc(extra)}</span>')
    return f'<div class="cbr-legend">{"".join(items)}</div>'


def spans_html(text: str, spans: Iterable[Span], *,
               label_name: Callable[[str], str] | None = None,
               marks: Mapping[Span, str] | None = None,
               big: bool = False,
               labels: Iterable[object] | None = None,
               legend: bool = False) -> str:
    """Self-contained HTML of ``text`` with its (possibly nested or crossing) spans.

    ``labels``: the task's label order (``task.labels`` or codes), which fixes each type's
    colour (same as :func:`legend_html`); ``label_name(code)`` gives the tooltip name
    (default: the ``Label``'s '中文 / English (code)', else the code); ``marks`` maps spans to
    error categories (see :mod:`cblue_core.render.marks`), explained in a legend;
    ``legend=True`` adds the legend of the types present; ``big`` gives large type.
    """
    labels = _codes(labels)
    spans = list(spans)
    body = spans_body(text, spans, span_styler(labels=labels, label_name=label_name, big=big),
                      marks=marks)
    if legend:
        present = {str(s.type) for s in valid_spans(text, spans)[0]}
        known = [lab for lab in labels if str(getattr(lab, "code", lab)) in present]
        rest = sorted(present - {str(getattr(lab, "code", lab)) for lab in known})
        body += legend_body(known + rest, order=labels)
    if marks:
        drawn = set(valid_spans(text, spans)[0])
        body += marks_legend_body(str(v) for k, v in marks.items() if k in drawn)
    return document(body, big=big)


def legend_html(labels: Iterable[object], *, big: bool = False) -> str:
    """Self-contained legend: each label (``Label`` or code) with its colour and names."""
    return document(legend_body(labels), big=big)
