"""What a user edits: in a blind pass (:mod:`cblue_core.store.blind_pass`), below the curator
role, their *own copy* of each example, else the shared gold.

An own copy is a layer of :class:`~cblue_core.store.annotations.AnnotationStore` (``own_events``:
the columns of ``annotation_events``, with revisions counted per author). It starts from the
example as ingested, never from the gold, which already holds the others' saves, and it has
only its author's history; the gold does not change by it. The copies reach the Agreement tab
through ``AnnotationStore.by_author``, where a curator adjudicates into the gold.

:meth:`OwnCopyStore.editing` is the one place that says which layer a user edits.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..annotation.model import Annotation, AnnotationEvent
from ..annotation.provenance import Provenance
from ..auth.roles import Role
from .access import Access, writes
from .annotations import GOLD, AnnotationStore, Layer, own_layer
from .blind_pass import BlindPassStore, dataset_target
from .database import Database


class EditLayer:
    """The annotations one user edits on one dataset: the shared gold, or their own copy."""

    def __init__(self, store: OwnCopyStore, dataset_id: int, layer: Layer) -> None:
        self._store, self.dataset_id, self._layer = store, dataset_id, layer

    @property
    def own(self) -> bool:
        """True: the acting user's own copy in a blind pass; False: the shared gold."""
        return self._layer != GOLD

    def current(self, idx: int) -> tuple[Annotation, int]:
        """The example's annotation in this layer and its revision (0: as ingested)."""
        if self.own:
            return self._store.annotations._current_in(self._layer, self.dataset_id, idx)
        return self._store.annotations.current(self.dataset_id, idx)

    def events(self, idx: int, author: str | None = None) -> list[AnnotationEvent]:
        if self.own:
            return self._store.annotations._events_in(self._layer, self.dataset_id, idx, author)
        return self._store.annotations.events(self.dataset_id, idx, author)

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


class OwnCopyStore:
    READS = ("editing",)

    def __init__(self, db: Database, annotations: AnnotationStore, blind: BlindPassStore,
                 access: Access | None = None) -> None:
        self.db = db
        self.annotations = annotations
        self.blind = blind
        self.access = access or Access()

    def editing(self, dataset_id: int) -> EditLayer:
        """The layer the acting user edits: their own copy in a blind pass below the curator
        role, else the gold (curators adjudicate into it; and everyone when there is no pass)."""
        actor = self.access.actor
        role = self.access.role(self.db)
        if actor is None or role is None or role >= Role.CURATOR or self.blind.setting(dataset_id) is None:
            return EditLayer(self, dataset_id, GOLD)
        return EditLayer(self, dataset_id, own_layer(actor.name))

    def _own(self) -> Layer:
        actor = self.access.actor
        assert actor is not None   # the write was checked
        return own_layer(actor.name)

    @writes("own.save", target=lambda a: f"{dataset_target(a)} example {a.get('idx')} (own copy)",
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
