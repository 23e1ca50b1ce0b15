"""Relations between string mentions (CMeIE, CMedCausal), which carry no offsets.

Layout (works for long Chinese sentences and inside ``st.html``, which drops SVG):

1. the text, with EVERY occurrence of every subject/object highlighted as a layered span whose
   label is the mention's number (``#3``; ``#3·2`` for the second occurrence of an ambiguous
   mention);
2. one row per triple: a CSS arc from the subject chip over the predicate to the object chip
   (arrowhead on the object), with notes: ambiguous mentions (the arc refers to the first
   occurrence), mentions not found in the text, and a marker for ``combined=True``;
3. the list of mentions not found in the text.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..records import Span, Triple
from .base import document, esc, heading
from .palette import colour_by_index
from .spans import SpanStyle, spans_body


def find_all(text: str, mention: str) -> list[int]:
    """Start offsets of every occurrence of ``mention`` in ``text`` (overlapping ones too)."""
    if not mention:
        return []
    out, i = [], text.find(mention)
    while i != -1:
        out.append(i)
        i = text.find(mention, i + 1)
    return out


@dataclass(frozen=True)
class Mention:
    """A distinct subject/object string of an example's triples, located in the text."""

    text: str
    number: int                    # 1-based, by first occurrence (missing mentions last)
    occurrences: tuple[int, ...]   # start offsets
    roles: tuple[str, ...]         # "subject" and/or "object"
    types: tuple[str, ...]         # subject_type / object_type values seen

    @property
    def ambiguous(self) -> bool:
        return len(self.occurrences) > 1

    @property
    def missing(self) -> bool:
        return not self.occurrences

    def spans(self) -> list[Span]:
        return [Span(o, o + len(self.text), f"#{self.number}", self.text) for o in self.occurrences]


def locate_mentions(text: str, triples: Iterable[Triple]) -> dict[str, Mention]:
    """Every distinct subject/object of ``triples`` with all its occurrences in ``text``."""
    roles: dict[str, list[str]] = {}
    types: dict[str, list[str]] = {}
    for t in triples:
        for mention, role, typ in ((t.subject, "subject", t.subject_type),
                                   (t.object, "object", t.object_type)):
            mention = "" if mention is None else str(mention)
            r = roles.setdefault(mention, [])
            if role not in r:
                r.append(role)
            ty = types.setdefault(mention, [])
            if typ and typ not in ty:
                ty.append(str(typ))
    found = {m: find_all(text, m) for m in roles}
    order = sorted(roles, key=lambda m: (0, found[m][0], -len(m)) if found[m] else (1, 0, 0))
    return {m: Mention(m, n, tuple(found[m]), tuple(roles[m]), tuple(types[m]))
            for n, m in enumerate(order, start=1)}


_ROLE_ZH = {"subject": "主体", "object": "客体"}


def _mention_styler(mentions: dict[str, Mention]) -> Callable[[Span, str], SpanStyle]:
    by_number = {f"#{m.number}": m for m in mentions.values()}

    def style(s: Span, _slice: str) -> SpanStyle:
        m = by_number[s.type]
        k = m.occurrences.index(s.start) + 1 if s.start in m.occurrences else 1
        short = f"#{m.number}·{k}" if m.ambiguous else f"#{m.number}"
        roles = " / ".join(f"{_ROLE_ZH[r]} {r}" for r in m.roles)
        types = f" [{', '.join(m.types)}]" if m.types else ""
        tip = f"#{m.number} {roles}{types}: {m.text}"
        if m.ambiguous:
            tip += (f" — 第 {k} 处，共 {len(m.occurrences)} 处 / occurrence {k} of "
                    f"{len(m.occurrences)}" + ("（弧线指向此处 / arcs refer here）" if k == 1 else ""))
        return SpanStyle(colour_by_index(m.number - 1), short, tip)
    return style


def _mention_chip(m: Mention, typ: str) -> str:
    num = f'<span class="cbr-num">#{m.number}</span>'
    label = m.text if m.text else "（空 / empty）"
    inner = num + esc(label) + (f' <span class="cbr-code">{esc(typ)}</span>' if typ else "")
    cls = f"cbr-chip {colour_by_index(m.number - 1).css_class}" + (" cbr-missing" if m.missing else "")
    tip = m.text
    if m.missing:
        tip += " — 原文中未找到 / not found in the text"
    elif m.ambiguous:
        tip += f" — 出现 {len(m.occurrences)} 次 / occurs {len(m.occurrences)} times"
    return f'<span class="{cls}" title="{esc(tip)}">{inner}</span>'


def _notes(t: Triple, subj: Mention, obj: Mention) -> str:
    notes = []
    if t.combined:
        notes.append('<span class="cbr-badge" title="Combined=True: 由多句组合得出的关系 / relation '
                     'combined across sentences">⊕ Combined</span>')
    for role, m in (("subject", subj), ("object", obj)):
        if m.missing:
            notes.append(f'<span class="cbr-warn">#{m.number} {esc(_ROLE_ZH[role])} 原文中未找到 / '
                         f'{role} not found in the text</span>')
        elif m.ambiguous:
            pos = ", ".join(str(o) for o in m.occurrences)
            notes.append(f'<span class="cbr-note">#{m.number} 出现 {len(m.occurrences)} 次（位置 '
                         f'{esc(pos)}），弧线指向第一次 / ambiguous: {len(m.occurrences)} '
                         f'occurrences, arc drawn to the first</span>')
    return "".join(notes)


def relations_body(text: str, triples: Sequence[Triple], *,
                   label_name: Callable[[str], str] | None = None,
                   extra_spans: Iterable[Span] = ()) -> str:
    """Fragment: highlighted text, one arc row per triple, missing mentions."""
    triples = list(triples)
    mentions = locate_mentions(text, triples)
    spans = [s for m in mentions.values() for s in m.spans()]
    out = [spans_body(text, spans, _mention_styler(mentions))]
    name = label_name or (lambda p: str(p))
    rows = []
    for i, t in enumerate(triples, start=1):
        subj = mentions["" if t.subject is None else str(t.subject)]
        obj = mentions["" if t.object is None else str(t.object)]
        pred = name(t.predicate)
        rows.append(
            f'<div class="cbr-rel"><span class="cbr-rel-n">{i}</span>'
            f'<div class="cbr-arc" title="{esc(f"{t.subject} —{pred}→ {t.object}")}">'
            f'<div class="cbr-arc-s">{_mention_chip(subj, t.subject_type)}</div>'
            f'<div class="cbr-arc-p"><span class="cbr-arc-lbl">{esc(pred)}</span></div>'
            f'<div class="cbr-arc-o">{_mention_chip(obj, t.object_type)}</div></div>'
            f'{_notes(t, subj, obj)}</div>')
    if rows:
        out.append(heading("关系", f"relations ({len(rows)})"))
        out.append(f'<div class="cbr-rels">{"".join(rows)}</div>')
    else:
        out.append('<div class="cbr-muted">无关系 / no relations</div>')
    missing = [m for m in mentions.values() if m.missing]
    if missing:
        out.append(heading("原文中未找到的提及", "mentions not found in the text"))
        out.append("".join(_mention_chip(m, "") for m in missing))
    return "".join(out)


def relations_html(text: str, triples: Sequence[Triple], *,
                   label_name: Callable[[str], str] | None = None,
                   big: bool = False) -> str:
    """Self-contained HTML of ``text`` with the relation ``triples`` drawn as arcs.

    ``label_name(predicate)`` gives the predicate's display name (default: as stored).
    """
    return document(relations_body(text, triples, label_name=label_name), big=big)
