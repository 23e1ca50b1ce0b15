"""Versioned gold.

Nothing is ever overwritten: every save appends one row to ``annotation_events`` (who, when,
which example, the gold before and after, why), in one transaction. The examples table keeps
the file as ingested; the current gold of an example is its latest event's ``after`` (or the
ingested record when it has none), and its *revision* is the number of events on it.

A save names the revision it was made on (``base_revision``). Inside the transaction the store
reads the example's revision again and refuses a stale save with :class:`EditConflict`; two
saves racing on the same revision are also stopped by the ``UNIQUE (dataset_id, idx, revision)``
constraint, which DuckDB checks at commit, so one of them always fails and nothing is lost.

Named versions are snapshots: a version row plus the head event of every edited example at
that moment (``gold_version_heads``), so a snapshot never changes afterwards, whatever is saved
(or committed late) later.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ..annotation.model import (
    Annotation,
    AnnotationEvent,
    EditConflict,
    ExampleDiff,
    GoldVersion,
    annotation_field,
)
from ..annotation.provenance import Provenance, provenance_from_json, provenance_json
from ..annotation.validation import validate_annotation
from ..auth.roles import Role
from ..records import Example
from ..tasks import TaskSpec
from .access import Access, writes
from .blind_pass import BlindPassStore
from .database import Database
from .datasets import DatasetStore
from .resources import ResourceStore

ORIGINAL = "original"
CURRENT = "current"
RESERVED_VERSION_NAMES = (ORIGINAL, CURRENT)

ANNOTATION_DDL = """
CREATE SEQUENCE IF NOT EXISTS annotation_event_ids START 1;
CREATE SEQUENCE IF NOT EXISTS gold_version_ids START 1;

-- Append-only edit log of the gold. `revision` is the example's revision after the event
-- (base_revision + 1); the UNIQUE key makes two saves on the same revision impossible.
CREATE TABLE IF NOT EXISTS annotation_events (
    event_id INTEGER PRIMARY KEY DEFAULT nextval('annotation_event_ids'),
    dataset_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    revision INTEGER NOT NULL,
    base_revision INTEGER NOT NULL,
    kind VARCHAR NOT NULL,          -- 'edit' or 'revert'
    reverts INTEGER,                -- the event a revert undoes
    author VARCHAR NOT NULL,
    reason VARCHAR NOT NULL DEFAULT '',
    before JSON NOT NULL,           -- Annotation.to_json() of the gold before the event
    after JSON NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    -- the suggestions the edit accepted, per source (annotation.provenance); NULL: none. Last
    -- because schema 8 added it to existing tables (ALTER TABLE appends).
    provenance JSON,
    UNIQUE (dataset_id, idx, revision)
);

-- Named gold versions: the original plus the events up to last_event_id, frozen as the head
-- event of each edited example when the version was made.
CREATE TABLE IF NOT EXISTS gold_versions (
    version_id INTEGER PRIMARY KEY DEFAULT nextval('gold_version_ids'),
    dataset_id INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    author VARCHAR NOT NULL,
    last_event_id INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    UNIQUE (dataset_id, name)
);

