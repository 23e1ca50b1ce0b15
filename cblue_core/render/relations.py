"""Relations between string mentions (CMeIE, CMedCausal), drawn brat-style as arcs over the text.

CMeIE gives its subjects and objects as strings, not offsets, so every mention is first located in
the text (:func:`locate_mentions`, every occurrence) and each triple takes the CLOSEST pair of
occurrences of its subject and object (:func:`closest_pair`).

How the drawing is laid out (lines, arcs, levels): :mod:`.relation_layout`.

Below the sentence: one note per ambiguous mention (it occurs several times; arcs use the closest
occurrence, the other occurrences have a dashed bar), one list of mentions not found in the text,
the legends, and a compact table of every triple (subject, predicate, object, types, notes).

Gold / prediction comparisons (:func:`relation_marks`) mark each triple with an error category,
drawn on its arc (missed: dashed and faded; spurious: dotted, in vermillion; wrong predicate:
dashed, in orange...). Everything from the data is escaped; colours come from palette classes.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..records import Example, Span, Triple
from ..tasks import Label, TaskSpec
from .base import RenderContext, chip, document, esc, heading, task_label_name
from .bounds import LABEL_MAX, MAX_ARCS, MAX_LAYERS, MAX_OCCURRENCES, TIP_MAX, clip
from .mentions import Mention, locate_mentions, mention_key
from .palette import PALETTE, Colour, color_for
from .relation_layout import (
    BAR_TOP_EM,
    BIG_LINE_EM,
    CELL_EM,
    FOOT_EM,
    GAP_EM,
    LINE_EM,
    ROW_EM,
    TYPE_TOP_EM,
    WIDE_EM,
    RelationLayout,
    char_em,
    layout_relations,
    short_name,
)
from .relation_marks import arc_mark
from .spans import STEP_EM, assign_levels, label_width, legend_body

# ---------------------------------------------------------------- HTML

_ROLE_ZH = {"subject": "主体", "object": "客体"}
RUN_TIP_MAX = 600        # characters of a text run's tooltip (the mention occurrences covering it)
ARC_TIP_MAX = 2_000      # characters of an arc piece's tooltip (a bundle lists each of its arcs)
NOTE_MENTION_MAX = 100   # characters of a mention quoted in a note

#: Colour order of the usual CMeIE / CMedCausal entity types (others: a stable hash).
ENTITY_TYPE_ORDER = ("疾病", "症状", "检查", "药物", "其他治疗", "手术治疗", "流行病学", "社会学",
                     "部位", "预后", "其他")
_NO_TYPE = PALETTE[-1]


def type_colour(typ: str) -> Colour:
    return color_for(typ, ENTITY_TYPE_ORDER) if typ else _NO_TYPE


def _em(v: float) -> str:
    return f"{max(0.0, v):.2f}em"


@dataclass(frozen=True)
class _Occ:
    start: int
    end: int
    colour: Colour
    label: str
    tip: str
    used: bool


def _occurrences(layout: RelationLayout, triples: Sequence[Triple], names: Sequence[str],
                 extra_spans: Iterable[Span]) -> list[_Occ]:
    text = layout.text
    uses: dict[tuple[int, int], list[int]] = {}
    for k, (t, c) in enumerate(zip(triples, layout.chosen)):
        if c is not None:
            uses.setdefault((c[0], c[0] + len(mention_key(t.subject))), []).append(k)
            uses.setdefault((c[1], c[1] + len(mention_key(t.object))), []).append(k)
    out: list[_Occ] = []
    for m in layout.mentions.values():
        n = len(m.occurrences)
        roles = " / ".join(f"{_ROLE_ZH[r]} {r}" for r in m.roles)
        types = f" [{', '.join(m.types)}]" if m.types else ""
        for j, o in enumerate(m.occurrences, start=1):
            span = (o, o + len(m.text))
            arcs = uses.get(span, [])
            tip = f"{m.text}{types} — {roles}"
            if n > 1:
                tip += f"; 第 {j} 处，共 {n} 处 / occurrence {j} of {n}"
            if arcs:
                tip += "; 弧线 / arcs: " + ", ".join(f"{k + 1} {names[k]}" for k in arcs)
            elif n > 1:
                tip += "; 没有弧线用这一处 / no arc uses this occurrence"
            # an occurrence no arc uses: a faint dashed bar, no label (its tooltip says why)
            used = bool(arcs) or n == 1
            label = (clip(m.type, LABEL_MAX) + (f" {j}/{n}" if n > 1 else "")).strip() if used else ""
            out.append(_Occ(o, o + len(m.text), type_colour(m.type), label, clip(tip, TIP_MAX), used))
    for s in extra_spans:
        if isinstance(s.start, int) and isinstance(s.end, int) and 0 <= s.start < s.end <= len(text):
            out.append(_Occ(s.start, s.end, type_colour(str(s.type)), clip(str(s.type), LABEL_MAX),
                            clip(f"{s.type}: {text[s.start:s.end]}", TIP_MAX), True))
    return out


def _text_line(text: str, a: int, b: int, occs: Sequence[_Occ], levels: Sequence[int],
               brk: str) -> str:
    """One line of the text: runs of fixed width, mentions highlighted, type bars below.

    A run draws at most MAX_LAYERS bars; deeper occurrences are counted in a "+n" marker."""
    here = [i for i, o in enumerate(occs) if o.start < b and a < o.end]
    cuts = {a, b}
    starting: dict[int, list[int]] = {}
    ending: dict[int, list[int]] = {}
    for i in here:
        cuts.update(c for c in (occs[i].start, occs[i].end) if a < c < b)
        starting.setdefault(max(a, occs[i].start), []).append(i)
        ending.setdefault(occs[i].end, []).append(i)
    for i in range(a + 1, b):
        if (char_em(text[i]) == WIDE_EM) != (char_em(text[i - 1]) == WIDE_EM):
            cuts.add(i)
    bounds = sorted(cuts)
    hidden_here = any(levels[i] >= MAX_LAYERS for i in here)
    depth = MAX_LAYERS if hidden_here else max((levels[i] for i in here), default=-1)
    pad = (TYPE_TOP_EM - CELL_EM + depth * STEP_EM + 0.85) if depth >= 0 else 0.15
    out = [f'<div class="cbr-rl-txt" style="padding-bottom:{_em(pad)}">']
    # as in .spans: the occurrences covering a run overlap, so the drawn ones have distinct levels
    slots: list[int | None] = [None] * MAX_LAYERS
    hidden = 0
    for x, y in itertools.pairwise(bounds):
        for i in ending.get(x, ()):
            if levels[i] < MAX_LAYERS:
                slots[levels[i]] = None
            else:
                hidden -= 1
        new_hidden = False
        for i in starting.get(x, ()):
            if levels[i] < MAX_LAYERS:
                slots[levels[i]] = i
            else:
                hidden += 1
                new_hidden = True
        piece = text[x:y]
        wide = char_em(piece[0]) == WIDE_EM
        cover = [i for i in slots if i is not None]
        cls = ["cbr-rl-r"] + ([] if wide else ["cbr-rl-n"])
        inner = [i for i in cover if occs[i].used]
        if inner:
            best = min(inner, key=lambda i: (occs[i].end - occs[i].start, -occs[i].start))
            cls += [occs[best].colour.css_class, "cbr-rl-hl"]
        bars = []
        for i in cover:
            o = occs[i]
            bcls = ["cbr-bar", o.colour.css_class]
            if o.start == x:
                bcls.append("cbr-bs")
            if o.end == y:
                bcls.append("cbr-be")
            if not o.used:
                bcls.append("cbr-rl-unused")
            label = f'<span class="cbr-lbl">{esc(o.label)}</span>' if o.start == x and o.label else ""
            top = TYPE_TOP_EM + levels[i] * STEP_EM
            bars.append(f'<span class="{" ".join(bcls)}" style="top:{_em(top)}">{label}</span>')
        tip = clip("\n".join(occs[i].tip for i in cover), RUN_TIP_MAX)
        if hidden:
            more = (f"另有 {hidden:,} 处提及覆盖此处，未画出 / {hidden:,} more mention occurrence(s) "
                    f"here, deeper than {MAX_LAYERS} layers, not drawn")
            tip = f"{tip}\n{more}" if tip else more
            label = f'<span class="cbr-lbl">+{hidden:,}</span>' if new_hidden else ""
            top = TYPE_TOP_EM + MAX_LAYERS * STEP_EM
            bars.append(f'<span class="cbr-bar cbr-more" style="top:{_em(top)}">{label}</span>')
        title = f' title="{esc(tip)}"' if tip else ""
        width = sum(char_em(ch) for ch in piece)
        out.append(f'<span class="{" ".join(cls)}" style="width:{_em(width)}"{title}>'
                   f'{esc(piece)}{"".join(bars)}</span>')
    out.append(esc(brk) + "</div>")
    return "".join(out)


def _arc_rows(layout: RelationLayout, li: int, tips: Sequence[str],
              mark_of: Sequence[tuple[str, str, str] | None]) -> str:
    mine = [p for p in layout.pieces if p.line == li]
    if not mine:
        return ""
    top = max(p.level for p in mine)
    rows = []
    for lvl in range(top, -1, -1):
        cursor = 0.0
        cells = []
        for p in sorted((p for p in mine if p.level == lvl), key=lambda p: p.lo):
            if p.lo - cursor > 0.005:
                cells.append(f'<span class="cbr-rl-gap" style="width:{_em(p.lo - cursor)}"></span>')
            legs = (lvl + 1) * ROW_EM + FOOT_EM - BAR_TOP_EM - GAP_EM - 0.13
            cls = ["cbr-rl-arc"] + [f"cbr-rl-k{k}" for k in p.arcs]
            if p.arrow:
                cls.append("cbr-rl-al" if p.arrow == "left" else "cbr-rl-ar")
            if p.open_left:
                cls.append("cbr-rl-nl")
            if p.open_right:
                cls.append("cbr-rl-nr")
            mk = mark_of[p.arc]
            if mk is not None:
                cls.append(mk[0])
            label = (f'<span class="cbr-rl-at" style="width:{_em(p.label_x - p.lo)}">'
                     f'<span class="cbr-lbl cbr-rl-lbl">{esc(p.label)}</span></span>') if p.label else ""
            tip = clip("\n".join(tips[k] for k in p.arcs), ARC_TIP_MAX)
            if p.open_left or p.open_right:
                tip += "\n（跨行 / continues across the line break）"
            cont = ('<span class="cbr-rl-cont cbr-rl-cl"></span>' if p.open_left else "") + (
                '<span class="cbr-rl-cont cbr-rl-cr"></span>' if p.open_right else "")
            leg_cls = "cbr-rl-leg" + (" cbr-rl-lega" if p.arrow else "")
            cont += "".join(f'<span class="{leg_cls}" style="width:{_em(x - p.lo)}"></span>' for x in p.legs)
            cells.append(f'<span class="cbr-rl-slot" style="width:{_em(p.hi - p.lo)}">'
                         f'<span class="{" ".join(cls)}" style="padding-bottom:{_em(legs)}" '
                         f'title="{esc(tip)}">{label}{cont}</span></span>')
            cursor = p.hi
        rows.append(f'<div class="cbr-rl-row">{"".join(cells)}</div>')
    return f'<div class="cbr-rl-arcs">{"".join(rows)}</div>'


def _mention_cell(text: str, typ: str, m: Mention | None) -> str:
    label = text if text else "（空 / empty）"
    extra = "cbr-missing" if m is not None and m.missing else ""
    tip = text + (f" [{typ}]" if typ else "")
    if m is not None and m.missing:
        tip += " — 原文中未找到 / not found in the text"
    code = f' <span class="cbr-code">{esc(typ)}</span>' if typ else ""
    return chip(label, type_colour(typ), title=tip, extra=extra) + code


def relations_body(text: str, triples: Sequence[Triple], *,
                   label_name: Callable[[str], str] | None = None,
                   extra_spans: Iterable[Span] = (),
                   short_label: Callable[[str], str] | None = None,
                   marks: Mapping[Triple, str] | None = None,
                   line_em: float = LINE_EM) -> str:
    """Fragment: the sentence with its triples as arcs over it, notes, legends, triple table.

    ``label_name(predicate)``: the predicate's full display name (tooltips, table);
    ``short_label(predicate)``: the name on the arc (default: the first part of the full name);
    ``marks``: triple -> error category (see :func:`relation_marks`), drawn on the arcs;
    ``extra_spans``: more spans to highlight; ``line_em``: the width of a line in em.
    """
    triples = list(triples)
    text = "" if text is None else str(text)
    name = label_name or (lambda p: str(p))
    short = short_label or (lambda p: short_name(name(p)))
    marks = dict(marks or {})
    mark_of = [arc_mark(marks[t]) if t in marks else None for t in triples]
    arc_labels = [(f"{mk[1]} " if mk else "") + short(t.predicate) for t, mk in zip(triples, mark_of)]
    # arcs for the first MAX_ARCS triples (levelling compares the arcs of a line pairwise); the
    # table lists every triple
    layout = layout_relations(text, triples[:MAX_ARCS], line_em=line_em, labels=arc_labels[:MAX_ARCS])
    mentions = layout.mentions if len(triples) <= MAX_ARCS else locate_mentions(text, triples)
    names = [name(t.predicate) for t in triples]

    tips = []
    for k, t in enumerate(triples):
        st = f" [{t.subject_type}]" if t.subject_type else ""
        ot = f" [{t.object_type}]" if t.object_type else ""
        tip = f"{k + 1}. {t.subject}{st} → {names[k]} → {t.object}{ot}"
        if t.combined:
            tip += "\nCombined=True"
        mk = mark_of[k]
        if mk is not None:
            tip += f"\n{mk[1]} {mk[2]}"
        tips.append(clip(tip, TIP_MAX))

    occs = _occurrences(layout, triples, names, extra_spans)
    levels = assign_levels([Span(o.start, o.end, o.label) for o in occs],
                           [label_width(o.label) for o in occs], cap=MAX_LAYERS)
    out: list[str] = []
    if text:
        fig = ['<div class="cbr-rl">']
        for li, (a, b) in enumerate(layout.lines):
            nxt = layout.lines[li + 1][0] if li + 1 < len(layout.lines) else len(text)
            fig.append(f'<div class="cbr-rl-line">{_arc_rows(layout, li, tips, mark_of)}'
                       f'{_text_line(text, a, b, occs, levels, text[b:nxt])}</div>')
        fig.append("</div>")
        out.append("".join(fig))

    notes = []
    for m in mentions.values():
        shown = esc(clip(m.text, NOTE_MENTION_MAX))
        if m.capped:
            notes.append(f'<div class="cbr-note">「{shown}」出现超过 {MAX_OCCURRENCES} 次，只标出前 '
                         f'{MAX_OCCURRENCES} 处，弧线连接其中最近的一处 / {shown} occurs more than '
                         f'{MAX_OCCURRENCES} times: its first {MAX_OCCURRENCES} are marked, and arcs use '
                         f'the closest of them</div>')
        elif m.ambiguous:
            notes.append(f'<div class="cbr-note">「{shown}」出现 {len(m.occurrences)} 次，弧线连接最近的一处，'
                         f'其余各处下方为虚线 / {shown} occurs {len(m.occurrences)} times; arcs use the '
                         f'closest occurrence, the others are underlined with a dashed bar</div>')
    missing = [m for m in mentions.values() if m.missing]
    if missing:
        listed = "，".join(f"「{esc(m.text) if m.text else '（空 / empty）'}」" for m in missing)
        notes.append(f'<div class="cbr-warn">原文中未找到 / not in the text: {listed}</div>')
    if len(triples) > MAX_ARCS:
        notes.append(f'<div class="cbr-note">{len(triples):,} 条关系，只画前 {MAX_ARCS} 条的弧线 / '
                     f'{len(triples):,} triples: arcs are drawn for the first {MAX_ARCS}, the table '
                     'lists them all</div>')
    out.extend(notes)

    types = list(dict.fromkeys(m.type for m in mentions.values() if m.type and not m.missing))
    if types:
        ordered = [t for t in ENTITY_TYPE_ORDER if t in types] + [t for t in types if t not in ENTITY_TYPE_ORDER]
        out.append(legend_body(ordered, order=ENTITY_TYPE_ORDER))
    present = list(dict.fromkeys(mk for mk in mark_of if mk is not None))
    if present:
        out.append('<div class="cbr-legend">' + "".join(
            f'<span class="cbr-chip"><span class="cbr-rl-sw {css}"></span>{esc(sym)} {esc(nm)}</span>'
            for css, sym, nm in present) + "</div>")

    if not triples:
        out.append('<div class="cbr-muted">无关系 / no relations</div>')
        return "".join(out)
    rows = [('<tr><th>#</th><th>主体 / subject</th><th>关系 / predicate</th><th>客体 / object</th>'
             '<th>备注 / notes</th></tr>')]
    for k, t in enumerate(triples):
        sm, om = mentions[mention_key(t.subject)], mentions[mention_key(t.object)]
        cell_notes = []
        mk = mark_of[k]
        if mk is not None:
            cell_notes.append(f'<span class="cbr-badge">{esc(mk[1])} {esc(mk[2])}</span>')
        if t.combined:
            cell_notes.append('<span class="cbr-badge" title="Combined=True: 由多句组合得出的关系 / '
                              'relation combined across sentences">⊕ Combined</span>')
        if k >= MAX_ARCS:
            cell_notes.append(f'<span class="cbr-muted">无弧线：只画前 {MAX_ARCS} 条 / no arc: only the '
                              f'first {MAX_ARCS} triples are drawn</span>')
        elif layout.chosen[k] is None:
            lost = [r for r, m in (("subject", sm), ("object", om)) if m.missing]
            cell_notes.append('<span class="cbr-muted">无弧线：' + "、".join(_ROLE_ZH[r] for r in lost)
                              + " 不在原文 / no arc: " + " and ".join(lost) + " not in the text</span>")
        rows.append(f'<tr><td>{k + 1}</td><td>{_mention_cell(sm.text, t.subject_type, sm)}</td>'
                    f'<td title="{esc(tips[k])}">{esc(names[k])}</td>'
                    f'<td>{_mention_cell(om.text, t.object_type, om)}</td><td>{"".join(cell_notes)}</td></tr>')
    out.append(heading("关系", f"relations ({len(triples)})"))
    out.append(f'<table class="cbr-tab cbr-rl-tab">{"".join(rows)}</table>')
    return "".join(out)


def _short_labels(task: TaskSpec) -> Callable[[str], str]:
    table: dict[str, Label] = {}
    for lab in task.labels[::-1]:
        table[lab.zh] = lab
    for lab in task.labels[::-1]:
        table[lab.code] = lab

    def short(code: str) -> str:
        lab = table.get(str(code))
        return (lab.zh or lab.code) if lab else str(code)
    return short


def render_relations(ex: Example, task: TaskSpec, ctx: RenderContext,
                     marks: Mapping[Triple, str] | None = None) -> str:
    """The renderer of the relations kind: ``ex.triples`` as arcs over ``ex.text``."""
    return relations_body(ex.text, ex.triples, label_name=task_label_name(task),
                          short_label=_short_labels(task), marks=marks,
                          line_em=BIG_LINE_EM if ctx.big else LINE_EM)


def relations_html(text: str, triples: Sequence[Triple], *,
                   label_name: Callable[[str], str] | None = None,
                   big: bool = False,
                   marks: Mapping[Triple, str] | None = None,
                   line_em: float | None = None) -> str:
    """Self-contained HTML of ``text`` with the relation ``triples`` drawn as arcs over it.

    ``label_name(predicate)`` gives the predicate's display name (default: as stored);
    ``marks`` maps triples to error categories; ``line_em`` sets the line width in em.
    """
    width = line_em if line_em is not None else (BIG_LINE_EM if big else LINE_EM)
    return document(relations_body(text, triples, label_name=label_name, marks=marks, line_em=width),
                    big=big)
