"""Where accepted suggestions came from: the record an annotation event keeps of them.

An annotator on the Edit tab may accept items a *suggestion source* offers (a model predicted
live on the example, or a stored run of the same split). Accepting is an ordinary edit of the
draft; what makes it traceable is the :class:`Provenance` saved with the event: the source, and
each accepted span, triple or label with the score the source gave it (None when the source
gives none). Only items still in the annotation when it is saved are recorded: an accepted
span deleted again before Save was not, in the end, taken from the model.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..records import Span, Triple

SOURCE_KINDS = ("run", "model")


@dataclass(frozen=True)
class SuggestionSource:
    """A run of the split (``name`` its run id) or a model predicted live (``name`` its name),
    written ``run:ID`` / ``model:NAME`` (the form the page's session state holds)."""

    kind: str
    name: str

    def __post_init__(self) -> None:
        if self.kind not in SOURCE_KINDS:
            raise ValueError(f"a suggestion source is a run or a model, not {self.kind!r}")
        if not self.name:
            raise ValueError(f"a suggestion source {self.kind}: needs a name")
        if self.kind == "run" and not self.name.isdigit():
            raise ValueError(f"a run source names a run id (digits), not {self.name!r}")

    @classmethod
    def parse(cls, value: object) -> SuggestionSource | None:
        """``"run:ID"`` or ``"model:NAME"`` as a source; None for None or ""; ValueError for
        anything else."""
        if value is None or value == "":
            return None
        if not isinstance(value, str) or ":" not in value:
            raise ValueError(f"a suggestion source is written run:ID or model:NAME, not {value!r}")
        kind, name = value.split(":", 1)
        return cls(kind, name)

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"

    @property
    def run_id(self) -> int | None:
        return int(self.name) if self.kind == "run" else None

    def __str__(self) -> str:
        return f"run {self.name}" if self.kind == "run" else f"model {self.name}"


Item = Span | Triple | str          # a suggested span, triple or label


@dataclass(frozen=True)
class Suggestion:
    """One item a source suggests, with its confidence (None when the source gives none)."""

    item: Item
    score: float | None = None

    @property
    def identity(self) -> tuple:
        """What makes two items the same edit: a span's offsets and type, a triple's subject,
        predicate and object (its types and Combined are settled on save), a label."""
        it = self.item
        if isinstance(it, Span):
            return ("span", it.start, it.end, it.type)
        if isinstance(it, Triple):
            return ("triple", it.subject, it.predicate, it.object)
        return ("label", it)

    def to_json(self) -> dict[str, Any]:
        it = self.item
        if isinstance(it, Span):
            body: dict[str, Any] = {"span": {"start": it.start, "end": it.end, "type": it.type, "text": it.text}}
        elif isinstance(it, Triple):
            body = {"triple": {"subject": it.subject, "predicate": it.predicate, "object": it.object,
                               "subject_type": it.subject_type, "object_type": it.object_type,
                               "combined": it.combined}}
        else:
            body = {"label": it}
        return {**body, "score": self.score}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Suggestion:
        score = d.get("score")
        score = None if score is None else float(score)
        if "span" in d:
            s = d["span"]
            return cls(Span(int(s["start"]), int(s["end"]), str(s["type"]), str(s.get("text") or "")), score)
        if "triple" in d:
            t = d["triple"]
            return cls(Triple(t["subject"], t["predicate"], t["object"], t.get("subject_type") or "",
                              t.get("object_type") or "", t.get("combined")), score)
        return cls(str(d["label"]), score)


@dataclass(frozen=True)
class Provenance:
    """The suggestions of one source an event took."""

    source: SuggestionSource
    accepted: tuple[Suggestion, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.source.kind, "name": self.source.name,
                "accepted": [s.to_json() for s in self.accepted]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Provenance:
        return cls(SuggestionSource(str(d["kind"]), str(d["name"])),
                   tuple(Suggestion.from_json(s) for s in d.get("accepted") or ()))

    def summary(self) -> str:
        """``run 3: 2 accepted (0.91, n/a)`` for a history table."""
        scores = ", ".join("n/a" if s.score is None else f"{s.score:.2f}" for s in self.accepted)
        return f"{self.source}: {len(self.accepted)} accepted ({scores})"


def provenance_json(provenance: Iterable[Provenance]) -> list[dict[str, Any]] | None:
    """What an event stores (None: no suggestion was taken)."""
    out = [p.to_json() for p in provenance if p.accepted]
    return out or None


def provenance_from_json(value: object) -> tuple[Provenance, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(Provenance.from_json(p) for p in value)


def _identities(ann: Any) -> set[tuple]:
    found = {Suggestion(s).identity for s in ann.spans} | {Suggestion(t).identity for t in ann.triples}
    if ann.label not in (None, ""):
        found.add(("label", ann.label))
    return found


def kept_provenance(accepted: Mapping[SuggestionSource, Iterable[Suggestion]], saved: Any
                    ) -> tuple[Provenance, ...]:
    """Per source, the accepted suggestions that are in ``saved`` (an Annotation) — each once,
    in the order they were accepted; sources with none left are dropped."""
    present = _identities(saved)
    out = []
    for source, items in accepted.items():
        kept: dict[tuple, Suggestion] = {}
        for s in items:
            if s.identity in present:
                kept.setdefault(s.identity, s)
        if kept:
            out.append(Provenance(source, tuple(kept.values())))
    return tuple(out)
