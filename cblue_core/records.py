"""Typed records shared by readers, storage, metrics, models and rendering.

Offsets are always half-open (``text[start:end] == span.text``) inside the core; readers
convert from each file's convention (CMeEE's inclusive ``end_idx``) and writers convert back.

One :class:`Example` type serves every task kind: each kind fills the fields it has
(``spans`` for NER, ``triples`` for CMeIE, ``terms`` for CHIP-CDN, ``turns`` for dialogues...)
and leaves the others empty, so storage, filters and the renderer need no per-task branches.
``raw`` keeps the record exactly as read, so untouched records can be written back unchanged.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, order=True)
class Span:
    """An entity mention: ``text[start:end]`` (half-open), with its type code."""

    start: int
    end: int
    type: str
    text: str = ""

    @property
    def length(self) -> int:
        return self.end - self.start

    def contains(self, other: Span) -> bool:
        """True when ``other`` lies inside this span and is not the same extent."""
        return self.start <= other.start and other.end <= self.end and (
            (self.start, self.end) != (other.start, other.end))

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class Triple:
    """A relation between two string mentions (CMeIE has no offsets)."""

    subject: str
    predicate: str
    object: str
    subject_type: str = ""
    object_type: str = ""
    combined: bool | None = None


@dataclass(frozen=True)
class Event:
    """A CHIP-CDEE clinical finding event."""

    core_name: str
    tendency: str = ""
    character: tuple[str, ...] = ()
    anatomy: tuple[str, ...] = ()


@dataclass(frozen=True)
class Turn:
    """One utterance of a dialogue, with the annotations the dialogue tasks attach to it."""

    speaker: str
    text: str
    turn_id: str = ""
    act: str = ""
    spans: tuple[Span, ...] = ()
    symptoms: tuple[tuple[str, str], ...] = ()  # (normalised symptom, status "0"/"1"/"2")


@dataclass
class Example:
    """One record of one task, whatever its kind.

    ``key`` is what predictions are matched on (the task declares which field: id, text or
    sample_id); ``index`` is the record's position in its file (0-based).
    """

    key: str
    index: int
    text: str = ""
    text2: str = ""
    label: str | None = None
    spans: list[Span] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    choices: list[str] = field(default_factory=list)
    target: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    raw: Any = None

    def to_dict(self, include_raw: bool = True) -> dict[str, Any]:
        """Plain JSON-ready dict (hand-written: dataclasses.asdict deep-copies and is 10x slower)."""
        def span(s: Span) -> dict[str, Any]:
            return {"start": s.start, "end": s.end, "type": s.type, "text": s.text}

        out = {
            "key": self.key, "index": self.index, "text": self.text, "text2": self.text2,
            "label": self.label, "spans": [span(s) for s in self.spans],
            "triples": [{"subject": t.subject, "predicate": t.predicate, "object": t.object,
                         "subject_type": t.subject_type, "object_type": t.object_type,
                         "combined": t.combined} for t in self.triples],
            "terms": list(self.terms),
            "events": [{"core_name": e.core_name, "tendency": e.tendency,
                        "character": list(e.character), "anatomy": list(e.anatomy)}
                       for e in self.events],
            "turns": [{"speaker": t.speaker, "text": t.text, "turn_id": t.turn_id, "act": t.act,
                       "spans": [span(s) for s in t.spans],
                       "symptoms": [list(x) for x in t.symptoms]} for t in self.turns],
            "choices": list(self.choices), "target": self.target, "meta": dict(self.meta),
        }
        if include_raw:
            out["raw"] = self.raw
        return out

    @property
    def annotation_count(self) -> int:
        """Gold annotations held by the record (entities, triples, terms, events, labels)."""
        n = (len(self.spans) + len(self.triples) + len(self.terms) + len(self.events)
             + (1 if self.label not in (None, "") else 0))
        if self.turns:
            n += sum(len(t.spans) + (1 if t.act else 0) for t in self.turns)
        return n

    @property
    def depth(self) -> int:
        """Nesting depth over the example's own spans and those of its turns."""
        d = nesting_depth(self.spans)
        if self.turns:
            d = max([d] + [nesting_depth(t.spans) for t in self.turns])
        return d


def nesting_depth(spans: list[Span] | tuple[Span, ...]) -> int:
    """Largest number of spans stacked over one character (1 = flat, 0 = no spans)."""
    if len(spans) < 2:
        return 1 if spans and spans[0].end > spans[0].start else 0
    open_ends: list[int] = []       # ends of the spans covering the current start (a min-heap)
    best = 0
    for start, end in sorted([(s.start, s.end) for s in spans if s.end > s.start]):
        while open_ends and open_ends[0] <= start:
            heapq.heappop(open_ends)
        heapq.heappush(open_ends, end)
        best = max(best, len(open_ends))
    return best


def has_nested(spans: list[Span] | tuple[Span, ...]) -> bool:
    return nesting_depth(spans) > 1


def example_from_dict(d: dict[str, Any]) -> Example:
    """Rebuild an :class:`Example` from :meth:`Example.to_dict` output (e.g. stored JSON)."""
    def span(s: dict[str, Any]) -> Span:
        return Span(s["start"], s["end"], s["type"], s.get("text", ""))

    return Example(
        key=d["key"], index=d["index"], text=d.get("text", ""), text2=d.get("text2", ""),
        label=d.get("label"),
        spans=[span(s) for s in d.get("spans", [])],
        triples=[Triple(**t) for t in d.get("triples", [])],
        terms=list(d.get("terms", [])),
        events=[Event(e["core_name"], e.get("tendency", ""), tuple(e.get("character", ())),
                      tuple(e.get("anatomy", ()))) for e in d.get("events", [])],
        turns=[Turn(t["speaker"], t["text"], t.get("turn_id", ""), t.get("act", ""),
                    tuple(span(s) for s in t.get("spans", [])),
                    tuple(tuple(x) for x in t.get("symptoms", ()))) for t in d.get("turns", [])],
        choices=list(d.get("choices", [])), target=d.get("target", ""),
        meta=dict(d.get("meta", {})), raw=d.get("raw"),
    )