CREATE TABLE IF NOT EXISTS gold_version_heads (
    version_id INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    event_id INTEGER NOT NULL
);
"""

_EVENT_COLUMNS = ("event_id, dataset_id, idx, author, strftime(created_at, '%Y-%m-%d %H:%M:%S'), reason, before,"
                   " after, base_revision, kind, reverts, revision, provenance")
_VERSION_COLUMNS = ("v.version_id, v.dataset_id, v.name, v.author, strftime(v.created_at, '%Y-%m-%d %H:%M:%S'),"
                    " v.last_event_id, (SELECT count(*) FROM gold_version_heads h"
                    " WHERE h.version_id = v.version_id)")
# Every author's saves, gold and own copies (``own`` = 1), for comparing annotators.
_ALL_LAYERS = ("SELECT dataset_id, idx, author, after, created_at, event_id, 0 AS own FROM annotation_events"
               " UNION ALL SELECT dataset_id, idx, author, after, created_at, event_id, 1 FROM own_events")
_LATEST_HEADS = ("SELECT idx, event_id, after FROM annotation_events WHERE dataset_id = ?"
                 " QUALIFY row_number() OVER (PARTITION BY idx ORDER BY revision DESC) = 1")

# How a save turns (task, ingested example, current gold) into the gold to store.
MakeAfter = Callable[[TaskSpec, Example, Annotation], Annotation]


@dataclass(frozen=True)
class Layer:
    """Which edits of an example make its annotation: the shared gold (every author's events in
    ``annotation_events``), or one annotator's own copy in a blind pass (their events in
    ``own_events``, store/own_copies.py). Both tables have the same columns."""

    table: str = "annotation_events"
    author: str | None = None      # None: the gold

    @property
    def scope(self) -> str:
        return "" if self.author is None else " AND author=?"

    def params(self, *head: Any) -> list[Any]:
        return [*head, *(() if self.author is None else (self.author,))]


GOLD = Layer()


def own_layer(author: str) -> Layer:
    return Layer("own_events", author)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _event(row: tuple[Any, ...]) -> AnnotationEvent:
    return AnnotationEvent(row[0], row[1], row[2], row[3], row[4], row[5],
                           Annotation.from_json(json.loads(row[6])),
                           Annotation.from_json(json.loads(row[7])), row[8], row[9], row[10], row[11],
                           provenance_from_json(json.loads(row[12]) if row[12] else None))


def _is_race(exc: Exception) -> bool:
    text = str(exc).lower()
    return "constraint" in text or "conflict" in text or "duplicate key" in text


def _example(a: Mapping[str, Any]) -> str:
    return f"dataset {a.get('dataset_id')} example {a.get('idx')}"


class AnnotationStore:
    READS = ("current", "events", "head_event", "event", "by_author", "authors", "version", "versions",
             "edited_indices", "gold_examples", "gold", "diff_versions")

    def __init__(self, db: Database, datasets: DatasetStore, resources: ResourceStore,
                 access: Access | None = None, blind: BlindPassStore | None = None) -> None:
        self.db = db
        self.datasets = datasets
        self.resources = resources
        self.access = access or Access()
        self.blind = blind or BlindPassStore(db, datasets, self.access)

    def _author(self, named: str | None) -> str:
        """Whom an event is recorded for: the acting user. Only a process holding the file itself
        (source "cli": scripts, imports of another tool's annotations) may name someone else."""
        actor = self.access.actor
        assert actor is not None   # the write was checked
        if named is None or named.strip() == actor.name:
            return actor.name
        if actor.source == "cli":
            return named
        raise ValueError(f"{actor.name} saves under their own name, not as {named!r}")

    # ------------------------------------------------------------------ hooks
    def _before_commit(self, event_id: int) -> None:
        """Called inside a save's transaction, after its event row is written and before the
        commit (nothing here; tests replace it to kill a process mid-transaction)."""

    # ------------------------------------------------------------------ reading the gold
    def _original(self, dataset_id: int, idx: int) -> Example:
        ex = self.datasets.example(dataset_id, idx)
        if ex is None:
            raise ValueError(f"no example {idx} in dataset {dataset_id}")
        return ex

    def _head(self, dataset_id: int, idx: int, layer: Layer = GOLD) -> tuple[Annotation | None, int]:
        row = self.db.execute(
            f"SELECT after, revision FROM {layer.table} WHERE dataset_id=? AND idx=?{layer.scope}"
            " ORDER BY revision DESC LIMIT 1", layer.params(dataset_id, idx)).fetchone()
        if not row:
            return None, 0
        return Annotation.from_json(json.loads(row[0])), row[1]

    def current(self, dataset_id: int, idx: int) -> tuple[Annotation, int]:
        """The example's current gold and its revision (0 = as ingested; +1 per event)."""
        return self._current_in(GOLD, dataset_id, idx)

    def _current_in(self, layer: Layer, dataset_id: int, idx: int) -> tuple[Annotation, int]:
        original = self._original(dataset_id, idx)
        head, rev = self._head(dataset_id, idx, layer)
        return (head if head is not None else Annotation.from_example(original)), rev

    def _events_since(self, dataset_id: int, idx: int, revision: int, layer: Layer = GOLD) -> list[AnnotationEvent]:
        rows = self.db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM {layer.table} WHERE dataset_id=? AND idx=? AND revision>?"
            f"{layer.scope} ORDER BY revision", layer.params(dataset_id, idx, revision)).fetchall()
        return [_event(r) for r in rows]

    def _refuse_gold_in_blind_pass(self, dataset_id: int) -> None:
        """In a blind pass (store/blind_pass.py) the gold is the curators': below that role a
        save goes to the user's own copy, so that the others' work stays out of their sight."""
        if self.blind.setting(dataset_id) is None:
            return
        role = self.access.role(self.db)
        if role is None or role < Role.CURATOR:
            raise ValueError(f"dataset {dataset_id} is in a blind pass: below the curator role you save to "
                             "your own copy, not to the gold; nothing was written")

    # ------------------------------------------------------------------ writing events
    @writes("gold.save", target=_example, detail=lambda a: str(a.get("reason") or ""))
    def save(self, dataset_id: int, idx: int, after: Annotation, *, author: str | None = None,
             reason: str = "", base_revision: int,
             provenance: Sequence[Provenance] = ()) -> AnnotationEvent:
        """Save ``after`` as the example's gold, in one transaction.

        ``provenance``: the suggestions the edit accepted, per source (kept with the event;
        :func:`cblue_core.annotation.provenance.kept_provenance` keeps those still in ``after``).

        Raises :class:`EditConflict` (nothing written) when ``base_revision`` is not the
        example's current revision, and ValueError when ``after`` is invalid for the task or
        changes nothing. The event's ``after`` is the annotation as stored (span texts set to
        the text slice, CMeIE ``Combined`` computed for new triples).
        """
        return self._save(dataset_id, idx, after, author=self._author(author), reason=reason,
                          base_revision=base_revision, provenance=tuple(provenance))

    @writes("gold.adjudicate", target=_example, detail=lambda a: "between " + " and ".join(a.get("between") or ()))
    def adjudicate(self, dataset_id: int, idx: int, after: Annotation, *, between: tuple[str, str],
                   base_revision: int) -> AnnotationEvent:
        """Save the gold a curator settled between two annotators' versions (as :meth:`save`)."""
        return self._save(dataset_id, idx, after, author=self._author(None), base_revision=base_revision,
                          reason=f"adjudication of {between[0]} and {between[1]}")

    def _save(self, dataset_id: int, idx: int, after: Annotation, *, author: str, reason: str,
              base_revision: int, provenance: tuple[Provenance, ...] = ()) -> AnnotationEvent:
        return self._write_event(dataset_id, idx, self._checked(idx, after), after, author=author, reason=reason,
                                 base_revision=base_revision, kind="edit", reverts=None,
                                 provenance=provenance)

    def _checked(self, idx: int, after: Annotation) -> MakeAfter:
        """A save's ``after`` validated against the task and the annotation it replaces."""
        def make_after(task: TaskSpec, original: Example, current: Annotation) -> Annotation:
            schemas = self.resources.schemas() if annotation_field(task) == "triples" else None
            icd = None
            if annotation_field(task) == "terms":
                icd = [t.term for t in self.resources.icd_terms()] or None
            checked = validate_annotation(task, original, after, before=current, schemas=schemas,
                                          icd_terms=icd)
            if checked == current:
                raise ValueError(f"nothing to save: example {idx} already has this annotation")
            return checked
        return make_after

    @writes("gold.revert", target=lambda a: f"annotation event {a.get('event_id')}")
    def revert(self, event_id: int, *, author: str | None = None, reason: str = "") -> AnnotationEvent:
        """A new event restoring the gold the event replaced (its ``before``).

        Raises :class:`EditConflict` when later events changed the example's gold (revert those
        first); later events whose changes were reverted since do not stand in the way.
        """
        ev = self.event(event_id)
        if ev is None:
            raise ValueError(f"no annotation event {event_id}")
        return self._revert_in(GOLD, ev, author=self._author(author), reason=reason)

    def _revert_in(self, layer: Layer, ev: AnnotationEvent, *, author: str, reason: str) -> AnnotationEvent:
        current, rev = self._current_in(layer, ev.dataset_id, ev.idx)
        base = rev if current == ev.after else ev.revision
        return self._write_event(ev.dataset_id, ev.idx, lambda task, original, current: ev.before,
                                 ev.before, author=author, reason=reason or f"revert event {ev.event_id}",
                                 base_revision=base, kind="revert", reverts=ev.event_id, layer=layer)

    def _write_event(self, dataset_id: int, idx: int, make_after: MakeAfter, mine: Annotation, *, author: str,
                     reason: str, base_revision: int, kind: str, reverts: int | None,
                     provenance: tuple[Provenance, ...] = (), layer: Layer = GOLD) -> AnnotationEvent:
        if not isinstance(author, str) or not author.strip():
            raise ValueError("an author is required to save an annotation")
        if not isinstance(base_revision, int) or isinstance(base_revision, bool) or base_revision < 0:
            raise ValueError(f"base_revision must be a revision number (0 or more), not {base_revision!r}")
        reason = reason or ""
        kept = provenance_json(provenance)
        stored_provenance = None if kept is None else _dumps(kept)
        task = self.datasets.task_of(dataset_id)
        original = self._original(dataset_id, idx)
        if layer == GOLD:
            self._refuse_gold_in_blind_pass(dataset_id)
        try:
            with self.db.transaction():
                head, rev = self._head(dataset_id, idx, layer)
                current = head if head is not None else Annotation.from_example(original)
                if rev != base_revision:
                    raise EditConflict(mine, current, rev, self._events_since(dataset_id, idx, base_revision, layer),
                                       dataset_id=dataset_id, idx=idx, base_revision=base_revision)
                new = make_after(task, original, current)
                mine = new
                written = self.db.one(
                    f"INSERT INTO {layer.table} (dataset_id, idx, revision, base_revision, kind,"
                    " reverts, author, reason, before, after, provenance) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
                    " RETURNING event_id, strftime(created_at, '%Y-%m-%d %H:%M:%S')",
                    [dataset_id, idx, rev + 1, base_revision, kind, reverts, author.strip(), reason,
                     _dumps(current.to_json()), _dumps(new.to_json()), stored_provenance])
                assert written is not None  # INSERT ... RETURNING returns the row
                event_id, created = written
                self._before_commit(event_id)
        except (duckdb.ConstraintException, duckdb.TransactionException) as exc:
            if not _is_race(exc):
                raise
            # Another session committed an event on the same revision first.
            self.db.rollback_quietly()
            current, rev = self._current_in(layer, dataset_id, idx)
            raise EditConflict(mine, current, rev, self._events_since(dataset_id, idx, base_revision, layer),
                               dataset_id=dataset_id, idx=idx, base_revision=base_revision) from None
        return AnnotationEvent(event_id, dataset_id, idx, author.strip(), created, reason, current,
                               new, base_revision, kind, reverts, base_revision + 1,
                               provenance_from_json(kept))

    # ------------------------------------------------------------------ the log
    def events(self, dataset_id: int, idx: int | None = None,
                          author: str | None = None) -> list[AnnotationEvent]:
        return self._events_in(GOLD, dataset_id, idx, author)

    def _events_in(self, layer: Layer, dataset_id: int, idx: int | None = None,
                   author: str | None = None) -> list[AnnotationEvent]:
        sql = f"SELECT {_EVENT_COLUMNS} FROM {layer.table} WHERE dataset_id=?{layer.scope}"
        params: list[Any] = layer.params(dataset_id)
        if idx is not None:
            sql += " AND idx=?"
            params.append(idx)
        if author is not None:
            sql += " AND author=?"
            params.append(author)
        return [_event(r) for r in self.db.execute(sql + " ORDER BY event_id", params).fetchall()]

    def head_event(self, dataset_id: int) -> int:
        """The newest event on the dataset (0 when none): what cached derived data of its gold
        (scores on corrected gold) is keyed by, since the gold changes only by events."""
        return int(self.db.scalar("SELECT coalesce(max(event_id), 0) FROM annotation_events WHERE dataset_id=?",
                                  [dataset_id]))

    def event(self, event_id: int) -> AnnotationEvent | None:
        return self._event_in(GOLD, event_id)

    def _event_in(self, layer: Layer, event_id: int) -> AnnotationEvent | None:
        row = self.db.execute(f"SELECT {_EVENT_COLUMNS} FROM {layer.table} WHERE event_id=?{layer.scope}",
                               layer.params(event_id)).fetchone()
        return _event(row) if row else None

    def by_author(self, dataset_id: int, author: str) -> dict[int, Annotation]:
        """Each example's latest ``after`` saved by ``author``, in the gold or in their own copy
        of a blind pass (for agreement between annotators: their independent work)."""
        rows = self.db.execute(
            f"SELECT idx, after FROM ({_ALL_LAYERS}) WHERE dataset_id=? AND author=?"
            " QUALIFY row_number() OVER (PARTITION BY idx ORDER BY created_at DESC, own DESC, event_id DESC) = 1"
            " ORDER BY idx", [dataset_id, author]).fetchall()
        return {i: Annotation.from_json(json.loads(a)) for i, a in rows}

    def authors(self, dataset_id: int) -> list[str]:
        """Who saved an annotation of the dataset, in the gold or in an own copy."""
        return [r[0] for r in self.db.execute(
            f"SELECT DISTINCT author FROM ({_ALL_LAYERS}) WHERE dataset_id=? ORDER BY 1",
            [dataset_id]).fetchall()]

    # ------------------------------------------------------------------ versions
    def _version_row(self, dataset_id: int, name: str) -> tuple[Any, ...] | None:
        return self.db.execute(f"SELECT {_VERSION_COLUMNS} FROM gold_versions v"
                                " WHERE v.dataset_id=? AND v.name=?", [dataset_id, name]).fetchone()

    def version(self, dataset_id: int, name: str) -> GoldVersion | None:
        row = self._version_row(dataset_id, name)
        return GoldVersion(*row) if row else None

    def versions(self, dataset_id: int) -> list[GoldVersion]:
        rows = self.db.execute(f"SELECT {_VERSION_COLUMNS} FROM gold_versions v WHERE v.dataset_id=?"
                                " ORDER BY v.version_id", [dataset_id]).fetchall()
        return [GoldVersion(*r) for r in rows]

    @writes("gold.version", target=lambda a: f"dataset {a.get('dataset_id')} version {a.get('name')!r}")
    def create_version(self, dataset_id: int, name: str, author: str | None = None) -> GoldVersion:
        """Freeze the current gold under ``name`` (unique per dataset)."""
        name = (name or "").strip()
        if not name:
            raise ValueError("a version needs a name")
        if name in RESERVED_VERSION_NAMES:
            raise ValueError(f"{name!r} is reserved (it names the {name} gold); choose another name")
        author = self._author(author)
        self.datasets.task_of(dataset_id)
        try:
            with self.db.transaction():
                if self._version_row(dataset_id, name):
                    raise ValueError(f"dataset {dataset_id} already has a version named {name!r}")
                last = self.db.scalar("SELECT coalesce(max(event_id), 0) FROM annotation_events"
                                      " WHERE dataset_id=?", [dataset_id])
                version_id = self.db.scalar(
                    "INSERT INTO gold_versions (dataset_id, name, author, last_event_id) VALUES (?,?,?,?)"
                    " RETURNING version_id", [dataset_id, name, author.strip(), last])
                self.db.execute(f"INSERT INTO gold_version_heads SELECT ? AS version_id, idx, event_id"
                                 f" FROM ({_LATEST_HEADS})", [version_id, dataset_id])
        except (duckdb.ConstraintException, duckdb.TransactionException) as exc:
            if not _is_race(exc):
                raise
            self.db.rollback_quietly()
            raise ValueError(f"dataset {dataset_id} already has a version named {name!r}") from None
        created = self.version(dataset_id, name)
        assert created is not None  # written in the transaction above
        return created

    def _annotations_at(self, dataset_id: int, version: str | None) -> dict[int, Annotation]:
        """The gold of every example with events at ``version`` (None: current; "original": none)."""
        if version == ORIGINAL:
            return {}
        if version is None or version == CURRENT:
            rows = self.db.execute(f"SELECT idx, after FROM ({_LATEST_HEADS})", [dataset_id]).fetchall()
        else:
            row = self._version_row(dataset_id, version)
            if not row:
                known = ", ".join(v.name for v in self.versions(dataset_id)) or "none yet"
                raise ValueError(f"no gold version {version!r} for dataset {dataset_id} "
                                 f"(versions: {known}; or None for the current gold, 'original')")
            rows = self.db.execute(
                "SELECT h.idx, e.after FROM gold_version_heads h JOIN annotation_events e"
                " USING (event_id) WHERE h.version_id=?", [row[0]]).fetchall()
        return {i: Annotation.from_json(json.loads(a)) for i, a in rows}

    def edited_indices(self, dataset_id: int, version: str | None = None) -> list[int]:
        """Examples with at least one event at ``version`` (reverted ones included)."""
        return sorted(self._annotations_at(dataset_id, version))

    def gold_examples(self, dataset_id: int, version: str | None = None) -> list[Example]:
        """The split at a gold version: None = current (original + all events), "original" = as
        ingested, else a named version. Changed examples have ``raw=None``."""
        heads = self._annotations_at(dataset_id, version)
        examples = self.datasets.examples(dataset_id)
        if not heads:
            return examples
        return [heads[ex.index].apply_to(ex) if ex.index in heads else ex for ex in examples]

    def gold(self, dataset_id: int, idx: int, version: str | None = None) -> Annotation:
        """One example's gold at a version."""
        heads = self._annotations_at(dataset_id, version)
        if idx in heads:
            return heads[idx]
        return Annotation.from_example(self._original(dataset_id, idx))

    def diff_versions(self, dataset_id: int, a: str | None, b: str | None) -> list[ExampleDiff]:
        """Examples whose gold differs between versions ``a`` and ``b`` (names, None = current,
        "original"), by example index."""
        ma, mb = self._annotations_at(dataset_id, a), self._annotations_at(dataset_id, b)
        idxs = sorted(set(ma) | set(mb))
        originals = self.datasets.examples_at(dataset_id, [i for i in idxs if i not in ma or i not in mb])
        out = []
        for i in idxs:
            before = ma[i] if i in ma else Annotation.from_example(originals[i])
            after = mb[i] if i in mb else Annotation.from_example(originals[i])
            if before != after:
                out.append(ExampleDiff(i, before, after))
        return out
