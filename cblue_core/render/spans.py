"""Nested entity spans as stacked, coloured layers (the displaCy "span" style).

The text stays on its line(s); every span is an underline bar at its own depth level below the
characters, with its type label at the start of the bar. Overlapping spans (nested or crossing)
never share a level: levels are assigned greedily, shortest span first, so inner entities sit
closest to the text and outer ones below them, like brackets.

The text is cut at every span boundary (and at line breaks) into segments; each covered segment
is an ``inline-block`` carrying one absolutely-positioned bar per covering span, so long Chinese
sentences still wrap between segments. Everything from data is escaped; colours come from the
palette classes; bar positions are numbers computed here.

The output is linear in the text and the spans, whatever they are: a segment carries at most
:data:`MAX_LAYERS` bars (deeper spans are counted in a "+n" marker), a mention is written once
per span, tooltips are clipped, and one fragment stays under :data:`MAX_HTML_CHARS` characters
(:mod:`.bounds`).
"""
from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..records import Span
from ..tasks import Label
from .base import chip, document, esc, label_title
from .bounds import LABEL_MAX, MAX_HTML_CHARS, MAX_LAYERS, SEGMENT_ENTRY_MAX, SEGMENT_TIP_MAX, TIP_MAX, clip
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


def assign_levels(spans: Sequence[Span], widths: Sequence[int] | None = None,
                  cap: int | None = None) -> list[int]:
    """A level per span such that overlapping spans never share one (shortest first).

    With ``widths`` (each span's label width in characters, see :func:`label_width`) a span
    also keeps its level free of the label of a span starting just before it, so labels on
    one level never overlap. With ``cap``, a span that finds no free level below ``cap`` gets
    ``cap`` (not drawn) and takes no room; the levels below are those of the uncapped layout.
    """
    def reach(i: int) -> int:
        s = spans[i]
        return max(s.end, s.start + widths[i]) if widths is not None else s.end

    order = sorted(range(len(spans)),
                   key=lambda i: (spans[i].end - spans[i].start, spans[i].start, str(spans[i].type)))
    levels = [0] * len(spans)
    # Per level, the [start, reach) intervals placed there: disjoint, so sorted by start they are
    # sorted by reach too, and the one starting last before a new interval's reach is the only
    # one that can overlap it (a bisection instead of a scan of every span placed).
    starts: list[list[int]] = []
    reaches: list[list[int]] = []
    for i in order:
        a, r = spans[i].start, reach(i)
        lvl = 0
        while cap is None or lvl < cap:
            if lvl == len(starts):
                starts.append([a])
                reaches.append([r])
                break
            k = bisect.bisect_left(starts[lvl], r)
            if k == 0 or reaches[lvl][k - 1] <= a:
                starts[lvl].insert(k, a)
                reaches[lvl].insert(k, r)
                break
            lvl += 1
        levels[i] = lvl
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
               marks: Mapping[Span, str] | None = None, max_chars: int = MAX_HTML_CHARS) -> str:
    """The text with its spans as a fragment (no stylesheet); used by every renderer.

    Whatever the spans, the fragment stays linear in the text and the spans and under about
    ``max_chars`` characters: a segment draws at most :data:`MAX_LAYERS` bars plus a "+n" marker
    for the deeper spans covering it, a mention is written once per span (in its label's
    tooltip, clipped), and once the bound is near the rest of the text is written plain; a note
    says how many spans were not drawn and why.
    """
    marks = marks or {}
    kept, skipped = valid_spans(text, spans)
    styles = [style_of(s, text[s.start:s.end]) for s in kept]
    mstyles: list[MarkStyle | None] = [mark_style(marks[s]) if s in marks else None for s in kept]
    shorts = [clip((f"{m.symbol} " if m else "") + st.short, LABEL_MAX) for st, m in zip(styles, mstyles)]
    levels = assign_levels(kept, [label_width(x) for x in shorts], cap=MAX_LAYERS)
    tips = []
    for s, st, m in zip(kept, styles, mstyles):
        tip = st.tooltip
        if m is not None:
            raw = str(marks[s])
            name = f"{m.zh} / {m.en}" if m.key != "other" else f"{raw}"
            tip += f" [{m.symbol} {name}]"
        tips.append(clip(tip, TIP_MAX))

    starting: dict[int, list[int]] = {}
    ending: dict[int, list[int]] = {}
    for i, s in enumerate(kept):
        starting.setdefault(s.start, []).append(i)
        ending.setdefault(s.end, []).append(i)

    plain = esc(text)
    reserve = 4_000  # the notes below the text
    if len(plain) > max_chars - reserve:
        shown = _plain_prefix(text, max_chars - reserve)
        note = (f'<div class="cbr-note">文本过长，只显示前 {shown:,} 个字符，未画片段 / the text is '
                f'{len(text):,} characters long: its first {shown:,} are shown, with no spans '
                f'drawn ({len(kept):,} not drawn)</div>')
        return f'<div class="cbr-text">{esc(text[:shown])}</div>{note}'
    budget = max_chars - reserve - len(plain)   # characters of markup the bars may add

    # The spans drawn over a segment all overlap, so they have distinct levels < MAX_LAYERS:
    # one slot per level holds them, and deeper ones are only counted.
    slots: list[int | None] = [None] * MAX_LAYERS
    hidden = 0
    cut_at: int | None = None
    out: list[str] = ['<div class="cbr-text">']
    for a, b in itertools.pairwise(_boundaries(text, kept)):
        for i in ending.get(a, ()):
            if levels[i] < MAX_LAYERS:
                slots[levels[i]] = None
            else:
                hidden -= 1
        new_hidden = 0
        for i in starting.get(a, ()):
            if levels[i] < MAX_LAYERS:
                slots[levels[i]] = i
            else:
                hidden += 1
                new_hidden += 1
        piece = text[a:b]
        act = [i for i in slots if i is not None]
        if cut_at is not None or (not act and not hidden) or piece in ("\n", "\r", "\r\n"):
            out.append(esc(piece))
            continue
        seg = _segment(piece, a, b, act, hidden, new_hidden, kept, levels, styles, mstyles,
                       shorts, tips)
        extra = len(seg) - len(esc(piece))
        if extra > budget:
            cut_at = a
            out.append(esc(piece))
            continue
        budget -= extra
        out.append(seg)
    out.append("</div>")
    deep = sum(1 for lvl in levels if lvl >= MAX_LAYERS)
    if deep:
        out.append(f'<div class="cbr-note">{deep:,} 个片段嵌套超过 {MAX_LAYERS} 层，未画出（标记为 +n） / '
                   f'{deep:,} span(s) not drawn: more than {MAX_LAYERS} layers deep (marked +n '
                   f'under the text)</div>')
    if cut_at is not None:
        late = sum(1 for s, lvl in zip(kept, levels) if s.end > cut_at and lvl < MAX_LAYERS)
        out.append(f'<div class="cbr-note">{late:,} 个片段从第 {cut_at:,} 个字符起未画出 / {late:,} '
                   f'span(s) not drawn (or drawn only in part) from character {cut_at:,} on: the '
                   f'example would pass {max_chars:,} characters of HTML</div>')
    if skipped:
        listed = ", ".join(f"[{s.start}, {s.end}) {s.type} {s.text!r}" for s in skipped[:10])
        more = f" … (+{len(skipped) - 10})" if len(skipped) > 10 else ""
        out.append(f'<div class="cbr-note">跳过 {len(skipped)} 个无效片段 / {len(skipped)} invalid '
                   f'span(s) skipped (empty or outside the text): {esc(clip(listed, 1_000))}'
                   f'{esc(more)}</div>')
    return "".join(out)


