"""Typed records of gold annotation: what one edit changes, the events that keep every edit,
named gold versions and the conflict a stale save raises.

An :class:`Annotation` is the editable gold of one example, whatever the task: the entity spans
(CMeEE), the triples (CMeIE), the class label (classification and pair tasks) or the normalised
terms (CHIP-CDN). Each task fills the fields it has and leaves the others empty, as
:class:`~cblue_core.records.Example` does.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..records import Example, Span, Triple
from .provenance import Provenance

# Record codecs whose gold the Annotation type can hold (spans, triples, label, terms).
EDITABLE_CODECS = {"entities": "spans", "spo": "triples", "terms": "terms",
                   "single_label": "label", "pair_label": "label"}


def annotation_field(task) -> str | None:
    """The Annotation field a task's gold lives in ("spans", "triples", "label", "terms"),
    or None when its gold cannot be edited as an Annotation (dialogues, events, prompts...)."""
    return EDITABLE_CODECS.get(task.codec)


def _span_json(s: Span) -> dict:
    return {"start": s.start, "end": s.end, "type": s.type, "text": s.text}


def _triple_json(t: Triple) -> dict:
    return {"subject": t.subject, "predicate": t.predicate, "object": t.object,
            "subject_type": t.subject_type, "object_type": t.object_type, "combined": t.combined}


@dataclass(frozen=True)
class Annotation:
    """The editable gold of one example."""

    spans: tuple[Span, ...] = ()
    triples: tuple[Triple, ...] = ()
    label: str | None = None
    terms: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Accept lists (from a page or JSON) but keep the record hashable and immutable.
        for name in ("spans", "triples", "terms"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    @classmethod
    def from_example(cls, ex: Example) -> Annotation:
        return cls(tuple(ex.spans), tuple(ex.triples), ex.label, tuple(ex.terms))

    def apply_to(self, ex: Example) -> Example:
        """A copy of ``ex`` with these spans, triples, label and terms.

        ``raw`` (the record as read) is kept only when the annotation is the example's own; a
        changed example has ``raw=None``, so that writers encode it from its typed fields.
        """
        same = self == Annotation.from_example(ex)
        return dataclasses.replace(ex, spans=list(self.spans), triples=list(self.triples),
                                   label=self.label, terms=list(self.terms), meta=dict(ex.meta),
                                   raw=ex.raw if same else None)

    def to_json(self) -> dict[str, Any]:
        return {"spans": [_span_json(s) for s in self.spans],
                "triples": [_triple_json(t) for t in self.triples],
                "label": self.label, "terms": list(self.terms)}

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> Annotation:
        d = d or {}
        spans = []
        for s in d.get("spans") or ():
            if isinstance(s, dict):
                spans.append(Span(int(s["start"]), int(s["end"]), str(s["type"]), s.get("text") or ""))
            else:  # [start, end, type(, text)]
                spans.append(Span(int(s[0]), int(s[1]), str(s[2]), s[3] if len(s) > 3 else ""))
        triples = [Triple(t["subject"], t["predicate"], t["object"], t.get("subject_type") or "",
                          t.get("object_type") or "", t.get("combined"))
                   for t in d.get("triples") or ()]
        label = d.get("label")
        return cls(tuple(spans), tuple(triples), None if label is None else str(label),
                   tuple(str(t) for t in d.get("terms") or ()))

    @property
    def size(self) -> int:
        """Annotations held (spans + triples + terms + 1 for a label)."""
        return len(self.spans) + len(self.triples) + len(self.terms) + (
            1 if self.label not in (None, "") else 0)


@dataclass(frozen=True)
class AnnotationEvent:
    """One saved edit (or revert) of one example: append-only, never changed afterwards."""

    event_id: int
    dataset_id: int
    idx: int
    author: str
    created_at: str
    reason: str
    before: Annotation
    after: Annotation
    base_revision: int
    kind: str                      # "edit" or "revert"
    reverts: int | None = None     # the event a revert undoes
    revision: int = 0              # the example's revision after this event (base_revision + 1)
    provenance: tuple[Provenance, ...] = ()   # the suggestions it took, per source (none: by hand)


class EditConflict(Exception):
    """A save whose ``base_revision`` is not the example's current revision; nothing was written.

    ``mine``: the annotation the caller tried to save; ``current``: the example's gold now, at
    ``current_revision``; ``theirs``: the events saved since ``base_revision``.
    """

    def __init__(self, mine: Annotation, current: Annotation, current_revision: int,
                 theirs: list[AnnotationEvent], *, dataset_id: int | None = None,
                 idx: int | None = None, base_revision: int | None = None):
        self.mine = mine
        self.current = current
        self.current_revision = current_revision
        self.theirs = list(theirs)
        self.dataset_id = dataset_id
        self.idx = idx
        self.base_revision = base_revision
        who = ", ".join(dict.fromkeys(f"{e.author} ({e.created_at})" for e in self.theirs))
        where = f"example {idx}" if idx is not None else "the example"
        msg = (f"{where} changed since it was loaded: it is at revision {current_revision}, "
               f"the edit was made on revision {base_revision}")
        if who:
            msg += f"; saved meanwhile by {who}"
        super().__init__(msg + ". Nothing was saved: reload the example and apply the edit again.")


@dataclass(frozen=True)
class GoldVersion:
    """A named snapshot: the original gold plus the events up to ``last_event_id``."""

    version_id: int
    dataset_id: int
    name: str
    author: str
    created_at: str
    last_event_id: int
    edited: int = 0                # examples with at least one event in the snapshot


@dataclass(frozen=True)
class ExampleDiff:
    idx: int
    before: Annotation
    after: Annotation
