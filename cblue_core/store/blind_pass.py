"""Blind double annotation, as INCEpTION does it: each annotator works on their own copy of the
examples, and a curator merges their work into the gold.

A curator (or admin) puts a dataset in a blind pass (``blind_datasets``). There, a user below
the curator role edits their *own layer* (``own_events``: the columns of ``annotation_events``,
with revisions counted per author), which starts from the example as ingested, never from the
gold, which already holds the others' saves; the gold does not change by their saves
(:class:`~cblue_core.store.annotations.AnnotationStore` refuses them). Their work reaches the
Agreement tab through ``AnnotationStore.by_author``, where a curator adjudicates into the gold.

:meth:`BlindPassStore.editing` is the one place that says which layer a user edits.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..annotation.model import Annotation, AnnotationEvent
from ..annotation.provenance import Provenance
from ..auth.roles import Role
from .access import Access, writes
from .annotations import GOLD, AnnotationStore, Layer, own_layer
from .database import Database


@dataclass(frozen=True)
class BlindSetting:
    """A dataset in a blind pass: who put it there, and when (UTC)."""

    dataset_id: int
    set_by: str
    set_at: str


class EditLayer:
    """The annotations one user edits on one dataset: the shared gold, or their own copy."""

    def __init__(self, store: BlindPassStore, dataset_id: int, layer: Layer) -> None:
        self._store, self.dataset_id, self._layer = store, dataset_id, layer

    @property
    def own(self) -> bool:
        """True: the acting user's own copy in a blind pass; False: the shared gold."""
        return self._layer != GOLD

    def current(self, idx: int) -> tuple[Annotation, int]:
        """The example's annotation in this layer and its revision (0: as ingested)."""
        return self._store.annotations._current_in(self._layer, self.dataset_id, idx)

    def events(self, idx: int, author: str | None = None) -> list[AnnotationEvent]:
        return self._store.annotations._events_in(self._layer, self.dataset_id, idx, author)

    def save(self, idx: int, after: Annotation, *, reason: str, base_revision: int,
             provenance: Sequence[Provenance] = ()) -> AnnotationEvent:
        if self.own:
            return self._store.save(self.dataset_id, idx, after, reason=reason, base_revision=base_revision,
                                    provenance=provenance)
        return self._store.annotations.save(self.dataset_id, idx, after, reason=reason,
                                            base_revision=base_revision, provenance=provenance)

    def revert(self, event_id: int, *, reason: str) -> AnnotationEvent:
        if self.own:
            return self._store.revert(event_id, reason=reason)
        return self._store.annotations.revert(event_id, reason=reason)


def _dataset(a: Mapping[str, Any]) -> str:
    return f"dataset {a.get('dataset_id')}"


class BlindPassStore:
    READS = ("setting", "editing")

    def __init__(self, db: Database, annotations: AnnotationStore, access: Access | None = None) -> None:
        self.db = db
        self.annotations = annotations
        self.access = access or Access()

    def setting(self, dataset_id: int) -> BlindSetting | None:
        """The dataset's blind pass, or None when its annotators edit the shared gold."""
        row = self.db.one("SELECT dataset_id, set_by, strftime(set_at, '%Y-%m-%d %H:%M:%S') FROM blind_datasets"
                          " WHERE dataset_id=?", [dataset_id])
        return BlindSetting(*row) if row else None

    def editing(self, dataset_id: int) -> EditLayer:
        """The layer the acting user edits: their own copy in a blind pass below the curator
        role, else the gold (curators adjudicate into it; and everyone when there is no pass)."""
        actor = self.access.actor
        role = self.access.role(self.db)
        if actor is None or role is None or role >= Role.CURATOR or self.setting(dataset_id) is None:
            return EditLayer(self, dataset_id, GOLD)
        return EditLayer(self, dataset_id, own_layer(actor.name))

    @writes("gold.blind_mode", target=_dataset, detail=lambda a: "on" if a.get("on") else "off")
    def set_blind(self, dataset_id: int, on: bool) -> None:
        """Start (``on``) or end the dataset's blind pass. Own copies are kept either way: they
        stay on the Agreement tab, and come back if a pass starts again."""
        self.annotations.datasets.task_of(dataset_id)     # an unknown dataset is refused
        actor = self.access.actor
        assert actor is not None   # the write was checked
        with self.db.transaction():
            if not on:
                self.db.execute("DELETE FROM blind_datasets WHERE dataset_id=?", [dataset_id])
            elif self.setting(dataset_id) is None:
                self.db.execute("INSERT INTO blind_datasets (dataset_id, set_by) VALUES (?, ?)",
                                [dataset_id, actor.name])

    def _own(self) -> Layer:
        actor = self.access.actor
        assert actor is not None   # the write was checked
        return own_layer(actor.name)

    @writes("own.save", target=lambda a: f"{_dataset(a)} example {a.get('idx')} (own copy)",
            detail=lambda a: str(a.get("reason") or ""))
    def save(self, dataset_id: int, idx: int, after: Annotation, *, reason: str = "", base_revision: int,
             provenance: Sequence[Provenance] = ()) -> AnnotationEvent:
        """Save ``after`` into the acting user's own copy of the example (validated as a gold
        save). :class:`EditConflict` when ``base_revision`` is not their copy's revision (two
        tabs of the same user); the others' saves never conflict."""
        layer = self._own()
        return self.annotations._write_event(
            dataset_id, idx, self.annotations._checked(idx, after), after, author=str(layer.author),
            reason=reason, base_revision=base_revision, kind="edit", reverts=None,
            provenance=tuple(provenance), layer=layer)

    @writes("own.revert", target=lambda a: f"own annotation event {a.get('event_id')}")
    def revert(self, event_id: int, *, reason: str = "") -> AnnotationEvent:
        """A new event of the acting user's own copy restoring what their event replaced."""
        layer = self._own()
        ev = self.annotations._event_in(layer, event_id)
        if ev is None:
            raise ValueError(f"no event {event_id} in the own copy of {layer.author}")
        return self.annotations._revert_in(layer, ev, author=str(layer.author), reason=reason)
