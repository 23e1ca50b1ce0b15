"""What an edit changes, in words, and the editing steps that keep an unchanged edit a no-op.

An editor hands back its items in its own order (the span editor sorts by offset, a triple list
appends): :func:`settled` puts them back in the order they were loaded in, so that undoing an
edit leaves an annotation equal to the loaded one and a save stores only what changed.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from ..records import Span, Triple
from ..tasks import TaskSpec
from .model import Annotation, AnnotationEvent

T = TypeVar("T")


def change_lines(a: Annotation, b: Annotation, task: TaskSpec) -> list[str]:
    """What changes from ``a`` to ``b``, one line per item: ``−`` removed, ``+`` added.

    >>> from cblue_core.tasks import get_task
    >>> change_lines(Annotation((Span(0, 2, "dis", "感冒"),)), Annotation(), get_task("CMeEE"))
    ['− dis 感冒 [0,2)']
    """
    out: list[str] = []
    sa, sb = set(a.spans), set(b.spans)
    out += [f"− {s.type} {s.text or ''} [{s.start},{s.end})" for s in a.spans if s not in sb]
    out += [f"+ {s.type} {s.text or ''} [{s.start},{s.end})" for s in b.spans if s not in sa]
    ta, tb = set(a.triples), set(b.triples)
    out += [f"− ({t.subject}, {t.predicate}, {t.object})" for t in a.triples if t not in tb]
    out += [f"+ ({t.subject}, {t.predicate}, {t.object})" for t in b.triples if t not in ta]
    out += [f"− {t}" for t in a.terms if t not in b.terms]
    out += [f"+ {t}" for t in b.terms if t not in a.terms]
    if a.label != b.label:
        out.append(f"label {task.display_label(a.label or '∅')} → {task.display_label(b.label or '∅')}")
    return out


def change_summary(a: Annotation, b: Annotation, task: TaskSpec, limit: int = 4) -> str:
    """The first ``limit`` change lines joined, with how many more (``no change`` when none)."""
    lines = change_lines(a, b, task)
    if not lines:
        return "no change"
    more = f" (+{len(lines) - limit})" if len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


def keep_order(new: Iterable[T], old: Sequence[T]) -> tuple[T, ...]:
    """``new`` items in the order of ``old`` for those ``old`` has, the others after them.

    >>> keep_order(["c", "a", "x"], ("a", "b", "c"))
    ('a', 'c', 'x')
    """
    rest = list(new)
    out = []
    for item in old:
        if item in rest:
            out.append(item)
            rest.remove(item)
    return tuple(out + rest)


def settled(ann: Annotation, loaded: Annotation) -> Annotation:
    """``ann`` with its spans, triples and terms in ``loaded``'s order (new items after)."""
    return replace(ann, spans=keep_order(ann.spans, loaded.spans),
                   triples=keep_order(ann.triples, loaded.triples),
                   terms=keep_order(ann.terms, loaded.terms))


def spans_from_offsets(text: str, marks: Iterable[Mapping[str, Any]],
                       known: Iterable[Span]) -> tuple[Span, ...]:
    """Spans from an editor's ``{"start", "end", "type"}`` marks over ``text``; a mark equal to a
    ``known`` span keeps that span (and the mention text it was recorded with)."""
    by_key = {(s.start, s.end, s.type): s for s in known}
    out = []
    for m in marks:
        start, end, typ = int(m["start"]), int(m["end"]), str(m["type"])
        out.append(by_key.get((start, end, typ)) or Span(start, end, typ, text[start:end]))
    return tuple(out)


def mention_marks(text: str, triples: Iterable[Triple]) -> list[dict[str, Any]]:
    """The mentions of CMeIE triples as editor marks, each at its first occurrence in ``text``
    (a mention that does not occur is left out)."""
    out = []
    for t in triples:
        for mention, typ in ((t.subject, t.subject_type), (t.object, t.object_type)):
            i = text.find(mention) if mention else -1
            if i >= 0:
                out.append({"start": i, "end": i + len(mention), "type": typ or "?"})
    return out


def gold_at_revision(head: Annotation, head_revision: int, events: Sequence[AnnotationEvent],
                     revision: int) -> Annotation | None:
    """An example's gold at ``revision``, from its current gold (at ``head_revision``) and its
    events; None when the example never had that revision."""
    if revision == head_revision:
        return head
    for e in events:
        if e.revision == revision + 1:
            return e.before
    return None
