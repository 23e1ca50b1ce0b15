"""What every tab of the Annotate page works on, and the small views they share."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from app_pages.html_view import show_html
from cblue_core.annotation.changes import change_summary
from cblue_core.annotation.model import Annotation, AnnotationEvent
from cblue_core.records import Example
from cblue_core.render.example import example_html
from cblue_core.store.datasets import DatasetInfo
from cblue_core.store.workspace import Workspace
from cblue_core.tasks import TaskSpec

CURRENT = "(current)"          # the gold now, as a version name
ORIGINAL = "original"          # the gold as ingested


@dataclass(frozen=True)
class Context:
    """The dataset the page is on, and how it may be edited."""

    ws: Workspace
    info: DatasetInfo
    task: TaskSpec
    kind: str                  # the annotation field edited: spans, triples, label or terms
    read_only: bool

    @property
    def dataset_id(self) -> int:
        return self.info.dataset_id

    def version_names(self, *, first: Sequence[str] = (ORIGINAL,), last: Sequence[str] = (CURRENT,)) -> list[str]:
        return [*first, *(v.name for v in self.ws.annotations.versions(self.dataset_id)), *last]


def version_arg(name: str) -> str | None:
    """A version name as the store takes it (None: the current gold)."""
    return None if name == CURRENT else name


def show_annotation(ex: Example, ann: Annotation, task: TaskSpec, *, big: bool = False) -> None:
    show_html(example_html(ann.apply_to(ex), task, big=big))


def events_frame(events: Sequence[AnnotationEvent], task: TaskSpec) -> pd.DataFrame:
    return pd.DataFrame([{
        "event": e.event_id, "revision": e.revision, "who": e.author, "when": e.created_at,
        "kind": e.kind + (f" of #{e.reverts}" if e.reverts else ""), "reason": e.reason,
        "change": change_summary(e.before, e.after, task),
        "suggestions accepted": "; ".join(p.summary() for p in e.provenance)} for e in events])