def _plain_prefix(text: str, limit: int) -> int:
    """How many characters of ``text`` fit, escaped, in ``limit`` characters."""
    used = 0
    for k, ch in enumerate(text):
        used += len(esc(ch)) if ch in "&<>\"'" else 1
        if used > limit:
            return k
    return len(text)


def _segment(piece: str, a: int, b: int, act: Sequence[int], hidden: int, new_hidden: int,
             kept: Sequence[Span], levels: Sequence[int], styles: Sequence[SpanStyle],
             mstyles: Sequence[MarkStyle | None], shorts: Sequence[str], tips: Sequence[str]) -> str:
    """One covered segment: the text with at most MAX_LAYERS bars and the "+n" marker."""
    deepest = MAX_LAYERS if hidden else max(levels[i] for i in act)
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
        top = TOP_EM + levels[i] * STEP_EM
        if s.start == a:  # the span's own tooltip, once, on the piece that carries its label
            bars.append(f'<span class="{" ".join(cls)}" style="top:{top:.2f}em" title="{esc(tips[i])}">'
                        f'<span class="cbr-lbl">{esc(shorts[i])}</span></span>')
        else:
            bars.append(f'<span class="{" ".join(cls)}" style="top:{top:.2f}em"></span>')
    seg_tip = clip("\n".join(clip(tips[i], SEGMENT_ENTRY_MAX) for i in act), SEGMENT_TIP_MAX)
    if hidden:
        more = (f"另有 {hidden:,} 个片段覆盖此处，嵌套过深未画出 / {hidden:,} more span(s) here, "
                f"deeper than {MAX_LAYERS} layers, not drawn")
        seg_tip = f"{seg_tip}\n{more}" if seg_tip else more
        top = TOP_EM + MAX_LAYERS * STEP_EM
        label = f'<span class="cbr-lbl">+{hidden:,}</span>' if new_hidden else ""
        bars.append(f'<span class="cbr-bar cbr-more" style="top:{top:.2f}em">{label}</span>')
    return (f'<span class="cbr-seg" style="padding-bottom:{pad:.2f}em" '
            f'title="{esc(seg_tip)}">{esc(piece)}{"".join(bars)}</span>')


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
